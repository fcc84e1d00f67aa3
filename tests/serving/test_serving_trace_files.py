"""serving/trace_files.py: trace files are written with the same filesystem work whatever the number of
files already there, and whole expired buckets are deleted by a background sweep.

Filesystem work is counted, not timed: Python's audit events (open, os.mkdir, os.scandir,
os.listdir, shutil.rmtree, ...) raised in the calling thread, plus os.stat / os.lstat calls.
"""

from __future__ import annotations

import os
import sys
import threading
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from model.decoding.greedy import translate
from serving.trace_files import TraceFiles

FS_EVENTS = ("open", "os.", "shutil.", "glob.", "tempfile.")
_counting: dict[int, Counter] = {}  # thread id -> events, while a test counts in that thread


def _audit(event: str, args) -> None:
    counter = _counting.get(threading.get_ident())
    if counter is not None and event.startswith(FS_EVENTS):
        counter[event] += 1


sys.addaudithook(_audit)  # audit hooks cannot be removed: it counts only inside count_operations


def count_operations(monkeypatch, action) -> Counter:
    """Filesystem operations `action()` performs in this thread."""
    counter = Counter()
    for name in ("stat", "lstat"):
        original = getattr(os, name)

        def counted(*args, _original=original, _name=name, **kwargs):
            if threading.get_ident() in _counting:
                _counting[threading.get_ident()][f"os.{_name}"] += 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(os, name, counted)
    _counting[threading.get_ident()] = counter
    try:
        action()
    finally:
        del _counting[threading.get_ident()]
        monkeypatch.undo()
    return counter


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def trace(tiny_config, tiny_tokenizer):
    import torch

    from model import Transformer

    torch.manual_seed(0)
    return translate(
        Transformer(tiny_config).eval(), tiny_tokenizer, "Ein Mann fährt Fahrrad.", "de-en", max_new_tokens=6
    )


def fill(folder: Path, files: int, buckets: list[int]) -> None:
    """`files` old trace files spread over the given buckets, laid out as TraceFiles lays them out."""
    for index in range(files):
        directory = folder / str(buckets[index % len(buckets)]) / f"tmp{index}"
        directory.mkdir(parents=True)
        (directory / "trace-de-en.json").write_text("{}")


def test_a_trace_file_holds_the_traces_json_under_its_old_name(tmp_path, trace):
    clock = Clock(1_000_000.0)
    files = TraceFiles(tmp_path, bucket_s=60, clock=clock)
    first, second = Path(files.write(trace)), Path(files.write(trace))
    assert first != second and first.name == second.name == "trace-de-en.json"
    assert first.read_text(encoding="utf-8") == trace.to_json()
    assert first.parent.parent == tmp_path / str(int(clock.now // 60))
    with pytest.raises(ValueError, match="plain file name"):
        files.write_text("{}", "../escape.json")


@pytest.mark.parametrize("bucket_changes", [False, True])
def test_a_calls_filesystem_work_does_not_grow_with_the_number_of_files(tmp_path, trace, monkeypatch, bucket_changes):
    counts = {}
    for files in (10, 5000):
        folder = tmp_path / str(files)
        clock = Clock(1_000_000.0)
        current = int(clock.now // 60)
        fill(folder, files, [current, current - 1, current - 30, current - 70])  # 70 minutes old: expired
        traces = TraceFiles(folder, max_age_s=3600, bucket_s=60, clock=clock)
        traces.write(trace)  # the first call opens a bucket and starts a sweep
        traces.sweeper.join()
        if bucket_changes:
            clock.now += 60
        counts[files] = count_operations(monkeypatch, lambda: traces.write(trace))
        traces.sweeper.join()
        assert not (folder / str(current - 70)).exists() and (folder / str(current - 30)).exists()
    assert counts[10] == counts[5000]
    assert counts[10]["open"] == 1 and counts[10]["os.mkdir"] == 1 + bucket_changes  # the file's folder (+ bucket)
    assert not any(event in counts[10] for event in ("os.scandir", "os.listdir", "os.stat", "shutil.rmtree"))


def test_the_sweep_deletes_whole_expired_buckets_once_per_bucket_change(tmp_path, trace):
    clock = Clock(1_000_020.0)
    traces = TraceFiles(tmp_path, max_age_s=3600, bucket_s=60, clock=clock)
    old = Path(traces.write(trace))
    traces.sweeper.join()
    sweep = traces.sweeper
    clock.now += 30  # same bucket: no new sweep
    traces.write(trace)
    assert traces.sweeper is sweep
    # the file's bucket ends 40 s after it was written: it goes once that end is max_age_s old
    clock.now = 1_000_020.0 + 40 + 3600 - 1
    traces.write(trace)
    traces.sweeper.join()
    assert old.exists()
    clock.now += 61
    fresh = Path(traces.write(trace))
    traces.sweeper.join()
    assert not old.exists() and not old.parent.parent.exists() and fresh.exists()
    assert sorted(int(p.name) for p in tmp_path.iterdir()) == sorted(
        {int(t // 60) for t in (1_000_020 + 40 + 3599, clock.now)}
    )


def test_the_sweep_removes_folders_of_the_old_layout_by_age(tmp_path):
    legacy_old, legacy_new = tmp_path / "tmpold", tmp_path / "tmpnew"
    for folder in (legacy_old, legacy_new):
        folder.mkdir()
        (folder / "trace-de-en.json").write_text("{}")
    now = 2_000_000.0
    os.utime(legacy_old, (now - 4000, now - 4000))
    os.utime(legacy_new, (now - 100, now - 100))
    traces = TraceFiles(tmp_path, max_age_s=3600, clock=Clock(now))
    assert traces.sweep() == ["tmpold"]
    assert legacy_new.exists() and not legacy_old.exists()


def test_concurrent_writers_get_distinct_files(tmp_path, trace):
    traces = TraceFiles(tmp_path)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(8) as threads:
        paths = list(threads.map(lambda _: traces.write(trace), range(64)))
    assert len(set(paths)) == 64 and all(Path(p).read_text(encoding="utf-8") == trace.to_json() for p in paths)
    assert np.unique([Path(p).parent.parent for p in paths]).size <= 2  # one bucket (two if a minute turned)
