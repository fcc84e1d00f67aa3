"""The models the app and the command line can run: this project's own, and OPUS-MT.

- "own": the checkpoint this project trained (checkpoints/de-en-small by default, or --checkpoint / --hub),
  one model for both directions.
- "opus-mt": Helsinki-NLP's OPUS-MT, one model per direction (`Helsinki-NLP/opus-mt-de-en`,
  `Helsinki-NLP/opus-mt-en-de`), loaded into this project's core by model/checkpoints/marian.py.

OPUS-MT comes from a local folder when OPUS_MT_ENV names one (holding `opus-mt-de-en/` and `opus-mt-en-de/`,
as the Hub lays them out: offline), else from the Hugging Face Hub on first use (a download of about 300 MB
per direction into the Hub cache; the revision that holds `model.safetensors`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import torch

from model.checkpoints.checkpoint import Checkpoint
from model.checkpoints.marian import MarianError, load_marian_checkpoint

OPUS_MT_ENV = "ATTENTION_EXPLORER_OPUS_MT"  # a folder holding opus-mt-de-en/ and opus-mt-en-de/


@dataclass(frozen=True)
class ModelInfo:
    key: str  # what a trace, a share link and the API call it
    label: str  # what the page shows
    summary: str  # one line: what it is and who trained it
    publisher: str = ""  # who published it and its model card (a model trained elsewhere); "" for the own model
    download_mb: int = 0  # what loading it from the Hugging Face Hub downloads, all directions (0: nothing)


OWN = ModelInfo("own", "This project's model", "the paper's Transformer, small, trained by this project on CPUs")
OPUS_MT = ModelInfo(
    "opus-mt",
    "OPUS-MT (Helsinki-NLP)",
    "Helsinki-NLP's Transformer-base, trained on GPUs with the Marian toolkit",
    "Helsinki-NLP",
    600,  # docs/opus-mt.md: model.safetensors 298 MB + about 2 MB of tokenizer and JSON files, per direction
)
MODELS = {info.key: info for info in (OWN, OPUS_MT)}

# The Hub repo and revision of each direction: the revision whose files include model.safetensors
# (docs/opus-mt.md: opus-mt-en-de has it only on the Hub's conversion ref).
OPUS_MT_REPOS = {
    "de-en": ("Helsinki-NLP/opus-mt-de-en", None),
    "en-de": ("Helsinki-NLP/opus-mt-en-de", "refs/pr/4"),
}


def model_info(key: str) -> ModelInfo:
    if key not in MODELS:
        raise ValueError(f"unknown model {key!r}; expected one of {', '.join(MODELS)}")
    return MODELS[key]


def opus_mt_source(direction: str, folder: str | Path | None = None) -> tuple[str, bool, str | None]:
    """(source, from the Hub?, revision) of the OPUS-MT model of one direction."""
    if direction not in OPUS_MT_REPOS:
        raise ValueError(f"OPUS-MT has no model for {direction!r}; expected one of {', '.join(OPUS_MT_REPOS)}")
    repo_id, revision = OPUS_MT_REPOS[direction]
    folder = folder or os.environ.get(OPUS_MT_ENV)
    if folder:
        return str(Path(folder) / repo_id.split("/")[1]), False, None
    return repo_id, True, revision


def load_opus_mt(
    direction: str, device: str | torch.device = "cpu", folder: str | Path | None = None, **download_options
) -> Checkpoint:
    """The OPUS-MT checkpoint of one direction (local folder or the Hub, see opus_mt_source); MarianError
    (MarianDownloadError: the Hub did not give the files). download_options: huggingface_hub's (tqdm_class)."""
    source, hub, revision = opus_mt_source(direction, folder)
    options = download_options if hub else {}
    checkpoint = load_marian_checkpoint(source, hub=hub, device=device, revision=revision, **options)
    if checkpoint.tokenizer.directions != (direction,):
        raise MarianError(f"{source} translates {checkpoint.tokenizer.directions[0]}, not {direction}")
    return checkpoint
