"""What the served app takes and gives (ui/server.py with ui/request_limits.py and ui/own_files.py), asked over
HTTP of the page on the tiny checkpoint, launched in this process as `ui.server.launch` serves it, in a temporary
folder of its own claimed as app.py claims it: no upload route, no body over the limit (stated or chunked), only
the app's own files, and the page's largest request well under the limit."""

from __future__ import annotations

import json
from urllib.parse import urlencode
import os
import tempfile
import uuid
from pathlib import Path

import httpx
import pytest

from model.text.limits import MAX_INPUT_CHARS
from ui import build_demo, own_files, server
from ui.request_limits import (
    JSON_BYTES_PER_CHAR,
    LINK_BYTES_PER_CHAR,
    MAX_BODY_BYTES,
    OTHER_INPUTS_BYTES,
    TEXT_INPUTS,
)

LONG_GERMAN = "Über die Brücke gehen zwei Hunde, während es draußen schneit und größer wird. "


@pytest.fixture(scope="module")
def served(tiny_checkpoint):
    """(the page, its URL), in a folder of its own ($GRADIO_TEMP_DIR as app.py leaves it; restored after)."""
    kept = {name: os.environ.get(name) for name in (own_files.TEMP_ENV, own_files.CLAIMED_ENV)}
    own_files.claim_temp_folder()
    demo = build_demo(tiny_checkpoint)
    server.launch(demo, host="127.0.0.1", prevent_thread_lock=True)
    yield demo, demo.local_url
    demo.close()
    for name, value in kept.items():
        os.environ.pop(name, None) if value is None else os.environ.__setitem__(name, value)


@pytest.fixture
def http():
    with httpx.Client(timeout=30, headers={"content-type": "application/json"}) as client:
        yield client


def join_body(text: str) -> bytes:
    return json.dumps(
        {"data": [text], "fn_index": 0, "session_hash": "limits", "event_data": None, "trigger_id": None}
    ).encode()


@pytest.mark.parametrize("path", ["gradio_api/upload", "gradio_api/process_recording", "gradio_api/upload_progress"])
def test_the_upload_routes_are_refused_in_plain_words(served, tmp_path, path):
    sent = tmp_path / "note.txt"
    sent.write_text("a visitor's file")
    with httpx.Client(timeout=30) as client, sent.open("rb") as file:
        if path.endswith("progress"):
            answer = client.get(served[1] + path, params={"upload_id": "any"})
        else:  # as Gradio's client uploads: multipart, the file under "files" (a recording's under "video")
            answer = client.post(served[1] + path, files={"files": file, "video": file})
    assert answer.status_code == 404 and answer.text == "This app takes no uploads."
    assert answer.headers["content-type"].startswith("text/plain")
    assert not list(Path(os.environ[own_files.TEMP_ENV]).rglob("note.txt"))  # nothing stored


def test_a_body_over_the_limit_is_refused_with_its_length_stated(served, http):
    answer = http.post(served[1] + "gradio_api/queue/join", content=join_body("a" * MAX_BODY_BYTES))
    assert answer.status_code == 413
    assert answer.text == f"The request is larger than this app accepts (at most {MAX_BODY_BYTES:,} bytes)."


def test_a_chunked_body_over_the_limit_is_refused_without_a_length(served, http):
    body = join_body("a" * 20 * MAX_BODY_BYTES)

    def chunks():  # a generator: httpx sends it chunked, with no Content-Length
        for start in range(0, len(body), 8192):
            yield body[start : start + 8192]

    answer = http.post(served[1] + "gradio_api/queue/join", content=chunks())
    assert answer.status_code == 413 and answer.text.startswith("The request is larger than this app accepts")


@pytest.mark.parametrize("chunked", [False, True], ids=["stated", "chunked"])
def test_a_body_under_the_limit_goes_through_to_gradio(served, http, chunked):
    body = join_body("Das Haus ist klein.")
    answer = http.post(served[1] + "gradio_api/queue/join", content=iter([body]) if chunked else body)
    assert answer.status_code == 200 and "event_id" in answer.json()  # Gradio's own answer: queued


