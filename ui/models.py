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
Hub cannot be reached, the menu says so in one sentence and how to give a local copy. docs/opus-mt.md explains why
the page is built when the load ends.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import gradio as gr
import gradio.blocks
from gradio.context import get_blocks_context
from huggingface_hub.utils import tqdm as hub_tqdm

from model import Checkpoint, CheckpointError
from model.checkpoints.catalogue import (
    MODELS,
    OPUS_MT,
    OPUS_MT_ENV,
    OPUS_MT_REPOS,
    OWN,
    load_opus_mt,
)
from model.checkpoints.marian import MarianDownloadError


from .common import PRIVATE
from .text import DIRECTION_LABELS

LOG = logging.getLogger(__name__)
MODEL_ENV = "ATTENTION_EXPLORER_MODEL"  # own or opus-mt: the model the page opens on
FIRST_PAGE = "./"  # the page the app opens on; the other model's page is at its key ("opus-mt" or "own")
STAY = "?model=own"  # added to the own page's address when leaving OPUS-MT: no automatic return to OPUS-MT
PRELOAD_ENV = "ATTENTION_EXPLORER_PRELOAD_OPUS_MT"  # 1: load OPUS-MT in the background at start-up, open on it
POLL_S = 1.0  # how often a page that waits for OPUS-MT asks for the progress
HUB_BAR = "huggingface_hub.snapshot_download"  # the byte counter of a snapshot download (not the per-file bars)

# What the menu says, in plain words (no exception text, no library names)
UNREACHABLE = (
    "OPUS-MT could not be downloaded because this server cannot reach the Hugging Face Hub; to use it here, copy "
    "its two folders (opus-mt-de-en and opus-mt-en-de) into one folder on this machine and name that folder in "
    f"{OPUS_MT_ENV} when starting the app."
)
UNREADABLE = "OPUS-MT's files could not be read by this app, so it is not offered here (the server's log says why)."
NOT_LOADED = "OPUS-MT is not loaded yet: picking it in the menu downloads it."
OWN_SHOWN = "This page shows this project's model because OPUS-MT, asked for at start-up, is not here: "


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


def preloads() -> bool:
    """$ATTENTION_EXPLORER_PRELOAD_OPUS_MT asks for OPUS-MT to be loaded in the background at start-up."""
    return os.environ.get(PRELOAD_ENV, "").strip().lower() in ("1", "true", "yes")


def wants_opus_mt(chosen: str) -> bool:
    """Load OPUS-MT while the app is built: chosen, or a local copy named (then nothing is downloaded)."""
    return chosen == OPUS_MT.key or bool(os.environ.get(OPUS_MT_ENV))


def why_not(error: Exception) -> str:
    """The one sentence a page says for a failed load of OPUS-MT (the error itself goes to the server's log)."""
    return UNREACHABLE if isinstance(error, MarianDownloadError) else UNREADABLE


def open_opus_mt(device: str = "cpu", **download_options) -> LoadedModel:
    """OPUS-MT's checkpoints, both directions, or the one sentence why it could not be loaded (why_not)."""
    loaded = LoadedModel(OPUS_MT.key)
    try:
        for direction in OPUS_MT_REPOS:
            loaded.by_direction[direction] = load_opus_mt(direction, device, **download_options)
    except (CheckpointError, ValueError, OSError) as error:
        LOG.warning("OPUS-MT not loaded: %s", error)
        return LoadedModel(OPUS_MT.key, problem=why_not(error))
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


def not_loaded_message() -> str:
    """What the API says of OPUS-MT when this server has not loaded it."""
    return (
        "It is loaded when a visitor picks it in the page's model menu (a download of about "
        f"{OPUS_MT.download_mb} MB from the Hugging Face Hub), or at start-up with `--model opus-mt` or a local "
        f"copy named in ${OPUS_MT_ENV}."
    )


def menu_label(key: str, loaded: bool) -> str:
    """A model's entry in the menu: its name, and for one not loaded, what it is and what picking it downloads."""
    info = MODELS[key]
    if loaded or not info.download_mb:
        return info.label
    return f"{info.label}: {info.summary}; picking it downloads about {info.download_mb} MB"


