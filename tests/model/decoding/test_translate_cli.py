"""The `python -m model.decoding.cli` command line and the trace's JSON form.

- `main([...])` on a saved tiny checkpoint prints the translation, or with --json the whole
  TranslationTrace as valid JSON whose arrays have the shapes model/decoding/trace.py promises.
- A bad checkpoint directory or an over-long input exits with code 2 and a one-line message,
  never a traceback.
- TranslationTrace.from_dict(json.loads(trace.to_json())) gives back the same shapes, dtypes and
  (to the JSON_DECIMALS decimals JSON keeps) the same values.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from model.text import limits
from model.decoding.greedy import translate
from model.decoding.trace import ARRAY_FIELDS, JSON_DECIMALS, TranslationTrace
from model.decoding.cli import main

ROOT = Path(__file__).resolve().parents[3]
SENTENCES = {"de-en": "Ein Mann fährt Fahrrad.", "en-de": "A dog runs on the beach."}


def expected_shapes(trace: TranslationTrace, config) -> dict[str, tuple]:
    """The shapes of model/decoding/trace.py, from the token lists and the config."""
    S, T = len(trace.source_tokens), len(trace.output_tokens)
    L_enc, L_dec, h = config.n_encoder_layers, config.n_decoder_layers, config.n_heads
    k = min(limits.TOP_K, config.vocab_size)
    return {
        "candidate_ids": (T, k),
        "candidate_probs": (T, k),
        "chosen_probs": (T,),
        "entropy": (T,),
        "encoder_attention": (L_enc, h, S, S),
        "decoder_self_attention": (L_dec, h, T, T),
        "cross_attention": (L_dec, h, T, S),
        "encoder_scores": (L_enc, h, S, S),
        "decoder_self_scores": (L_dec, h, T, T),
        "cross_scores": (L_dec, h, T, S),
        "source_mask": (S,),
        "causal_mask": (T, T),
        "decoder_mask": (T, T),
        "cross_mask": (T, S),
    }


def assert_trace_shapes(trace: TranslationTrace, config) -> None:
    T = len(trace.output_tokens)
    assert len(trace.target_tokens) == len(trace.output_ids) == len(trace.candidate_tokens) == T > 0
    assert len(trace.source_ids) == len(trace.source_tokens)
    for name, shape in expected_shapes(trace, config).items():
        array = getattr(trace, name)
        assert isinstance(array, np.ndarray) and array.shape == shape, name
        assert array.dtype == ARRAY_FIELDS[name], name


@pytest.mark.parametrize("direction", SENTENCES)
def test_prints_the_translation(tiny_checkpoint, checkpoint, capsys, direction):
    text = SENTENCES[direction]
    assert main(["--checkpoint", str(tiny_checkpoint), "--direction", direction, text]) == 0
    out, err = capsys.readouterr()
    expected = translate(checkpoint.model, checkpoint.tokenizer, text, direction).translation
    assert out == expected + "\n"
    assert err == ""


def test_json_prints_the_whole_trace(tiny_checkpoint, checkpoint, capsys):
    text = SENTENCES["de-en"]
    assert main(["--checkpoint", str(tiny_checkpoint), "--json", text]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {field.name for field in dataclasses.fields(TranslationTrace)}
    assert data["direction"] == "de-en" and data["source_text"] == text
    trace = TranslationTrace.from_dict(data)
    assert_trace_shapes(trace, checkpoint.config)
    expected = translate(checkpoint.model, checkpoint.tokenizer, text, "de-en")
    assert trace.output_ids == expected.output_ids
    assert trace.translation == expected.translation
    assert trace.source_tokens[0] == "<2en>" and trace.source_tokens[-1] == "[EOS]"


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--checkpoint", "{missing}", "Hallo"], "does not exist"),
        (["--checkpoint", "{checkpoint}", "x" * (limits.MAX_INPUT_CHARS + 1)], "characters long; the limit is"),
    ],
    ids=["missing_checkpoint", "text_too_long"],
)
def test_errors_exit_2_with_a_message(tiny_checkpoint, tmp_path, capsys, argv, message):
    argv = [a.format(missing=tmp_path / "nowhere", checkpoint=tiny_checkpoint) for a in argv]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("error: ") and message in err
    assert "Traceback" not in err


def test_bad_direction_is_an_argparse_error(tiny_checkpoint, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--checkpoint", str(tiny_checkpoint), "--direction", "fr-en", "Bonjour"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'fr-en'" in capsys.readouterr().err


def test_module_entry_point_reports_without_traceback(tmp_path):
    """`python -m model.decoding.cli` from another working directory: exit code 2 and one line."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "model.decoding.cli", "--checkpoint", str(tmp_path / "nowhere"), "Hallo"],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr.startswith("error: checkpoint directory") and "Traceback" not in result.stderr


def test_trace_json_round_trip_keeps_shapes_and_values(checkpoint):
    trace = translate(checkpoint.model, checkpoint.tokenizer, SENTENCES["en-de"], "en-de", max_new_tokens=7)
    assert_trace_shapes(trace, checkpoint.config)
    restored = TranslationTrace.from_dict(json.loads(trace.to_json()))
    assert_trace_shapes(restored, checkpoint.config)
    for field in dataclasses.fields(TranslationTrace):
        before, after = getattr(trace, field.name), getattr(restored, field.name)
        if isinstance(before, np.ndarray):
            np.testing.assert_allclose(after, before, atol=10**-JSON_DECIMALS, rtol=0, err_msg=field.name)
        else:
            assert after == before, field.name
    assert restored.num_steps == trace.num_steps <= 7
