"""The page's one redraw listener: the step panel and the open tab's views, from the kept trace.

Every view is drawn by ONE listener, fired by whatever changes what is shown: a new trace, the
step, the open tab, or a tab's control (kind, layer, head). trigger_mode="always_last" runs it once
at a time per page and, after a burst of clicks, once more with the latest values, so the figures
always match the step and controls on screen (separate listeners raced and could leave a stale
plot). Only the open tab's views are drawn; the others are left as they are and drawn when opened.
"""

from __future__ import annotations

from collections.abc import Sequence

import gradio as gr

from model import TranslationTrace

from .common import PRIVATE, Page, TabView
from .stepping import step_html


def render_views(views: Sequence[TabView], tab: str, trace: TranslationTrace | None, step: float | None,
                 values: dict) -> dict:
    """{component: figure} of the open tab's views ({} without a trace or for a tab with none)."""
    if trace is None:
        return {}
    for view in views:
        if view.tab_id == tab:
            return view.render(trace, step, values)
    return {}


def wire(page: Page, step_info: gr.HTML, views: Sequence[TabView]) -> None:
    controls = [control for view in views for control in view.controls]
    outputs = [step_info, *(output for view in views for output in view.outputs)]

    def redraw(values: dict) -> dict:
        trace, step = values[page.trace], values[page.step]
        return {step_info: step_html(trace, step), **render_views(views, values[page.tab], trace, step, values)}

    triggers = [page.trace.change, page.step.change, page.tab.change, *(control.change for control in controls)]
    gr.on(triggers, redraw, {page.trace, page.step, page.tab, *controls}, outputs,
          trigger_mode="always_last", show_progress="hidden", **PRIVATE)
