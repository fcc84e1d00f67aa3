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

from .common import PAGE_URL, PRIVATE, Page, TabView
from .stepping import step_html


def render_views(views: Sequence[TabView], tab: str, trace: TranslationTrace | None, step: float | None,
                 values: dict) -> dict:
    """{component: value} of the open tab's views and the page-wide ones; without a trace every view is emptied."""
    if trace is None:
        return {output: None for view in views for output in view.outputs}
    return {component: value for view in views if view.tab_id in (tab, None)
            for component, value in view.render(trace, step, values).items()}


def wire(page: Page, step_info: gr.HTML, views: Sequence[TabView]) -> None:
    """One listener for everything that follows the trace, step, open tab and view controls: on a 2-core
    server each extra listener a click fires costs the browser and the queue a round trip (issue 15)."""
    controls = list(dict.fromkeys(control for view in views for control in view.controls))
    inputs = {page.trace, page.step, page.tab, *controls, *(item for view in views for item in view.inputs)}
    outputs = [step_info, *dict.fromkeys(output for view in views for output in view.outputs)]

    drawn = gr.State(None)  # what the page shows now (drawn_key): a click that changes nothing draws nothing

    def redraw(values: dict, request: gr.Request) -> dict:
        trace, step = values[page.trace], values[page.step]
        key = drawn_key(values, page.trace, drawn)
        if key == values[drawn]:  # e.g. a new trace and its step 1 arrive as two triggers of one redraw
            return gr.skip()
        values = {**values, PAGE_URL: (getattr(request, "headers", None) or {}).get("referer", "")}
        return {drawn: key, step_info: step_html(trace, step),
                **render_views(views, values[page.tab], trace, step, values)}

    triggers = [page.trace.change, page.step.change, page.tab.change, *(control.change for control in controls)]
    gr.on(triggers, redraw, {*inputs, drawn}, [drawn, *outputs], trigger_mode="always_last", show_progress="hidden",
          **PRIVATE)


def drawn_key(values: dict, trace_state: gr.State, drawn_state: gr.State) -> str:
    """Everything a redraw reads, the trace by what it is (sentence, direction, output, forced steps, the
    heads or encodings switched off), as one string."""
    trace = values[trace_state]
    what = None if trace is None else (trace.source_text, trace.direction, trace.translation, trace.num_steps,
                                       trace.output_ids, trace.forced_steps, trace.ablation)
    return repr(sorted((component._id, repr(value)) for component, value in values.items()
                       if component is not trace_state and component is not drawn_state)) + repr(what)
