"""Computations that can take seconds report progress (gr.Progress) on the view they fill: attribution (every output
token's gradients, measured at 0.5-15 CPU s for 7-40 tokens) and beam search on long input. The page's one listener
of each (ui/redraw.py) passes it on to Gradio's queue, as the event runs, on that view only."""

from __future__ import annotations

import inspect
from types import SimpleNamespace

import gradio as gr
from gradio.context import LocalContext
from page_driver import PageDriver

from model.checkpoints.paths import DEFAULT_CHECKPOINT
from ui import build_demo


def listener(demo, name: str, shows_on: str):
    """The page's listener of the action `name` whose progress shows on the component `shows_on`."""
    [fn] = [
        f
        for f in demo.fns.values()
        if f.name == name and hasattr(f.fn, "action") and shows_on in [c.elem_id for c in f.show_progress_on or []]
    ]
    return fn


def fired_in_an_event(driver: PageDriver, fn) -> list:
    """Run the listener `fn` as Gradio runs an event's function (its blocks and event id in LocalContext) -> the
    progress it sent to the queue: (index, length, desc) of the last tracked unit of each update."""
    sent = []
    queue = SimpleNamespace(set_progress=lambda event_id, units: sent.append((event_id, units)))
    tokens = (LocalContext.blocks.set(SimpleNamespace(_queue=queue)), LocalContext.event_id.set("event-1"))
    try:
        driver.fire(fn)
    finally:
        LocalContext.event_id.reset(tokens[1])
        LocalContext.blocks.reset(tokens[0])
    assert all(event_id == "event-1" for event_id, _ in sent)
    return [(units[-1].index, units[-1].length, units[-1].desc) for _, units in sent]


def test_attribution_and_beam_report_progress_on_their_view():
    demo = build_demo(DEFAULT_CHECKPOINT)  # the attribution panel needs the shipped checkpoint's corpus file
    driver = PageDriver(demo)
    driver.load()
    driver.translate("Zwei Hunde spielen im Schnee.", "de-en")
    driver.open_tab("explain-tab")
    for name, shows_on in (("on_run", "attribution-plot"), ("on_beam", "beam-result")):
        fn = listener(demo, name, shows_on)
        assert len(fn.show_progress_on) == 1  # on its view, never over the whole page
        action = fn.fn.action.fn
        assert isinstance(inspect.signature(action).parameters["progress"].default, gr.Progress)
        seen = fired_in_an_event(driver, fn)
        assert seen and seen[0][0] == 0 and seen[0][2], name  # a first step with words, before the job
        assert driver.shown(shows_on), name  # and the view it reported on is filled
    assert seen  # beam ran
