"""Translate -> trace -> first figure in this checkout against another, on one machine in one run: an OPUS-MT model
at the length limit (a full-size folder with random weights, whose translations never end: 52 steps for a 20-token
source) and the project's own checkpoint on the same 20-token source.

    git worktree add /tmp/before <commit>
    python3 -m benchmarks.opus_mt_against /tmp/before [--rounds 3] [--repeats 5] [--threads 1 2] [--opus-mt DIR]

Each measurement is a child process run in one checkout (its cwd and PYTHONPATH, so it imports that checkout's code)
that loads both models and times `benchmarks.opus_mt.translate_and_draw` (the app's Translate and the Attention
tab's first figure) `--repeats` times after a warm-up; the checkouts take turns, `--rounds` times, so a machine that
gets busier mid-run slows both. Medians over every round, in ms, per checkout, model and torch thread count.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OWN_CHECKPOINT = ROOT / "checkpoints" / "de-en-small"


def child(folder: str, own_checkpoint: str, repeats: int, threads: int) -> dict:
    """In a checkout: {model: [total ms per repeat]} for OPUS-MT at the limit and the own model."""
    import torch

    from benchmarks.opus_mt import source_text, translate_and_draw
    from model import load_checkpoint
    from model.checkpoints.marian import load_marian_checkpoint

    torch.set_num_threads(threads)
    samples = {}
    for name, checkpoint in (("opus-mt", load_marian_checkpoint(folder)), ("own", load_checkpoint(own_checkpoint))):
        direction = checkpoint.tokenizer.directions[0]
        text = source_text(checkpoint.tokenizer, direction.split("-")[0])
        translate_and_draw(checkpoint, text, direction, None)  # warm-up
        totals = []
        for _ in range(repeats):
            stages, steps = translate_and_draw(checkpoint, text, direction, None)
            totals.append(sum(stages.values()))
        samples[name] = {"ms": totals, "steps": steps}
    return samples


def run_child(checkout: Path, folder: Path, repeats: int, threads: int) -> dict:
    environment = {**os.environ, "PYTHONPATH": str(checkout)}
    command = [sys.executable, __file__, "--child", str(folder), str(OWN_CHECKPOINT), str(repeats), str(threads)]
    done = subprocess.run(command, cwd=checkout, env=environment, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the child in {checkout} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def compare(against: Path, folder: Path, rounds: int, repeats: int, threads: list[int]) -> dict:
    """{threads: {checkout: {model: {"median_ms", "steps", "ms"}}}} over alternating rounds."""
    checkouts = {"this checkout": ROOT, "against": against}
    collected: dict = {count: {name: {} for name in checkouts} for count in threads}
    for _ in range(rounds):
        for count in threads:
            for name, checkout in checkouts.items():
                for model, sample in run_child(checkout, folder, repeats, count).items():
                    kept = collected[count][name].setdefault(model, {"ms": [], "steps": sample["steps"]})
                    kept["ms"] += sample["ms"]
    for per_checkout in collected.values():
        for per_model in per_checkout.values():
            for kept in per_model.values():
                kept["median_ms"] = round(statistics.median(kept["ms"]), 1)
                kept["ms"] = [round(ms, 1) for ms in kept["ms"]]
    return collected


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("against", type=Path, help="the other checkout (a git worktree)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per child, after one warm-up")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--opus-mt", help="a real OPUS-MT folder (default: a full-size one with random weights)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from benchmarks.common import machine_info
    from benchmarks.opus_mt import opus_mt_folder

    start_info = machine_info(threads=args.threads)
    start = time.perf_counter()
    with opus_mt_folder(args.opus_mt) as (folder, kind):
        result = compare(args.against.resolve(), folder, args.rounds, args.repeats, args.threads)
    header = {
        **start_info,  # the load average at the start among them
        "load_average_end": os.getloadavg()[0],
        "opus_mt_weights": kind,
        "against": str(args.against),
        "seconds": round(time.perf_counter() - start),
    }
    print(json.dumps({**header, "threads": result}, indent=1))
    for count, per_checkout in result.items():
        for name, per_model in per_checkout.items():
            line = ", ".join(
                f"{model} {kept['median_ms']} ms ({kept['steps']} steps)" for model, kept in per_model.items()
            )
            print(f"{count} thread(s), {name}: {line} ({header['cpu']})", file=sys.stderr)
    return result


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--child":
        sys.path[0] = os.getcwd()  # the checkout's packages, not this folder's modules (benchmarks/serving.py...)
        print(json.dumps(child(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))))
        sys.exit(0)
    main()
