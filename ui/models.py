"""Which models the page offers, each on its own page of the app: this project's own, and OPUS-MT.

Every page has the model menu beside the examples menu; each page is the whole app over one model, at its own path
(Gradio's `Blocks.route`), so every view, the step player and every Explain panel run on it unchanged.

OPUS-MT (model/checkpoints/catalogue.py) is loaded at start-up when it is chosen (`--model opus-mt`,
$ATTENTION_EXPLORER_MODEL) or a local copy is named ($ATTENTION_EXPLORER_OPUS_MT): its page is then built with the
app's. Otherwise it is loaded in a background thread (`LaterModel`), at start-up when
$ATTENTION_EXPLORER_PRELOAD_OPUS_MT asks for it (a Space), else when a visitor first picks it in the menu; the own
model serves meanwhile, and every page's menu shows the download's progress. When the load ends, its page is built
into the running app (`mount_page`) at the path a placeholder page held since start-up, and the visitor who asked
for it is taken there; with the preload, a plain visit to the app's address opens on OPUS-MT from then on. Where the
Hub cannot be reached, the line under the menu says so in one sentence, that picking it again tries once more, and
how to give a local copy; the menu's entry then says the download failed (ui/later_model.py says each failure's
words). docs/opus-mt.md explains why the page is built when the load ends.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass

import gradio as gr

from model import CheckpointError
from model.checkpoints.catalogue import (
    MODELS,
    OPUS_MT,
    OPUS_MT_ENV,
    OPUS_MT_REPOS,
    OWN,
    load_opus_mt,
)

from .common import PRIVATE
from .later_model import (
    FIRST_PAGE,
    OWN_SHOWN,
    UNREACHABLE,
    UNREADABLE,
    STAY,
    LaterModel,
    LoadedModel,
    Progress,
    mount_page,
    one_line,
    placeholder_page,
    why_not,
)

__all__ = [
    "FIRST_PAGE",
    "OWN_SHOWN",
    "STAY",
    "UNREACHABLE",
    "UNREADABLE",
    "mount_page",
    "placeholder_page",
]  # for ui/app.py

LOG = logging.getLogger(__name__)
MODEL_ENV = "ATTENTION_EXPLORER_MODEL"  # own or opus-mt: the model the page opens on
PRELOAD_ENV = "ATTENTION_EXPLORER_PRELOAD_OPUS_MT"  # 1: load OPUS-MT in the background at start-up, open on it
POLL_S = 1.0  # how often a page that waits for OPUS-MT asks for the progress
NOT_LOADED = "OPUS-MT is not loaded yet: picking it in the menu downloads it."


def chosen_model(value: str | None = None) -> str:
    """The model the page opens on: `value`, else $ATTENTION_EXPLORER_MODEL, else the own model."""
    key = value or os.environ.get(MODEL_ENV) or OWN.key
    if key not in MODELS:
        raise ValueError(f"unknown model {key!r}; expected one of {', '.join(MODELS)}")
    return key


def preloads() -> bool:
    """$ATTENTION_EXPLORER_PRELOAD_OPUS_MT asks for OPUS-MT to be loaded in the background at start-up."""
    return os.environ.get(PRELOAD_ENV, "").strip().lower() in ("1", "true", "yes")


def wants_opus_mt(chosen: str) -> bool:
    """Load OPUS-MT while the app is built: chosen, or a local copy named (then nothing is downloaded)."""
    return chosen == OPUS_MT.key or bool(os.environ.get(OPUS_MT_ENV))


def open_opus_mt(device: str = "cpu", **download_options) -> LoadedModel:
    """OPUS-MT's checkpoints, both directions, or the one sentence why it could not be loaded (why_not) and the error
    on one line; the caller logs it (`at_start_up`, `LaterModel.finish`), once."""
    loaded = LoadedModel(OPUS_MT.key)
    try:
        for direction in OPUS_MT_REPOS:
            loaded.by_direction[direction] = load_opus_mt(direction, device, **download_options)
    except (CheckpointError, ValueError, OSError) as error:
        return LoadedModel(OPUS_MT.key, problem=why_not(error), error=one_line(error))
    return loaded


def at_start_up(chosen: str, device: str) -> LoadedModel:
    """OPUS-MT as the app is built: loaded where the start-up asks for it (`wants_opus_mt`; a failure logged in one
    line), else not loaded (the menu offers it)."""
    if not wants_opus_mt(chosen):
        return not_loaded(OPUS_MT.key)
    loaded = open_opus_mt(device)
    if not loaded.by_direction:
        LOG.warning("OPUS-MT not loaded: %s", loaded.error)
    return loaded


def not_loaded(key: str) -> LoadedModel:
    """A model not loaded at start-up (the menu offers it: picking it loads it)."""
    return LoadedModel(key, problem=NOT_LOADED)


def later_model(
    chosen: str, opus_mt: LoadedModel, device: str, open_page: Callable[[LoadedModel], None]
) -> LaterModel | None:
    """The background load of OPUS-MT where it was not loaded at start-up (None where it was); when it was asked
    for (`--model opus-mt`) and failed, the own page says why it is shown."""
    if opus_mt.by_direction:
        return None
    asked = opus_mt.problem if chosen == OPUS_MT.key else ""
    return LaterModel(open_page, functools.partial(open_opus_mt, device), preloads(), asked)


def menu_label(key: str, loaded: bool, progress: Progress | None = None) -> str:
    """A model's entry in the menu: its name, and for one not loaded, where its load stands (`progress.entry`: under
    way, or failed and what picking it again does), else what it is and what picking it downloads."""
    info = MODELS[key]
    if loaded or not info.download_mb:
        return info.label
    if progress is not None and progress.entry:
        return f"{info.label}: {progress.entry}"
    return f"{info.label}: {info.summary}; picking it downloads about {info.download_mb} MB"


# --------------------------------------------------------------------------- the menu
def open_js(path: str, other: str) -> str:
    """Go to the other model's page (in the page's theme: Gradio reads __theme once and drops it) when `other` is
    picked (the menu) or sent ("open"; "auto" only on a plain visit: a share link keeps its page)."""
    target, other = json.dumps(path), json.dumps(other)
    return (
        f"(value) => {{ if (value !== {other} && value !== 'open' && value !== 'auto') return; "
        "const here = new URL(window.location.href); here.searchParams.delete('__theme'); "
        "if (value === 'auto' && here.search !== '') return; "
        f"const url = new URL({target}, document.baseURI); "
        "if (document.body.classList.contains('dark')) url.searchParams.set('__theme', 'dark'); "
        "window.location.assign(url); }"
    )


@dataclass
class Choice:
    """The model menu in the page's first row, on the page of `shown`: picking `other` opens its page (at `path`,
    relative to the app's root); where `later` loads it, picking it starts the load, the line under the menu shows
    its progress and the page opens when it is ready."""

    shown: LoadedModel
    other: LoadedModel
    path: str
    later: LaterModel | None = None

    def build(self) -> gr.Dropdown:
        loaded = {self.shown.key: True, self.other.key: bool(self.other.by_direction)}
        now = self.later.progress() if self.later is not None else None
        choice = gr.Dropdown(
            [(menu_label(key, loaded[key], now), key) for key in MODELS],
            value=self.shown.key,
            label="Model",
            show_label=False,
            elem_id="model-choice",
            scale=0,
            min_width=230,
        )
        self.menu = choice
        if self.later is None or self.other.by_direction:
            choice.input(None, choice, None, js=open_js(self.path, self.other.key), **PRIVATE)
        else:
            self.status = gr.Markdown(now.text, visible=bool(now.text), elem_id="model-status")
            self.timer = gr.Timer(POLL_S, active=False)
            self.go = gr.Textbox(visible="hidden", elem_id="model-go", interactive=False)  # "open" / "auto": go there
            self.asked = gr.State(False)  # this visitor picked it: open it when ready
        return choice

    def wire(self, page) -> None:
        """The menu's actions on the page (ui/common.py `Page.listen`), where `later` loads the other model: a pick
        starts the load, a tick shows its progress, and the page's load says where it stands."""
        if self.later is None or self.other.by_direction or getattr(self, "menu", None) is None:
            return
        later, shown, other = self.later, self.shown.key, self.other.key
        choice, status, timer, go, asked = self.menu, self.status, self.timer, self.go, self.asked

        def update(progress: Progress, send: str = "") -> dict:
            loading = progress.state == "loading"
            labels = [(menu_label(key, key == shown or progress.state == "ready", progress), key) for key in MODELS]
            return {
                status: gr.Markdown(progress.text, visible=bool(progress.text)),
                timer: gr.Timer(active=loading),
                go: send,
                choice: gr.Dropdown(choices=labels, value=shown),
            }

        def model_pick(value: str) -> dict:
            if value == shown:
                return {**update(later.progress()), asked: False}
            later.start()
            progress = later.progress()
            return {**update(progress, "open" if progress.state == "ready" else ""), asked: True}

        def model_tick(wants: bool) -> dict:
            progress = later.progress()
            return update(progress, "open" if wants and progress.state == "ready" else "")

        def model_visit() -> dict:
            progress = later.progress()
            asked_at_start = later.asked_at_start or later.preferred  # the start-up (or the Space) asked for it
            if progress.state == "failed" and not asked_at_start:  # a visitor's pick failed: said on a pick
                progress = dataclasses.replace(progress, text="")
            return update(progress, "auto" if later.preferred and progress.state == "ready" else "")

        outputs = [status, timer, go, choice]
        page.listen(choice.input, model_pick, [choice], [*outputs, asked], show_progress="hidden")
        page.listen(timer.tick, model_tick, [asked], outputs, show_progress="hidden")
        go.change(None, go, None, js=open_js(self.path, other), **PRIVATE)  # in the browser only: go to the page
        page.loaders.append((model_visit, outputs))  # the page's one load answer says where the load stands
