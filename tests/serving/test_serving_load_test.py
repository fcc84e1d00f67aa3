"""scripts/load_test.py at small scale against app.py on the tiny checkpoint: both scenarios run their
clients in a separate process, count every request, and read the server's CPU use from /proc.
(scripts/process_cpu.py is checked against a process of known CPU use.)
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
from scripts import load_test, process_cpu  # noqa: E402
from scripts.app_process import started_app  # noqa: E402

BURN = (
    "import subprocess, sys; subprocess.run([sys.executable, '-c', 'import time\\nend = time.process_time() + 1.0\\n"
    "while time.process_time() < end: pass'])"
)


@pytest.fixture(scope="module")
def app(tiny_checkpoint, tmp_path_factory):
    """(url, server pid) of app.py on the tiny checkpoint."""
    try:
        with started_app(tiny_checkpoint, tmp_path_factory.mktemp("app") / "app.log") as (url, process):
            yield url, process.pid
    except RuntimeError as error:
        pytest.fail(str(error))


def test_tree_cpu_counts_a_child_process():
    """A parent that only waits on a child that burns 1 s of CPU: the tree has used about 1 s."""
    parent = subprocess.Popen([sys.executable, "-c", BURN])
    deadline = time.monotonic() + 30
    while not process_cpu.descendants(parent.pid):
        assert time.monotonic() < deadline and parent.poll() is None
        time.sleep(0.01)
    start = process_cpu.tree_cpu_s(parent.pid)
    while parent.poll() is None:
        used = process_cpu.tree_cpu_s(parent.pid)  # the live child counted until its parent reaps it
        time.sleep(0.02)
    assert 0.7 <= used - start <= 1.3
    assert parent.pid not in process_cpu.descendants(os.getpid())  # reaped: gone from /proc


@pytest.mark.slow
def test_burst_of_two_clients(app, capsys):
    url, pid = app
    result = load_test.main(["--url", url, "--server-pid", str(pid), "--clients", "2", "--requests", "1"])
    assert result["errors"] == [] and result["ok"] == result["requests"] == 2
    assert 0 < result["p50_s"] <= result["p95_s"] <= result["max_s"] <= result["wall_s"]
    assert result["server_cpu_s"] > 0 and result["client_cpu_s"] > 0  # both sides did work
    out = capsys.readouterr().out
    assert "2/2 ok, 0 errors; latency p50" in out and "server: " in out and "cores (of" in out


@pytest.mark.slow
def test_lecture_of_three_visitors(app, capsys):
    url, pid = app
    result = load_test.main(
        ["--url", url, "--server-pid", str(pid), "--scenario", "lecture", "--visitors", "3", "--window", "1"]
    )
    assert result["errors"] == [] and result["ok"] == result["requests"] == 3
    assert 0 < result["page_p50_s"] <= result["page_p95_s"]
    assert result["wall_s"] >= 2 / 3  # the last visitor arrived two thirds into the window
    assert "page alive (GET / and /config): p50" in capsys.readouterr().out


def test_a_wrong_trace_is_an_error(app, monkeypatch):
    """A trace of another sentence (users' data crossing over) is counted as an error, not as a success."""
    url, _ = app
    session = load_test.User(url, verify=True)
    original = session.client.predict
    monkeypatch.setattr(
        session.client,
        "predict",
        lambda text, direction, api_name: original("Wie spät ist es?", direction, api_name=api_name),
    )
    with pytest.raises(AssertionError, match="got the trace of 'Wie spät ist es"):
        session.translate("Zwei Hunde spielen im Schnee.", "de-en")
    session.close()


def test_bad_options_are_refused():
    with pytest.raises(SystemExit):
        load_test.main(["--clients", "0"])
    with pytest.raises(SystemExit):
        load_test.main(["--server-pid", "1"])
