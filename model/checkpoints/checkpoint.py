"""Checkpoint directories: config.json, safetensors weights, tokenizer.json, metrics.json, README.md, and the
files the app's views read (training log, film, corpus heads; model/checkpoints/files.py).

Weights are safetensors only (a checkpoint can never run code: nothing is unpickled), written and read by
huggingface_hub's helpers (model/checkpoints/weights.py). The model loads through
`PretrainedTransformer.from_pretrained` (model/checkpoints/hub.py). Loading from the Hugging Face Hub happens only
when asked for explicitly (`hub=True` / `--hub`); the default reads a local directory, offline.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import torch

from model.checkpoints.files import (
    CONFIG_FILE,
    INDEX_FILE,
    METRICS_FILE,
    SINGLE_WEIGHTS_FILE,
    TOKENIZER_FILE,
    CheckpointError,
)
from model.checkpoints.hub import PretrainedTransformer, download_checkpoint, validate_repo_id
from model.checkpoints.model_card import write_model_card
from model.checkpoints.reading import read_checkpoint_file, read_json_object, read_optional_file
from model.checkpoints.weights import MAX_SHARD_BYTES, save_weights
from model.core.config import ConfigError, TransformerConfig
from model.core.transformer import Transformer
from model.text.tokenizer import SubwordTokenizer

HUB_MAX_FILE_BYTES = 10 * 1000 * 1000  # the Hub refuses a plain git push of a file of 10 MB or more

__all__ = [
    "CONFIG_FILE",
    "HUB_MAX_FILE_BYTES",
    "INDEX_FILE",
    "MAX_SHARD_BYTES",
    "METRICS_FILE",
    "SINGLE_WEIGHTS_FILE",
    "TOKENIZER_FILE",
    "Checkpoint",
    "CheckpointError",
    "load_checkpoint",
    "load_local_checkpoint",
    "save_checkpoint",
    "validate_repo_id",
]


@dataclass
class Checkpoint:
    model: Transformer
    tokenizer: SubwordTokenizer
    config: TransformerConfig
    metrics: dict
    path: Path
    kind: str = "own"  # which of the app's models (model/checkpoints/catalogue.py): "own" or "opus-mt"
    problems: dict[str, str] = field(default_factory=dict)  # an optional file found broken -> the line saying so


def save_checkpoint(
    directory: str | Path,
    model: torch.nn.Module,
    tokenizer: SubwordTokenizer,
    metrics: dict | None = None,
    max_shard_bytes: int = MAX_SHARD_BYTES,
) -> Path:
    """Write config.json, weights (one file or shards + index), tokenizer.json, metrics.json, README.md."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    model.config.save(directory / CONFIG_FILE)
    tokenizer.save(directory / TOKENIZER_FILE)
    (directory / METRICS_FILE).write_text(json.dumps(metrics or {}, indent=2) + "\n", encoding="utf-8")
    save_weights(model.state_dict(), directory, max_shard_bytes)
    write_model_card(directory)  # README.md for the Hub, from the metrics and config just written
    return directory


def _read_tokenizer(path: Path) -> SubwordTokenizer:
    json.loads(path.read_text(encoding="utf-8"))  # a folder, cut-off or non-UTF-8 file is named as such
    return SubwordTokenizer.load(path)


def load_local_checkpoint(directory: str | Path, device: str | torch.device = "cpu") -> Checkpoint:
    """Load a checkpoint directory; a missing or broken required file (config.json, tokenizer.json, the weights)
    raises a CheckpointError whose message names it (model/checkpoints/reading.py).

    The config and tokenizer are checked first (a vocabulary mismatch is named as such), then the model
    loads through PretrainedTransformer.from_pretrained. A broken metrics.json leaves the metrics empty and its
    line in `problems`: the views that show them say so.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise CheckpointError(f"checkpoint directory {directory} does not exist")
    try:
        config = TransformerConfig.from_dict(read_json_object(directory / CONFIG_FILE))
    except ConfigError as error:
        raise CheckpointError(f"bad {CONFIG_FILE}: {error}") from None
    tokenizer = read_checkpoint_file(directory / TOKENIZER_FILE, _read_tokenizer)
    if tokenizer.vocab_size != config.vocab_size:
        raise CheckpointError(
            f"tokenizer has {tokenizer.vocab_size} tokens but config.json says vocab_size={config.vocab_size}"
        )
    model = PretrainedTransformer.from_pretrained(directory, map_location=device)
    metrics, problem = read_optional_file(directory / METRICS_FILE, read_json_object, {})
    return Checkpoint(model, tokenizer, config, metrics, directory, problems={METRICS_FILE: problem} if problem else {})


def load_checkpoint(
    source: str | Path, hub: bool = False, device: str | torch.device = "cpu", revision: str | None = None
) -> Checkpoint:
    """Load from a local directory (default, offline) or, with hub=True, a Hub repo id ("owner/name").

    From the Hub, every checkpoint file (weights, tokenizer, metrics, training log, film, corpus heads) is
    downloaded into the Hub cache first; the checkpoint's path is then that cached folder.
    """
    directory = download_checkpoint(str(source), revision=revision) if hub else source
    return load_local_checkpoint(directory, device)
