"""Every parameter of every endpoint, given any value, gets one answer in plain words (property-based, hypothesis).

- `/translate` and `/translation_trace` (the API and the MCP tools): any JSON value for each of text, direction
  and model, any of them left out, run through Gradio's own Blocks.process_api (what the queue runs for a call):
  a result, or one gr.Error whose payload (the queue's `error_payload`) is a short sentence with a title, no
  traceback, no server path; never an exception Gradio would log with a traceback and answer {"error": null}.
- The share link: any value of its query parameters through the page's load handler: the page opens at a view it
  has (a step, layer and head that exist), and a value it could not use is named in the notice.
Deterministic (derandomize=True): the same examples on every run, so CI cannot flake.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import gradio as gr
import pytest
from gradio.state_holder import SessionState
from gradio.utils import error_payload
from helpers import api_function, in_own_thread
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from page_driver import PageDriver

from model.checkpoints.catalogue import MODELS
from serving.runner import BAD_INPUT_TITLE, NO_MODEL_TITLE
from ui import build_demo
from ui import share_link
from ui.text import EXAMPLES

ROOT = Path(__file__).resolve().parents[2]
GERMAN = "Ein Mann fährt Fahrrad."
HUGE = "x" * 6000  # over the input limit (5,000 characters): a value too long to echo
UNICODE_DIGITS = ["²", "¹", "①", "٣", "５", "𝟕", "߂", "໒"]  # str.isdigit() is True for each; none is ASCII
PROPERTIES = settings(
    max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
# where the server's files are: the repository, the installed packages, the temporary folders (the checkpoints)
SERVER_PLACES = (str(ROOT), str(Path(gr.__file__).parents[1]), tempfile.gettempdir())

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
odd_strings = st.sampled_from([*UNICODE_DIGITS, "", " ", HUGE, "9" * 5000, "de-en\x00", "de-en" * 2])
texts = st.sampled_from([GERMAN, EXAMPLES[0][0]]) | odd_strings | json_values
directions = st.sampled_from(["de-en", "en-de", "German → English"]) | odd_strings | json_values
models = st.sampled_from([*MODELS, None]) | odd_strings | json_values


@pytest.fixture(scope="module")
def demo(tiny_checkpoint) -> gr.Blocks:
    return build_demo(tiny_checkpoint)


def call(demo: gr.Blocks, api_name: str, data: list):
    """One call of an API function as Gradio's queue runs it -> ("ok", its output) or ("error", the payload the
    client gets); an exception that is not a quiet gr.Error fails the test (the queue would print its traceback)."""
    block_fn = api_function(demo, api_name)
    try:
        answer = in_own_thread(asyncio.run, demo.process_api(block_fn, list(data), state=SessionState(demo)))
    except gr.Error as error:
        assert not error.print_exception, f"{api_name}{data!r:.200}: the server would log a traceback"
        return "error", error_payload(error, show_error=False)
    return "ok", answer["data"][0]


def assert_plain(payload: dict, titles=(BAD_INPUT_TITLE,)) -> None:
    message = payload["error"]
    assert isinstance(message, str) and message.strip(), payload  # never {"error": null}
    assert len(message) < 400 and "Traceback" not in message, message
    assert not any(place in message for place in SERVER_PLACES), message
    assert payload["title"] in titles


@PROPERTIES
@given(
    api_name=st.sampled_from(["translate", "translation_trace"]),
    values=st.tuples(texts, directions, models),
    sent=st.integers(0, 4),  # how many values the call sends: 0..2 leave parameters out, 4 sends one too many
)
def test_every_value_of_every_api_parameter_gets_a_result_or_one_plain_message(demo, api_name, values, sent):
    data = [*values, "extra"][:sent]
    outcome, answer = call(demo, api_name, data)
    if outcome == "error":  # no model loaded: only for a model this server lacks (the tiny app has no OPUS-MT)
        assert_plain(answer, titles=(BAD_INPUT_TITLE, NO_MODEL_TITLE))
        assert (answer["title"] == NO_MODEL_TITLE) == (sent >= 3 and values[2] == "opus-mt")
        return
    text, direction, model = [*data[:3], *("", "de-en", None)[len(data[:3]) :]]  # what was left out: the defaults
    assert isinstance(text, str) and text.strip()  # only a real sentence is translated
    assert direction in ("de-en", "en-de", "German → English") and model in (*MODELS, None, "")
    if api_name == "translate":
        assert isinstance(answer["translation"], str) and isinstance(answer["notices"], list)
    else:
        assert isinstance(answer, str) and answer.startswith("{")


def test_a_call_that_leaves_parameters_out_gets_their_defaults(demo):
    """What gradio_client fills in, a positional call gets too: the same answer as the call with every value."""
    full = call(demo, "translate", [GERMAN, "de-en", "own"])
    assert call(demo, "translate", [GERMAN]) == full == call(demo, "translate", [GERMAN, "de-en"])
    outcome, payload = call(demo, "translation_trace", [])
    assert outcome == "error" and "empty" in payload["error"]
    assert_plain(payload)


@pytest.mark.parametrize("api_name", ["translate", "translation_trace"])
@pytest.mark.parametrize("data", [["", "de-en"], [" \t\n ", "en-de", "own"], []], ids=["empty", "blank", "left-out"])
def test_an_empty_text_is_refused_in_the_apis_words_naming_the_text_parameter(demo, api_name, data):
    """The API's client has no text box: its refusal names the parameter it sent, as docs/serving.md shows."""
    outcome, payload = call(demo, api_name, data)
    assert outcome == "error" and payload["title"] == BAD_INPUT_TITLE
    assert payload["error"] == 'The "text" parameter is empty: send the German or English sentence to translate.'
    assert_plain(payload)
    documented = (ROOT / "docs" / "serving.md").read_text(encoding="utf-8")
    assert f"AppError: {payload['error']}" in documented


