"""The whole page of Attention Explorer over one checkpoint, put together from the UI package:
the session's header (ui/session.py), the step controls (ui/stepping.py), one module per tab, and
the one redraw listener (ui/redraw.py). Importing this loads no model; `build_demo` does.
"""

from __future__ import annotations

from pathlib import Path

import gradio as gr

from . import attention, explain, model_tab, next_token, positions, redraw, session, stepping
from .common import PRIVATE, Page
from .page_script import page_script


def build_demo(checkpoint: str | Path, hub: bool = False) -> gr.Blocks:
    """The app over one checkpoint (a local directory, or a Hugging Face Hub repo id with hub=True).

    A checkpoint that is missing or broken does not stop the app: the page says what is wrong.
    """
    loaded, load_error = session.open_checkpoint(checkpoint, hub)
    # analytics off: no telemetry or version checks from an offline demo
    with gr.Blocks(title="Attention Explorer", delete_cache=(3600, 3600), analytics_enabled=False) as demo:
        trace, translate_event = session.build(loaded, load_error)
        steps = stepping.build(trace)
        tab_state = gr.State(next_token.TAB_ID)  # the open tab: only its views are drawn
        with gr.Tabs(elem_id="views") as tabs:
            page = Page(loaded, trace, steps.slider, tab_state, tabs, translate_event)
            first = next_token.build(page)
            attention_tab = attention.build(page)
            views = [first, attention_tab.view, *positions.build(page)]
            model_tab.build(page)
            explain.build(page, attention_tab.opener)
        redraw.wire(page, steps.info, views)
        demo.load(None, None, None, js=page_script(), **PRIVATE)  # step keys, figures in the page's theme
    return demo
