"""What redraws when: the page's ONE listener that draws, the step panel and every view, from the kept trace.

Every tab and panel registers its views (`TabView`, ui/common.py) and this listener draws them; nothing else
draws. A view says what it follows:
- its tab (`tab_id`; None = every tab, e.g. the share link): only the open tab's views are drawn, the others
  when their tab is opened;
- the trace (`follows_trace`, default): a new trace redraws it, and without a trace it is emptied; the
  training film, the paper's figures and the training curves do not depend on the sentence;
- the step (`follows_step`, default): a step redraws it;
- its `controls` (a change of one fires the listener) and `inputs` (read only).
Each view's key is what it follows, by value (drawn_key); the listener draws only the views whose key
changed since they were last drawn (kept per page in a gr.State), so a click that changes nothing draws
nothing and one Next redraws only what follows the step on the open tab.

It fires on a new trace, the step, the open tab and every control. trigger_mode="always_last" runs it once
at a time per page and, after a burst of clicks, once more with the latest values, so the figures always
match the step and controls on screen (separate listeners raced and could leave a stale plot).
"""

from __future__ import annotations

from collections.abc import Sequence

import gradio as gr

from model import TranslationTrace

from .common import PAGE_URL, PRIVATE, Page, TabView, page_url
from .stepping import step_html

EMPTY = "empty"  # the key of a view emptied for want of a trace


def trace_key(trace: TranslationTrace | None) -> tuple | None:
    """A trace by what it is: sentence, direction, output, forced steps, the heads or encodings switched off."""
    return (
        None
        if trace is None
        else (
            trace.source_text,
            trace.direction,
            trace.translation,
            trace.num_steps,
            trace.output_ids,
            trace.forced_steps,
            trace.ablation,
        )
    )


def drawn_key(view: TabView, trace: TranslationTrace | None, step: float | None, values: dict) -> str:
    """Everything `view` follows, by value, as one string."""
    read = [repr(values.get(component)) for component in (*view.controls, *view.inputs)]
    return repr((trace_key(trace) if view.follows_trace else None, step if view.follows_step else None, read))


def render_views(
    views: Sequence[TabView],
    tab: str,
    trace: TranslationTrace | None,
    step: float | None,
    values: dict,
    drawn: dict | None = None,
) -> dict:
    """{component: value} of the open tab's views and the page-wide ones; without a trace every view that
    follows the trace is emptied, whichever tab it is on. drawn: {view index: drawn_key} of what the page shows,
    updated in place; a view whose key is unchanged is left as it is (None: draw every view)."""
    updates = {}
    for index, view in enumerate(views):
        empty = trace is None and view.follows_trace
        if not empty and view.tab_id not in (tab, None):
            continue
        key = EMPTY if empty else drawn_key(view, trace, step, values)
        if drawn is not None:
            if drawn.get(index) == key:
                continue
            drawn[index] = key
        if empty:
            updates.update(view.empty() if view.empty else {output: None for output in view.outputs})
        else:
            updates.update(view.render(trace, step, values))
    return updates


def wire(page: Page, step_info: gr.HTML, views: Sequence[TabView]) -> None:
    """One listener for everything that follows the trace, step, open tab and view controls: on a 2-core
    server each extra listener a click fires costs the browser and the queue a round trip."""
    controls = list(dict.fromkeys(control for view in views for control in view.controls))
    inputs = {page.trace, page.step, page.tab, *controls, *(item for view in views for item in view.inputs)}
    outputs = [step_info, *dict.fromkeys(output for view in views for output in view.outputs)]

    drawn = gr.State(None)  # {view index or "step": drawn_key} of what the page shows now

    def redraw(values: dict, request: gr.Request) -> dict:
        trace, step = values[page.trace], values[page.step]
        shown = dict(values[drawn] or {})
        values = {**values, PAGE_URL: page_url(request)}
        updates = render_views(views, values[page.tab], trace, step, values, shown)
        info = repr((trace_key(trace), step))
        if shown.get("step") != info:
            shown["step"] = info
            updates[step_info] = step_html(trace, step)
        if not updates:  # e.g. a new trace and its step 1 arrive as two triggers of one redraw
            return gr.skip()
        return {drawn: shown, **updates}

    triggers = [page.trace.change, page.step.change, page.tab.change, *(control.change for control in controls)]
    gr.on(
        triggers,
        redraw,
        {*inputs, drawn},
        [drawn, *outputs],
        trigger_mode="always_last",
        show_progress="hidden",
        **PRIVATE,
    )
