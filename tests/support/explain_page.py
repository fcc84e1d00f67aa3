"""The page that `ui.app.build_demo` makes, driven as the browser drives it (tests/support/page_driver.py), on the
Explain tab with a given trace: press a panel's button (its one listener runs the panel's action and draws what
depends on it), change a value and redraw, read what is on screen. An app with two models has a page per model
(ui/models.py): `page` names one by its path ("" the first, "opus-mt").
"""

from __future__ import annotations

import gradio as gr
from page_driver import PageDriver, by_id, component

__all__ = ["ExplainPage", "by_id", "listener", "on"]


def listener(demo: gr.Blocks, name: str, page: str = ""):
    """The one declared action's listener of `page` whose function is called `name`."""
    [fn] = [f for f in demo.fns.values() if f.name == name and f.page == page and hasattr(f.fn, "action")]
    return fn


def on(demo: gr.Blocks, elem_id: str, event: str | None = None, page: str = ""):
    """The server listener of `event` (None: its one event) on `page`'s component with `elem_id` (or a gr.Tab's id);
    browser-only (js) listeners, such as the one that scrolls a result into view, are left out, and so is the plain
    redraw where the event also runs an action of its own."""
    block = component(demo, elem_id, page)
    fired = [
        f
        for f in demo.fns.values()
        if f.fn is not None and f.page == page and any(t[0] == block._id and event in (None, t[1]) for t in f.targets)
    ]
    [fn] = [f for f in fired if getattr(getattr(f.fn, "action", None), "fn", None) is not None] or fired
    return fn


class ExplainPage(PageDriver):
    """One visitor's page on the Explain tab with `trace` translated (at step 1)."""

    def __init__(self, demo: gr.Blocks, trace, page: str = ""):
        super().__init__(demo, page)
        self.step = self.component("step")
        [self.tab] = [c for c in self.values if isinstance(c, gr.State) and c.value in ("next", "attention")]
        self.drawn = self.listeners[0].outputs[0]  # {view: key} of what the page shows (ui/redraw.py)
        self.values.update({self.trace_state: trace, self.step: 1, self.tab: "explain", self.drawn: None})

    def set(self, updates: dict) -> dict:
        """Put `updates` ({component: value}) into the page's values, then its redraw -> what it drew, {elem_id: value}."""
        for target, value in updates.items():
            value = getattr(value, "value", value) if isinstance(value, gr.components.Component) else value
            if target in self.values:
                self.values[target] = value
            self.screen[target] = value
        return self.redraw()

    def draw(self) -> dict:
        """The redraw with nothing changed -> what it drew ({} when nothing needed drawing)."""
        return self.set({})

    def press(self, elem_id: str, *args) -> dict:
        """Click the button `elem_id`, its action's inputs set to `args` first (where given) -> what the action itself
        returned, {component: value} (its listener also drew what depends on it: see `screen`)."""
        fn = on(self.demo, elem_id, page=self.page)
        action = fn.fn.action
        for target, value in zip(action.inputs, args):
            self.values[target] = value
        self.fire(fn)
        return {target: self.screen[target] for target in action.outputs if target in self.screen}
