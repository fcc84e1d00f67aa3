"""The first minute of a visitor on the tiny checkpoint, the page driven as the browser drives it
(tests/support/page_driver.py): the page opens on an example computed once, share links round-trip, the tour's
stops, the guard rails, a refused input that changes nothing but the notice, the one redraw's economy, and the
/translate endpoint's description.
"""

from __future__ import annotations

import re

import gradio as gr
import pytest
from helpers import translated_trace, translator_of
from page_driver import PageDriver

from model.decoding.trace import ATTENTION_KINDS
from model.text import language, limits
from serving import Runner
from serving.translation import notices, switch_direction
from ui import build_demo, session, share, tour
from ui import share_link
from ui.text import EXAMPLES

GERMAN = "Zwei Hunde spielen im Schnee."
ENGLISH = "A little girl is climbing into a wooden playhouse."


@pytest.fixture(scope="module")
def trace(checkpoint):
    return translated_trace(checkpoint, GERMAN, "de-en")


@pytest.fixture(scope="module")
def demo(tiny_checkpoint) -> gr.Blocks:
    return build_demo(tiny_checkpoint)


# --------------------------------------------------------------------------- guard rails (model/text/language.py)
@pytest.mark.parametrize(
    "text, direction, kind",
    [
        ("A little girl is climbing into a wooden playhouse.", "de-en", "language"),
        ("Ein Mann fährt mit dem Fahrrad die Straße entlang.", "en-de", "language"),
    ],
)
def test_wrong_language_is_flagged_with_the_direction_that_fits(text, direction, kind):
    [rail] = language.guard_rails(text, ["<2x>", "▁a", "[EOS]"], direction)
    assert rail.kind == kind and rail.switch_to == "-".join(reversed(direction.split("-")))


@pytest.mark.parametrize(
    "translation, said",
    [
        ("Ein kleines Mädchen klettert in ein hölzernes Spielhaus.", "wrote German: it translated the other way"),
        ("A little girl climbs into a wooden playhouse.", "wrote English, the input's own language: it copied"),
        ("!!", "not clearly German or English"),
    ],
)
def test_the_wrong_language_notice_says_what_the_model_wrote(translation, said):
    """English typed under German -> English: the notice reads the output's language and says what happened."""
    text = "A little girl is climbing into a wooden playhouse."
    [rail] = language.guard_rails(text, ["<2x>", "▁a", "[EOS]"], "de-en", translation=translation)
    assert said in rail.message and "may echo" not in rail.message


@pytest.mark.parametrize(
    "text, direction",
    [
        ("Ein Mann fährt mit dem Fahrrad die Straße entlang.", "de-en"),
        ("Two men are playing soccer in the park.", "en-de"),
        ("Hallo", "en-de"),  # too few letters to judge
        ("1234567890", "de-en"),
    ],
)
def test_right_language_or_too_little_text_is_not_flagged(text, direction):
    assert language.guard_rails(text, ["<2x>", "▁a", "[EOS]"], direction) == []


def test_byte_tokens_and_long_inputs_are_flagged():
    emoji = ["<2en>", "<0xF0>", "<0x9F>", "<0x98>", "<0x80>", "▁", "[EOS]"]
    assert language.byte_share(emoji) == pytest.approx(4 / 5)
    assert [rail.kind for rail in language.guard_rails("😀", emoji, "de-en")] == ["bytes"]
    n = language.LONG_SOURCE_SUBWORDS
    for count, flagged in ((n, False), (n + 1, True)):
        tokens = ["<2en>", *["▁Hund"] * count, "[EOS]"]
        rails = language.guard_rails("Hund " * count, tokens, "de-en")
        assert ("long" in [rail.kind for rail in rails]) == flagged
        assert (f"{count} subword tokens;" in " ".join(r.message for r in rails)) == flagged


def test_notice_and_switch_follow_the_trace(checkpoint):
    translator = translator_of(checkpoint)
    english = translator.translate("A little girl is climbing into a wooden playhouse.", "de-en")
    assert "looks like English" in session.notice_markdown(english.notices)
    assert switch_direction(english.trace) == "en-de"
    german = translator.translate("Ein Mann fährt mit dem Fahrrad die Straße entlang.", "de-en")
    assert switch_direction(german.trace) is None and "looks like" not in session.notice_markdown(german.notices)


