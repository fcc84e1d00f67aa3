"""The page's listeners as ui/redraw.py makes them: every server listener is a declared action of the page, one per
user action, none on a `.change`; and one visitor's walk (Translate, the blog post's pair, an own German sentence)
through tests/support/page_driver.py leaves the step line, the figure and the menus showing one trace; a refused
input changes nothing but the notice.
"""

from __future__ import annotations

import html
from collections import defaultdict

import gradio as gr
import pytest
from helpers import cells, figure_of
from page_driver import PageDriver

from model.text import limits
from ui import build_demo
from ui.api import TOOLS
from ui.text import BLOG_PAIR

PAGES = ("", "opus-mt")  # the first page and, where the app has it, OPUS-MT's (ui/models.py)
OWN_GERMAN = "Zwei Hunde spielen im Schnee."
OTHER_GERMAN = "Ein Mann fährt Fahrrad."


@pytest.fixture(scope="module")
def demo(tiny_checkpoint) -> gr.Blocks:
    return build_demo(tiny_checkpoint)


def model_menu_listener(demo: gr.Blocks, fn) -> bool:
    """The model menu's own listener (ui/models.py: it opens the other page or says why not), not a page action."""
    return any(getattr(demo.blocks.get(target), "elem_id", None) == "model-choice" for target, _ in fn.targets)


def server_listeners(demo: gr.Blocks) -> list:
    """Every listener of a page that runs on the server, but the API's tools and the model menu's."""
    return [
        fn
        for fn in demo.fns.values()
        if fn.fn is not None
        and fn.page in PAGES
        and fn.api_name not in TOOLS
        and not (fn.api_visibility == "public" and fn.name in TOOLS)
        and not model_menu_listener(demo, fn)
    ]


def test_every_server_listener_is_a_declared_action_and_none_follows_a_change(demo):
    listeners = server_listeners(demo)
    assert len(listeners) > 20  # the header, the player, every tab and panel
    undeclared = [fn.name for fn in listeners if not hasattr(fn.fn, "action")]
    assert undeclared == []
    on_change = [
        (fn.name, getattr(demo.blocks.get(target), "elem_id", target))
        for fn in demo.fns.values()
        if fn.fn is not None
        for target, event in fn.targets
        if event == "change"
    ]
    assert on_change == []


def test_each_user_action_has_one_server_listener(demo):
    """Two listeners of one event answer in either order, and the later answer wins: the page could show one
    answer's step under another's figure."""
    by_trigger = defaultdict(list)
    for fn in demo.fns.values():
        if fn.fn is not None:
            for target, event in fn.targets:
                by_trigger[(fn.page, target, event)].append(fn.name)
    shared = {
        (page, getattr(demo.blocks.get(target), "elem_id", target), event): names
        for (page, target, event), names in by_trigger.items()
        if len(names) > 1
    }
    assert shared == {}


# --------------------------------------------------------------------------- one visitor's walk
def assert_one_trace_shown(driver: PageDriver) -> None:
    """The step line, the attention figure and the Compare tab's token menu all show the page's trace."""
    trace, step = driver.trace, driver.value("step")
    assert trace is not None and 1 <= step <= trace.num_steps
    line = driver.shown("step-info")
    assert f"Step {step} of {trace.num_steps}</span>" in line
    assert f'<span class="tok chosen">{html.escape(trace.output_tokens[step - 1])}</span>' in line or (
        html.escape(trace.output_tokens[step - 1]) in line.split("step-arrow")[1]
    )
    assert f"“{html.escape(trace.translation)}”" in line
    # the attention figure (drawn when its tab is open): rows and columns named by this trace at this step
    driver.open_tab("attention")
    kind = driver.value("attention-kind")
    figure = figure_of(driver.shown("attention-plot"))
    [series] = [s for s in figure["data"] if s.get("type") == "heatmap"]
    rows, cols = cells(figure, series, trace, kind, step - 1)
    if kind == "cross":
        assert max(rows) == step - 1 and set(cols) <= set(range(len(trace.source_tokens)))
    # the Compare tab's token menu: its value is one of its choices (none while there is nothing to compare)
    choices, value = driver.choices("compare-token"), driver.value("compare-token")
    assert value in choices or (value is None and choices == []), (value, choices)


def test_translate_then_the_blog_pair_then_an_own_sentence_show_one_trace(demo):
    driver = PageDriver(demo)
    driver.load()
    driver.translate(OWN_GERMAN, "de-en")
    assert driver.trace.source_text == OWN_GERMAN
    assert_one_trace_shown(driver)
    driver.click("compare-example")
    assert (driver.trace.source_text, driver.trace.direction) == (BLOG_PAIR[0], BLOG_PAIR[2])
    assert driver.choices("compare-token") and driver.value("compare-token") in driver.choices("compare-token")
    assert_one_trace_shown(driver)
    driver.translate(OTHER_GERMAN, "de-en")
    assert (driver.trace.source_text, driver.trace.direction) == (OTHER_GERMAN, "de-en")
    assert_one_trace_shown(driver)


@pytest.mark.parametrize(
    "text, said",
    [("", "The text box is empty"), ("x" * (limits.MAX_INPUT_CHARS + 1), f"{limits.MAX_INPUT_CHARS:,} characters")],
)
def test_a_refused_input_changes_nothing_but_the_notice(demo, text, said):
    driver = PageDriver(demo)
    driver.load()
    driver.translate(OWN_GERMAN, "de-en")
    driver.input("step", 2)

    def on_screen() -> dict:
        shown = {elem_id: driver.shown(elem_id) for elem_id in ("translation", "step-info")}
        return {**shown, "step": driver.value("step"), "attention-plot": driver.shown("attention-plot").plot}

    trace, before = driver.trace, on_screen()
    answer = driver.translate(text, "de-en")
    shown = {key for key in answer if isinstance(key, str)}
    assert shown == {"notice"}  # nothing else on the page changes
    assert driver.trace is trace and on_screen() == before
    notice = driver.shown("notice")
    assert said in notice and notice.count("⚠️") == 1  # one message, saying why