# --------------------------------------------------------------------------- a model loaded after start-up
@dataclass
class Progress:
    """Where a background load stands: its state and the sentence every page's menu shows."""

    state: str  # "idle", "loading", "ready" or "failed"
    text: str  # the menu's line ("" when there is nothing to say)


class LaterModel:
    """OPUS-MT loaded once per server in a background thread, its page built into the app when the load ends.

    open_page(loaded) builds the page and its runner (ui/app.py) and runs in that thread; `load` is open_opus_mt
    (tests pass another). A failed load may be started again (a visitor picks it again)."""

    def __init__(
        self,
        open_page: Callable[[LoadedModel], None],
        load: Callable[..., LoadedModel] = open_opus_mt,
        preferred: bool = False,
        problem_at_start: str = "",
    ):
        self.open_page, self.load, self.preferred = open_page, load, preferred
        self.lock = threading.Lock()
        self.state, self.problem, self.thread = "idle", problem_at_start, None
        self.direction, self.done, self.total = "", 0, 0  # the download under way: its direction and bytes
        self.asked_at_start = bool(problem_at_start)  # --model opus-mt that could not be honoured

    @property
    def back_path(self) -> str:
        """The own page's address from OPUS-MT's: with the preload, one that does not send the visitor back."""
        return FIRST_PAGE + (STAY if self.preferred else "")

    def start(self) -> None:
        """Start the load unless it runs or has ended well."""
        with self.lock:
            if self.state in ("loading", "ready"):
                return
            self.state, self.problem, self.direction, self.done, self.total = "loading", "", "", 0, 0
            self.thread = threading.Thread(target=self.run, name="load-opus-mt", daemon=True)
            self.thread.start()

    def run(self) -> None:
        try:
            loaded = self.load(**{"tqdm_class": self.progress_bar()})
            if not loaded.by_direction:
                raise _Failed(loaded.problem or UNREADABLE)
            self.open_page(loaded)
        except _Failed as failure:
            self.finish("failed", str(failure))
        except Exception as error:  # noqa: BLE001 - the page says one plain sentence; the log has the rest
            LOG.exception("OPUS-MT's page could not be built")
            self.finish("failed", why_not(error))
        else:
            self.finish("ready", "")

    def finish(self, state: str, problem: str) -> None:
        with self.lock:
            self.state, self.problem = state, problem

    def wait(self, timeout: float | None = None) -> str:
        """Block until the load ends (tests) -> the state."""
        thread = self.thread
        if thread is not None:
            thread.join(timeout)
        return self.state

    def progress_bar(self) -> type:
        """A progress-bar class for huggingface_hub's downloads that counts the snapshot's bytes here (it counts even
        where the library's bars are switched off: a disabled bar keeps no count of its own)."""
        later = self
        seen: set[str] = set()

        class Bar(hub_tqdm):
            def __init__(self, *args, **kwargs):
                self.counted, self.bytes = kwargs.get("name") == HUB_BAR, 0
                super().__init__(*args, **kwargs)
                if self.counted:  # one per direction's snapshot, in the order open_opus_mt loads them
                    with later.lock:
                        later.direction = next((d for d in OPUS_MT_REPOS if d not in seen), later.direction)
                        seen.add(later.direction)
                        later.done, later.total = 0, 0

            def report(self) -> None:
                if self.counted:
                    with later.lock:
                        later.done, later.total = self.bytes, int(self.total or 0)

            def refresh(self, *args, **kwargs):  # the library sets `total` as each file starts, then refreshes
                self.report()
                return super().refresh(*args, **kwargs)

            def update(self, n=1):
                self.bytes += int(n or 0)
                self.report()
                return super().update(n)

        return Bar

    def progress(self) -> Progress:
        """What every page's menu shows now."""
        with self.lock:
            state, problem, direction, done, total = self.state, self.problem, self.direction, self.done, self.total
        if state == "loading":
            if not direction:
                text = "Preparing the OPUS-MT download…"
            else:
                index = list(OPUS_MT_REPOS).index(direction) + 1
                of = f"{done / 1e6:,.0f} of {total / 1e6:,.0f} MB" if total else "starting"
                text = f"Downloading OPUS-MT, {DIRECTION_LABELS.get(direction, direction)} ({index} of 2): {of}"
            return Progress(state, f"{text}. This model stays usable meanwhile; OPUS-MT opens when it is ready.")
        if state == "failed" or (state == "idle" and problem):
            return Progress(state, (OWN_SHOWN if self.asked_at_start else "") + problem)
        return Progress(state, "")