# --------------------------------------------------------------------------- the first view, computed once
def test_page_loads_share_one_precomputed_example(tiny_checkpoint, monkeypatch):
    calls = []
    real = Runner.call  # every model call of the page goes through the runner (serving/runner.py)
    monkeypatch.setattr(
        Runner, "call", lambda self, job, *args, **kwargs: calls.append(job.name) or real(self, job, *args, **kwargs)
    )
    demo = build_demo(tiny_checkpoint)
    assert calls == ["translate"]  # the example, at start-up
    # it arrives with the page: the page's config holds its sentence, translation, trace, step and figure
    config = {c.elem_id: getattr(c, "value", None) for c in demo.blocks.values() if getattr(c, "elem_id", None)}
    assert config["translation"] and config["attention-plot"] and config["source"] in (None, "")  # an API input
    assert config["head"].isdigit()  # one head, not "all"
    [trace] = [c.value for c in demo.blocks.values() if isinstance(c, gr.State) and hasattr(c.value, "num_steps")]
    assert config["step"] == share.first_view(trace).step and trace.source_text == EXAMPLES[0][0]
    shown = []
    for _ in range(100):  # a hundred visitors open the page
        driver = PageDriver(demo)
        driver.url = "http://h/"
        shown.append(driver.load())
    assert len(calls) == 1  # a hundred page loads: no model call
    # the load answers the sentence and the link (and what the page's other loaders say: the model menu's state), and
    # nothing of the first view: it arrived drawn with the page
    others = {
        getattr(c, "elem_id", None) or c
        for _, outputs in driver.listener("on_load").fn.action.fn.loaders
        for c in outputs
    }
    assert not others & {"source", "share-link", "translation", "step", "step-info", "attention-plot", "notice"}
    said = [{key for key in updates if isinstance(key, str)} - others for updates in shown]
    assert all(keys == {"source", "share-link", "page-mark"} for keys in said)  # page-mark: the page's name
    assert len({updates["page-mark"] for updates in shown}) == len(shown)  # each page load its own (ui/redraw.py)
    assert shown[0]["source"] == EXAMPLES[0][0] and driver.trace is trace
    assert shown[0]["share-link"] == share.link(
        trace,
        share.first_view(trace).step,
        "attention",
        **{
            "kind": "cross",
            "layer": share.first_view(trace).layer,
            "head": share.first_view(trace).head,
            "page_url": "http://h/",
        },
    )


def test_first_view_is_the_most_diagonal_cross_attention_head(trace):
    view = share.first_view(trace)
    stats = share.trace_head_diagnostics(trace, "cross")
    diagonal = stats["diagonal"]
    assert diagonal[view.layer - 1, int(view.head) - 1] == diagonal.max()
    assert (view.tab, view.kind, view.step) == ("attention", "cross", max(trace.num_steps - 1, 1))


# --------------------------------------------------------------------------- share links
def test_share_link_round_trip():
    from urllib.parse import parse_qsl, urlsplit

    view = share_link.View("Wie spät ist es? & = # ü", "en-de", 3, "masks", "decoder_self", 2, "mean")
    url = "http://host/app/" + share_link.query_string(view)
    assert share_link.parse_query(dict(parse_qsl(urlsplit(url).query))) == view
    assert share_link.parse_query({}) is None
    bad = share_link.parse_query({"step": "x", "tab": "nope", "kind": "evil", "head": "<b>", "dir": "fr-de"})
    assert bad == share_link.View()


def test_a_shared_link_restores_its_view(demo):
    driver = PageDriver(demo)
    params = {"text": GERMAN, "dir": "en-de", "step": "2", "tab": "masks", "kind": "encoder", "layer": "2", "head": "3"}
    shown = driver.load(params)
    assert driver.value("source") == GERMAN and shown["direction"] == "en-de"
    assert driver.value("step") == 2 and driver.prop("views", "selected") == "masks"
    assert (driver.value("attention-kind"), driver.value("layer"), driver.value("head")) == ("encoder", 2, "3")
    trace = driver.trace
    assert trace.source_text == GERMAN and trace.direction == "en-de"
    assert shown["translation"] == trace.translation and shown["mask-plot"] is not None  # the linked tab, drawn
    assert f"Step 2 of {trace.num_steps}" in shown["step-info"]
    url = share.link(trace, 2, "masks", "encoder", 2, "3", "http://h/?old=1")
    assert url == "http://h/" + share_link.query_string(share_link.View(GERMAN, "en-de", 2, "masks", "encoder", 2, "3"))
    assert shown["share-link"] == share.link(trace, 2, "masks", "encoder", 2, "3", driver.url)  # the same view
    assert "link" not in (shown["notice"] or "")  # a good link is shown as it is: nothing said of it
    bare = PageDriver(demo).load()
    assert "link" not in (bare.get("notice") or "")


