"""CPU seconds of every model job (serving/jobs.py) on a checkpoint, at the input limits and on a short sentence.

What each job's `cpu_seconds` and its ZeroGPU duration (serving/zerogpu.py) rest on; the table goes to
docs/serving.md. One PyTorch thread; each job runs once to warm up, then --repeats times, and the largest CPU time
(time.process_time) is kept.

    python3 -m scripts.job_seconds --checkpoint checkpoints/de-en-small --repeats 3
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import torch

from benchmarks.common import text_of_tokens
from model import load_checkpoint
from model.analysis.paper_figures import PAPER_FIGURES
from model.checkpoints.paths import DEFAULT_CHECKPOINT
from model.decoding.ablation import Ablation
from model.text import limits
from serving import jobs
from serving.zerogpu import gpu_seconds

SHORT = ("Zwei Hunde spielen im Schnee.", "de-en")


def cpu_seconds(run: Callable[[], object], repeats: int) -> float:
    """The largest CPU time of `repeats` runs (after one warm-up run when repeating)."""
    if repeats > 1:
        run()
    worst = 0.0
    for _ in range(repeats):
        start = time.process_time()
        run()
        worst = max(worst, time.process_time() - start)
    return worst


def job_calls(checkpoint, text: str, direction: str) -> tuple[dict[str, Callable[[], object]], object]:
    """(every job of serving.JOBS as a call on one sentence, the sentence's trace decoded once here)."""
    trace = jobs.translate.function(checkpoint, text, direction)
    src, out = list(trace.source_ids), list(trace.output_ids)
    ablation = Ablation(encoder_heads=frozenset({(0, 0)}))
    calls = {
        "translate": lambda: jobs.translate.function(checkpoint, text, direction, ablation=ablation),
        "token_probabilities": lambda: jobs.token_probabilities.function(checkpoint, src, out, ablation),
        "beam_versus_greedy": lambda: jobs.beam_versus_greedy.function(checkpoint, trace),
        "record_cache": lambda: jobs.record_cache.function(checkpoint, trace),
        "paper_figures": lambda: jobs.paper_figures.function(checkpoint, PAPER_FIGURES),
        "corpus_attribution": lambda: jobs.corpus_attribution.function(checkpoint, src, out, 32),
        "corpus_sentence_vectors": lambda: jobs.corpus_sentence_vectors.function(checkpoint, src, out, "cross", 0, 0),
    }
    missing = set(jobs.JOBS) - set(calls)
    if missing:
        raise SystemExit(f"no measurement for the jobs {sorted(missing)}: add them to job_calls")
    return calls, trace


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", default=str(DEFAULT_CHECKPOINT))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--jobs", nargs="*", help="measure only these jobs (default: all)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    checkpoint = load_checkpoint(args.checkpoint)
    long_text = text_of_tokens(checkpoint.tokenizer, "de", limits.MAX_SOURCE_TOKENS)
    short_calls, short_trace = job_calls(checkpoint, *SHORT)
    long_calls, long_trace = job_calls(checkpoint, long_text, "de-en")
    print(f"short: {len(short_trace.source_ids)} source / {short_trace.num_steps} output tokens; "
          f"limits: {len(long_trace.source_ids)} / {long_trace.num_steps}; torch threads 1")
    print("| job | CPU s, short | CPU s, limits | declared `cpu_seconds` | ZeroGPU duration, s |")
    print("| --- | ---: | ---: | ---: | ---: |")
    results = {}
    for name, job in jobs.JOBS.items():
        if args.jobs and name not in args.jobs:
            continue
        short, long = cpu_seconds(short_calls[name], args.repeats), cpu_seconds(long_calls[name], args.repeats)
        results[name] = {"short_s": short, "limits_s": long}
        print(f"| `{name}` | {short:.2f} | {long:.2f} | {job.cpu_seconds:g} | {gpu_seconds(job)} |", flush=True)
    return results


if __name__ == "__main__":
    main()
