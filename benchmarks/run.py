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
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

from model import load_checkpoint
from model.checkpoints.paths import DEFAULT_CHECKPOINT
from model.training.precision import cpu_flags

from . import browser_speed, gpu, memory, model_speed, opus_mt, serving, views_speed
from .common import ROOT

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
def machine_info(threads: int, checkpoint) -> dict:
    cpu = (
        next(
            (
                line.split(":", 1)[1].strip()
                for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")
            ),
            platform.processor(),
        )
        if Path("/proc/cpuinfo").exists()
        else ""
    )
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    import gradio

    return {
        "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cpu": cpu,
        "cpu_flags": sorted(flag for flag in cpu_flags() if flag.startswith(("avx", "fma", "amx"))),
        "cpu_count": os.cpu_count(),
        "load_average_start": list(os.getloadavg()),
        "torch_threads": threads,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "gradio": gradio.__version__,
        "git_commit": commit,
        "checkpoint": str(checkpoint.path),
        "parameters": checkpoint.model.num_parameters(),
        "config": checkpoint.config.to_dict(),
    }


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


# --------------------------------------------------------------------------- printing
def table(headers: list[str], rows: list[list]) -> str:
    cells = [[str(c) for c in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = [
        "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))) for row in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def print_results(results: dict) -> None:
    part = results.get("model", {})
    if "rows" in part:
        print(f"\n## model (CPU, {results['machine']['torch_threads']} torch threads), ms")
        print(
            table(
                [
                    "direction",
                    "tokens",
                    "steps",
                    "traced med",
                    "traced p95",
                    "traced cpu",
                    "per step",
                    "plain med",
                    "no-cache med",
                    "plain/traced",
                    "no-cache/traced",
                    "traced/plain",
                ],
                [
                    [
                        r["direction"],
                        r["source_tokens"],
                        r["output_steps"],
                        r["traced_ms"]["median"],
                        r["traced_ms"]["p95"],
                        r["traced_cpu_ms"]["median"],
                        r["traced_ms_per_step"],
                        r["plain_ms"]["median"],
                        r["no_cache_ms"]["median"],
                        r["plain_ratio"],
                        r["no_cache_ratio"],
                        r["trace_overhead"],
                    ]
                    for r in part["rows"]
                ],
            )
        )
    part = results.get("views", {})
    if "rows" in part:
        print("\n## views: server-side re-render from a kept trace (app callbacks), ms")
        print(
            table(
                ["view", "tokens", "steps", "median", "p95", "cpu median"],
                [
                    [
                        r["view"],
                        r["source_tokens"],
                        r["steps"],
                        r["ms"]["median"],
                        r["ms"]["p95"],
                        r["cpu_ms"]["median"],
                    ]
                    for r in part["rows"]
                ],
            )
        )
    part = results.get("browser", {})
    if "translate_ms" in part:
        print(f"\n## browser (headless Chromium, {part['source_tokens']}-token source), ms after the click")
        rows = []
        for name, key in (("Translate -> attention plot", "translate_ms"), ("Next step -> attention plot", "step_ms")):
            stats = part[key]
            optional = [stats[key]["median"] if stats[key] else "-" for key in ("afterplot", "plotly_react")]
            rows.append([name, stats["drawn"]["median"], stats["drawn"]["p95"], stats["painted"]["median"], *optional])
        print(table(["click", "drawn med", "drawn p95", "painted med", "afterplot med", "in Plotly.react med"], rows))
    part = results.get("serving", {})
    if "single_call" in part:
        call = part["single_call"]
        lean = call.get("api_no_download_ms", {}).get("median", "-")
        print(
            f"\n## serving: one /translate call {call['api_ms']['median']} ms median (bare model "
            f"{call['bare_model_ms']['median']} ms = {call['model_share']:.0%}; without downloading the trace "
            f"{lean} ms); RSS of all processes "
            f"{part['rss']['total_mib']} MiB"
        )
        print(
            table(
                ["run", "ok", "errors", "p50 s", "p95 s", "calls/s", "page p95 s", "server cores", "load avg"],
                [
                    [
                        name,
                        r["ok"],
                        len(r["errors"]),
                        round(r["p50_s"], 2),
                        round(r["p95_s"], 2),
                        round(r["throughput_per_s"], 2),
                        round(r["page_p95_s"], 2) if r["scenario"] == "lecture" else "-",
                        round(r["server_cores"], 2),
                        r["machine"]["load_average"][0],
                    ]
                    for name, r in (("burst", part["burst"]), ("lecture", part["lecture"]))
                ],
            )
        )
    part = results.get("opus-mt", {})
    if "rows" in part:
        print(
            f"\n## opus-mt: {part['folder']}, {part['parameters']:,} parameters, loaded in {part['load_s']} s; "
            "Translate -> trace -> first figure (server-side), ms"
        )
        print(
            table(
                ["threads", "budget", "steps", "total med", "total p95", "translate", "trace file", "figure", "cpu"],
                [
                    [
                        r["threads"],
                        "app default" if r["budget"] is None else r["budget"],
                        r["output_steps"],
                        r["ms"]["total"]["median"],
                        r["ms"]["total"]["p95"],
                        r["ms"]["translate"]["median"],
                        r["ms"]["trace_file"]["median"],
                        r["ms"]["first_figure"]["median"],
                        r["cpu_ms"]["median"],
                    ]
                    for r in part["rows"]
                ],
            )
        )
        print("\nmemory of the app's process with both models (MiB)")
        print(
            table(
                ["stage", "RSS", "peak so far"],
                [[stage, v["rss_mib"], v["peak_mib"]] for stage, v in part["memory"]["readings"].items()],
            )
        )
    for name in ("browser", "memory", "gpu"):
        if "skipped" in results.get(name, {}):
            print(f"\n## {name}: skipped: {results[name]['skipped']}")
    part = results.get("memory", {})
    if "peak_rss_mib" in part:
        print(f"\n## memory: app.py after {part['translations']} translations (gradio_client), MiB")
        print(
            table(
                ["RSS at start", "RSS at end", "peak RSS (VmHWM)", "API round trip med ms"],
                [
                    [
                        part["rss_start_mib"],
                        part["rss_end_mib"],
                        part["peak_rss_mib"],
                        part["api_round_trip_ms"]["median"],
                    ]
                ],
            )
        )
    part = results.get("gpu", {})
    if "tokens_per_s" in part:
        print(f"\n## gpu: training on {part['device']} ({part['parameters']:,} parameters)")
        print(
            table(
                ["batch", "len", "compile", "step ms", "tokens/s", "model TFLOP/s", "peak TFLOP/s", "MFU"],
                [
                    [
                        part["batch"],
                        part["src_len"],
                        part["compile"],
                        part["step_ms"],
                        part["tokens_per_s"],
                        part["model_tflops_per_s"],
                        part["peak_tflops"],
                        f"{part['mfu']:.1%}",
                    ]
                ],
            )
        )
    if results.get("targets"):
        print("\n## targets (medians)")
        print(
            table(
                ["target", "value", "limit", "unit", ""],
                [
                    [t["target"], t["value"], t["limit"], t["unit"], "met" if t["met"] else "MISSED"]
                    for t in results["targets"]
                ],
            )
        )


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
