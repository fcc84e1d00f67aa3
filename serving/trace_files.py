"""Trace JSON files for the download button and the API, expired without scanning on every call.

app.py's write_trace_json listed and statted every file of the last hour on each call: 2.8 ms with
none, 108 ms at 5k files, 683 ms at 25k. Here files go into one folder per time bucket
(a minute by default): folder/<bucket>/<random>/trace-<direction>.json. A call writes its file and,
only when the bucket has changed since the previous call, starts a background sweep that deletes
whole buckets older than max_age_s. So a call's filesystem work is the same at 10 files or 25k,
and a file lives between max_age_s and max_age_s + bucket_s.

The folder is `traces` in the app's own temporary folder where the app named one in $GRADIO_TEMP_DIR
(ui/own_files.py: removed with the run's folder once the run ends; Gradio serves a file already in its folder
without copying it), else <tmp>/attention-explorer-traces.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from model import TranslationTrace

SHARED_FOLDER = Path(tempfile.gettempdir()) / "attention-explorer-traces"  # where no app folder is named
TEMP_ENV = "GRADIO_TEMP_DIR"  # the app's own temporary folder, when ui/own_files.py claimed one
MAX_AGE_S = 3600.0  # as app.py's TRACE_FILES_MAX_AGE_S
BUCKET_S = 60.0


class TraceFiles:
    """Writes trace files into time buckets and deletes expired buckets in the background.

    Args:
        folder: where the buckets live (default: default_folder(), looked up at the first write).
        max_age_s: a file is kept at least this long (the download link and the API's file URL must work).
        bucket_s: width of one bucket; expired files are removed at most one bucket late.
        clock: seconds since the epoch (injectable for tests).
    """

    def __init__(
        self,
        folder: str | Path | None = None,
        max_age_s: float = MAX_AGE_S,
        bucket_s: float = BUCKET_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if bucket_s <= 0 or max_age_s < 0:
            raise ValueError(f"bucket_s must be positive and max_age_s not negative, got {bucket_s}, {max_age_s}")
        self.given_folder = Path(folder) if folder is not None else None
        self.max_age_s, self.bucket_s, self.clock = max_age_s, bucket_s, clock
        self._lock = threading.Lock()
        self._bucket: int | None = None
        self._bucket_dir: Path | None = None
        self.sweeper: threading.Thread | None = None  # the latest background sweep (tests join it)

    @property
    def folder(self) -> Path:
        """Where the buckets live: the folder given, else default_folder() (the app claims its own folder after
        this module's writer is made, before the first write)."""
        return self.given_folder or default_folder()

    def write(self, trace: TranslationTrace) -> str:
        """Write trace.to_json() to a fresh trace-<direction>.json -> its path (app.write_trace_json's contract)."""
        return self.write_text(trace.to_json(), f"trace-{trace.direction}.json")

    def write_text(self, text: str, name: str) -> str:
        """Write `text` to a fresh file called `name` in the current bucket -> its path."""
        return self.write_bytes(text.encode("utf-8"), name)

    def write_bytes(self, data: bytes, name: str) -> str:
        """Write `data` to a fresh file called `name` in the current bucket -> its path (a lesson's zip)."""
        if not name or Path(name).name != name or name in (".", ".."):
            raise ValueError(f"name must be a plain file name, got {name!r}")
        bucket_dir = self._current_bucket()
        try:
            directory = tempfile.mkdtemp(dir=bucket_dir)
        except FileNotFoundError:  # the bucket was removed behind our back (a tmp cleaner): make it again
            bucket_dir.mkdir(parents=True, exist_ok=True)
            directory = tempfile.mkdtemp(dir=bucket_dir)
        path = Path(directory) / name
        path.write_bytes(data)
        return str(path)

    def _current_bucket(self) -> Path:
        bucket = int(self.clock() // self.bucket_s)
        with self._lock:
            if bucket == self._bucket:
                return self._bucket_dir
            self._bucket, self._bucket_dir = bucket, self.folder / str(bucket)
            self._bucket_dir.mkdir(parents=True, exist_ok=True)
            self.sweeper = threading.Thread(target=self.sweep, name="trace-files-sweep", daemon=True)
            self.sweeper.start()
            return self._bucket_dir

    def sweep(self) -> list[str]:
        """Delete every bucket whose newest possible file is older than max_age_s -> names removed.

        Lists only the top folder (one entry per bucket: about max_age_s / bucket_s of them).
        Folders left by the older one-folder-per-file layout are removed by their age.
        """
        now = self.clock()
        removed = []
        try:
            entries = list(os.scandir(self.folder))
        except OSError:
            return removed
        for entry in entries:
            try:
                if entry.name.isdigit():
                    expired = (int(entry.name) + 1) * self.bucket_s <= now - self.max_age_s
                else:
                    expired = entry.is_dir(follow_symlinks=False) and now - entry.stat().st_mtime > self.max_age_s
            except OSError:
                continue
            if expired:
                shutil.rmtree(entry.path, ignore_errors=True)
                removed.append(entry.name)
        return removed


def default_folder() -> Path:
    """`traces` in the app's own temporary folder ($GRADIO_TEMP_DIR), else <tmp>/attention-explorer-traces."""
    own = os.environ.get(TEMP_ENV)
    return Path(own) / "traces" if own else SHARED_FOLDER


_default: TraceFiles | None = None
_default_lock = threading.Lock()


def write_trace_json(trace: TranslationTrace) -> str:
    """Drop-in for app.write_trace_json: the process-wide TraceFiles in the default folder."""
    global _default
    with _default_lock:
        if _default is None:
            _default = TraceFiles()
    return _default.write(trace)
