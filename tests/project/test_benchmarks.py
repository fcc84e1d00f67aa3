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


# --------------------------------------------------------------------------- the OPUS-MT part
def test_opus_mt_part_times_each_stage_of_translate_and_the_first_figure(marian_de_en_folder):
    from benchmarks import opus_mt
    from model.checkpoints.marian import load_marian_checkpoint

    checkpoint = load_marian_checkpoint(marian_de_en_folder)
    text = opus_mt.source_text(checkpoint.tokenizer, "de")
    assert len(checkpoint.tokenizer.encode(text)) == opus_mt.SOURCE_TOKENS
    rows = opus_mt.measure_speed(checkpoint, repeats=1, threads=(1,))
    assert [(r["threads"], r["budget"], r["direction"]) for r in rows] == [
        (1, None, "de-en"),
        (1, opus_mt.OUTPUT_TOKENS, "de-en"),
    ]
    assert rows[1]["output_steps"] <= opus_mt.OUTPUT_TOKENS
    for row in rows:
        assert set(row["ms"]) == {"translate", "trace_file", "first_figure", "total"}
        assert all(set(stats) == STATS and stats["n"] == 1 for stats in row["ms"].values())
        stages = sum(row["ms"][name]["median"] for name in ("translate", "trace_file", "first_figure"))
        assert row["ms"]["total"]["median"] == pytest.approx(stages, abs=0.05)


def test_opus_mt_folder_has_the_published_fields_and_never_ends(tmp_path):
    """The random folder (small here; full size in the benchmark): the published config fields, a vocabulary of
    exactly the asked size with <pad> last, loadable by the app's loader, and every output runs to the limit."""
    from marian_hub_folder import PUBLISHED_FIELDS

    from safetensors.torch import load_file

    from benchmarks.opus_mt_folder import FULL_SIZES, NEVER_ENDS_BIAS, build_opus_mt_folder
    from model.checkpoints.marian import load_marian_checkpoint
    from model.decoding.greedy import default_max_new_tokens, translate

    small = {**FULL_SIZES, "d_model": 32, "encoder_ffn_dim": 64, "decoder_ffn_dim": 64}
    small.update(encoder_layers=1, decoder_layers=1)
    folder = build_opus_mt_folder(tmp_path / "opus-mt-en-de", "en-de", sizes=small, vocab_size=700)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    assert {key: config[key] for key in PUBLISHED_FIELDS} == PUBLISHED_FIELDS
    assert (config["vocab_size"], config["pad_token_id"], config["decoder_start_token_id"]) == (700, 699, 699)
    vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
    assert sorted(vocab.values()) == list(range(700)) and vocab["<pad>"] == 699
    eos = config["eos_token_id"]
    assert float(load_file(str(folder / "model.safetensors"))["final_logits_bias"][0, eos]) == NEVER_ENDS_BIAS
    checkpoint = load_marian_checkpoint(folder)
    assert checkpoint.tokenizer.directions == ("en-de",) and checkpoint.config.d_model == 32
    trace = translate(checkpoint.model, checkpoint.tokenizer, "A man rides a bike.", "en-de")
    assert trace.num_steps == default_max_new_tokens(len(trace.source_ids))
    assert trace.output_ids[-1] == checkpoint.config.eos_id and checkpoint.config.eos_id not in trace.output_ids[:-1]


@pytest.mark.slow
def test_opus_mt_memory_child_reads_the_rss_with_both_models(tiny_checkpoint, marian_de_en_folder):
    from benchmarks import opus_mt

    result = opus_mt.measure_memory(str(tiny_checkpoint), marian_de_en_folder, translations=1)
    stages = list(result["readings"])
    assert stages[:3] == ["imports", "own model and page", "OPUS-MT loaded beside it"]
    assert all(reading["peak_mib"] >= reading["rss_mib"] > 0 for reading in result["readings"].values())
    assert result["peak_mib"] == max(reading["peak_mib"] for reading in result["readings"].values())
