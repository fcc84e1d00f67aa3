"""The one Translate action (serving/translation.py) on the tiny checkpoint: directions as codes or labels, one check
of the input before any model runs (a refused input is an answer with one message, never a trace), the notices that
say what shaped a translation, and the trace JSON the page offers for download; and on the page (PageDriver) the same
words in the notice box.
"""

from __future__ import annotations

import json
from pathlib import Path

import gradio as gr
import numpy as np
import pytest
from page_driver import PageDriver

from model.decoding.trace import JSON_DECIMALS
from model.text import language, limits
from serving import Runner, trace_from_lean
from serving.runner import BAD_INPUT_TITLE, NO_MODEL_TITLE
from serving.translation import Translator, notices, parse_direction, refusal, switch_direction
from ui import build_demo, runner, session

GERMAN = "Ein Mann fährt Fahrrad."
ENGLISH = "The children are playing football in the park with their friends."
LONG = "Ein Mann fährt Fahrrad. " * 40  # far more than MAX_SOURCE_TOKENS subwords, under MAX_INPUT_CHARS


@pytest.fixture(scope="module")
def translator(checkpoint) -> Translator:
    return Translator({checkpoint.kind: Runner(checkpoint)}, checkpoint.kind)


@pytest.mark.parametrize("direction", ["de-en", "German → English", " DE-EN ", "en-de", "English → German"])
def test_translate_accepts_codes_and_labels(translator, direction):
    result = translator.translate(GERMAN, direction)
    assert not result.refused and result.trace.direction == parse_direction(direction)
    assert result.trace.source_tokens[0] == ("<2en>" if result.trace.direction == "de-en" else "<2de>")
    assert result.translation == result.trace.translation and result.trace.num_steps >= 1
    assert result.step == result.trace.num_steps  # the page lands on the last step: a row per output token


def test_unknown_direction_is_refused(translator):
    result = translator.translate(GERMAN, "fr-en")
    assert result.trace is None and "de-en" in result.refused and "fr-en" in result.refused
    assert parse_direction("fr-en") is None
    with pytest.raises(gr.Error, match="de-en"):  # the API raises the one message
        result.answer()


@pytest.mark.parametrize("text", ["", "   \n\t ", None])
def test_empty_input_gives_a_clear_message(translator, text):
    result = translator.translate(text, "de-en")
    assert result.trace is None and "empty" in result.refused


def test_too_long_input_is_refused_naming_the_limit_without_running_the_model(translator, monkeypatch):
    def must_not_run(*args, **kwargs):
        raise AssertionError("the model must not run on refused input")

    monkeypatch.setattr(Runner, "call", must_not_run)  # every model computation of the page
    monkeypatch.setattr(Runner, "call_here", must_not_run)
    result = translator.translate("a" * (limits.MAX_INPUT_CHARS + 1), "de-en")
    assert result.trace is None
    assert f"{limits.MAX_INPUT_CHARS:,} characters" in result.refused
    assert f"{limits.MAX_INPUT_CHARS + 1:,}" in result.refused
    assert refusal("a" * limits.MAX_INPUT_CHARS, "de-en") == ""  # the limit itself is accepted


def test_the_input_is_checked_once_per_translation(translator, monkeypatch):
    import serving.translation as translation

    calls = []
    real = translation.refusal
    monkeypatch.setattr(translation, "refusal", lambda *args: calls.append(args[0]) or real(*args))
    translator.translate(GERMAN, "de-en")
    assert calls == [GERMAN]


def test_truncated_source_shows_a_notice_naming_the_limit(translator):
    result = translator.translate(LONG, "de-en")
    trace = result.trace
    assert trace.source_truncated
    assert len(trace.source_tokens) == limits.MAX_SOURCE_TOKENS + 2  # language tag + subwords + [EOS]
    assert any(f"{limits.MAX_SOURCE_TOKENS} subword tokens" in notice for notice in result.notices)
    assert result.notices == notices(trace)


def test_no_notice_for_a_short_sentence_that_ends(trace):
    said = " ".join(notices(trace))
    assert "cut" not in said
    assert ("without the model writing" in said) == (trace.stopped_by == "max_length")


def test_an_end_at_the_length_limit_is_told_apart(trace):
    """Decoding that stops at its budget says so; an end the decoding rule wrote at the limit says that instead."""
    stopped = type(trace)(**{**vars(trace), "stopped_by": "max_length"})
    imposed = type(trace)(**{**vars(trace), "stopped_by": "eos_at_limit"})
    assert any("without the model writing [EOS]" in notice for notice in notices(stopped))
    [said] = [notice for notice in notices(imposed) if "length budget" in notice]
    assert "forced_eos_token_id" in said and "without the model writing" not in said


def test_the_wrong_language_is_said_with_the_direction_that_fits(translator):
    result = translator.translate(ENGLISH, "de-en")
    assert any("looks like English" in notice for notice in result.notices)  # plain words, no Markdown
    assert switch_direction(result.trace) == "en-de"
    german = translator.translate("Ein Mann fährt mit dem Fahrrad die Straße entlang.", "de-en")
    assert switch_direction(german.trace) is None and not any("looks like" in n for n in german.notices)


