"""A model loaded after start-up (OPUS-MT, ui/models.py): its download in a background thread with the progress every
page's model menu shows, and its page, built into the running app when the load ends (docs/opus-mt.md, "A page
built when the model arrives", says what Gradio allows and why this way).

Every wait has a deadline: a load that has not ended after LOAD_TIMEOUT_S is given up (the menu's line says so; its
download stops at its next chunk and a page it would still build is not built), and a page built before the server
has started waits for it at most LAUNCH_WAIT_S. Each failed load writes one line to the server's log, whatever ended
it (`LaterModel.finish`), and the menu's words follow it: its entry says the load failed and its line why, in plain
words, and that picking it again tries once more.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import gradio as gr
import gradio.blocks
from huggingface_hub.utils import tqdm as hub_tqdm

from model.checkpoints.catalogue import MODELS, OPUS_MT_ENV, OPUS_MT_REPOS
from model import Checkpoint
from model.checkpoints.marian import MarianDownloadError

from .text import DIRECTION_LABELS

LOG = logging.getLogger(__name__)
FIRST_PAGE = "./"  # the page the app opens on; the other model's page is at its key ("opus-mt" or "own")
STAY = "?model=own"  # added to the own page's address when leaving OPUS-MT: no automatic return to OPUS-MT
HUB_BAR = "huggingface_hub.snapshot_download"  # the byte counter of a snapshot download (not the per-file bars)
LOAD_TIMEOUT_S = 30 * 60.0  # both directions (about 600 MB) take a minute or two on a Space's connection
LAUNCH_WAIT_S = 300.0  # Gradio builds its server app in seconds

# What the menu says, in plain words (no exception text, no library names)
AGAIN = "picking it again in the menu tries once more"  # what a pick does after any failure
UNREACHABLE = (  # as long as a phone shows in a few lines
    f"OPUS-MT could not be downloaded because this server cannot reach the Hugging Face Hub; {AGAIN}, or copy "
    f"its two folders (opus-mt-de-en, opus-mt-en-de) into one folder here and name it in {OPUS_MT_ENV} at start-up."
)
UNREADABLE = f"OPUS-MT was not loaded because this app could not read its files (the server's log says why); {AGAIN}."
OWN_SHOWN = "This page shows this project's model because OPUS-MT, asked for at start-up, is not here: "
NOT_STARTED = f"OPUS-MT's page could not be opened because this server had not finished starting; {AGAIN}."
DOWNLOAD_FAILED = "its download failed; picking it tries once more"  # the menu's entry: a download failed or hung
LOAD_FAILED = "it could not be loaded; picking it tries once more"  # ... any other failure


def timed_out(timeout_s: float) -> str:
    """The menu's line for a load given up at its deadline."""
    took = f"{timeout_s / 60:.0f} minutes" if timeout_s >= 120 else f"{timeout_s:g} seconds"
    return (
        f"OPUS-MT was not loaded: its download had not ended after {took}, so this server stopped waiting for it; "
        f"{AGAIN}."
    )


@dataclass
class LoadedModel:
    """One model of the page: its checkpoint per direction (the own model: the same for both), or why it is not."""

    key: str
    by_direction: dict[str, Checkpoint] = field(default_factory=dict)
    problem: str = ""  # what the page says (why_not)
    error: str = ""  # what went wrong, on one line, for the server's log

    @property
    def checkpoint(self) -> Checkpoint | None:
        """The checkpoint the page reads (config, card): the first direction's."""
        return next(iter(self.by_direction.values()), None)


def why_not(error: Exception) -> str:
    """The one sentence a page says for a failed load of OPUS-MT (the error itself goes to the server's log)."""
    return UNREACHABLE if isinstance(error, MarianDownloadError) else UNREADABLE


def one_line(error: Exception | str) -> str:
    """An error's text on one line of the log (the Hub's errors run over several)."""
    return " ".join(str(error).split())


@dataclass
class Progress:
    """Where a background load stands: its state and the sentence every page's menu shows."""

    state: str  # "idle", "loading", "ready" or "failed"
    text: str  # the menu's line ("" when there is nothing to say)
    entry: str = ""  # what the menu's entry says after the model's name ("": what picking it downloads)


