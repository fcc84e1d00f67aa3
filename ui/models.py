"""Which models the page offers, each on its own page of the app: this project's own, and OPUS-MT.

The page opens on the model chosen at start-up (`--model`, $ATTENTION_EXPLORER_MODEL); the other is a second page
of the same app at its own path (Gradio's `Blocks.route`), reached by the model choice beside the examples menu. Each
page is the whole app over one model, so every view, the step player and every Explain panel run on it unchanged.

OPUS-MT (model/checkpoints/catalogue.py) is loaded at start-up when it is chosen, when a local copy is named
($ATTENTION_EXPLORER_OPUS_MT) or when $ATTENTION_EXPLORER_PRELOAD_OPUS_MT asks for it (a Space): from the Hugging Face
Hub that is a download of about 300 MB per direction, with huggingface_hub's progress bars in the server's log.
Without it (no network, no copy), the page says so in one line and the own model stays the one shown. An app that
was not asked for OPUS-MT shows no model choice (docs/opus-mt.md says how to ask).
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field

import gradio as gr

from model import Checkpoint, CheckpointError
from model.checkpoints.catalogue import MODELS, OPUS_MT, OPUS_MT_ENV, OPUS_MT_REPOS, OWN, load_opus_mt

from .common import PRIVATE

LOG = logging.getLogger(__name__)
MODEL_ENV = "ATTENTION_EXPLORER_MODEL"  # own or opus-mt: the model the page opens on
FIRST_PAGE = "./"  # the page the app opens on; the other model's page is at its key ("opus-mt" or "own")
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


@dataclass
class Choice:
    """The model choice in the page's first row, on the page of `shown`: picking `other` opens its page (at `path`,
    relative to the app's root), or, where it is not loaded, says why in one message and keeps `shown` selected."""

    shown: LoadedModel
    other: LoadedModel
    path: str

    def build(self) -> gr.Dropdown:
        choice = gr.Dropdown(
            [(info.label, key) for key, info in MODELS.items()],
            value=self.shown.key,
            label="Model",
            show_label=False,
            elem_id="model-choice",
            scale=0,
            min_width=230,
        )
        if self.other.by_direction:
            target, other = json.dumps(self.path), json.dumps(self.other.key)
            # the other model's page, in the same theme (Gradio reads __theme once and drops it from the address)
            opening = (
                f"(value) => {{ if (value !== {other}) return; const url = new URL({target}, document.baseURI); "
                "if (document.body.classList.contains('dark')) url.searchParams.set('__theme', 'dark'); "
                "window.location.assign(url); }"
            )
            choice.input(None, choice, None, js=opening, **PRIVATE)
            return choice
        message = self.other.problem or not_loaded_message()

        def refuse(value: str) -> str:
            if value != self.shown.key:
                gr.Warning(message, title="Model not loaded")
            return self.shown.key

        choice.input(refuse, choice, choice, show_progress="hidden", **PRIVATE)
        return choice