@pytest.mark.parametrize(
    "text, kind, said",
    [
        ("<b>Hallo</b> Welt, wie geht es?", "markup", "holds markup"),
        ("Ein Mann &amp; eine Frau.", "markup", "holds markup"),
        ("#$%&* 1234 = 56 !!", "symbols", "mostly symbols"),
    ],
)
def test_markup_and_mostly_symbols_get_one_warning_like_emoji(translator, text, kind, said):
    """One guard rail of the same kind as the emoji's (bytes) for markup or a text of mostly symbols: the notices
    say it (the tiny tokenizer spells some symbols as bytes: then the bytes warning says it)."""
    result = translator.translate(text, "de-en")
    rails = [r.kind for r in language.guard_rails(text, result.trace.source_tokens, "de-en", own_model=True)]
    rails = [rail for rail in rails if rail in ("bytes", "markup", "symbols")]
    assert len(rails) == 1 and rails[0] in (kind, "bytes")
    assert "fluent nonsense" in " ".join(result.notices)
    if rails[0] == kind:
        assert said in " ".join(result.notices)
    assert language.guard_rails(text, ["▁a"] * 5, "de-en")[0].kind == kind  # on plain subwords: this kind


def test_trace_json_download_reads_back(translator):
    """The download is the lean trace (serving/wire.py): it reads back on its own."""
    trace = translator.translate(GERMAN, "de-en").trace
    path = session.write_trace_json(trace)
    again = trace_from_lean(json.loads(Path(path).read_text(encoding="utf-8")))
    assert again.output_tokens == trace.output_tokens
    np.testing.assert_allclose(again.cross_attention, trace.cross_attention, atol=10**-JSON_DECIMALS)


def test_trace_files_are_written_through_the_constant_time_writer(translator):
    """write_trace_json goes through serving.TraceFiles (time buckets, background sweep; its per-call cost is
    tested in test_serving_trace_files.py): the file lies in the current bucket of ui.runner.TRACE_FILES."""
    path = session.write_trace_json(translator.translate(GERMAN, "de-en").trace)
    files = runner.TRACE_FILES
    bucket = int(files.clock() // files.bucket_s)
    assert Path(path).parent.parent in (files.folder / str(bucket), files.folder / str(bucket - 1))
    assert Path(path).name == "trace-de-en.json"


def test_an_example_is_answered_from_memory(checkpoint, monkeypatch):
    examples = [(GERMAN, "de-en")]
    translator = Translator({checkpoint.kind: Runner(checkpoint)}, checkpoint.kind, examples)
    first = translator.translate(GERMAN, "de-en").trace

    def must_not_run(*args, **kwargs):
        raise AssertionError("an example is translated once")

    monkeypatch.setattr(Runner, "call", must_not_run)
    monkeypatch.setattr(Runner, "call_here", must_not_run)
    assert translator.translate(GERMAN, "de-en").trace is first


def test_without_a_model_the_answer_says_why_under_its_own_title(checkpoint):
    """The answer names what is missing (the folder's name, not where it is on the server), titled as no model,
    not as bad input."""
    translator = Translator({}, checkpoint.kind, load_error="no checkpoint at /srv/app/nowhere")
    result = translator.translate(GERMAN, "de-en")
    assert result.trace is None and result.refused == "No model is loaded: no checkpoint at nowhere"
    with pytest.raises(gr.Error) as raised:
        result.checked()
    assert raised.value.title == NO_MODEL_TITLE != BAD_INPUT_TITLE
    assert translator.translate("", "de-en").title == NO_MODEL_TITLE  # the missing model is said first


# --------------------------------------------------------------------------- the same words on the page
@pytest.fixture(scope="module")
def driver(tiny_checkpoint) -> PageDriver:
    page = PageDriver(build_demo(tiny_checkpoint))
    page.load()
    return page


@pytest.mark.parametrize("text", [ENGLISH, LONG])
def test_the_page_shows_the_notices_of_the_translate_action(driver, translator, text):
    driver.translate(text, "de-en")
    expected = translator.translate(text, "de-en").notices
    assert expected and notices(driver.trace) == expected and text.startswith(driver.trace.source_text.strip())
    assert driver.shown("notice") == session.notice_markdown(expected)
    for notice in expected:  # every notice is there, one paragraph each
        words = notice.split(":")[0].replace("*", "").split()[:4]
        assert all(word.strip("`*") in driver.shown("notice").replace("\\", "") for word in words)
    assert driver.shown("notice").count("⚠️") == len(expected)
    if text == ENGLISH:  # the switch offers the direction the guard rail suggests
        assert driver.prop("switch-direction", "visible") is True


@pytest.mark.parametrize(
    "text, direction", [("", "de-en"), ("x" * (limits.MAX_INPUT_CHARS + 1), "de-en"), (GERMAN, "fr-en")]
)
def test_the_page_says_the_refusal_of_the_translate_action(driver, translator, text, direction):
    driver.translate(text, direction)
    refused = translator.translate(text, direction).refused
    assert refused and driver.shown("notice") == session.notice_markdown([refused])
