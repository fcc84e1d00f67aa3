"""The first minute of a visitor, handlers called directly on the tiny checkpoint: the page opens
on an example computed once, share links round-trip, the tour's stops, the guard rails, clean state after
errors, and the /translate endpoint's description.
"""

from __future__ import annotations

from types import SimpleNamespace

import gradio as gr
import pytest

from model.text import language, limits
from helpers import translated_trace
from serving import Runner
from ui import build_demo, session, share, tour
from ui.text import EXAMPLES

GERMAN = "Zwei Hunde spielen im Schnee."


@pytest.fixture(scope="module")
def trace(checkpoint):
    return translated_trace(checkpoint, GERMAN, "de-en")


def listener(demo: gr.Blocks, name: str):
    [fn] = [block_fn for block_fn in demo.fns.values() if block_fn.name == name]
    return fn


def by_id(updates: dict) -> dict:
    """{elem_id or component: value} of a handler's {component: value} result."""
    return {getattr(component, "elem_id", None) or component: value for component, value in updates.items()}


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
        ("Ein kleines Mädchen klettert in ein hölzernes Spielhaus.", "wrote **German**: it translated the other way"),
        ("A little girl climbs into a wooden playhouse.", "wrote **English**, the input's own language: it copied"),
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
        assert (f"**{count} subword tokens**" in " ".join(r.message for r in rails)) == flagged


def test_notice_and_switch_follow_the_trace(checkpoint):
    english = session.translate_text(
        Runner(checkpoint), "A little girl is climbing into a wooden playhouse.", "de-en"
    )[0]
    assert "looks like **English**" in session.notice_markdown(english)
    assert session.switch_direction(english) == "en-de"
    german = session.translate_text(
        Runner(checkpoint), "Ein Mann fährt mit dem Fahrrad die Straße entlang.", "de-en"
    )[0]
    assert session.switch_direction(german) is None and "looks like" not in session.notice_markdown(german)


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
    on_load = listener(demo, "on_load").fn
    request = SimpleNamespace(query_params={}, headers={"referer": "http://h/"})
    shown = [by_id(on_load(request)) for _ in range(100)]
    assert len(calls) == 1  # a hundred page loads: no model call
    assert all(set(updates) == {"source", "share-link"} for updates in shown)  # the load: the sentence, the link
    assert shown[0]["source"] == EXAMPLES[0][0]
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

    view = share.View("Wie spät ist es? & = # ü", "en-de", 3, "masks", "decoder_self", 2, "mean")
    url = "http://host/app/" + share.query_string(view)
    assert share.parse_query(dict(parse_qsl(urlsplit(url).query))) == view
    assert share.parse_query({}) is None
    bad = share.parse_query({"step": "x", "tab": "nope", "kind": "evil", "head": "<b>", "dir": "fr-de"})
    assert bad == share.View()


def test_a_shared_link_restores_its_view(tiny_checkpoint):
    demo = build_demo(tiny_checkpoint)
    on_load = listener(demo, "on_load").fn
    params = {"text": GERMAN, "dir": "en-de", "step": "2", "tab": "masks", "kind": "encoder", "layer": "2", "head": "3"}
    shown = by_id(on_load(SimpleNamespace(query_params=params, headers={})))
    assert shown["source"] == GERMAN and shown["direction"] == "en-de"
    assert shown["step"].value == 2 and shown["views"].selected == "masks"
    assert (shown["attention-kind"], shown["layer"].value, shown["head"]) == ("encoder", 2, "3")
    [trace] = [value for key, value in shown.items() if hasattr(value, "num_steps")]
    assert trace.source_text == GERMAN and trace.direction == "en-de"
    url = share.link(trace, 2, "masks", "encoder", 2, "3", "http://h/?old=1")
    assert url == "http://h/" + share.query_string(share.View(GERMAN, "en-de", 2, "masks", "encoder", 2, "3"))


def test_a_broken_link_opens_the_example_and_says_why(tiny_checkpoint):
    demo = build_demo(tiny_checkpoint)
    params = {"text": "x" * (limits.MAX_INPUT_CHARS + 1)}
    shown = by_id(listener(demo, "on_load").fn(SimpleNamespace(query_params=params, headers={})))
    assert shown["source"] == EXAMPLES[0][0] and "the limit is" in shown["notice"]


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


def test_tour_buttons_move_along_the_stops(tiny_checkpoint, trace):
    demo = build_demo(tiny_checkpoint)
    [forward] = [
        fn
        for fn in demo.fns.values()
        if fn.name == "handler" and "tour-next" in {demo.blocks[target].elem_id for target, _ in fn.targets}
    ]
    shown = by_id(forward.fn(trace, 0))  # stop 1 -> stop 2: cross-attention at the sharpest head
    assert shown["views"].selected == "attention" and shown["attention-kind"] == "cross"
    assert "Stop 2 of 5" in shown["tour-text"]
    assert "translation" not in shown  # the trace on screen stays; only the view moves
    shown = by_id(forward.fn(None, 3))  # no trace on screen: the start-up example is shown
    assert shown["views"].selected == "explain" and shown["explain-panels"].selected == "branch"
    assert shown["source"] == EXAMPLES[0][0]


