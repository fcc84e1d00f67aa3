"""Model throughput in one process against a pool of worker processes (serving/pool.py), from many threads.

Each configuration serves the same translations from --threads caller threads (as Gradio's worker
threads would call it); workers 0 is the single-process mode (every thread in this process, one
GIL). Reports translations/s and p50/p95 per call after one warm-up call per worker.

    python3 scripts/pool_throughput.py --checkpoint checkpoints/de-en-small --workers 0 2 --threads 8 --requests 40
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a file
    sys.path.insert(0, str(ROOT))
from scripts.load_test import SENTENCES  # noqa: E402
from model.checkpoints.paths import DEFAULT_CHECKPOINT  # noqa: E402
from serving import ModelPool  # noqa: E402


def measure(checkpoint: str, workers: int, threads: int, requests: int) -> dict:
    import torch

    torch.set_num_threads(1)  # as the app runs: one thread per request
    with ModelPool(checkpoint, workers=workers) as pool:
        for _ in range(max(1, workers)):  # warm-up: first calls allocate
            pool.run("translate", text=SENTENCES[0][0], direction=SENTENCES[0][1])

        def call(index: int) -> float:
            start = time.perf_counter()
            text, direction = SENTENCES[index % len(SENTENCES)]
            pool.run("translate", text=text, direction=direction)
            return time.perf_counter() - start

        start = time.perf_counter()
        with ThreadPoolExecutor(threads) as callers:
            latencies = list(callers.map(call, range(requests)))
        wall = time.perf_counter() - start
    return {"workers": workers, "threads": threads, "requests": requests, "wall_s": wall,
            "per_s": requests / wall, "p50_s": float(np.percentile(latencies, 50)),
            "p95_s": float(np.percentile(latencies, 95))}


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", default=str(DEFAULT_CHECKPOINT), help="checkpoint directory")
    parser.add_argument("--workers", type=int, nargs="+", default=[0, 2],
                        help="pool sizes to compare; 0 = single-process mode (default: 0 2)")
    parser.add_argument("--threads", type=int, default=8, help="caller threads (default 8)")
    parser.add_argument("--requests", type=int, default=40, help="translations per configuration (default 40)")
    args = parser.parse_args(argv)
    if args.threads < 1 or args.requests < 1 or min(args.workers) < 0:
        parser.error("--threads and --requests must be at least 1, --workers not negative")
    results = []
    for workers in args.workers:
        result = measure(args.checkpoint, workers, args.threads, args.requests)
        results.append(result)
        print(f"workers {workers}: {result['per_s']:.1f} translations/s, p50 {result['p50_s'] * 1000:.0f} ms, "
              f"p95 {result['p95_s'] * 1000:.0f} ms ({args.requests} from {args.threads} threads)", flush=True)
    return results


if __name__ == "__main__":
    main()
