"""Run `app.py` in a subprocess on 127.0.0.1 and a free port: for the browser tests, the load test and
the benchmarks (one implementation for all three).

The server gets its own process group (so stopping it stops its children and nothing else),
analytics off, the Hub offline, and none of the host/port variables of the calling environment.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT_S = 180  # importing torch and gradio on a busy 2-core machine is slow


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def started_app(
    checkpoint: str | Path | None,
    log_path: Path,
    timeout_s: float = START_TIMEOUT_S,
    env: dict | None = None,
    checkout: Path = ROOT,
) -> Iterator[tuple[str, subprocess.Popen]]:
    """Start `checkout`'s app.py (this repository's, or another copy of it, e.g. an earlier commit's; working
    directory: the log's folder; `env`: variables added to its environment, such as $ATTENTION_EXPLORER_OPUS_MT),
    wait until it answers -> (url, process).

    Raises RuntimeError, with the end of the log, if it exits or does not answer in time.
    """
    port = free_port()
    added = env or {}
    env = {**os.environ, "GRADIO_ANALYTICS_ENABLED": "False", "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
    for name in ("ATTENTION_EXPLORER_HOST", "ATTENTION_EXPLORER_HUB", "GRADIO_SERVER_NAME", "GRADIO_SERVER_PORT"):
        env.pop(name, None)
    env.update(added)
    command = [sys.executable, str(Path(checkout) / "app.py"), "--port", str(port)]
    if checkpoint is not None:
        checkpoint = str(Path(checkpoint).resolve())
        env["ATTENTION_EXPLORER_CHECKPOINT"] = checkpoint  # the module-level demo loads the same one
        command += ["--checkpoint", checkpoint]
    url = f"http://127.0.0.1:{port}/"
    with log_path.open("w") as log:
        process = subprocess.Popen(
            command, cwd=log_path.parent, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"app.py exited with {process.returncode}:\n{log_path.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(url, timeout=5) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"app.py did not answer within {timeout_s:.0f} s:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.5)
        yield url, process
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)  # its own process group: the server and nothing else
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=15)
