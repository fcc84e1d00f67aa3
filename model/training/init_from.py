"""Continuing a checkpoint in a new run directory (`python -m model.training.train --init-from DIR`, section 5).

A continued run starts from the checkpoint's weights, tokenizer, config and step: the learning rate of
section 5.3 goes on from that step (the first new step trains at `learning_rate(step + 1, ...)`), and the
training film and log go on from the checkpoint's own (`film.npz` and `training_log.json` beside the
checkpoint or in the run directory that holds it), cut at the checkpoint's step. Adam's moments start
fresh: a checkpoint directory holds weights, not optimizer state (--resume continues those).

A command line that asks for another architecture (a model flag that differs from the checkpoint's
config, or a --vocab-size other than its tokenizer's) or another tokenizer (--tokenizer with a different
vocabulary or merges) is refused with one message naming every difference. Dropout rates may change:
they shape training, not the weights.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

from model.checkpoints.checkpoint import (
    Checkpoint,
    CheckpointError,
    load_local_checkpoint,
)
from model.core.config import TransformerConfig
from model.text.tokenizer import SubwordTokenizer
from model.training import film
from model.training.options import MODEL_FLAGS, build_parser
from model.training.run_files import LOG_FILE, STATE_FILE

TRAINING_ONLY_FIELDS = ("dropout", "attention_dropout")  # may differ from the checkpoint's config


class InitFromError(ValueError):
    """A checkpoint that cannot be continued with this command line; the message says why."""


@dataclass
class Start:
    """Where a continued run begins: the checkpoint, its step, and its log and film up to that step."""

    checkpoint: Checkpoint
    config: TransformerConfig  # the checkpoint's, with the dropout rates this command line gives
    step: int
    log: dict | None  # the checkpoint's training log cut at `step`, or None if it has none
    frames: list[dict]  # the checkpoint's film frames up to `step`
    film_path: Path | None


def given_flags(argv: list[str]) -> dict:
    """The options this command line sets explicitly (defaults left out), by destination."""
    parser = build_parser()
    for action in parser._actions:  # argparse has no public way to tell a default from a value
        action.default = argparse.SUPPRESS
    return vars(parser.parse_args(argv))


def checkpoint_step(checkpoint: Checkpoint) -> int:
    """The step a checkpoint was saved at: metrics.json's `step` (best/), its training counters (last/),
    or training_state.json beside it; 0 if it records none."""
    metrics = checkpoint.metrics
    if isinstance(metrics.get("step"), int):
        return metrics["step"]
    if isinstance(metrics.get("training"), dict) and isinstance(metrics["training"].get("step"), int):
        return metrics["training"]["step"]
    state_file = checkpoint.path / STATE_FILE
    return int(json.loads(state_file.read_text(encoding="utf-8"))["step"]) if state_file.exists() else 0


def config_differences(checkpoint: Checkpoint, given: dict) -> list[str]:
    """'--flag X (checkpoint: Y)' for each architecture option given that the checkpoint does not have."""
    differences = []
    for flag, field in MODEL_FLAGS.items():
        if field in given and field not in TRAINING_ONLY_FIELDS and given[field] != getattr(checkpoint.config, field):
            differences.append(f"{flag} {given[field]} (checkpoint: {getattr(checkpoint.config, field)})")
    if "vocab_size" in given and given["vocab_size"] != checkpoint.config.vocab_size:
        differences.append(f"--vocab-size {given['vocab_size']} (checkpoint: {checkpoint.config.vocab_size})")
    if "tokenizer" in given:
        other = SubwordTokenizer.load(given["tokenizer"])
        if json.loads(other.tokenizer.to_str()) != json.loads(checkpoint.tokenizer.tokenizer.to_str()):
            differences.append(f"--tokenizer {given['tokenizer']} (a different tokenizer from the checkpoint's)")
    return differences


def cut_log(log: dict, step: int) -> dict:
    """The training log's per-step and validation curves up to `step` (later points belong to weights
    that are not continued); other entries are kept as they are."""
    cut = dict(log)
    for curve in ("train", "validation"):
        if curve in log:
            keep = sum(1 for s in log[curve]["step"] if s <= step)
            cut[curve] = {key: values[:keep] for key, values in log[curve].items()}
    return cut


def nearest(checkpoint_dir: Path, name: str) -> Path | None:
    """`name` beside the checkpoint, else in the run directory that holds it (film.film_candidates)."""
    return next((path for path in (checkpoint_dir / name, checkpoint_dir.parent / name) if path.is_file()), None)


def load_start(directory: str | Path, argv: list[str]) -> Start:
    """Load the checkpoint at `directory` and check the command line `argv` against it."""
    try:
        checkpoint = load_local_checkpoint(directory)
    except CheckpointError as error:
        raise InitFromError(f"--init-from {directory}: {error}") from None
    given = given_flags(argv)
    differences = config_differences(checkpoint, given)
    if differences:
        raise InitFromError(
            f"--init-from {directory} continues its checkpoint's model and tokenizer, but this "
            f"command asks for {'; '.join(differences)}. Leave these options out (the checkpoint's "
            "are used) or train a new model without --init-from."
        )
    step = checkpoint_step(checkpoint)
    log_path = nearest(checkpoint.path, LOG_FILE)
    log = cut_log(json.loads(log_path.read_text(encoding="utf-8")), step) if log_path else None
    film_path = film.find_film(checkpoint.path)
    frames = [frame for frame in film.load_film(film_path) if frame["step"] <= step] if film_path else []
    config = dataclasses.replace(checkpoint.config, **{f: given[f] for f in TRAINING_ONLY_FIELDS if f in given})
    return Start(checkpoint, config, step, log, frames, film_path)


def announce(start: Start) -> str:
    """What a continued run starts from, for stdout and the log."""
    return (
        f"initialised from {start.checkpoint.path} at step {start.step}: its weights, tokenizer and config; the "
        f"learning rate goes on from step {start.step + 1}; Adam's moments start fresh; "
        + (
            f"its film ({len(start.frames)} frames up to step {start.step}, {start.film_path}) goes on"
            if start.film_path
            else "no film found beside it or in its run directory: the film starts here"
        )
    )
