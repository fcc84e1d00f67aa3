"""Translate + full trace on cuda against the CPU: what `--device auto` gains where there is a GPU.

    python -m benchmarks.device_speed                       # checkpoints/de-en-small, a 20-token source, 20 repeats
    python -m benchmarks.device_speed --tokens 80 --repeats 50 --threads 1

For a German and an English source of exactly N subword tokens (benchmarks/common.py), the serving job
`translate` (serving/jobs.py: tokenize, encode, KV-cached greedy, one teacher-forced traced pass, the numpy
trace on the CPU) runs on the CPU and on cuda, round-robin, and the medians are printed with the GPU's name
and the CPU's model. cuda is synchronized by the trace itself (its arrays are copied to the CPU). Without a
CUDA device it prints 'no GPU' and the CPU figures alone. A script that prints figures, not a timed test.
"""

from __future__ import annotations

import argparse
import json
import platform

import torch

from model import load_checkpoint
from model.checkpoints.paths import DEFAULT_CHECKPOINT
from model.training.precision import cpu_model
from serving import JOBS

from .common import SOURCE_LANGUAGE, ratio, summarize, text_of_tokens, time_interleaved


def measure(checkpoint_dir, n_tokens: int = 20, repeats: int = 20) -> dict:
    """-> {"machine": {...}, "rows": [{direction, steps, cpu_ms, cuda_ms, speedup, same_output}]}."""
    cuda = torch.cuda.is_available()
    machine = {"cpu": cpu_model(), "torch_threads": torch.get_num_threads(), "torch": torch.__version__,
               "python": platform.python_version(), "gpu": torch.cuda.get_device_name(0) if cuda else "no GPU"}
    on = {"cpu": load_checkpoint(checkpoint_dir)}
    if cuda:
        on["cuda"] = load_checkpoint(checkpoint_dir, device="cuda")
    rows = []
    for direction in ("de-en", "en-de"):
        text = text_of_tokens(on["cpu"].tokenizer, SOURCE_LANGUAGE[direction], n_tokens)
        traces = {device: JOBS["translate"](checkpoint, text=text, direction=direction)
                  for device, checkpoint in on.items()}
        wall, _ = time_interleaved({device: (lambda c=checkpoint: JOBS["translate"](c, text=text, direction=direction))
                                    for device, checkpoint in on.items()}, repeats, warmup=3)
        stats = {device: summarize(values) for device, values in wall.items()}
        row = {"direction": direction, "source_tokens": n_tokens, "steps": traces["cpu"].num_steps,
               **{f"{device}_ms": stats[device] for device in on}}
        if cuda:
            row["speedup"] = ratio(stats["cpu"]["median"], stats["cuda"]["median"])
            row["same_output"] = traces["cuda"].output_ids == traces["cpu"].output_ids
        rows.append(row)
    return {"machine": machine, "rows": rows}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", default=str(DEFAULT_CHECKPOINT))
    parser.add_argument("--tokens", type=int, default=20, help="source length in subword tokens (default 20)")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: torch's)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON too")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    result = measure(args.checkpoint, args.tokens, args.repeats)
    machine = result["machine"]
    print(f"CPU: {machine['cpu']} ({machine['torch_threads']} torch threads); GPU: {machine['gpu']}; "
          f"torch {machine['torch']}, Python {machine['python']}")
    if machine["gpu"] == "no GPU":
        print("no GPU: the CPU figures only")
    for row in result["rows"]:
        cells = [f"{row['direction']}, {row['source_tokens']} source tokens, {row['steps']} steps:",
                 f"cpu median {row['cpu_ms']['median']:.1f} ms (p95 {row['cpu_ms']['p95']:.1f})"]
        if "cuda_ms" in row:
            cells += [f"cuda median {row['cuda_ms']['median']:.1f} ms (p95 {row['cuda_ms']['p95']:.1f})",
                      f"x{row['speedup']} faster on cuda", "same output" if row["same_output"] else "OUTPUT DIFFERS"]
        print("  ".join(cells))
    if args.json:
        print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