def largest_value(component: dict, text: str):
    """The largest value a page input sends: `text` in a text box, every choice of a checkbox group, the longest
    choice of a menu or radio, else the value it starts with."""
    props = component.get("props", {})
    choices = [choice[1] if isinstance(choice, list) else choice for choice in props.get("choices") or []]
    if props.get("elem_id") == "share-link":  # both sentences again, percent-encoded (ui/share.py)
        return "http://127.0.0.1:7860/?" + urlencode({"text": text, "dir": "de-en", "second": text, "token": "x"})
    if props.get("elem_id") == "page-mark":  # the page's name, made by its load (ui/redraw.py)
        return "m" * 64
    if component["type"] == "textbox":
        return text
    if component["type"] == "checkboxgroup":
        return choices
    if choices:
        return max(choices, key=lambda choice: len(json.dumps(choice)))
    return props.get("value")


def largest_request(config: dict, text: str) -> int:
    """Bytes of the largest body any of the page's events sends, with `text` in each text box (as the page's
    script sends it: JSON, non-ASCII as UTF-8)."""
    components = {component["id"]: component for component in config["components"]}
    sizes = []
    for index, dependency in enumerate(config["dependencies"]):
        data = [largest_value(components[i], text) for i in dependency["inputs"]]
        body = {"data": data, "event_data": None, "fn_index": index, "trigger_id": 1, "session_hash": "x" * 11}
        sizes.append(len(json.dumps(body, ensure_ascii=False).encode("utf-8")))
    return max(sizes)


def test_the_pages_largest_request_stays_well_under_the_limit(served):
    config = served[0].get_config_file()
    components = {component["id"]: component for component in config["components"]}
    held = {"share-link", "page-mark"}  # the text boxes the page fills itself
    for dependency in config["dependencies"]:  # the limit's count of free-text inputs holds for every event
        typed = [components[i] for i in dependency["inputs"] if components[i]["type"] == "textbox"]
        assert sum(c["props"].get("elem_id") not in held for c in typed) <= TEXT_INPUTS
    longest = (LONG_GERMAN * MAX_INPUT_CHARS)[:MAX_INPUT_CHARS]  # the longest sentence the app takes
    assert largest_request(config, longest) < MAX_BODY_BYTES / 4  # measured: about 40 KB of 196 KB
    assert largest_request(config, "") < OTHER_INPUTS_BYTES / 4  # everything but the text: about 1 KB
    worst = "\u0001" * MAX_INPUT_CHARS  # the most bytes JSON spends on a character
    assert len(json.dumps(worst)) == MAX_INPUT_CHARS * JSON_BYTES_PER_CHAR + 2
    assert len(urlencode({"t": "\U0001f600"})) == 2 + LINK_BYTES_PER_CHAR  # the most the link spends on one
    assert largest_request(config, worst) <= MAX_BODY_BYTES
    assert largest_request(config, "\U0001f600" * MAX_INPUT_CHARS) <= MAX_BODY_BYTES


def test_only_the_apps_own_files_are_served(served, http):
    demo, url = served
    own = Path(os.environ[own_files.TEMP_ENV])
    assert own.parent.name == own_files.FOLDER_NAME and (own.stat().st_mode & 0o077) == 0  # this user's only
    start_trace = demo.get_config_file()["components"]
    made = [c["props"]["value"] for c in start_trace if c["type"] == "downloadbutton" and c["props"].get("value")]
    assert made and Path(made[0]["path"]).is_relative_to(own)  # the start-up example's trace, in the own folder
    assert http.get(url + "gradio_api/file=" + made[0]["path"]).status_code == 200
    name = f"planted-{uuid.uuid4().hex}.txt"
    shared = Path(tempfile.gettempdir()) / "gradio" / name  # Gradio's shared folder, as another app writes it
    planted = [shared, own / name, own / "traces" / name]  # ... or another process into the app's own folder
    try:
        for path in planted:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("not the app's")
            answer = http.get(url + "gradio_api/file=" + str(path))
            assert (answer.status_code, answer.text) == (404, "Not found."), path
        assert http.get(url + "gradio_api/file/" + str(own / name)).status_code == 404  # Gradio's older route
        assert http.get(url + "gradio_api/file=https://example.com/").status_code == 404  # nor fetched from the web
    finally:
        for path in planted:
            path.unlink(missing_ok=True)
