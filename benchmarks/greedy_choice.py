"""One decoding step's greedy choice, through the whole float32 projection and through the int8 screen
(model/decoding/greedy_choice.py), per matrix size: where the screen pays (`SCREEN_MIN_WEIGHTS`).

    python3 -m benchmarks.greedy_choice [--repeats 200] [--threads 1]

Random matrices (vocabulary x d_model: the project's own model's, two between, OPUS-MT's) and LayerNorm-like hidden
states; median microseconds per choice, the CPU named.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import torch
import torch.nn.functional as F

from model.decoding.greedy_choice import SCREEN_MIN_WEIGHTS, ScreenedChoice, full_choice, int8_kernel

from .common import machine_info

SHAPES = [(8_000, 256), (16_000, 256), (32_000, 512), (58_101, 512)]  # own model ... OPUS-MT


def per_choice_us(choose, states: list[torch.Tensor]) -> float:
    """Median microseconds of `choose(h)` over the states, after one warm-up."""
    choose(states[0])
    times = []
    for h in states:
        start = time.perf_counter()
        choose(h)
        times.append((time.perf_counter() - start) * 1e6)
    return round(statistics.median(times), 1)


def measure(repeats: int) -> list[dict]:
    rows, banned = [], torch.tensor([], dtype=torch.long)
    for vocab, d_model in SHAPES:
        generator = torch.Generator().manual_seed(0)
        weight = torch.randn(vocab, d_model, generator=generator) * d_model**-0.5
        screen = ScreenedChoice(weight, None)
        states = [torch.randn(d_model, generator=generator) for _ in range(repeats)]
        rows.append(
            {
                "vocabulary": vocab,
                "d_model": d_model,
                "weights": vocab * d_model,
                "screened_from_here": vocab * d_model >= SCREEN_MIN_WEIGHTS,
                "float32_us": per_choice_us(lambda h: full_choice(F.linear(h[None], weight), banned), states),
                "screen_us": per_choice_us(lambda h: screen.choose(h, banned), states),
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    if int8_kernel() is None:
        raise SystemExit("this PyTorch has no weight-only int8 kernel: the screen is never used")
    torch.set_num_threads(args.threads)
    result = {**machine_info(args.threads), "rows": measure(args.repeats)}
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
