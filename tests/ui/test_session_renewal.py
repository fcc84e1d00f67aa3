"""A tab whose session the server dropped (ui/renewal.py): its next action works on the sentence it shows, never on
the start-up example that a fresh session starts with, and the page says the session was renewed. Driven through
Gradio's own Blocks.process_api with the sessions of Gradio's StateHolder, which drops the oldest past its capacity.
"""

from __future__ import annotations

import asyncio
import json
import zipfile
from pathlib import Path

import gradio as gr
import pytest
from gradio.state_holder import StateHolder
from helpers import in_own_thread
from page_driver import PageDriver

from ui import build_demo
from ui.renewal import RENEWED
from ui.stepping import step_html
from ui.text import EXAMPLES

OWN = "Der Hund schläft."  # the visitor's sentence: not the start-up example's
assert OWN != EXAMPLES[0][0]


class Tab:
    """One browser tab: the values its components hold (sent with every event, as the browser sends them) and its
    session, which the server keeps in `holder` (and may drop)."""

    def __init__(self, demo: gr.Blocks, holder: StateHolder, name: str, params: dict | None = None):
        self.demo, self.holder, self.name = demo, holder, name
        self.driver = PageDriver(demo)  # finds the listeners; its values are what the browser holds
        self.url = "http://127.0.0.1:7860/"
        self.fire(self.driver.listener("on_load"), params)

    def fire(self, listener, params: dict | None = None) -> dict:
        """`listener` through process_api, with this tab's values and session -> {component: value it set}."""
        values = [None if c.stateful else self.driver.values.get(c) for c in listener.inputs]
        request = gr.Request(headers={"referer": self.url}, query_params=dict(params or {}), session_hash=self.name)
        state = self.holder[self.name]
        call = self.demo.process_api(listener, values, state=state, request=request, session_hash=self.name)
        answer = in_own_thread(asyncio.run, call)
        shown = {}
        for component, data in zip(listener.outputs, answer["data"]):
            if isinstance(data, dict) and data.get("__type__") == "update":
                if "value" not in data:
                    continue
                data = data["value"]
            shown[component] = data
            if not component.stateful:
                self.driver.values[component] = data
        return shown

    def event(self, elem_id: str, event: str, value=None) -> dict:
        if value is not None:
            self.driver.set(elem_id, value)
        return self.fire(self.driver.on(elem_id, event))

    def state(self, component: gr.State):
        """What the server keeps for this tab."""
        return self.holder[self.name][component._id]

    @property
    def open_tab(self) -> gr.State:
        [state] = [c for c in self.driver.values if isinstance(c, gr.State) and c.value in ("next", "attention")]
        return state

    @property
    def trace(self):
        return self.state(self.driver.trace_state)


@pytest.fixture(scope="module")
def demo(tiny_checkpoint):
    return build_demo(tiny_checkpoint)


@pytest.fixture
def holder(demo):
    """Gradio's sessions, at most two kept (the app keeps ui/server.py's STATE_SESSIONS)."""
    demo.state_session_capacity = 2
    holder = StateHolder()
    holder.set_blocks(demo)
    return holder


def dropped(tab: Tab) -> Tab:
    """`tab` after two newer visitors: Gradio has dropped its session."""
    for name in ("newer-1", "newer-2"):
        Tab(tab.demo, tab.holder, name)
    assert tab.name not in tab.holder
    return tab


def own_tab(demo, holder) -> Tab:
    tab = Tab(demo, holder, "visitor")
    tab.driver.set("source", OWN)
    tab.event("translate", "click")
    assert tab.trace.source_text == OWN
    return tab


def answered_figure(tab: Tab, elem_id: str):
    """The figure `elem_id` as the tab's last answer drew it."""
    [figure] = [value for c, value in tab.last.items() if getattr(c, "elem_id", None) == elem_id]
    return figure


def notice(tab: Tab) -> str:
    return tab.driver.values[tab.driver.component("notice")] or ""


def test_a_step_after_the_session_was_dropped_works_on_the_tabs_own_sentence(demo, holder):
    tab = dropped(own_tab(demo, holder))
    answered = tab.event("step", "input", 1)
    assert tab.trace.source_text == OWN  # not the start-up example's
    assert notice(tab) == RENEWED
    assert answered[tab.driver.component("step-info")] == step_html(tab.trace, 1)  # the step line of its own trace
    assert tab.driver.values[tab.driver.component("source")] == OWN  # the sentence box as the visitor left it


def test_a_redraw_keeps_the_visitors_control_and_draws_its_own_sentence(demo, holder):
    tab = own_tab(demo, holder)
    tab.event("attention", "select")
    head = tab.driver.component("head")
    choices = [c[1] if isinstance(c, (tuple, list)) else c for c in head.choices]
    other = next(c for c in choices if c != tab.driver.values[head])
    dropped(tab)
    tab.last = tab.event("head", "input", other)
    assert tab.trace.source_text == OWN and notice(tab) == RENEWED
    assert tab.driver.values[head] == other  # the visitor's click is not undone
    assert tab.state(tab.open_tab) == "attention"
    assert answered_figure(tab, "attention-plot")


def test_the_downloads_after_the_session_was_dropped_are_the_tabs_own(demo, holder):
    tab = dropped(own_tab(demo, holder))
    made = tab.event("lesson-make", "click")
    [lesson] = [value for c, value in made.items() if getattr(c, "elem_id", None) == "lesson-save"]
    assert Path(lesson["path"]).name.startswith("lesson-Der-Hund")
    with zipfile.ZipFile(lesson["path"]) as archive:
        assert any(OWN.split()[1] in archive.read(name).decode("utf-8", "replace") for name in archive.namelist())
    trace_file = tab.driver.values[tab.driver.component("download-trace")]
    assert json.loads(Path(trace_file["path"]).read_text(encoding="utf-8"))["source_text"] == OWN
    assert notice(tab) == RENEWED


def test_a_tab_opened_after_the_session_was_dropped_shows_the_tabs_own_sentence(demo, holder):
    tab = dropped(own_tab(demo, holder))
    tab.event("positions-tab", "select")
    assert tab.trace.source_text == OWN and notice(tab) == RENEWED


def test_a_page_that_showed_no_sentence_gets_none_after_the_drop(demo, holder):
    tab = dropped(Tab(demo, holder, "visitor", {"text": ""}))
    tab.event("step", "input", 1)
    assert tab.trace is None  # not the start-up example


def test_a_kept_session_is_not_renewed(demo, holder):
    tab = own_tab(demo, holder)
    trace = tab.trace
    tab.event("step", "input", 1)
    assert tab.trace is trace and notice(tab) != RENEWED


def test_translate_after_the_drop_translates_what_the_visitor_typed(demo, holder):
    tab = dropped(own_tab(demo, holder))
    tab.driver.set("source", "Die Katze schläft.")
    tab.event("translate", "click")
    assert tab.trace.source_text == "Die Katze schläft."
