"""Robustness and security of the app: bad input, many users, untrusted checkpoints, where it listens, limits.

Bad input goes to the page's Translate (tests/support/page_driver.py) and the /translate function directly, and through gradio_client to `python3 app.py` on the tiny
checkpoint in a subprocess (the `server` fixture of tests/conftest.py). Every input gets a translation or a
clear message, and the next request still works. The browser side is in test_browser_security.py.
"""

from __future__ import annotations

import functools
import json
import re
import socket
import sys
import threading
from pathlib import Path
from urllib.parse import urlparse

import gradio as gr
import pytest
from helpers import api_function, run_listener
from page_driver import PageDriver

import app
from ui import runner
from model.text import limits
from ui import build_demo, session
from ui import server as server_settings

ROOT = Path(__file__).resolve().parents[2]
GERMAN = "Ein Mann fährt Fahrrad."

# name -> (text, None for "translates", or a regex of the message)
BAD_INPUTS = {
    "empty": ("", "empty"),
    "whitespace_only": (" \t\n  \r ", "empty"),
    "one_character": ("a", None),
    "5000_characters": (("Der Hund läuft. " * 400)[: limits.MAX_INPUT_CHARS], None),
    "one_over_the_limit": ("x" * (limits.MAX_INPUT_CHARS + 1), f"{limits.MAX_INPUT_CHARS:,} characters"),
    "500_repeated_words": ("Hund " * 500, None),
    "emoji_only": ("😀🎉🐕‍🦺", None),
    "chinese": ("我爱你，中国。", None),
    "arabic_rtl": ("مرحبا بالعالم", None),
    "rtl_override": ("abc\u202edef", None),
    "mixed_german_english": ("Ich habe a cup of coffee getrunken, okay?", None),
    "script_tag": ("<script>alert(1)</script>", None),
    "img_onerror": ("<img src=x onerror=alert(1)>", None),
    "control_and_nul": ("a\x00b\x07c\x1b[31md\x7f\r\n", None),
    "nul_only": ("\x00", None),
    "unmatched_quotes": ("\"Er sagte 'hallo", None),
    "url": ("https://example.com/a?b=c&d=<e>#f", None),
    "digits_only": ("1234567890", None),
    "lone_surrogate": ("ab\ud800c", r"not valid Unicode: a lone surrogate U\+D800 at character 3"),
    "not_a_string": (12345, "must be a string, not a number"),
}


@pytest.fixture(scope="module")
def demo(tiny_checkpoint) -> gr.Blocks:
    return build_demo(tiny_checkpoint)


@pytest.fixture(scope="module")
def driver(demo) -> PageDriver:
    """One visitor's page: its Translate is the one Translate action (serving/translation.py), as is /translate."""
    page = PageDriver(demo)
    page.load()
    return page


def check_translation(text: str, translation: str, trace: dict) -> None:
    assert isinstance(translation, str) and translation == trace["translation"]
    tokens = trace["source_tokens"]
    assert tokens[0] == "<2en>" and tokens[-1] == "[EOS]"
    assert len(tokens) <= limits.MAX_SOURCE_TOKENS + 2  # language tag + subwords + [EOS]
    assert 1 <= len(trace["output_tokens"]) <= limits.MAX_TARGET_TOKENS
    if trace["source_truncated"]:
        assert len(tokens) == limits.MAX_SOURCE_TOKENS + 2
    else:
        assert trace["source_text"] == text  # NUL, RTL marks, quotes and tags arrive unchanged


