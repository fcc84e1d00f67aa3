"""What a checkpoint directory holds: its file names, the files that travel with it, and its error type.

A checkpoint is data only: config.json (the TransformerConfig of section 3), safetensors weights (one file,
or shards and their index), and the files the app's views read beside them. Nothing in it is code or a pickle.
"""

from __future__ import annotations

from pathlib import Path

CONFIG_FILE = "config.json"
SINGLE_WEIGHTS_FILE = "model.safetensors"
INDEX_FILE = "model.safetensors.index.json"
SHARD_FILES = "model-*-of-*.safetensors"  # huggingface_hub's shard names: model-00001-of-00004.safetensors
CARD_FILE = "README.md"
TOKENIZER_FILE = "tokenizer.json"
METRICS_FILE = "metrics.json"
LOG_FILE = "training_log.json"  # the training curves (model/training/run_files.py, the Model tab)
FILM_FILE = "film.npz"  # the training film (model/training/film.py, the Explain tab)
CORPUS_FILE = "corpus_heads.npz"  # per-head corpus statistics (model/analysis/corpus/store.py)

# Beside the weights and read by the app; they travel with the checkpoint both ways (save_pretrained,
# push_to_hub, from_pretrained). Only the first two are required.
COMPANION_FILES = (TOKENIZER_FILE, METRICS_FILE, LOG_FILE, FILM_FILE, CORPUS_FILE)
# Every file of a checkpoint, as huggingface_hub patterns (fnmatch): what is downloaded from and uploaded to
# the Hub. A run's OUT/last also holds optimizer state: it is not on this list, so it never leaves home.
CHECKPOINT_FILES = [CONFIG_FILE, SINGLE_WEIGHTS_FILE, INDEX_FILE, SHARD_FILES, CARD_FILE, *COMPANION_FILES]


def film_candidates(checkpoint_dir: str | Path) -> list[Path]:
    """Where a checkpoint's film may lie: beside its files, or in the run directory that holds it
    (model/training/train.py writes OUT/film.npz and saves the checkpoints as OUT/best and OUT/last)."""
    directory = Path(checkpoint_dir)
    return [directory / FILM_FILE, directory.parent / FILM_FILE]


def find_film(checkpoint_dir: str | Path) -> Path | None:
    """The first film of `film_candidates` that exists, or None."""
    return next((path for path in film_candidates(checkpoint_dir) if path.is_file()), None)


class CheckpointError(Exception):
    """A checkpoint that cannot be loaded; the message names the file and the problem."""