def test_a_repaired_link_says_in_one_line_what_it_changed(demo):
    """Each value the page could not use or had to clamp is named with what the page shows instead, in one line
    at the top of the notices; what the page shows is what that line says."""
    driver = PageDriver(demo)
    shown = driver.load({"dir": "xx-yy", "step": "99", "tab": "nope", "layer": "9", "head": "77"})
    config, steps = driver.demo.runner.checkpoint.config, driver.trace.num_steps
    layers, heads = ATTENTION_KINDS["cross"].num_layers(config), config.n_heads
    line = shown["notice"].split("\n\n")[0]
    assert line == (
        f"⚠️ The link’s direction 'xx-yy' is unknown: showing German → English; step 99 is past the end: showing step "
        f"{steps} of {steps}; tab 'nope' is unknown: showing Attention; layer 9 does not exist: showing layer {layers} "
        f"of {layers}; head 77 does not exist: showing head {heads} of {heads}."
    )
    assert driver.value("direction") == "de-en" and driver.value("step") == steps < 99
    assert driver.prop("views", "selected") == "attention" and driver.value("attention-kind") == "cross"
    assert (driver.value("layer"), driver.value("head")) == (layers, str(heads))
    assert shown["notice"].count("The link") == 1  # said once, above the translation's own notices
    unusable = driver.load({"text": GERMAN, "step": "x", "kind": "evil", "head": "<b>"})["notice"].split("\n\n")[0]
    assert unusable == (
        "⚠️ The link’s step 'x' is not a step number: showing step 1 of "
        f"{driver.trace.num_steps}; attention kind 'evil' is unknown: showing Cross-attention (encoder → decoder); "
        f"head '\\<b\\>' is not a head number: showing head 1 of {heads}."
    )


def test_a_broken_link_opens_the_example_and_says_why(demo):
    driver = PageDriver(demo)
    shown = driver.load({"text": "x" * (limits.MAX_INPUT_CHARS + 1)})
    assert shown["source"] == EXAMPLES[0][0] and "the limit is" in shown["notice"]
    assert driver.trace.source_text == EXAMPLES[0][0] and driver.value("direction") == EXAMPLES[0][1]
    assert driver.component("translation").value == driver.trace.translation  # the example, as it arrived


def test_a_link_without_text_opens_the_example_and_an_empty_text_no_sentence(demo):
    example = PageDriver(demo)
    example.load({"tab": "masks"})  # no `text`: the start-up example, on the linked tab
    assert example.trace.source_text == EXAMPLES[0][0] and example.value("source") == EXAMPLES[0][0]
    assert example.prop("views", "selected") == "masks" and example.shown("mask-plot") is not None
    blank = PageDriver(demo)
    shown = blank.load({"text": "", "tab": "masks", "dir": "en-de"})  # `?text=`: a page with no sentence yet
    assert blank.trace is None and blank.value("source") == "" and shown["translation"] == ""
    assert blank.value("direction") == "en-de" and blank.prop("views", "selected") == "masks"
    assert shown["mask-plot"] is None and shown["share-link"] is None  # nothing drawn of the example


# --------------------------------------------------------------------------- the tour
def test_tour_stops_set_their_views(trace):
    assert len(tour.STOPS) == 5
    tabs = [tour.stop_view(stop, trace).tab for stop in tour.STOPS]
    assert tabs == ["next", "attention", "attention", "masks", "explain"]
    cross = tour.stop_view(tour.STOPS[1], trace)
    assert (cross.layer, int(cross.head)) == share.sharpest_head(trace)
    for index in range(5):
        assert "arxiv.org/abs/1706.03762" in tour.stop_markdown(index)
        assert f"section {tour.STOPS[index].section[0]}" in tour.stop_markdown(index)