class LaterModel:
    """OPUS-MT loaded once per server in a background thread, its page built into the app when the load ends.

    open_page(loaded) builds the page and its runner (ui/app.py) and runs in the load's thread; load(tqdm_class=...)
    loads the model (ui/models.py open_opus_mt). The load runs in a thread of its own, watched by the `thread` that
    started it, which gives it up after timeout_s. A failed load may be started again (a visitor picks it again)."""

    def __init__(
        self,
        open_page: Callable[[LoadedModel], None],
        load: Callable[..., LoadedModel],
        preferred: bool = False,
        problem_at_start: str = "",
        timeout_s: float = LOAD_TIMEOUT_S,
    ):
        self.open_page, self.load, self.preferred, self.timeout_s = open_page, load, preferred, timeout_s
        self.lock = threading.Lock()
        self.state, self.problem, self.thread = "idle", problem_at_start, None
        self.attempt, self.deadline = 0, 0.0  # the load under way (a later one supersedes it) and when it ends
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
            self.attempt += 1
            self.deadline = time.monotonic() + self.timeout_s
            self.thread = threading.Thread(target=self.watch, args=(self.attempt,), name="load-opus-mt", daemon=True)
            self.thread.start()

    def watch(self, attempt: int) -> None:
        """Run the load in a thread of its own and give it up once it has run timeout_s."""
        worker = threading.Thread(target=self.run, args=(attempt,), name="load-opus-mt-work", daemon=True)
        worker.start()
        worker.join(self.timeout_s)
        if worker.is_alive():
            self.finish("failed", timed_out(self.timeout_s), attempt)

    def run(self, attempt: int) -> None:
        try:
            loaded = self.load(**{"tqdm_class": self.progress_bar()})
            if not loaded.by_direction:
                self.finish("failed", loaded.problem or UNREADABLE, attempt, loaded.error)
                return
            self.given_up(attempt)
            self.open_page(loaded)
        except LoadStopped as stopped:
            self.finish("failed", str(stopped), attempt)
        except Exception as error:  # noqa: BLE001 - the page says one plain sentence; the log has the rest
            self.finish("failed", why_not(error), attempt, f"its page could not be built: {one_line(error)}", error)
        else:
            self.finish("ready", "", attempt)

    def given_up(self, attempt: int) -> None:
        """Raise LoadStopped where this attempt has passed its deadline or a later one has begun."""
        with self.lock:
            if attempt != self.attempt or self.state != "loading" or time.monotonic() > self.deadline:
                raise LoadStopped(timed_out(self.timeout_s))

    def finish(
        self, state: str, problem: str, attempt: int, error: str = "", exception: Exception | None = None
    ) -> None:
        """End `attempt` unless it has ended or a later one runs: the one place a load's end is logged, so a failed
        attempt writes one line (`error`, else `problem`; an unexpected `exception` with its traceback) however many
        ways it ended (a watch that gave up, then the load's own failure). Past its deadline it failed for that
        reason, whatever ended it (a download stopped at its deadline fails as a download)."""
        with self.lock:
            if attempt != self.attempt or self.state != "loading":
                return
            if state == "failed" and time.monotonic() > self.deadline:
                problem = timed_out(self.timeout_s)
            self.state, self.problem = state, problem
        if state != "failed":
            return
        if problem in (timed_out(self.timeout_s), NOT_STARTED):
            LOG.warning("OPUS-MT's load stopped: %s", problem)
        else:
            LOG.warning("OPUS-MT not loaded: %s", one_line(error or problem), exc_info=exception)

    def wait(self, timeout: float | None = None) -> str:
        """Block until the load ends (tests) -> the state."""
        thread = self.thread
        if thread is not None:
            thread.join(timeout)
        return self.state

    def progress_bar(self) -> type:
        """A progress-bar class for huggingface_hub's downloads that counts the snapshot's bytes here (it counts even
        where the library's bars are switched off: a disabled bar keeps no count of its own) and stops the download
        (LoadStopped) once the load under way is given up."""
        later, attempt = self, self.attempt
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
                later.given_up(attempt)
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
                text = "Preparing the OPUS-MT download"
            else:
                index = list(OPUS_MT_REPOS).index(direction) + 1
                of = f"{done / 1e6:,.0f} of {total / 1e6:,.0f} MB" if total else "starting"
                text = f"Downloading OPUS-MT, {DIRECTION_LABELS.get(direction, direction)} ({index} of 2): {of}"
            entry = "downloading now; it opens when it is ready"
            return Progress(state, f"{text}. This model stays usable meanwhile; OPUS-MT opens when it is ready.", entry)
        if state == "failed" or (state == "idle" and problem):  # idle: the start-up's load failed
            downloading = problem in (UNREACHABLE, timed_out(self.timeout_s))
            entry = DOWNLOAD_FAILED if downloading else LOAD_FAILED
            return Progress(state, (OWN_SHOWN if self.asked_at_start else "") + problem, entry)
        return Progress(state, "")


class LoadStopped(Exception):
    """A load stopped at a deadline: its sentence, for the menu and, once, the log."""


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


def mount_page(demo: gr.Blocks, path: str, build: Callable[[], None], wait_s: float = LAUNCH_WAIT_S) -> None:
    """Build a page (`build`, called inside `demo`) at `path` of the app, running or not, in place of its
    placeholder: Gradio serves a page from `demo.config`, read at each request, which leaving `with demo:` computes
    again (as building a `demo.route` does), so the page is served at once. Raises LoadStopped where the server has
    not started after `wait_s`."""
    deadline = time.monotonic() + wait_s
    while getattr(demo, "launching", False) and not demo.is_running:  # ui/server.py: Gradio is building its app
        if time.monotonic() > deadline:
            raise LoadStopped(NOT_STARTED)
        time.sleep(0.1)
    with _only_this_thread_renders():
        old = [child for child in demo.children if child.page == path]
        demo.children = [child for child in demo.children if child.page != path]
        for block in list(demo.blocks.values()):
            if getattr(block, "page", "") == path:
                demo.blocks.pop(block._id, None)
        demo.current_page, served_by = path, getattr(demo, "app", None)
        try:
            with demo:
                build()
        except Exception:
            demo.children.extend(old)
            raise
        finally:
            demo.current_page = ""
            if getattr(demo, "server_app", None) is not None:
                demo.app = served_by  # leaving `with demo:` made a new app object: keep the one that serves
    if getattr(demo, "server_app", None) is not None:
        demo.server_app.page_api_info.clear()  # /info of the page was of the placeholder
