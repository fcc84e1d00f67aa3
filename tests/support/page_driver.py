"""The page that `ui.app.build_demo` makes, driven as the browser drives it, without a browser: every server
listener of the page gets the values of every input (the page's one set, ui/redraw.py), and what it answers is
put on screen and into those values, as Gradio's front end does. An app with two models has a page per model
(ui/models.py): `page` names one by its path ("" the first, "opus-mt").
"""

from __future__ import annotations

from types import SimpleNamespace

import gradio as gr

from helpers import run_listener
from ui.redraw import MISSING, as_update, new_value


def request(params: dict | None = None, url: str = "http://127.0.0.1:7860/") -> SimpleNamespace:
    """A stand-in for the gr.Request of a page load: its query parameters and its address (the Referer)."""
    return SimpleNamespace(query_params=dict(params or {}), headers={"referer": url})


def by_id(updates: dict) -> dict:
    """{component: value} -> {elem_id (or the component, without one): value}."""
    return {getattr(component, "elem_id", None) or component: value for component, value in updates.items()}


def component(demo: gr.Blocks, elem_id: str, page: str = ""):
    """The component of `page` with `elem_id` (or a gr.Tab's id)."""
    [block] = [
        b
        for b in demo.blocks.values()
        if elem_id in (getattr(b, "elem_id", None), getattr(b, "id", None)) and b.page == page
    ]
    return block


class PageDriver:
    """One visitor's page: `values` of every listener input, `screen` what each component shows."""

    def __init__(self, demo: gr.Blocks, page: str = ""):
        self.demo, self.page = demo, page
        self.listeners = [f for f in demo.fns.values() if f.page == page and hasattr(f.fn, "action")]
        assert self.listeners, "the page declares no actions"
        self.values = {c: _initial(c) for c in self.listeners[0].inputs}
        self.screen: dict = {}
        self.props: dict = {}  # {component: {property: value}} of every update received (choices, visible...)
        self.url = "http://127.0.0.1:7860/"

    # ---- finding things
    def component(self, elem_id: str):
        return component(self.demo, elem_id, self.page)

    def listener(self, name: str):
        """The page's listener of the action called `name` (its function's name)."""
        [fn] = [f for f in self.listeners if f.name == name]
        return fn

    def on(self, elem_id: str, event: str | None = None):
        """The server listener of `event` (None: any) on the component with `elem_id`."""
        block = self.component(elem_id)
        [fn] = [f for f in self.listeners if any(t[0] == block._id and event in (None, t[1]) for t in f.targets)]
        return fn

    # ---- what a visitor does
    def fire(self, listener, params: dict | None = None) -> dict:
        """Run `listener` with the page's values, as its event would -> what it answered, {elem_id: update}."""
        answer = run_listener(listener, dict(self.values), request(params, self.url))
        if not isinstance(answer, dict) or answer.get("__type__") == "update":
            return {}
        self.apply(answer)
        return by_id(answer)

    def apply(self, answer: dict) -> None:
        for target, update in answer.items():
            if isinstance(update, (gr.blocks.Block, dict)):
                self.props.setdefault(target, {}).update(as_update(update))
            value = new_value(update)
            if value is MISSING:
                self.screen.setdefault(target, None)
                continue
            if target in self.values:
                self.values[target] = value
            self.screen[target] = value

    def load(self, params: dict | None = None) -> dict:
        """The page opens (its load answer, with these query parameters)."""
        return self.fire(self.listener("on_load"), params)

    def set(self, elem_id: str, value) -> None:
        """The visitor types or picks `value` in a component (no event yet)."""
        self.values[self.component(elem_id)] = value

    def event(self, elem_id: str, event: str) -> dict:
        """`event` on the component with `elem_id`: every server listener of it runs, in the order the page declared
        them, as the browser sends them (a page should have one: tests/ui/test_page_listeners.py) -> what they
        answered, {elem_id: update}."""
        block = self.component(elem_id)
        fired = [f for f in self.listeners if any(t[0] == block._id and t[1] == event for t in f.targets)]
        assert fired, f"no server listener of {elem_id}.{event}"
        answered: dict = {}
        for listener in fired:
            answered.update(self.fire(listener))
        return answered

    def input(self, elem_id: str, value) -> dict:
        """The visitor changes a control: its value, then its input event."""
        self.set(elem_id, value)
        return self.event(elem_id, "input")

    def click(self, elem_id: str) -> dict:
        return self.event(elem_id, "click")

    def translate(self, text: str, direction: str = "de-en") -> dict:
        self.set("source", text)
        self.set("direction", direction)
        return self.click("translate")

    def open_tab(self, tab_id: str) -> dict:
        return self.event(tab_id, "select")

    # ---- what is on screen
    def shown(self, elem_id: str):
        [value] = [value for target, value in self.screen.items() if getattr(target, "elem_id", None) == elem_id]
        return value

    def value(self, elem_id: str):
        return self.values[self.component(elem_id)]

    def prop(self, elem_id: str, name: str, default=None):
        """A property (choices, visible, interactive, selected...) as the latest update of `elem_id` set it, else
        as the page was built."""
        block = self.component(elem_id)
        if name in self.props.get(block, {}):
            return self.props[block][name]
        return getattr(block, name, default)

    def choices(self, elem_id: str) -> list:
        """The values a menu or radio offers now (a (label, value) choice by its value)."""
        return [c[1] if isinstance(c, (tuple, list)) else c for c in self.prop(elem_id, "choices") or []]

    def redraw(self) -> dict:
        """The page's plain redraw (a control changed: what follows it is drawn) -> what it answered."""
        return self.fire(next(f for f in self.listeners if f.name == "redraw"))

    @property
    def trace_state(self) -> gr.State:
        """The page's trace: the first output of the Translate action (ui/session.py `answer`)."""
        return self.on("translate", "click").fn.action.outputs[0]

    @property
    def trace(self):
        return self.values[self.trace_state]


def _initial(component):
    value = getattr(component, "value", None)
    if isinstance(component, gr.State):
        return component.value
    return value
