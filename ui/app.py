"""The whole page of Attention Explorer over one checkpoint, put together from the UI package:
the session's header (ui/session.py), the step controls (ui/stepping.py), one module per tab, and
the one redraw listener (ui/redraw.py). Importing this loads no model; `build_demo` does.
"""

from __future__ import annotations

from pathlib import Path

import gradio as gr

from serving import Runner, zerogpu
from serving.device import choose_device

from . import (
    api,
    attention,
    compare,
    explain,
    model_tab,
    next_token,
    positions,
    redraw,
    session,
    share,
    stepping,
    tour,
)
from .common import PRIVATE, Page
from .page_script import SHOW_VIEW_JS, page_script
from .text import ABOUT_APP


def find(demo: gr.Blocks, elem_id: str):
    """The component with this elem_id (None if the page has none)."""
    return next((block for block in demo.blocks.values() if getattr(block, "elem_id", None) == elem_id), None)


def below_figure(header) -> gr.Textbox:
    """What the first screen leaves out, under the views: the token chips, the download and share link, and the
    rest of the introduction (folded) -> the share link's box."""
    header.tokens.render()
    with gr.Row(equal_height=False, elem_id="below-figure"):
        header.download.render()
        link = share.link_row()
    with gr.Accordion("About this app, the model and its limits", open=False, elem_id="about-app"):
        gr.Markdown(ABOUT_APP)
    return link


def build_demo(checkpoint: str | Path, hub: bool = False, device: str | None = "cpu") -> gr.Blocks:
    """The app over one checkpoint (a local directory, or a Hugging Face Hub repo id with hub=True).

    `demo.runner` holds the runner of its model computations (serving/runner.py).
    device: where the jobs run: "cpu", "cuda", "auto" or None ($ATTENTION_EXPLORER_DEVICE, else auto;
        serving/device.py).
    On a ZeroGPU Space (serving/zerogpu.py) the page's checkpoint stays on the CPU, the runner puts a copy on cuda
    and every job runs through its one @spaces.GPU dispatcher, whatever `device` says.
    A checkpoint that is missing or broken does not stop the app: the page says what is wrong.
    """
    on_zerogpu = zerogpu.on_zerogpu()
    if on_zerogpu:
        zerogpu.load_spaces()  # it patches torch for ZeroGPU: before the model goes to cuda
        device = "cpu"
    else:
        device = choose_device(device)
    loaded, load_error = session.open_checkpoint(checkpoint, hub, device)
    model_runner = Runner.start(loaded, on_zerogpu) if loaded else None  # None: no model
    # analytics off: no telemetry or version checks from an offline demo
    with gr.Blocks(title="Attention Explorer", delete_cache=(3600, 3600), analytics_enabled=False) as demo:
        header = session.build(model_runner, load_error)
        trace, translate_event = header.trace, header.event
        steps = stepping.build(trace)
        tour_parts = tour.build()  # right under the player bar: a stop's text sits above the view it sets
        tab_state = gr.State(next_token.TAB_ID)  # the open tab: only its views are drawn
        # wrap: every tab shows on every screen (a phone hid four behind Gradio's "..." menu)
        with gr.Tabs(elem_id="views", overflow_behavior="wrap") as tabs:
            page = Page(loaded, trace, steps.slider, tab_state, tabs, translate_event, model_runner)
            first = next_token.build(page)
            attention_tab = attention.build(page)
            compare_tab = compare.build(page)
            views = [first, attention_tab.view, *compare_tab.views, *positions.build(page)]
            views += [model_tab.build(page), *explain.build(page, attention_tab.opener)]
        link = below_figure(header)  # the tokens, download, share link and the folded introduction
        targets = share.Targets(header, steps.slider, tabs, tab_state, *attention_tab.opener.outputs[:4], compare_tab)
        views.append(share.link_view(targets, link))
        redraw.wire(page, steps.info, views)  # one listener draws them all (and empties them without a trace)
        tour.wire(
            loaded,
            targets,
            share.wire(model_runner, targets, link, demo),
            tour_parts,
            find(demo, "explain-panels"),
            attention_tab.pipeline,
        )
        api.add_endpoints(model_runner, loaded, load_error)  # /translate, /translation_trace: the API and MCP
        # one listener after a translation: the header's tokens and switch, and step 1 of the new sentence
        translate_event.success(
            lambda value: {**header.after_translate(value), steps.slider: 1},
            header.trace,
            [header.download, header.tokens, header.switch, steps.slider],
            show_progress="hidden",
            **PRIVATE,
        ).then(None, js=SHOW_VIEW_JS, **PRIVATE)
        demo.load(None, None, None, js=page_script(), **PRIVATE)  # step keys, figures in the page's theme
    demo.runner = model_runner
    return demo
