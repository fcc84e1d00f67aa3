"""Checkpoint averaging (section 6.1: the base models average the last 5 checkpoints): the element-wise mean
of several checkpoints' weights, written as one checkpoint directory the app and the scorer load.

    python -m model.training.average RUN/snaps/36000 RUN/snaps/36500 RUN/snaps/37000 --out runs/average

Every checkpoint must share the config and the tokenizer (the same file). The result keeps the newest
checkpoint's metrics and training log (the newest is the one with the highest step), names the averaged
steps in `metrics.json` ("selected", "averaged"), and gets its own model card. Training's `--average-last N`
uses the same mean on the last N evaluated weights.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import torch

from model.checkpoints.checkpoint import Checkpoint, CheckpointError, load_local_checkpoint, save_checkpoint
from model.checkpoints.files import TOKENIZER_FILE
from model.training.run_files import LOG_FILE


def average_state_dicts(state_dicts: list[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """The mean of each weight over the state dicts (summed in float32, back to the last one's dtype)."""
    if not state_dicts:
        raise ValueError("nothing to average")
    names = set(state_dicts[-1])
    for state_dict in state_dicts:
        if set(state_dict) != names:
            raise ValueError(
                "the checkpoints hold different weights: " + ", ".join(sorted(set(state_dict) ^ names)[:5])
            )
    return {
        name: torch.stack([s[name].float() for s in state_dicts]).mean(0).to(state_dicts[-1][name].dtype)
        for name in state_dicts[-1]
    }


def checkpoint_step(checkpoint: Checkpoint) -> int:
    """The training step a checkpoint was saved at: a run's best/ says "step", its last/ "training"."""
    metrics = checkpoint.metrics
    step = metrics.get("step", (metrics.get("training") or {}).get("step"))
    if not isinstance(step, int):
        raise CheckpointError(f"{checkpoint.path} does not say its training step in metrics.json")
    return step


def average_checkpoints(directories: list[str | Path], out: str | Path) -> Path:
    """Average the checkpoints in directories into the checkpoint directory out; returns out."""
    if len(directories) < 2:
        raise CheckpointError("averaging needs at least two checkpoints")
    checkpoints = sorted((load_local_checkpoint(d) for d in directories), key=checkpoint_step)
    newest = checkpoints[-1]
    tokenizer_text = (newest.path / TOKENIZER_FILE).read_bytes()
    for checkpoint in checkpoints:
        if checkpoint.config != newest.config:
            raise CheckpointError(f"{checkpoint.path} has another config than {newest.path}")
        if (checkpoint.path / TOKENIZER_FILE).read_bytes() != tokenizer_text:
            raise CheckpointError(f"{checkpoint.path} has another tokenizer than {newest.path}")
    try:
        weights = average_state_dicts([c.model.state_dict() for c in checkpoints])
    except ValueError as error:
        raise CheckpointError(str(error)) from None
    newest.model.load_state_dict(weights)
    steps = [checkpoint_step(c) for c in checkpoints]
    metrics = {
        **newest.metrics,
        "selected": f"average of {len(checkpoints)} checkpoints (steps {', '.join(f'{s:,}' for s in steps)})",
        "step": steps[-1],
        "averaged": [{"path": str(c.path), "step": s} for c, s in zip(checkpoints, steps)],
    }
    out = Path(out)
    save_checkpoint(out, newest.model, newest.tokenizer, metrics)
    if (newest.path / LOG_FILE).is_file():
        shutil.copyfile(newest.path / LOG_FILE, out / LOG_FILE)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoints", nargs="+", help="checkpoint directories (config, tokenizer and weights)")
    parser.add_argument("--out", required=True, help="the averaged checkpoint's directory")
    args = parser.parse_args(argv)
    if Path(args.out).resolve() in {Path(d).resolve() for d in args.checkpoints}:
        print("--out must not be one of the checkpoints averaged", file=sys.stderr)
        return 2
    try:
        out = average_checkpoints(args.checkpoints, args.out)
    except CheckpointError as error:
        print(f"cannot average: {error}", file=sys.stderr)
        return 2
    print(json.loads((out / "metrics.json").read_text(encoding="utf-8"))["selected"], "->", out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
