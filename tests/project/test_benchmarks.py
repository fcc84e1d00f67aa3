"""Smoke test of benchmarks/: every part runs on the tiny checkpoint with 1-2 repetitions and
returns the keys the table and the JSON need. No timing is asserted (this machine's speed is not
the subject here); `python -m benchmarks.run` measures.
"""

from __future__ import annotations

import json

import pytest
import torch

from benchmarks import gpu, model_speed, run, views_speed
from benchmarks.common import SOURCE_LANGUAGE, summarize, text_of_tokens, time_interleaved
from helpers import in_own_thread

STATS = {"median", "p95", "min", "mean", "n"}


@pytest.mark.parametrize("direction", ["de-en", "en-de"])
@pytest.mark.parametrize("n_tokens", [5, 20, 80])
def test_texts_have_exactly_n_tokens(checkpoint, direction, n_tokens):
    text = text_of_tokens(checkpoint.tokenizer, SOURCE_LANGUAGE[direction], n_tokens)
    assert len(checkpoint.tokenizer.encode(text)) == n_tokens
    other = text_of_tokens(checkpoint.tokenizer, SOURCE_LANGUAGE[direction], n_tokens, skip_words=3)
    assert len(checkpoint.tokenizer.encode(other)) == n_tokens and other != text


def test_statistics_and_interleaving():
    calls = []
    wall, cpu = time_interleaved({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}, repeats=2)
    assert calls == ["a", "b"] * 3 and {len(v) for v in [*wall.values(), *cpu.values()]} == {2}
    assert set(summarize([1.0, 2.0, 3.0])) == STATS and summarize([1.0, 2.0, 3.0])["median"] == 2.0


def test_model_part(checkpoint):
    rows = model_speed.measure(checkpoint, repeats=1, lengths=(5,), directions=("de-en", "en-de"))["rows"]
    assert [(r["direction"], r["source_tokens"]) for r in rows] == [("de-en", 5), ("en-de", 5)]
    for row in rows:
        assert row["same_output"]  # plain greedy decodes the very tokens of the trace
        for key in ("traced_ms", "plain_ms", "no_cache_ms", "traced_cpu_ms", "plain_cpu_ms"):
            assert set(row[key]) == STATS and row[key]["n"] == 1
        assert all(row[key] > 0 for key in ("plain_ratio", "no_cache_ratio", "trace_overhead"))


def test_views_part(checkpoint, tiny_checkpoint):
    result = views_speed.measure(checkpoint, str(tiny_checkpoint), repeats=2, lengths=(5,))
    views = {row["view"] for row in result["rows"]}
    assert {"layer/head change (cross)", "all-heads grid (cross)", "positional encodings", "masks"} <= views
    assert any(view.startswith("step:") for view in views)
    assert all(set(row[key]) == STATS and row[key]["n"] == 2 for row in result["rows"] for key in ("ms", "cpu_ms"))


def test_gpu_part_measures_training_steps(checkpoint):
    # the CUDA code path, run on the CPU: eager, fp32, one tiny batch
    result = gpu.measure(
        checkpoint.config, device="cpu", steps=1, warmup=1, max_tokens=64, seq_len=8, compile_model=False, bf16=False
    )
    assert result["tokens_per_s"] > 0 and 0 < result["mfu"] < 1
    assert result["batch"] == 4 and result["src_len"] == 8


def test_gpu_flops_are_6n_plus_attention_for_one_token_each_side(checkpoint):
    model, config = checkpoint.model, checkpoint.config
    # one source and one target token: every parameter (the embedding as the projection) is used once
    attention = 12 * config.d_model * (config.n_encoder_layers + 2 * config.n_decoder_layers)
    assert gpu.step_flops(model, batch=1, src_len=1, tgt_len=1) == 6 * model.num_parameters() + attention
    assert gpu.step_flops(model, batch=3, src_len=4, tgt_len=5) == 3 * gpu.step_flops(model, 1, 4, 5)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message printed without CUDA")
def test_gpu_part_skips_without_cuda(checkpoint):
    assert gpu.measure(checkpoint.config) == {"skipped": "no CUDA device"}


def test_command_line_writes_json_and_targets(tiny_checkpoint, tmp_path, capsys):
    out = tmp_path / "results.json"
    assert (
        run.main(
            [
                "--checkpoint",
                str(tiny_checkpoint),
                "--parts",
                "model,views,gpu",
                "--repeats",
                "1",
                "--lengths",
                "5,20",
                "--threads",
                "1",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    results = json.loads(out.read_text(encoding="utf-8"))
    assert {"machine", "model", "views", "gpu", "targets"} <= set(results)
    assert results["machine"]["torch_threads"] == 1
    names = {t["target"] for t in results["targets"]}
    assert "translate + full trace, 20 tokens" in names and "re-render from the trace (worst view), 20 tokens" in names
    assert all(isinstance(t["met"], bool) for t in results["targets"])
    printed = capsys.readouterr().out
    assert "## targets" in printed and "## model" in printed


def test_unknown_part_is_refused(tiny_checkpoint):
    with pytest.raises(SystemExit, match="unknown part"):
        run.main(["--checkpoint", str(tiny_checkpoint), "--parts", "speed"])


@pytest.mark.slow
@pytest.mark.browser
def test_browser_and_memory_parts(checkpoint, tiny_checkpoint):
    from benchmarks import browser_speed, memory

    if not browser_speed.CHROMIUM.exists():
        pytest.skip(f"{browser_speed.CHROMIUM} is not installed")
    result = in_own_thread(browser_speed.measure, checkpoint, str(tiny_checkpoint), repeats=1, n_tokens=5)
    for key in ("translate_ms", "step_ms"):
        assert {"drawn", "painted", "afterplot", "plotly_react"} <= set(result[key]) and result[key]["drawn"]["n"] == 1
    result = memory.measure(checkpoint, str(tiny_checkpoint), translations=2)
    assert result["peak_rss_mib"] >= result["rss_end_mib"] > 0 and result["api_round_trip_ms"]["n"] == 2
