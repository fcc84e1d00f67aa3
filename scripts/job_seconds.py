"""What each model job (serving/jobs.py) costs per unit of its work, measured on a checkpoint: the source of every
ZeroGPU duration (serving/zerogpu.py) and of docs/serving.md's job table.

Each job's own example call (its declaration's `example`) runs on German sentences of a few lengths (--sizes,
source tokens); its CPU seconds (time.process_time, one PyTorch thread, the smallest of --repeats runs after a
warm-up) against the call's `work` are fitted to `seconds = fixed_s + per_unit_s x work` (serving/job_costs.py).
--write stores the fit in serving/job_costs.json; docs/serving.md's table is `--table` (a test keeps them equal).

    python3 -m scripts.job_seconds --checkpoint checkpoints/de-en-small --write
    python3 -m scripts.job_seconds --table
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

import torch

from scripts.sample_texts import text_of_tokens
from model import load_checkpoint
from model.checkpoints.paths import DEFAULT_CHECKPOINT
from serving import jobs, zerogpu
from serving.job_costs import COSTS_FILE, cost_of, fit, measured

TYPICAL = ("Zwei Hunde spielen im Schnee.", "de-en")  # a typical sentence: 7 source tokens on the shipped tokenizer
SIZES = (7, 20, 40)  # source tokens of the measured sentences (the first: TYPICAL)
ANONYMOUS_QUOTA_S = 120  # an anonymous visitor's daily ZeroGPU quota (huggingface.co/docs/hub/spaces-zerogpu)


def cpu_seconds(run, repeats: int) -> float:
    """The smallest CPU time of `repeats` runs after one warm-up (the least disturbed by other work)."""
    run()
    best = float("inf")
    for _ in range(max(1, repeats)):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


def sentence(checkpoint, tokens: int) -> tuple[str, str]:
    if tokens == SIZES[0]:
        return TYPICAL
    return text_of_tokens(checkpoint.tokenizer, "de", tokens), "de-en"


def measure(checkpoint, sizes=SIZES, repeats: int = 3, names=None) -> dict[str, list[tuple[float, float]]]:
    """job name -> [(work, CPU seconds)] of its example call on a sentence of each size."""
    points: dict[str, list[tuple[float, float]]] = {name: [] for name in jobs.JOBS if not names or name in names}
    for size in sizes:
        sample = jobs.JobSample.of(checkpoint, *sentence(checkpoint, size))
        for name in points:
            job = jobs.JOBS[name]
            args, kwargs = job.example(sample)
            seconds = cpu_seconds(lambda: job.function(checkpoint, *args, **kwargs), repeats)
            points[name].append((job.work(checkpoint, args, kwargs), seconds))
            print(f"{name}: {size} source tokens, work {points[name][-1][0]:g}, {seconds:.3f} CPU s", flush=True)
    return points


def machine() -> str:
    try:
        lines = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout.splitlines()
        model = next((line.split(":", 1)[1].strip() for line in lines if line.startswith("Model name")), "")
    except OSError:
        model = ""
    return f"{model or platform.processor() or 'unknown CPU'}, torch {torch.__version__}, 1 thread"


def typical_calls(checkpoint) -> dict[str, float]:
    """job name -> its work on TYPICAL (each job's example call on that sentence)."""
    sample = jobs.JobSample.of(checkpoint, *TYPICAL)
    return {name: job.work(checkpoint, *job.example(sample)) for name, job in jobs.JOBS.items()}


def table(checkpoint) -> str:
    """docs/serving.md's job table: unit, measured cost line, the warm duration asked for a typical sentence."""
    typical = typical_calls(checkpoint)
    lines = [
        "| job | work, in | CPU s = fixed + per unit x work | work on the typical sentence | ZeroGPU duration, s (warm) |",
        "| --- | --- | --- | ---: | ---: |",
    ]
    for name, job in jobs.JOBS.items():
        cost = cost_of(name)
        seconds = max(1, -(-zerogpu.HEADROOM * cost.seconds(typical[name]) // 1))
        lines.append(
            f"| `{name}` | {job.unit} | {cost.fixed_s:.3g} + {cost.per_unit_s:.3g} x work | {typical[name]:g} | "
            f"{int(seconds)} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", default=str(DEFAULT_CHECKPOINT))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="source tokens of the sentences")
    parser.add_argument("--jobs", nargs="*", help="measure only these jobs (default: all)")
    parser.add_argument("--write", action="store_true", help=f"store the fitted costs in {COSTS_FILE.name}")
    parser.add_argument("--table", action="store_true", help="print docs/serving.md's job table and stop")
    parser.add_argument("--output", type=Path, default=COSTS_FILE, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    checkpoint = load_checkpoint(args.checkpoint)
    if args.table:
        print(table(checkpoint))
        return {}
    points = measure(checkpoint, args.sizes, args.repeats, args.jobs)
    previous = measured(args.output)["jobs"] if args.output.is_file() else {}
    costs = {}
    for name in jobs.JOBS:
        if name in points:
            line = fit(points[name])
            costs[name] = {
                "unit": jobs.JOBS[name].unit,
                "fixed_s": round(line.fixed_s, 4),
                "per_unit_s": round(line.per_unit_s, 6),
                "points": [[w, round(s, 4)] for w, s in points[name]],
            }
        elif name in previous:
            costs[name] = previous[name]
    result = {
        "measured_on": machine(),
        "checkpoint": Path(args.checkpoint).name,
        "parameters": checkpoint.model.num_parameters(),  # serving/zerogpu.py scales larger models' costs by it
        "command": "python3 -m scripts.job_seconds " + " ".join(argv if argv is not None else sys.argv[1:]),
        "jobs": costs,
    }
    print(json.dumps(result, indent=1))
    if args.write:
        args.output.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        measured.cache_clear()
    return result


if __name__ == "__main__":
    main()