@pytest.mark.parametrize(
    "model", [["own"], {"key": "own"}, 3, "①", HUGE], ids=["array", "object", "number", "digit", "huge"]
)
def test_a_model_of_the_wrong_type_or_unknown_is_said_short(demo, model):
    outcome, payload = call(demo, "translate", [GERMAN, "de-en", model])
    assert outcome == "error" and "model" in payload["error"] and "'own'" in payload["error"]
    assert_plain(payload)


def test_no_model_loaded_is_titled_so_without_a_server_path(tmp_path):
    page = build_demo(tmp_path / "no-checkpoint-here")
    outcome, payload = call(page, "translate", [GERMAN, "de-en"])
    assert outcome == "error" and payload["error"].startswith("No model is loaded")
    assert str(tmp_path) not in payload["error"]
    assert_plain(payload, titles=(NO_MODEL_TITLE,))


# --------------------------------------------------------------------------- the share link
def test_a_link_number_is_ascii_digits_from_one():
    assert [share_link.link_number(value) for value in ("1", "07", "9999")] == [1, 7, 9999]
    for value in [*UNICODE_DIGITS, "0", "-1", "1e3", " 2", "10000", "9" * 5000, "", "²1"]:
        assert share_link.link_number(value) is None, value


link_values = st.sampled_from(UNICODE_DIGITS) | st.sampled_from(["1", "2", "3", "4", "0", "99999", "all", "mean"])
link_params = st.fixed_dictionaries(
    {},
    optional={
        "text": st.sampled_from([EXAMPLES[0][0], GERMAN, ""]),
        "dir": st.sampled_from(["de-en", "en-de"]) | odd_strings,
        "step": link_values | st.text(max_size=6),
        "tab": st.sampled_from(share_link.TABS) | st.text(max_size=6),
        "kind": st.sampled_from(["cross", "encoder", "decoder_self"]) | st.text(max_size=6),
        "layer": link_values | st.text(max_size=6),
        "head": link_values | st.text(max_size=6),
    },
)


@PROPERTIES
@given(params=link_params)
def test_every_link_value_opens_a_view_the_page_has_and_a_bad_one_is_said(demo, params):
    view = share_link.parse_query(params)
    driver = PageDriver(demo)
    shown = driver.load(params)  # raises if the load handler fails: the page would open with an empty box
    if view is None:
        return
    bad = [name for name in ("step", "layer", "head") if name in params and params[name] not in ("all", "mean")]
    bad = [name for name in bad if not (params[name].isascii() and params[name].isdigit() and 0 < int(params[name]))]
    for name in bad:
        assert name in dict(view.unusable), (name, view.unusable)
    if view.unusable:
        assert "The link’s" in shown["notice"], shown.get("notice")
    if params.get("text") == "":
        return
    config = driver.demo.runner.checkpoint.config
    assert driver.value("source") == driver.trace.source_text
    assert 1 <= driver.value("step") <= driver.trace.num_steps
    assert driver.value("head") in (*share_link.HEADS, *map(str, range(1, config.n_heads + 1)))
    assert driver.value("layer") in driver.choices("layer")
