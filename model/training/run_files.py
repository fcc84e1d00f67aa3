"""What a training run directory holds (model/training/train.py, section 5): checkpoints, the log, the state.

OUT/best and OUT/last are checkpoint directories (model/checkpoints/checkpoint.py); OUT/last also holds the
Adam moments (safetensors) and the step counters (JSON), enough for --resume. With --keep-evaluations every
evaluated weights stay as a checkpoint, OUT/evaluations/STEP, for scripts/ship_checkpoint.py to average. The training log
(per-step loss, learning rate and tokens/s, the validation curve, the precision used and why) is
written to OUT and copied into every checkpoint saved; metrics.json records how a checkpoint was made.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from model.checkpoints.checkpoint import load_local_checkpoint, save_checkpoint
from model.text.tokenizer import SubwordTokenizer
from model.training.precision import cpu_model

LOG_FILE = "training_log.json"
STATE_FILE = "training_state.json"
EVALUATIONS_DIR = "evaluations"  # OUT/evaluations/STEP: the weights of every evaluation (--keep-evaluations)
OPTIMIZER_FILE = "optimizer.safetensors"


def git_commit() -> str:
    """HEAD of the checkout; a copy without .git (a GPU machine's) can name it in GIT_COMMIT."""
    if os.environ.get("GIT_COMMIT"):
        return os.environ["GIT_COMMIT"]
    try:
        return subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).resolve().parent,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def save_training_state(directory: Path, model, optimizer, state: dict, tokenizer, log: dict) -> None:
    """OUT/last: a loadable checkpoint plus the Adam moments (safetensors) and counters (JSON)."""
    save_checkpoint(directory, model, tokenizer, {"training": state})
    names = {id(p): n for n, p in model.named_parameters()}
    tensors = {}
    for group in optimizer.param_groups:
        for parameter in group["params"]:
            for key, value in optimizer.state.get(parameter, {}).items():
                tensors[f"{names[id(parameter)]}/{key}"] = torch.as_tensor(value).detach().float().cpu().contiguous()
    save_file(tensors, directory / OPTIMIZER_FILE)
    (directory / STATE_FILE).write_text(json.dumps(state, indent=2) + "\n", encoding="utf-8")
    (directory / LOG_FILE).write_text(json.dumps(log) + "\n", encoding="utf-8")


def load_training_state(directory: Path, model, optimizer) -> tuple[dict, dict]:
    checkpoint = load_local_checkpoint(directory)
    model.load_state_dict(checkpoint.model.state_dict())
    tensors = load_file(directory / OPTIMIZER_FILE)
    for name, parameter in model.named_parameters():
        moments = {key.split("/", 1)[1]: value for key, value in tensors.items() if key.split("/", 1)[0] == name}
        if moments:
            optimizer.state[parameter] = {k: v.to(parameter.device) if k != "step" else v for k, v in moments.items()}
    state = json.loads((directory / STATE_FILE).read_text(encoding="utf-8"))
    log = json.loads((directory / LOG_FILE).read_text(encoding="utf-8"))
    return state, log


def load_tokenizer(args, out: Path, pairs: list) -> SubwordTokenizer:
    """The run's tokenizer: OUT/last's when resuming, --tokenizer's, or one trained on the training pairs."""
    if args.resume and (out / "last" / "tokenizer.json").exists():
        return SubwordTokenizer.load(out / "last" / "tokenizer.json")
    if args.tokenizer:
        return SubwordTokenizer.load(args.tokenizer)
    return SubwordTokenizer.train((text for pair in pairs for text in pair), vocab_size=args.vocab_size)


def new_state() -> dict:
    """The counters a run keeps (and --resume restores): steps, position in the epoch, best BLEU, time, work."""
    return {
        "step": 0,
        "epoch": 0,
        "batch_in_epoch": 0,
        "best_bleu": -1.0,
        "seconds": 0.0,
        "tokens": 0,
        "flops": 0.0,
        "evaluation_seconds": 0.0,
    }


def empty_log() -> dict:
    return {
        "train": {"step": [], "loss": [], "learning_rate": [], "tokens_per_second": []},
        "validation": {"step": [], "loss": [], "bleu_de_en": [], "bleu_en_de": []},
    }


def save_run_checkpoint(directory: Path, model, tokenizer, log, state, scores, command, commit, selected) -> None:
    """A checkpoint directory for the app, with the training log and how it was made."""
    speeds = log["train"]["tokens_per_second"]
    metrics = {
        "selected": selected,
        "validation": {k: round(v, 4) for k, v in scores.items()},
        "step": state["step"],
        "command": command,
        "commit": commit,
        "training_seconds": round(state["seconds"], 1),
        "tokens": state["tokens"],  # real source + target tokens trained on in this run so far
        "evaluation_seconds": round(state.get("evaluation_seconds", 0.0), 1),
        "parameters": model.num_parameters(),
        # whole run: real (not padding) source + target tokens per training second, evaluations left out
        "tokens_per_second": (log.get("speed") or {}).get("tokens_per_second")
        or (round(sum(speeds[-20:]) / len(speeds[-20:])) if speeds else None),
        "mfu": (log.get("speed") or {}).get("mfu"),
        "peak_flops_per_second": (log.get("hardware") or {}).get("peak_flops_per_second"),
        "device": str(next(model.parameters()).device),
        "hardware": torch.cuda.get_device_name() if next(model.parameters()).is_cuda else cpu_model(),
        "precision": log.get("precision"),
        "config": dataclasses.asdict(model.config),
    }
    save_checkpoint(directory, model, tokenizer, metrics)
    (directory / LOG_FILE).write_text(json.dumps(log) + "\n", encoding="utf-8")