def test_tour_buttons_move_along_the_stops(demo):
    driver = PageDriver(demo)
    driver.load()
    driver.translate(GERMAN, "de-en")
    trace, translation = driver.trace, driver.shown("translation")
    driver.click("tour-next")  # stop 1: the next-token choice
    shown = driver.click("tour-next")  # stop 1 -> stop 2: cross-attention at the sharpest head
    assert driver.prop("views", "selected") == "attention" and driver.value("attention-kind") == "cross"
    assert (driver.value("layer"), int(driver.value("head"))) == share.sharpest_head(trace)
    assert "Stop 2 of 5" in shown["tour-text"] and shown["attention-plot"] is not None  # the stop's view, drawn
    assert "translation" not in shown and "source" not in shown  # the trace on screen stays; only the view moves
    assert driver.trace is trace and driver.shown("translation") == translation
    shown = driver.click("tour-back")
    assert "Stop 1 of 5" in shown["tour-text"] and driver.prop("views", "selected") == "next"


def test_the_tour_without_a_sentence_shows_the_start_up_example(demo):
    driver = PageDriver(demo)
    driver.load({"text": ""})  # no trace on screen
    assert driver.trace is None
    shown = driver.click("tour-next")
    assert shown["source"] == EXAMPLES[0][0] and driver.trace.source_text == EXAMPLES[0][0]
    assert shown["translation"] == driver.trace.translation and driver.prop("views", "selected") == "next"
    for _ in range(4):
        shown = driver.click("tour-next")
    assert "Stop 5 of 5" in shown["tour-text"]
    assert driver.prop("views", "selected") == "explain" and driver.prop("explain-panels", "selected") == "branch"


# --------------------------------------------------------------------------- a refused input and the API
@pytest.mark.parametrize(
    "text, message", [("", "empty"), ("x" * (limits.MAX_INPUT_CHARS + 1), "the limit is")], ids=["empty", "too-long"]
)
def test_a_refused_input_changes_nothing_but_the_notice(demo, text, message):
    """The header's every part stays as the last translation left it (the trace, translation, tokens, download,
    switch, step and figure) and the notice says why; the next accepted input replaces them in one answer."""
    driver = PageDriver(demo)
    driver.load()
    driver.translate(ENGLISH, "de-en")  # a result with a notice and the switch shown
    parts = ("translation", "tokens", "download-trace", "switch-direction", "step-info", "attention-plot")
    before = {part: driver.shown(part) for part in parts}
    trace, step = driver.trace, driver.value("step")
    answer = driver.translate(text, "de-en")
    assert {key for key in answer if isinstance(key, str)} == {"notice"}
    assert message in answer["notice"] and answer["notice"].count("⚠️") == 1
    assert driver.trace is trace and driver.value("step") == step
    assert {part: driver.shown(part) for part in parts} == before
    assert driver.prop("switch-direction", "visible") is True
    accepted = driver.translate(GERMAN, "de-en")  # accepted: the new result, and the refusal goes
    assert accepted["notice"] == session.notice_markdown(notices(driver.trace)) and message not in accepted["notice"]
    assert accepted["translation"] == driver.trace.translation
    assert driver.trace.source_text == GERMAN and driver.prop("switch-direction", "visible") is False


def test_a_refused_switch_changes_nothing_but_the_notice(demo):
    driver = PageDriver(demo)
    driver.load()
    driver.translate(ENGLISH, "de-en")
    assert driver.prop("switch-direction", "visible") is True
    driver.set("source", "")  # the sentence deleted, then "Translate as English → German instead"
    answer = driver.click("switch-direction")
    assert {key for key in answer if isinstance(key, str)} == {"notice"} and "empty" in answer["notice"]
    assert driver.trace.source_text == ENGLISH and driver.value("direction") == driver.trace.direction


def test_a_failed_model_run_leaves_the_page_as_it_was(demo, monkeypatch):
    """A model that fails (a worker crash) raises its error to the browser; no listener runs after it and nothing
    the page shows changes (there is no failure listener to clear half of it)."""
    assert [fn.name for fn in demo.fns.values() if fn.trigger_only_on_failure] == []
    driver = PageDriver(demo)
    driver.load()
    driver.translate(GERMAN, "de-en")
    values, screen = dict(driver.values), dict(driver.screen)

    def crash(self, job, *args, **kwargs):
        raise gr.Error("The worker stopped.")

    monkeypatch.setattr(Runner, "call", crash)
    with pytest.raises(gr.Error, match="worker stopped"):
        driver.translate("Ein Kind isst einen Apfel.", "de-en")
    assert driver.trace is values[driver.trace_state] and driver.screen == screen


