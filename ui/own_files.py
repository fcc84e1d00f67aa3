"""The app's own files: a temporary folder of its own for Gradio, cleaned on start, and only the files it made served.

Gradio keeps the files it serves in one cache folder, by default <tmp>/gradio, shared by every Gradio app of the
machine and never emptied, and its file route (`/gradio_api/file=<path>`) serves every file under that folder.
Here each run of the app claims a folder of its own, <tmp>/attention-explorer/run-<random> (or under the operator's
$GRADIO_TEMP_DIR), made readable by this user only, and names it in $GRADIO_TEMP_DIR, which Gradio reads when each
component and the server are made (app.py claims it before building the page). On a claim, the folders of earlier
runs that have ended are removed: a run holds a lock on its folder's `.lock` for as long as its process lives.
Over time, Blocks' delete_cache (ui/app.py) removes each file Gradio handed out an hour after it was made, and
serving/trace_files.py removes its trace files after the same hour.

`OwnFilesOnly` answers 404 to a request for any file the app did not hand out itself (Gradio's own list of the
files it made for its components, which delete_cache reads as well): a file another process writes into the shared
folder or into this app's own, a file of an earlier run, and a web address (Gradio's file route also fetches URLs).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from pathlib import Path

import gradio as gr
from starlette.types import ASGIApp, Receive, Scope, Send

from .request_limits import answer

try:
    import fcntl
except ImportError:  # Windows: no locks, so earlier runs' folders are left for the operator
    fcntl = None

FOLDER_NAME = "attention-explorer"  # <tmp>/attention-explorer/run-<random>: one folder per run of the app
RUN_PREFIX = "run-"
LOCK_NAME = ".lock"
TEMP_ENV = "GRADIO_TEMP_DIR"  # Gradio's documented setting for its cache folder
CLAIMED_ENV = "ATTENTION_EXPLORER_CLAIMED"  # "<pid>:<folder>": the folder this process claimed (children claim anew)
FILE_ROUTE = re.compile(r"/gradio_api/file(?:=|/)(.*)$")
NOT_SERVED = "Not found."
CLAIM_WAIT_S = 10.0  # the longest a start waits for another run's claim before it claims without cleaning


def run_folders_root(environ: os._Environ | dict) -> Path:
    """Where the runs' folders live: beside a parent app's run (a child inherits its $GRADIO_TEMP_DIR), else in the
    operator's $GRADIO_TEMP_DIR, else in the system's temporary folder."""
    claimed = environ.get(CLAIMED_ENV, "").partition(":")[2]
    if claimed and environ.get(TEMP_ENV) == claimed:
        return Path(claimed).parent
    return Path(environ.get(TEMP_ENV) or tempfile.gettempdir()) / FOLDER_NAME


def locked(lock_path: Path) -> int | None:
    """Take the lock of `lock_path` without waiting -> its descriptor, held until the process ends; None if another
    process holds it."""
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def claim_lock(lock_path: Path, deadline_s: float = CLAIM_WAIT_S) -> int | None:
    """The lock of `lock_path`, waited for while another run claims its folder (milliseconds), at most
    `deadline_s` -> its descriptor (close it to release), or None."""
    deadline = time.monotonic() + deadline_s
    while (fd := locked(lock_path)) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    return fd


def remove_ended_runs(root: Path) -> list[str]:
    """Remove every run folder under `root` whose process has ended (its lock is free) -> the names removed."""
    removed = []
    for entry in sorted(root.glob(RUN_PREFIX + "*")):
        if not entry.is_dir() or entry.is_symlink():
            continue
        try:
            fd = locked(entry / LOCK_NAME)
        except OSError:
            continue
        if fd is None:
            continue  # a running app's
        shutil.rmtree(entry, ignore_errors=True)
        os.close(fd)
        removed.append(entry.name)
    return removed


def claim_temp_folder(environ: os._Environ | dict = os.environ) -> Path:
    """This process's own folder for Gradio's files, named in $GRADIO_TEMP_DIR; the folders of ended runs removed.
    Claimed once per process (a second call, or a hot reload, returns the same folder)."""
    pid, _, claimed = environ.get(CLAIMED_ENV, "").partition(":")
    if pid == str(os.getpid()) and claimed and environ.get(TEMP_ENV) == claimed:
        return Path(claimed)
    root = run_folders_root(environ)
    root.mkdir(parents=True, exist_ok=True)
    if fcntl is None:
        folder = Path(tempfile.mkdtemp(prefix=RUN_PREFIX, dir=root))
    else:
        claiming = claim_lock(root / LOCK_NAME)  # one claim at a time: a new run's folder is locked before others look
        try:
            if claiming is not None:  # else another claim hangs: this run's folder is made, nothing removed
                remove_ended_runs(root)
            folder = Path(tempfile.mkdtemp(prefix=RUN_PREFIX, dir=root))  # mode 0700: this user only
            locked(folder / LOCK_NAME)  # held (its descriptor stays open) until this process ends
        finally:
            if claiming is not None:
                os.close(claiming)
    environ[TEMP_ENV] = str(folder)
    environ[CLAIMED_ENV] = f"{os.getpid()}:{folder}"
    return folder


def made(blocks: gr.Blocks, path: str) -> bool:
    """Gradio made the file `path` for one of the app's components: it keeps it for delete_cache, or it is a
    component's default value (sets that listeners' threads grow while this runs: looked up, never iterated)."""
    if any(path in files for files in list(getattr(blocks, "temp_file_sets", []))):
        return True
    return any(path in getattr(block, "keep_in_cache", ()) for block in list(getattr(blocks, "blocks", {}).values()))


def requested_file(scope: Scope) -> str | None:
    """The file a request asks Gradio's file route for, as the route reads it (the path already decoded, made
    absolute against the working folder), or None for any other request."""
    match = FILE_ROUTE.search(scope.get("path", ""))
    if scope.get("type") != "http" or match is None:
        return None
    return os.path.abspath(match.group(1))


class OwnFilesOnly:
    """ASGI middleware: Gradio's file route serves only the files `blocks` made; anything else is 404."""

    def __init__(self, app: ASGIApp, blocks: gr.Blocks) -> None:
        self.app, self.blocks = app, blocks

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        wanted = requested_file(scope)
        if wanted is not None and not made(self.blocks, wanted):
            await answer(send, 404, NOT_SERVED)
            return
        await self.app(scope, receive, send)
