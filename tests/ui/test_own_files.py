"""The app's own temporary folder (ui/own_files.py claim_temp_folder): one per run, this user's only, named in
$GRADIO_TEMP_DIR; on a claim the folders of ended runs are removed and a running one's are kept; a child process
claims a folder of its own beside its parent's; the trace files go into it (serving/trace_files.py)."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from serving.trace_files import TraceFiles, default_folder
from ui import own_files


def held(folder: Path) -> int:
    """Hold `folder`'s run lock as a running app does -> the descriptor (close it to end the "run")."""
    fd = os.open(folder / own_files.LOCK_NAME, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fd


def test_a_run_claims_a_folder_of_its_own_once(tmp_path):
    environ = {own_files.TEMP_ENV: str(tmp_path)}  # the operator's $GRADIO_TEMP_DIR: the runs' folders go inside
    folder = own_files.claim_temp_folder(environ)
    assert folder.parent == tmp_path / own_files.FOLDER_NAME and folder.name.startswith(own_files.RUN_PREFIX)
    assert environ[own_files.TEMP_ENV] == str(folder) and (folder.stat().st_mode & 0o077) == 0
    assert own_files.claim_temp_folder(environ) == folder  # a second call (a hot reload) keeps it


def test_a_claim_removes_the_folders_of_ended_runs_and_keeps_running_ones(tmp_path):
    root = tmp_path / own_files.FOLDER_NAME
    ended, running, other = root / "run-ended", root / "run-running", root / "notes"
    for folder in (ended, running, other):
        folder.mkdir(parents=True)
        (folder / "trace-de-en.json").write_text("{}")
    (ended / own_files.LOCK_NAME).touch()  # its process has gone: the lock is free
    lock = held(running)
    try:
        folder = own_files.claim_temp_folder({own_files.TEMP_ENV: str(tmp_path)})
        assert not ended.exists()
        assert (running / "trace-de-en.json").exists() and (other / "trace-de-en.json").exists()
        assert folder.exists() and folder not in (ended, running)
    finally:
        os.close(lock)
    own_files.remove_ended_runs(root)  # the running one has ended now; this process still holds its own claim
    assert not running.exists() and folder.exists()


def test_a_child_process_claims_its_own_folder_beside_its_parents(tmp_path):
    parent = own_files.claim_temp_folder({own_files.TEMP_ENV: str(tmp_path)})  # runs: this process holds its lock
    # what a child inherits: the parent's folder in $GRADIO_TEMP_DIR, claimed by another process id
    inherited = {own_files.TEMP_ENV: str(parent), own_files.CLAIMED_ENV: f"{os.getpid() + 1}:{parent}"}
    child = own_files.claim_temp_folder(inherited)
    assert child.parent == parent.parent and child != parent and parent.exists()


def test_trace_files_go_into_the_apps_own_folder(tmp_path, monkeypatch):
    monkeypatch.setenv(own_files.TEMP_ENV, str(tmp_path / "run-x"))
    assert default_folder() == tmp_path / "run-x" / "traces"
    path = Path(TraceFiles().write_text("{}", "trace-de-en.json"))
    assert path.is_relative_to(tmp_path / "run-x" / "traces")
