"""Which models the page offers, each on its own page of the app: this project's own, and OPUS-MT.

The page opens on the model chosen at start-up (`--model`, $ATTENTION_EXPLORER_MODEL); the other is a second page
of the same app at its own path (Gradio's `Blocks.route`), reached by the model choice beside the direction. Each
page is the whole app over one model, so every view, the step player and every Explain panel run on it unchanged.

OPUS-MT (model/checkpoints/catalogue.py) is loaded at start-up when it is chosen, when a local copy is named
($ATTENTION_EXPLORER_OPUS_MT) or when $ATTENTION_EXPLORER_PRELOAD_OPUS_MT asks for it (a Space): from the Hugging Face
Hub that is a download of about 300 MB per direction, with huggingface_hub's progress bars in the server's log.
Without it (no network, no copy), the page says so in one line and the own model stays the one shown.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field

from model import Checkpoint, CheckpointError
from model.checkpoints.catalogue import MODELS, OPUS_MT, OPUS_MT_ENV, OPUS_MT_REPOS, OWN, load_opus_mt

LOG = logging.getLogger(__name__)
MODEL_ENV = "ATTENTION_EXPLORER_MODEL"  # own or opus-mt: the model the page opens on
PRELOAD_ENV = "ATTENTION_EXPLORER_PRELOAD_OPUS_MT"  # 1: load OPUS-MT at start-up as the second page


@dataclass
class LoadedModel:
    """One model of the page: its checkpoint per direction (the own model: the same for both), or why it is not."""

    key: str
    by_direction: dict[str, Checkpoint] = field(default_factory=dict)
    problem: str = ""

    @property
    def checkpoint(self) -> Checkpoint | None:
        """The checkpoint the page reads (config, card): the first direction's."""
        return next(iter(self.by_direction.values()), None)

    @property
    def path(self) -> str:
        """Where its page lives: "" for the page the app opens on is decided by the app; this is the other's."""
        return "/" + self.key


def chosen_model(value: str | None = None) -> str:
    """The model the page opens on: `value`, else $ATTENTION_EXPLORER_MODEL, else the own model."""
    key = value or os.environ.get(MODEL_ENV) or OWN.key
    if key not in MODELS:
        raise ValueError(f"unknown model {key!r}; expected one of {', '.join(MODELS)}")
    return key


def wants_opus_mt(chosen: str) -> bool:
    """Load OPUS-MT at start-up: chosen, a local copy named, or a preload asked for."""
    preload = os.environ.get(PRELOAD_ENV, "").strip().lower() in ("1", "true", "yes")
    return chosen == OPUS_MT.key or bool(os.environ.get(OPUS_MT_ENV)) or preload


def open_opus_mt(device: str = "cpu") -> LoadedModel:
    """OPUS-MT's checkpoints, both directions, or the one-line reason it could not be loaded."""
    loaded = LoadedModel(OPUS_MT.key)
    try:
        for direction in OPUS_MT_REPOS:
            loaded.by_direction[direction] = load_opus_mt(direction, device)
    except (CheckpointError, ValueError) as error:
        LOG.warning("OPUS-MT not loaded: %s", error)
        return LoadedModel(OPUS_MT.key, problem=f"OPUS-MT could not be loaded: {error}")
    return loaded


def not_loaded_message() -> str:
    """What the model choice says of OPUS-MT when the app started without it."""
    return (
        "OPUS-MT is not loaded on this server. Start the app with `--model opus-mt` (it downloads about 300 MB per "
        f"direction from the Hugging Face Hub), or name a local copy in ${OPUS_MT_ENV}."
    )
