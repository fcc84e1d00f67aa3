"""Computations that can take seconds report progress (gr.Progress) on the view they fill: attribution (every output
token's gradients, measured at 0.5-15 CPU s for 7-40 tokens) and beam search on long input."""

from __future__ import annotations

import inspect

import gradio as gr

from model.checkpoints.paths import DEFAULT_CHECKPOINT
from ui import build_demo


def handler(demo, name: str, shows_on: str):
    """The listener `name` whose progress shows on the component `shows_on` (its progress target, or its output)."""
    [fn] = [
        f
        for f in demo.fns.values()
        if f.name == name and shows_on in [c.elem_id for c in (f.show_progress_on or f.outputs)]
    ]
    return fn


def test_attribution_and_beam_report_progress_on_their_view():
    demo = build_demo(DEFAULT_CHECKPOINT)  # the attribution panel needs the shipped checkpoint's corpus file
    trace = (
        demo.runner
        and next(f for f in demo.fns.values() if f.api_name == "translate_page").fn(
            "Zwei Hunde spielen im Schnee.", "de-en"
        )[0]
    )
    for name, shows_on in (("on_run", "attribution-plot"), ("on_beam", "beam-result")):
        fn = handler(demo, name, shows_on).fn
        assert isinstance(inspect.signature(fn).parameters["progress"].default, gr.Progress)
        seen = []
        fn(trace, progress=lambda value, desc=None, unit="steps": seen.append((value, desc)))
        assert seen and seen[0][0][0] == 0 and seen[0][1], name  # a first step with words, before the job
    assert seen  # beam ran