@pytest.mark.parametrize("name", BAD_INPUTS)
def test_bad_input_direct(demo, driver, name):
    """On the page: a translation, or the message in the notice and nothing else changed; from /translate: the
    translation, or the same message as the API's error. Either way the next request works."""
    text, message = BAD_INPUTS[name]
    translate = functools.partial(run_listener, api_function(demo, "translate"))
    before = driver.trace
    answer = driver.translate(text, "de-en")
    if message is not None:
        assert {key for key in answer if isinstance(key, str)} == {"notice"} and driver.trace is before
        assert re.search(message, driver.shown("notice").replace("\\", ""))
        with pytest.raises(gr.Error, match=message):
            translate(text, "de-en")
    else:
        path = driver.shown("download-trace")
        check_translation(text, driver.shown("translation"), json.loads(Path(path).read_text(encoding="utf-8")))
        assert translate(text, "de-en")["translation"] == driver.trace.translation
    driver.translate(GERMAN, "de-en")  # the next request works
    assert driver.trace.source_text == GERMAN and driver.shown("translation") == driver.trace.translation
    assert translate(GERMAN, "de-en")["translation"] == driver.trace.translation


@pytest.fixture(scope="module")
def client(server, tmp_path_factory):
    from gradio_client import Client

    return Client(
        server, verbose=False, download_files=str(tmp_path_factory.mktemp("downloads")), analytics_enabled=False
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", [name for name in BAD_INPUTS if name != "lone_surrogate"])  # see the raw test
def test_bad_input_through_the_api(client, name):
    from gradio_client.exceptions import AppError

    text, message = BAD_INPUTS[name]
    if message is not None:
        with pytest.raises(AppError, match=message):
            client.predict(text, "de-en", api_name="/translate")
    else:
        translation = client.predict(text, "de-en", api_name="/translate")["translation"]
        check_translation(text, translation, json.loads(client.predict(text, "de-en", api_name="/translation_trace")))
    trace = json.loads(client.predict(GERMAN, "German → English", api_name="/translation_trace"))  # still up
    assert trace["source_text"] == GERMAN


def call_over_http(url: str, data: list) -> str:
    """POST to Gradio's /gradio_api/call/translate with ASCII-escaped JSON, read the event stream -> its text."""
    import urllib.request

    body = json.dumps({"data": data}).encode("ascii")  # "\\ud800" stays an escape, as any JSON client may send
    request = urllib.request.Request(f"{url}gradio_api/call/translate", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        event_id = json.loads(response.read())["event_id"]
    with urllib.request.urlopen(f"{url}gradio_api/call/translate/{event_id}", timeout=60) as response:
        return response.read().decode("utf-8")


@pytest.mark.slow
def test_lone_surrogate_over_raw_http_gets_a_message(server):
    # gradio_client cannot even encode a lone surrogate; a hand-written JSON request can
    text, message = BAD_INPUTS["lone_surrogate"]
    stream = call_over_http(server, [text, "de-en", "own"])
    assert "event: error" in stream and "lone surrogate U+D800" in stream
    assert "event: complete" in call_over_http(server, [GERMAN, "de-en", "own"])


@pytest.mark.slow
def test_unknown_direction_through_the_api(client):
    from gradio_client.exceptions import AppError

    for direction in ("fr-en", None, 3, "<script>alert(1)</script>"):
        with pytest.raises(AppError, match="Unknown direction|The direction must be a string"):
            client.predict(GERMAN, direction, api_name="/translate")


@pytest.mark.slow
def test_two_users_at_once_each_get_their_own_trace(server, tmp_path):
    """Two sessions translate different sentences at the same moment, many times: nothing crosses over."""
    from gradio_client import Client

    sentences = {"de-en": "Zwei Hunde spielen im Schnee.", "en-de": "A woman reads a book."}
    barrier = threading.Barrier(len(sentences))
    results: dict[str, list] = {direction: [] for direction in sentences}

    def user(direction: str) -> None:
        user_client = Client(server, verbose=False, download_files=str(tmp_path / direction), analytics_enabled=False)
        for _ in range(4):
            barrier.wait(timeout=60)
            translation = user_client.predict(sentences[direction], direction, api_name="/translate")["translation"]
            trace = json.loads(user_client.predict(sentences[direction], direction, api_name="/translation_trace"))
            results[direction].append((translation, trace))

    threads = [threading.Thread(target=user, args=(direction,)) for direction in sentences]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=240)
    for direction, text in sentences.items():
        assert len(results[direction]) == 4
        translations = {translation for translation, _ in results[direction]}
        assert len(translations) == 1  # deterministic greedy decoding: the same sentence, the same output
        for translation, trace in results[direction]:
            assert trace["source_text"] == text and trace["direction"] == direction
            assert trace["translation"] == translation
            assert trace["source_tokens"][0] == ("<2en>" if direction == "de-en" else "<2de>")


# --------------------------------------------------------------------------- where the server listens
def listening_addresses(port: int) -> set[str]:
    """Local IPv4/IPv6 addresses with a socket listening on `port`, from /proc/net/tcp{,6} (Linux)."""
    addresses = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:  # 0A = LISTEN
                packed = bytes.fromhex(address)
                # /proc prints each 32-bit word in host (little-endian) order
                words = b"".join(packed[i : i + 4][::-1] for i in range(0, len(packed), 4))
                family = socket.AF_INET if len(words) == 4 else socket.AF_INET6
                addresses.add(socket.inet_ntop(family, words))
    return addresses


@pytest.mark.skipif(not Path("/proc/net/tcp").exists() or sys.byteorder != "little", reason="needs Linux /proc")
def test_server_listens_on_loopback_only_by_default(server):
    assert listening_addresses(urlparse(server).port) == {"127.0.0.1"}


@pytest.fixture
def launched(monkeypatch):
    """Run app.main(argv) with Blocks.launch recorded instead of serving; -> (blocks, launch kwargs)."""
    calls = []
    monkeypatch.setattr(gr.Blocks, "launch", lambda self, **kwargs: calls.append((self, kwargs)))
    for name in (server_settings.HOST_ENV, "GRADIO_SERVER_NAME", app.HUB_ENV):
        monkeypatch.delenv(name, raising=False)

    def run(argv):
        app.main(argv)
        assert len(calls) == 1
        return calls.pop()

    return run


def test_main_listens_on_localhost_unless_told(launched, monkeypatch, tiny_checkpoint):
    local = ["--checkpoint", str(tiny_checkpoint)]
    assert launched(local)[1]["server_name"] == "127.0.0.1"
    assert launched([*local, "--host", "0.0.0.0"])[1]["server_name"] == "0.0.0.0"
    monkeypatch.setenv(server_settings.HOST_ENV, "0.0.0.0")
    assert launched(local)[1]["server_name"] == "0.0.0.0"


def test_main_bounds_the_queue_sessions_and_uploads(launched, tiny_checkpoint):
    blocks, kwargs = launched(["--checkpoint", str(tiny_checkpoint)])
    queue = blocks._queue  # Gradio keeps the queue settings here
    assert queue.max_size == server_settings.QUEUE_MAX_SIZE
    assert queue.default_concurrency_limit == server_settings.CONCURRENCY_LIMIT
    assert blocks.api_open is False  # API calls go through the queue too
    assert kwargs["state_session_capacity"] == server_settings.STATE_SESSIONS
    assert kwargs["max_file_size"] == server_settings.MAX_UPLOAD
    [translate_fn] = [fn for fn in blocks.fns.values() if fn.api_name == "translate"]
    # many events under way at once, each waiting for one of the CONCURRENCY_LIMIT model slots (ui/runner.py)
    assert translate_fn.concurrency_limit == server_settings.QUEUE_MAX_SIZE
    assert runner.SLOTS.count == server_settings.CONCURRENCY_LIMIT
    assert translate_fn.queue is not False


# --------------------------------------------------------------------------- untrusted checkpoints
@pytest.fixture
def no_network(monkeypatch, socket_attempts):
    """Any socket use is recorded and refused; the Hub download function must not even be called."""
    import huggingface_hub

    def never(*args, **kwargs):
        raise AssertionError("no Hub request may be made for an invalid repo id")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", never)
    monkeypatch.setenv("GRADIO_ANALYTICS_ENABLED", "False")  # Gradio's own version check and telemetry
    return socket_attempts


@pytest.mark.parametrize("repo_id", ["bad id", "../../etc", "owner/name?revision=x", "https://evil.example/a/b"])
def test_app_with_a_bad_hub_id_starts_and_says_why(launched, no_network, repo_id):
    session.load_model.cache_clear()
    blocks, kwargs = launched(["--hub", repo_id])
    texts = [c.get("props", {}).get("value") for c in blocks.config["components"]]
    assert any(isinstance(t, str) and "No model loaded" in t and "not a valid Hugging Face repo id" in t for t in texts)
    [translate_fn] = [fn for fn in blocks.fns.values() if fn.api_name == "translate"]
    with pytest.raises(gr.Error, match="No model is loaded: .*not a valid Hugging Face repo id"):
        run_listener(translate_fn, GERMAN, "de-en")
    assert no_network == []  # refused before any request
    assert kwargs["server_name"] == "127.0.0.1"


def test_checkpoint_with_a_pickle_is_not_loaded(tiny_checkpoint, tmp_path):
    """Only safetensors are read: a pickled weights file beside the config is never opened."""
    import shutil

    from model import CheckpointError, load_checkpoint

    directory = shutil.copytree(tiny_checkpoint, tmp_path / "pickled")
    for path in directory.glob("model*.safetensors"):
        path.unlink()
    marker = tmp_path / "pwned"
    # a pickle that would create `marker` if it were ever unpickled
    payload = b"cos\nsystem\n(S'touch " + str(marker).encode() + b"'\ntR."
    for name in ("pytorch_model.bin", "model.pt", "model.ckpt"):
        (directory / name).write_bytes(payload)
    with pytest.raises(CheckpointError, match="no weights: expected model.safetensors"):
        load_checkpoint(directory)
    assert not marker.exists()


# --------------------------------------------------------------------------- limits in one place
def test_limits_come_from_model_limits_and_are_shown(demo, monkeypatch):
    shown = " ".join(
        str(value)
        for component in demo.config["components"]
        for value in component.get("props", {}).values()
        if isinstance(value, str)
    )
    for number in (
        f"{limits.MAX_INPUT_CHARS:,}",
        f"**{limits.MAX_SOURCE_TOKENS} subword tokens**",
        f"**{limits.MAX_TARGET_TOKENS} tokens**",
    ):
        assert number in shown

    driver = PageDriver(demo)
    driver.load()
    monkeypatch.setattr(limits, "MAX_INPUT_CHARS", 20)
    driver.translate("x" * 21, "de-en")
    assert "21 characters long; the limit is 20" in driver.shown("notice")
    with pytest.raises(gr.Error, match="21 characters long; the limit is 20"):
        run_listener(api_function(demo, "translate"), "x" * 21, "de-en")
    monkeypatch.undo()
    monkeypatch.setattr(limits, "MAX_SOURCE_TOKENS", 3)
    monkeypatch.setattr(limits, "MAX_TARGET_TOKENS", 2)
    driver.translate("Zwei Hunde spielen im Schnee.", "de-en")
    trace = driver.trace
    assert len(trace.source_tokens) == 3 + 2 and trace.source_truncated
    assert trace.num_steps <= 2 and "first 3 subword tokens" in driver.shown("notice")


# --------------------------------------------------------------------------- the load script
@pytest.mark.slow
def test_load_script_counts_requests_and_latency(server, capsys):
    from scripts import load_test

    result = load_test.main(["--url", server, "--clients", "4", "--requests", "2"])
    assert result["errors"] == [] and result["ok"] == result["requests"] == 8
    assert 0 < result["p50_s"] <= result["p95_s"] <= result["max_s"]
    assert "8/8 ok, 0 errors; latency p50" in capsys.readouterr().out