class _Failed(Exception):
    """A load that ended without a model: its sentence."""


@contextlib.contextmanager
def _only_this_thread_renders() -> Iterator[None]:
    """While a page is built into the running app, components made in other threads (a listener's updates, such as
    gr.Radio(choices=...)) must not join it: Gradio's render context is process-wide outside gr.render."""
    original, builder = gradio.blocks.Block.render, threading.get_ident()

    def render(block):
        return original(block) if threading.get_ident() == builder else block

    gradio.blocks.Block.render = render
    try:
        yield
    finally:
        gradio.blocks.Block.render = original


def placeholder_page(demo: gr.Blocks, path: str) -> None:
    """The page at `path` until its model is loaded (Gradio makes a page's web route at launch, so the path exists
    from the start): one line and a link back."""
    with demo.route(MODELS[path].label, path, show_in_navbar=False):
        gr.Navbar(visible=False)
        gr.Markdown(
            f"{MODELS[path].label} is not loaded on this server yet. Pick it in the model menu of "
            f"[this project's model]({FIRST_PAGE}) to download it.",
            elem_id="model-placeholder",
        )


def mount_page(demo: gr.Blocks, path: str, build: Callable[[], None]) -> None:
    """Build a page (`build`, called inside `demo`) at `path` of the app, running or not, in place of its
    placeholder: Gradio serves a page from `demo.config`, read at each request, so the new config takes effect at
    once."""
    while getattr(demo, "launching", False) and not demo.is_running:  # ui/server.py: Gradio is building its app
        time.sleep(0.1)
    with _only_this_thread_renders():
        old = [child for child in demo.children if child.page == path]
        demo.children = [child for child in demo.children if child.page != path]
        for block in list(demo.blocks.values()):
            if getattr(block, "page", "") == path:
                demo.blocks.pop(block._id, None)
        demo.current_page = path
        try:
            with demo:
                build()
        except Exception:
            demo.children.extend(old)
            raise
        finally:
            demo.current_page = ""
    demo.config = demo.get_config_file()
    if getattr(demo, "server_app", None) is not None:
        demo.server_app.page_api_info.clear()  # /info of the page was of the placeholder


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
        choice = gr.Dropdown(
            [(menu_label(key, loaded[key]), key) for key in MODELS],
            value=self.shown.key,
            label="Model",
            show_label=False,
            elem_id="model-choice",
            scale=0,
            min_width=230,
        )
        if self.later is None or self.other.by_direction:
            choice.input(None, choice, None, js=open_js(self.path, self.other.key), **PRIVATE)
        else:
            self.wire_later(choice)
        return choice

    def wire_later(self, choice: gr.Dropdown) -> None:
        later, shown, other = self.later, self.shown.key, self.other.key
        now = later.progress()
        status = gr.Markdown(now.text, visible=bool(now.text), elem_id="model-status")
        timer = gr.Timer(POLL_S, active=False)
        go = gr.Textbox(visible="hidden", elem_id="model-go", interactive=False)  # "open" / "auto": go there
        asked = gr.State(False)  # this visitor picked it: open it when ready

        def update(progress: Progress, send: str = "") -> dict:
            loading = progress.state == "loading"
            labels = [(menu_label(key, key == shown or progress.state == "ready"), key) for key in MODELS]
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
            return update(progress, "auto" if later.preferred and progress.state == "ready" else "")

        outputs = [status, timer, go, choice]
        choice.input(model_pick, choice, [*outputs, asked], show_progress="hidden", **PRIVATE)
        timer.tick(model_tick, asked, outputs, show_progress="hidden", **PRIVATE)
        go.change(None, go, None, js=open_js(self.path, other), **PRIVATE)
        root = get_blocks_context()
        if root is not None:
            root.root_block.load(model_visit, None, outputs, show_progress="hidden", **PRIVATE)