# --------------------------------------------------------------------------- clean state and the API
@pytest.mark.parametrize("text, message", [("", "empty"), ("x" * (limits.MAX_INPUT_CHARS + 1), "the limit is")])
def test_an_error_leaves_no_stale_result(tiny_checkpoint, trace, text, message):
    demo = build_demo(tiny_checkpoint)
    before = listener(demo, "before")
    cleared = by_id(before.fn(text, "de-en"))  # refused: every part of the old result goes, the notice says why
    assert cleared["translation"] == "" and cleared["tokens"] == ""
    assert cleared["download-trace"].interactive is False and not cleared["switch-direction"].visible
    assert None in cleared.values()  # the trace state
    assert message in cleared["notice"]
    # accepted: the result stays until the new one replaces it (one redraw); only an old notice goes
    accepted = by_id(before.fn(GERMAN, "de-en"))
    assert accepted["notice"] == "" and len(accepted) == 2  # and the click's verdict, kept for the run
    [verdict] = [value for key, value in accepted.items() if key != "notice"]
    assert verdict == (GERMAN, "de-en", "de-en")
    # and if that run fails after the check (a worker crash), the failure listener clears the rest
    [failed] = [fn for fn in demo.fns.values() if fn.trigger_only_on_failure]
    assert failed.trigger_after == listener(demo, "translate_page")._id
    cleared = by_id(failed.fn())
    trace_state = before.outputs[0]
    assert cleared[trace_state] is None and cleared["translation"] == "" and cleared["tokens"] == ""
    assert cleared["download-trace"].interactive is False and not cleared["switch-direction"].visible


def test_clearing_the_trace_empties_every_view(tiny_checkpoint, trace):
    """The page's one redraw listener (ui/redraw.py) empties every view of every tab when the trace goes."""
    demo = build_demo(tiny_checkpoint)
    redraw = listener(demo, "redraw")
    trace_state = listener(demo, "before").outputs[0]
    assert trace_state in redraw.inputs
    values = {component: getattr(component, "value", None) for component in redraw.inputs}
    tab = next(c for c in redraw.inputs if isinstance(c, gr.State) and c.value in share.TABS)
    values[tab] = "next"
    emptied = by_id(redraw.fn({**values, trace_state: None}, None))
    assert {"attention-plot", "pipeline-plot", "candidates-plot", "pe-plot", "mask-plot", "share-link"} <= set(emptied)
    # the Compare tab's comparison says what to do instead and empties its ranking's choices (TabView.empty)
    said = {"compare-message", "compare-ranking", "compare-looks"}
    assert all(
        value is None for key, value in emptied.items() if key not in ("step-info", *said) and isinstance(key, str)
    )
    assert "Translate a first sentence" in emptied["compare-message"] and emptied["compare-ranking"].choices == []
    drawn = by_id(redraw.fn({**values, trace_state: trace}, None))  # with a trace: the open tab's views
    assert drawn["candidates-plot"] is not None and drawn["share-link"]


def test_translate_endpoint_has_a_description_and_clean_names(tiny_checkpoint):
    demo = build_demo(tiny_checkpoint)
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


def test_redraw_skips_only_what_is_already_shown(tiny_checkpoint, trace):
    """A new trace and its step 1 reach the one redraw listener as two triggers: the second draws nothing.
    Any change of what is shown (the step, another trace, the open tab) draws again."""
    demo = build_demo(tiny_checkpoint)
    redraw = listener(demo, "redraw")
    trace_state = listener(demo, "before").outputs[0]
    drawn_state = redraw.outputs[0]  # {view: key} of what the page shows
    step = next(c for c in redraw.inputs if getattr(c, "elem_id", None) == "step")
    values = {component: getattr(component, "value", None) for component in redraw.inputs}
    tab = next(c for c in redraw.inputs if isinstance(c, gr.State) and c.value in share.TABS)
    values.update({trace_state: trace, step: 1, drawn_state: None, tab: "next"})
    first = redraw.fn(values, None)
    assert first[drawn_state] and by_id(first)["candidates-plot"] is not None
    assert redraw.fn({**values, drawn_state: first[drawn_state]}, None) == gr.skip()  # nothing to send
    for changed in ({step: 2}, {trace_state: translate_other(tiny_checkpoint)}):
        again = redraw.fn({**values, drawn_state: first[drawn_state], **changed}, None)
        assert again != gr.skip() and again[drawn_state] != first[drawn_state]
        assert by_id(again)["candidates-plot"] is not None


def test_redraw_draws_only_the_views_whose_key_changed(tiny_checkpoint, trace):
    """On the Explain tab a step redraws the panels that follow the step (logit lens), not those that follow
    only the trace (word alignment) or neither (the training film)."""
    demo = build_demo(tiny_checkpoint)
    redraw = listener(demo, "redraw")
    trace_state, drawn_state = listener(demo, "before").outputs[0], redraw.outputs[0]
    step = next(c for c in redraw.inputs if getattr(c, "elem_id", None) == "step")
    tab = next(c for c in redraw.inputs if isinstance(c, gr.State) and c.value in share.TABS)
    values = {component: getattr(component, "value", None) for component in redraw.inputs}
    values.update({trace_state: trace, step: 1, tab: "explain", drawn_state: None})
    first = by_id(redraw.fn(values, None))
    assert first["lens-plot"] is not None and first["align-plot"] is not None
    shown = redraw.fn(values, None)[drawn_state]
    stepped = by_id(redraw.fn({**values, step: 2, drawn_state: shown}, None))
    assert stepped["lens-plot"] is not None and "align-plot" not in stepped and "step-info" in stepped


def translate_other(checkpoint_dir):
    from model.checkpoints.checkpoint import load_checkpoint
    from model.decoding.greedy import translate

    loaded = load_checkpoint(checkpoint_dir)
    return translate(loaded.model, loaded.tokenizer, "Ein Mann fährt Fahrrad.", "de-en")  # not GERMAN