def test_clearing_the_trace_empties_every_view(demo):
    """A page with no sentence (a link with an empty text): every view of every tab is emptied in the load's one
    answer; a translation then draws the open tab's views."""
    driver = PageDriver(demo)
    driver.load()
    driver.open_tab("next-tab")
    emptied = driver.load({"text": "", "tab": "next"})
    assert {"attention-plot", "pipeline-plot", "candidates-plot", "pe-plot", "mask-plot", "share-link"} <= set(emptied)
    # the Compare tab's comparison says what to do instead and empties its ranking's choices (TabView.empty)
    said = {"compare-message", "compare-ranking", "compare-looks"}
    plots = [key for key in emptied if isinstance(key, str) and key.endswith("-plot")]
    assert len(plots) > 10 and all(emptied[key] is None for key in plots)
    assert "Translate a first sentence" in emptied["compare-message"] and driver.choices("compare-ranking") == []
    assert all(emptied[key] is None for key in ("share-link", "lens-plot", "align-plot", "branch-result"))
    assert not (said & {key for key, value in emptied.items() if value is None})  # they say what to do
    drawn = driver.translate(GERMAN, "de-en")  # with a trace: the open tab's views
    assert drawn["candidates-plot"] is not None and drawn["share-link"]
    assert "attention-plot" not in drawn and "align-plot" not in drawn  # the other tabs' views wait


def test_translate_endpoint_has_a_description_and_clean_names(demo):
    info = demo.get_api_info()["named_endpoints"]["/translate"]
    assert "German ↔ English" in info["description"]
    assert [p["parameter_name"] for p in info["parameters"]] == ["text", "direction", "model"]
    # page plumbing stays private: the API is the translation, its trace and the positional-encoding table
    assert sorted(demo.get_api_info()["named_endpoints"]) == [
        "/positional_encoding",
        "/translate",
        "/translation_trace",
    ]
    assert len(info["returns"]) == 1  # the translation alone: no trace file written unless /translation_trace


def test_every_page_listener_is_private_and_named_after_its_action(demo):
    """Page plumbing is never an API endpoint; its names ("page_<action>", Gradio adding _1, _2 to a name used
    again) cannot take the API's (the page's `translate` and the API's /translate)."""
    listeners = PageDriver(demo).listeners
    named = [
        (fn.name, fn.api_name)
        for fn in listeners
        if not re.fullmatch(rf"page_{re.escape(fn.name)}(_\d+)?", fn.api_name)
    ]
    assert named == [] and all(fn.api_visibility == "private" for fn in listeners)
    assert all(fn.fn.action.fn is None or fn.fn.action.fn.__name__ == fn.name for fn in listeners)


def test_redraw_skips_only_what_is_already_shown(demo):
    """One answer draws what changed, and a redraw with nothing changed draws nothing (nothing is sent). Any
    change of what is shown (the step, another trace, the open tab) draws again."""
    driver = PageDriver(demo)
    driver.load()
    opened = driver.open_tab("next-tab")
    assert opened["candidates-plot"] is not None
    assert driver.redraw() == {}  # nothing to send
    drawn = dict(driver.values[driver.listeners[0].outputs[0]])  # {view: key} of what the page shows
    stepped = driver.input("step", 1 if driver.value("step") != 1 else 2)
    assert stepped["candidates-plot"] is not None and "step-info" in stepped
    assert driver.values[driver.listeners[0].outputs[0]] != drawn
    assert driver.redraw() == {}
    again = driver.translate("Ein Mann fährt Fahrrad.", "de-en")  # not GERMAN, not the example
    assert again["candidates-plot"] is not None and again["translation"] == driver.trace.translation
    assert driver.redraw() == {}


def test_redraw_draws_only_the_views_whose_key_changed(demo):
    """On the Explain tab a step redraws the panels that follow the step (logit lens), not those that follow
    only the trace (word alignment) or neither (the training film)."""
    driver = PageDriver(demo)
    driver.load()
    driver.translate(GERMAN, "de-en")
    driver.input("step", 1)
    first = driver.open_tab("explain-tab")
    assert first["lens-plot"] is not None and first["align-plot"] is not None
    stepped = driver.input("step", 2)
    assert stepped["lens-plot"] is not None and "align-plot" not in stepped and "step-info" in stepped
