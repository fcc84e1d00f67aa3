"""app.py as Gradio and Spaces run it: a module-level `demo`, and `gradio app.py` (hot reload) surviving an edit.

The reload test runs the real `gradio app.py` on the tiny checkpoint (ATTENTION_EXPLORER_CHECKPOINT, the variable
app.py reads), edits a watched file, and waits on the server's own messages: its output ("Changes detected in",
or "Reloading ... failed") and the page's reload stream (/gradio_api/dev/reload, the events a browser tab follows:
`reload` when the new page is swapped in, `error` when the re-run failed).
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import gradio as gr
import httpx
import pytest

import app

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 300  # importing torch and gradio, then the page twice (Gradio's watcher re-runs the file once)
EVENT_TIMEOUT_S = 240


def test_the_module_level_demo_runs_the_model_in_process():
    assert isinstance(app.demo, gr.Blocks) and app.demo.runner is not None and not app.demo.runner.zerogpu


class Lines:
    """Lines of a stream, read in a thread, taken in order with a deadline."""

    def __init__(self, stream, label: str, seen: list[str]):
        self.queue: queue.Queue[str | None] = queue.Queue()
        self.label, self.seen = label, seen
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream) -> None:
        for line in stream:
            self.queue.put(line if isinstance(line, str) else line.decode())
        self.queue.put(None)

    def wait_for(self, *needles: str, timeout_s: float = EVENT_TIMEOUT_S) -> str:
        """The first line holding one of `needles`; fails on the stream's end or the deadline."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                line = self.queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                pytest.fail(f"no {needles} from {self.label} within {timeout_s:.0f} s:\n{''.join(self.seen[-40:])}")
            if line is None:
                pytest.fail(f"{self.label} ended before {needles}:\n{''.join(self.seen[-40:])}")
            self.seen.append(line if line.endswith("\n") else line + "\n")
            if any(needle in line for needle in needles):
                return line


@pytest.fixture
def reloading_app(tiny_checkpoint, tmp_path):
    """`gradio app.py` on the tiny checkpoint, watching tmp_path too -> (url, its output lines, the watched folder)."""
    from scripts.app_process import free_port

    port = free_port()
    env = {
        **os.environ,
        "ATTENTION_EXPLORER_CHECKPOINT": str(tiny_checkpoint),
        "GRADIO_SERVER_PORT": str(port),
        "GRADIO_ANALYTICS_ENABLED": "False",
        "HF_HUB_OFFLINE": "1",
        "PYTHONUNBUFFERED": "1",
    }
    for name in ("ATTENTION_EXPLORER_HUB", "ATTENTION_EXPLORER_HOST", "GRADIO_SERVER_NAME"):
        env.pop(name, None)
    gradio_cli = [sys.executable, "-c", "from gradio.cli import cli; cli()"]  # the `gradio` command
    process = subprocess.Popen(
        [*gradio_cli, "app.py", "--watch-dirs", str(tmp_path)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    seen: list[str] = []
    try:
        output = Lines(process.stdout, "gradio app.py", seen)
        output.wait_for(f"127.0.0.1:{port}", timeout_s=START_TIMEOUT_S)
        yield f"http://127.0.0.1:{port}", output, tmp_path
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.mark.slow
def test_gradio_hot_reload_survives_an_edit(reloading_app):
    url, output, watched = reloading_app
    reloads = f"{url}/gradio_api/dev/reload"
    with httpx.Client(timeout=httpx.Timeout(10, read=None)) as http, http.stream("GET", reloads) as stream:
        stream.raise_for_status()
        events = Lines(stream.iter_lines(), "/gradio_api/dev/reload", [])
        edited = watched / "edited.py"
        for attempt in range(1, 11):  # the watcher notes mtimes on its first pass: an edit before it goes unseen
            edited.write_text(f"EDITS = {attempt}\n", encoding="utf-8")
            os.utime(edited, (time.time() + attempt, time.time() + attempt))
            try:
                line = output.wait_for(f"{edited.name}", "failed", timeout_s=15)  # other edits may come first
                break
            except pytest.fail.Exception:
                continue
        else:
            pytest.fail("the watcher never saw the edit:\n" + "".join(output.seen[-40:]))
        assert "Changes detected in" in line and "edited.py" in line
        event = events.wait_for("event: reload", "event: error")
        assert event.strip() == "event: reload", "".join(output.seen[-40:])
    assert not [seen for seen in output.seen if "Reloading" in seen and "failed" in seen]
    page = httpx.get(f"{url}/config", timeout=30)
    assert page.status_code == 200 and "Attention Explorer" in page.text  # the new page is served
