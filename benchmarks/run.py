"""Speed and memory benchmarks of the model, the trace views and the app, with the project's targets.

    python -m benchmarks.run                                  # every part, checkpoints/de-en-small
    python -m benchmarks.run --checkpoint runs/cpu-small/best --repeats 3 --parts model,views
    python -m benchmarks.run --parts gpu --gpu-peak-tflops 989  # on a CUDA machine
    python -m benchmarks.run --parts opus-mt [--opus-mt DIR]    # an OPUS-MT model (random full-size without DIR)

Parts: model (translate + trace vs plain greedy vs no KV cache), views (re-render from a kept
trace), browser (click-to-plot in headless Chromium), memory (app RSS after N translations),
gpu (training tokens/s and MFU; "skipped: no CUDA device" without one), opus-mt (an OPUS-MT model:
Translate -> trace -> first figure, and memory with both models loaded). Prints one table per
part and the targets (met / missed), and writes everything as JSON (--out).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import torch

from model import load_checkpoint
from model.checkpoints.paths import DEFAULT_CHECKPOINT

from . import browser_speed, gpu, memory, model_speed, opus_mt, serving, views_speed
from .common import ROOT, machine_info
from .report import print_results

PARTS = ("model", "views", "browser", "memory", "serving", "gpu", "opus-mt")
REFERENCE_TOKENS = 20  # the targets are judged on a 20-token source sentence
TARGETS = {  # name: (limit, unit); a value <= limit meets the target
    "translate + full trace, 20 tokens": (60.0, "ms"),
    "tracing overhead (traced / plain greedy), 20 tokens": (1.3, "x"),
    "re-render from the trace (worst view), 20 tokens": (30.0, "ms"),
    "browser: Translate click -> attention plot": (500.0, "ms"),
    "browser: next-step click -> attention plot": (200.0, "ms"),
    "peak RSS of the app after the translations": (1.5e9 / 2**20, "MiB"),  # 1.5 GB
    "RSS of every app process": (1.5e9 / 2**20, "MiB"),
    "single /translate call, default gradio_client": (150.0, "ms"),
    "burst: errors": (0, "count"),
    "burst: p95": (3.0, "s"),
    "lecture hall: page alive p95": (5.0, "s"),
    "lecture hall: errors": (0, "count"),
    "OPUS-MT: Translate -> trace -> first figure, 20 tokens, the app's budget": (1500.0, "ms"),
    f"OPUS-MT: Translate -> trace -> first figure, 20 tokens, {opus_mt.OUTPUT_TOKENS}-token output": (1500.0, "ms"),
    "OPUS-MT: peak RSS with both models loaded": (1.5e9 / 2**20, "MiB"),
}
OPUS_MT_JUDGED_THREADS = 1  # the OPUS-MT speed targets are judged at app.py's default --threads
AT_LEAST: dict[str, tuple[float, str]] = {}  # a value >= limit meets these


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--checkpoint",
        default=str(DEFAULT_CHECKPOINT),
        help="checkpoint directory "
        f"(default {DEFAULT_CHECKPOINT}); a copy is benchmarked, so a training run may overwrite it",
    )
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated subset of {','.join(PARTS)}")
    parser.add_argument("--repeats", type=int, default=20, help="timed runs per model variant and per view")
    parser.add_argument("--browser-repeats", type=int, default=10, help="timed clicks per browser measurement")
    parser.add_argument("--translations", type=int, default=100, help="translations before reading the app's RSS")
    parser.add_argument(
        "--lengths",
        default=",".join(map(str, model_speed.LENGTHS)),
        help="source lengths in subword tokens for the model part",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=torch.get_num_threads(),
        help="torch CPU threads in this process (default: torch's default here, as app.py gets)",
    )
    parser.add_argument("--api-repeats", type=int, default=20, help="serving: timed single /translate calls")
    parser.add_argument("--clients", type=int, default=32, help="serving: burst clients (each --requests calls)")
    parser.add_argument("--requests", type=int, default=5, help="serving: translations per burst client")
    parser.add_argument("--visitors", type=int, default=100, help="serving: lecture-hall visitors")
    parser.add_argument("--window", type=float, default=10.0, help="serving: seconds over which the visitors arrive")
    parser.add_argument(
        "--opus-mt",
        metavar="DIR",
        help="opus-mt: a real OPUS-MT folder (default: a full-size one with random weights, built in a temp folder)",
    )
    parser.add_argument(
        "--opus-mt-translations", type=int, default=10, help="opus-mt: translations per model before reading the RSS"
    )
    parser.add_argument("--gpu-steps", type=int, default=50)
    parser.add_argument("--gpu-max-tokens", type=int, default=8000, help="source+target tokens per training batch")
    parser.add_argument("--gpu-seq-len", type=int, default=32, help="source and target length of the synthetic batch")
    parser.add_argument(
        "--gpu-peak-tflops",
        type=float,
        default=gpu.H100_SXM_BF16_DENSE / 1e12,
        help="peak dense bf16 TFLOP/s of the GPU for MFU (default: H100 SXM, 989)",
    )
    parser.add_argument("--gpu-no-compile", action="store_true", help="train eagerly (no torch.compile)")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results.json"), help="JSON results file")
    return parser


# --------------------------------------------------------------------------- machine and targets
def evaluate_targets(results: dict) -> list[dict]:
    """One row per target that the parts run could judge: value, limit, met."""
    values: dict[str, float] = {}
    if "rows" in results.get("model", {}):
        reference = [r for r in results["model"]["rows"] if r["source_tokens"] == REFERENCE_TOKENS]
        if reference:
            values["translate + full trace, 20 tokens"] = max(r["traced_ms"]["median"] for r in reference)
            values["tracing overhead (traced / plain greedy), 20 tokens"] = max(r["trace_overhead"] for r in reference)
    if "rows" in results.get("views", {}):
        reference = [r for r in results["views"]["rows"] if r["source_tokens"] == REFERENCE_TOKENS]
        if reference:
            values["re-render from the trace (worst view), 20 tokens"] = max(r["ms"]["median"] for r in reference)
    if "translate_ms" in results.get("browser", {}):
        values["browser: Translate click -> attention plot"] = results["browser"]["translate_ms"]["drawn"]["median"]
        values["browser: next-step click -> attention plot"] = results["browser"]["step_ms"]["drawn"]["median"]
    if "peak_rss_mib" in results.get("memory", {}):
        values["peak RSS of the app after the translations"] = results["memory"]["peak_rss_mib"]
    part = results.get("serving", {})
    if "single_call" in part:
        values["single /translate call, default gradio_client"] = part["single_call"]["api_ms"]["median"]
        values["burst: errors"] = len(part["burst"]["errors"])
        values["burst: p95"] = round(part["burst"]["p95_s"], 2)
        values["lecture hall: page alive p95"] = round(part["lecture"]["page_p95_s"], 2)
        values["lecture hall: errors"] = len(part["lecture"]["errors"])
        values["RSS of every app process"] = part["rss"]["total_mib"]
    part = results.get("opus-mt", {})
    for row in part.get("rows", []):
        if row["threads"] == OPUS_MT_JUDGED_THREADS:
            budget = "the app's budget" if row["budget"] is None else f"{row['budget']}-token output"
            values[f"OPUS-MT: Translate -> trace -> first figure, 20 tokens, {budget}"] = row["ms"]["total"]["median"]
    if "memory" in part:
        values["OPUS-MT: peak RSS with both models loaded"] = part["memory"]["peak_mib"]
    rows = [
        {"target": name, "value": values[name], "limit": round(limit, 1), "unit": unit, "met": values[name] <= limit}
        for name, (limit, unit) in TARGETS.items()
        if name in values
    ]
    return rows + [
        {"target": name, "value": values[name], "limit": limit, "unit": unit, "met": values[name] >= limit}
        for name, (limit, unit) in AT_LEAST.items()
        if name in values
    ]


# --------------------------------------------------------------------------- main
def run(args: argparse.Namespace) -> dict:
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        raise SystemExit(f"error: unknown part(s) {', '.join(unknown)}; choose from {', '.join(PARTS)}")
    source = Path(args.checkpoint)
    if not (source / "config.json").exists():
        raise SystemExit(f"error: no checkpoint at {source} (config.json missing); pass --checkpoint DIR")
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory(prefix="benchmark-checkpoint-") as folder:
        copy = Path(folder) / source.name
        shutil.copytree(source, copy)  # a training run may replace the original while we measure
        checkpoint = load_checkpoint(copy)
        results: dict = {"machine": machine_info(args.threads, checkpoint), "parts": parts}
        results["machine"]["checkpoint"] = str(source)
        lengths = tuple(int(n) for n in args.lengths.split(","))
        if "model" in parts:
            results["model"] = model_speed.measure(checkpoint, args.repeats, lengths)
        if "views" in parts:
            results["views"] = views_speed.measure(checkpoint, str(copy), args.repeats)
        if "browser" in parts:
            results["browser"] = browser_speed.measure(checkpoint, str(copy), args.browser_repeats)
        if "memory" in parts:
            results["memory"] = memory.measure(checkpoint, str(copy), args.translations)
        if "serving" in parts:
            results["serving"] = serving.measure(
                checkpoint, str(copy), args.api_repeats, args.clients, args.requests, args.visitors, args.window
            )
        if "opus-mt" in parts:
            results["opus-mt"] = opus_mt.measure(str(copy), args.opus_mt, args.repeats, args.opus_mt_translations)
        if "gpu" in parts:
            results["gpu"] = gpu.measure(
                checkpoint.config,
                "cuda",
                steps=args.gpu_steps,
                max_tokens=args.gpu_max_tokens,
                seq_len=args.gpu_seq_len,
                peak_flops=args.gpu_peak_tflops * 1e12,
                compile_model=not args.gpu_no_compile,
            )
    results["machine"]["load_average_end"] = list(os.getloadavg())
    results["targets"] = evaluate_targets(results)
    return results


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    results = run(args)
    print_results(results)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
