"""ZeroGPU mode through the real `spaces` package, as on a ZeroGPU Space: a fake device API on 127.0.0.1 stands in for
the Hub's (the endpoints spaces/zero/api.py calls: /startup-report, /schedule, /allow, /release), and the app runs in
a child process with the Space's environment (tests/support/zerogpu_space.py stubs only what a CPU build of torch
lacks: CUDA tensors and calls).

Checked: spaces packs the jobs' copy of the weights at launch while the page's CPU copy stays real; every declared
job runs in the one GPU process spaces forks (one /allow, from a pid other than the server's), asks for the duration
computed from its input and the job's measured cost (a start-up allowance only for the first, which forks the worker),
pickles back and equals the same job run in the server on the CPU; bad input keeps
its message; a quota refusal reaches an API client (as the page) with its title and unquoted message.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from serving import JOBS, zerogpu
from serving.runner import BAD_INPUT_TITLE

ROOT = Path(__file__).resolve().parents[2]
DRIVER = ROOT / "tests" / "support" / "zerogpu_space.py"
GERMAN = "Ein Hund rennt durch den Park."  # not a built-in example: those are answered from the cache


class FakeDeviceAPI(ThreadingHTTPServer):
    """The ZeroGPU device API on 127.0.0.1: approves every GPU call, or refuses for quota once `quota_left` is set."""

    def __init__(self):
        super().__init__(("127.0.0.1", 0), DeviceHandler)
        self.requests: list[tuple[str, dict]] = []
        self.quota_left: int | None = None
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def seen(self, path: str) -> list[dict]:
        with self.lock:
            return [params for seen_path, params in self.requests if seen_path == path]


class DeviceHandler(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 - the name http.server calls
        api: FakeDeviceAPI = self.server
        url = urlparse(self.path)
        params = {key: values[0] for key, values in parse_qs(url.query).items()}
        with api.lock:
            api.requests.append((url.path, params))
        if url.path == "/schedule" and api.quota_left is not None:  # spaces/zero/api.py: 429 + QuotaInfos
            self.answer(429, {"left": api.quota_left, "wait": 3600})
        elif url.path == "/schedule":
            self.answer(
                200,
                {
                    "idle": True,
                    "nvidiaIndex": 0,
                    "nvidiaUUID": "GPU-fake",
                    "allowToken": f"token-{len(api.seen('/schedule'))}",
                },
            )
        else:  # /startup-report, /allow, /release
            self.answer(200, {})

    def answer(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):  # quiet
        pass


@pytest.fixture
def device_api():
    api = FakeDeviceAPI()
    thread = threading.Thread(target=api.serve_forever, daemon=True)
    thread.start()
    yield api
    api.shutdown()
    api.server_close()


@pytest.fixture
def zerogpu_space(device_api, tiny_checkpoint, tmp_path):
    """The app in a child process as on a ZeroGPU Space -> (its READY report, the process)."""
    yield from space_process(device_api, tiny_checkpoint, tmp_path)


@pytest.fixture
def zerogpu_space_with_opus_mt(device_api, tiny_checkpoint, tmp_path, opus_mt_folder):
    """As zerogpu_space, and OPUS-MT (the small folders) loaded after launch."""
    yield from space_process(device_api, tiny_checkpoint, tmp_path, str(opus_mt_folder))


def space_process(device_api, tiny_checkpoint, tmp_path, *extra: str):
    from scripts.app_process import free_port

    cgroup = tmp_path / "cgroup"
    cgroup.write_text("1:devices:/zerogpu-test\n")  # what spaces reads as this Space's device cgroup
    env = {
        **os.environ,
        "SPACES_ZERO_GPU": "true",
        "SPACES_ZERO_DEVICE_API_URL": device_api.url,
        "ZEROGPU_PROC_SELF_CGROUP_PATH": str(cgroup),
        "ZEROGPU_OFFLOAD_DIR": str(tmp_path / "offload"),
        "HOME": str(tmp_path),
        "GRADIO_ANALYTICS_ENABLED": "False",
        "HF_HUB_OFFLINE": "1",
        "PYTHONUNBUFFERED": "1",
        "PYTHONPATH": str(ROOT),
    }
    process = subprocess.Popen(
        [sys.executable, str(DRIVER), str(tiny_checkpoint), str(free_port()), *extra],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    output = []
    for line in process.stdout:  # wait on the driver's own message
        output.append(line)
        if line.startswith("READY "):
            break
    else:
        process.wait(timeout=60)
        pytest.fail("the ZeroGPU app stopped before it was ready:\n" + "".join(output[-60:]))
    yield json.loads(output[-1].removeprefix("READY ")), process
    process.stdin.close()
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.mark.slow
def test_every_job_forks_pickles_and_returns_and_a_quota_error_keeps_its_title(zerogpu_space, device_api):
    report, _process = zerogpu_space
    # at launch spaces packed the jobs' copy of the weights (all of them), and the page's copy stayed real
    assert device_api.seen("/startup-report")
    assert report["packed_bytes"] == report["model_bytes"] > 0 and report["page_weights_real"]
    # every job through the one dispatcher, in one forked GPU process, equal to the job run in the server
    assert set(report["jobs"]) == set(JOBS)
    for name, result in report["jobs"].items():
        assert result["same"] and result["pickled_bytes"] > 0, name
    allows = device_api.seen("/allow")
    assert len(allows) == 1 and int(allows[0]["pid"]) != report["pid"]  # one GPU process, forked
    asked = [int(params["durationSeconds"]) for params in device_api.seen("/schedule")]
    expected = [result["seconds"] for result in report["jobs"].values()]
    assert asked[: len(expected)] == expected  # each call asked for the duration of its own input
    first = next(iter(report["jobs"].values()))
    assert first["seconds"] == first["seconds_warm"] + zerogpu.COLD_START_S  # the call that forked the worker
    assert [result["seconds_warm"] for result in report["jobs"].values()][1:] == expected[1:]  # then warm
    assert report["bad_input"] == {"title": BAD_INPUT_TITLE, "message": report["bad_input_expected"]}
    assert all(params["fail"].lower() == "false" for params in device_api.seen("/release")[: len(expected)])

    from gradio_client import Client
    from gradio_client.exceptions import AppError

    client = Client(report["url"], verbose=False, download_files=False, analytics_enabled=False)
    answer = client.predict(GERMAN, "de-en", api_name="/translate")  # {"translation", "notices"} (ui/api.py)
    assert answer["translation"] and isinstance(answer["notices"], list), answer
    assert len(device_api.seen("/allow")) == 1  # a page's request reuses the GPU process
    device_api.quota_left = 3
    with pytest.raises(AppError) as refused:
        client.predict(GERMAN, "de-en", api_name="/translate")
    assert refused.value.title == "ZeroGPU quota exceeded"
    assert refused.value.message.startswith("Space app has reached its GPU limit")  # no quotes added


@pytest.mark.slow
def test_opus_mt_loaded_after_launch_runs_in_a_gpu_process_of_its_own(zerogpu_space_with_opus_mt, device_api):
    """OPUS-MT loaded after the launch (a visitor's pick, a Space's preload): its page is built into the running app;
    its copy goes to cuda in the server process, outside any GPU call, and its translation runs in a second GPU
    process, forked after the load, equal to the core's on the CPU, asking for its own duration."""
    report, _process = zerogpu_space_with_opus_mt
    opus = report["opus_mt"]
    assert opus["state"] == "ready", opus.get("log")
    assert opus["pages"] == ["", "opus-mt"] and opus["runner_zerogpu"]
    assert opus["same"], (opus["differ"], opus["translations"])
    allows = device_api.seen("/allow")
    assert len(allows) == 2 and len({params["pid"] for params in allows}) == 2  # a worker per model
    assert all(int(params["pid"]) != report["pid"] for params in allows)
    asked = [int(params["durationSeconds"]) for params in device_api.seen("/schedule")]
    assert asked[-1] == opus["seconds"], asked  # the last call: the one that forked OPUS-MT's worker
