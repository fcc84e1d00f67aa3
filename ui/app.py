"""The whole page of Attention Explorer over one checkpoint, put together from the UI package:
the session's header (ui/session.py), the step controls (ui/stepping.py), one module per tab, and
the one redraw listener (ui/redraw.py). Importing this loads no model; `build_demo` does.
"""

from __future__ import annotations

from pathlib import Path

import gradio as gr

from serving.device import choose_device

from . import (
    attention,
    compare,
    explain,
    model_tab,
    next_token,
    positions,
    redraw,
    runner,
    session,
    share,
    stepping,
    tour,
    zerogpu,
)
from .common import PRIVATE, Page
from .page_script import SHOW_VIEW_JS, page_script


def find(demo: gr.Blocks, elem_id: str):
    """The component with this elem_id (None if the page has none)."""
    return next((block for block in demo.blocks.values() if getattr(block, "elem_id", None) == elem_id), None)


def build_demo(checkpoint: str | Path, hub: bool = False, workers: int = 0,
               device: str | None = "cpu") -> gr.Blocks:
    """The app over one checkpoint (a local directory, or a Hugging Face Hub repo id with hub=True).

    workers: model worker processes (ui/runner.py); 0 = single-process mode. `demo.runner` holds them.
    device: where the jobs run: "cpu", "cuda", "auto" or None ($ATTENTION_EXPLORER_DEVICE, else auto;
        serving/device.py).
    On a ZeroGPU Space (ui/zerogpu.py) the model goes to cuda here, every job runs through @spaces.GPU and
    there are no workers, whatever the arguments say.
    A checkpoint that is missing or broken does not stop the app: the page says what is wrong.
    """
    on_zerogpu = zerogpu.on_zerogpu()
    if on_zerogpu:
        zerogpu.load_spaces()  # it patches torch for ZeroGPU: before the model goes to cuda
        device, workers = zerogpu.MODEL_DEVICE, 0
    else:
        device = choose_device(device)
    # the pool's workers load their own copies on `device`; this process's copy then only serves the page
    loaded, load_error = session.open_checkpoint(checkpoint, hub, device if workers == 0 else "cpu")
    model_runner = runner.Runner.start(loaded, workers, device, on_zerogpu) if loaded else None  # None: no model
    # analytics off: no telemetry or version checks from an offline demo
    with gr.Blocks(title="Attention Explorer", delete_cache=(3600, 3600), analytics_enabled=False) as demo:
        header = session.build(model_runner, load_error)
        trace, translate_event = header.trace, header.event
        link = share.link_row()  # first-minute: the share link
        steps = stepping.build(trace)
        tour_parts = tour.build()  # right under the player bar: a stop's text sits above the view it sets (issue 23)
        tab_state = gr.State(next_token.TAB_ID)  # the open tab: only its views are drawn
        # wrap: every tab shows on every screen (a phone hid four behind Gradio's "..." menu, issue 23)
        with gr.Tabs(elem_id="views", overflow_behavior="wrap") as tabs:
            page = Page(loaded, trace, steps.slider, tab_state, tabs, translate_event, model_runner)
            first = next_token.build(page)
            attention_tab = attention.build(page)
            compare_tab = compare.build(page)
            views = [first, attention_tab.view, *compare_tab.views, *positions.build(page)]
            views += [model_tab.build(page), *explain.build(page, attention_tab.opener)]
        targets = share.Targets(header, steps.slider, tabs, tab_state, *attention_tab.opener.outputs[:4], compare_tab)
        views.append(share.link_view(targets, link))
        redraw.wire(page, steps.info, views)  # one listener draws them all (and empties them without a trace)
        tour.wire(loaded, targets, share.wire(model_runner, targets, link, demo), tour_parts, find(demo, "explain-panels"),
                  attention_tab.pipeline)
        runner.add_endpoints(loaded)
        # one listener after a translation: the header's tokens and switch, and step 1 of the new sentence
        translate_event.success(lambda value: {**header.after_translate(value), steps.slider: 1}, header.trace,
                                [header.download, header.tokens, header.switch, steps.slider],
                                show_progress="hidden", **PRIVATE).then(None, js=SHOW_VIEW_JS, **PRIVATE)
        demo.load(None, None, None, js=page_script(), **PRIVATE)  # step keys, figures in the page's theme
    if model_runner is not None:
        model_runner.limit_events(demo)
    demo.runner = model_runner
    return demo
