"""The page that `ui.app.build_demo` makes, driven as the browser drives it, on the Explain tab: press a button (its
server listener called), then the page's one redraw runs with every input's value, and what it draws is on screen.
An app with two models has a page per model (ui/models.py): `page` names one by its path ("" the first, "opus-mt").
"""

from __future__ import annotations

import gradio as gr

from ui.share import TABS


def listener(demo: gr.Blocks, name: str, page: str = ""):
    """The one server listener of `page` whose function is called `name`."""
    [fn] = [block_fn for block_fn in demo.fns.values() if block_fn.name == name and block_fn.page == page]
    return fn


def on(demo: gr.Blocks, elem_id: str, event: str | None = None, page: str = ""):
    """The server listener of `event` (None: its one event) on `page`'s component with `elem_id` (or a gr.Tab's id);
    browser-only (js) listeners, such as the one that scrolls a result into view, are left out."""
    [block] = [
        b
        for b in demo.blocks.values()
        if elem_id in (getattr(b, "elem_id", None), getattr(b, "id", None)) and b.page == page
    ]
    [fn] = [
        f
        for f in demo.fns.values()
        if f.fn is not None and any(t[0] == block._id and event in (None, t[1]) for t in f.targets)
    ]
    return fn


def by_id(updates: dict) -> dict:
    """{component: value} -> {elem_id (or the component, without one): value}."""
    return {getattr(component, "elem_id", None) or component: value for component, value in updates.items()}


class ExplainPage:
    """One visitor's page on the Explain tab with `trace` translated: `values` of every input of the redraw,
    `screen` what each component shows."""

    def __init__(self, demo: gr.Blocks, trace, page: str = ""):
        self.demo, self.page, self.redraw = demo, page, listener(demo, "redraw", page)
        self.drawn = self.redraw.outputs[0]
        inputs = self.redraw.inputs
        self.values = {component: getattr(component, "value", None) for component in inputs}
        self.trace_state = listener(demo, "before", page).outputs[0]
        self.tab = next(c for c in inputs if isinstance(c, gr.State) and c.value in TABS)  # the open tab's state
        self.step = next(c for c in inputs if getattr(c, "elem_id", None) == "step")
        self.values.update({self.trace_state: trace, self.step: 1, self.tab: "explain", self.drawn: None})
        self.screen: dict = {}

    def set(self, updates: dict) -> dict:
        """Apply a listener's {component: value} as the browser would, then run the redraw -> what it drew,
        {elem_id: value}."""
        for component, value in updates.items():
            value = getattr(value, "value", value) if isinstance(value, gr.components.Component) else value
            if component in self.values:
                self.values[component] = value
            self.screen[component] = value
        drawn = self.redraw.fn(self.values, None)
        if drawn == gr.skip():
            return {}
        self.values[self.drawn] = drawn.pop(self.drawn)
        self.screen.update(drawn)
        return by_id(drawn)

    def draw(self) -> dict:
        """The redraw with nothing changed -> what it drew, {elem_id: value} ({} when nothing needed drawing)."""
        return self.set({})

    def component(self, elem_id: str):
        """The redraw's input with `elem_id`."""
        return next(c for c in self.values if getattr(c, "elem_id", None) == elem_id)

    def press(self, elem_id: str, *args) -> dict:
        """Click the button `elem_id` with its listener's inputs `args` -> the listener's result (then redrawn)."""
        result = on(self.demo, elem_id, page=self.page).fn(*args)
        self.set(result)
        return result

    def shown(self, elem_id: str):
        """What the component `elem_id` shows now."""
        [value] = [value for component, value in self.screen.items() if getattr(component, "elem_id", None) == elem_id]
        return value
