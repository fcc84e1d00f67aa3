"""The whole page of Attention Explorer over one checkpoint, put together from the UI package:
the session's header (ui/session.py), the step controls (ui/stepping.py), one module per tab, and
the one redraw listener (ui/redraw.py). Importing this loads no model; `build_demo` does.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import gradio as gr

from serving import Runner, zerogpu
from serving.translation import Translator
from serving.device import choose_device

from . import (
    api,
    models,
    attention,
    compare,
    explain,
    lesson,
    model_tab,
    next_token,
    pair,
    positions,
    redraw,
    renewal,
    session,
    share,
    stepping,
    tour,
)
from .common import PRIVATE, Page
from .page_script import page_head, page_script
from .session_order import SessionOrderedBlocks
from .text import ABOUT_APP, EXAMPLES


def find(demo: gr.Blocks, elem_id: str):
    """The component with this elem_id (None if the page has none)."""
    return next((block for block in demo.blocks.values() if getattr(block, "elem_id", None) == elem_id), None)


def below_figure(header) -> tuple[gr.Textbox, tuple]:
    """What the first screen leaves out, under the views: the token chips, the download and share link, and the
    rest of the introduction (folded) -> the share link's box and the lesson's two buttons (ui/lesson.py)."""
    header.tokens.render()
    with gr.Row(equal_height=False, elem_id="below-figure"):
        header.download.render()
        link = share.link_row()
        lesson_buttons = lesson.build()  # "Download as a lesson"
    with gr.Accordion("About this app, the model and its limits", open=False, elem_id="about-app"):
        gr.Markdown(ABOUT_APP)
    return link, lesson_buttons


def build_demo(
    checkpoint: str | Path, hub: bool = False, device: str | None = "cpu", model: str | None = None
) -> gr.Blocks:
    """The app over the own checkpoint (a local directory, or a Hugging Face Hub repo id with hub=True) and, where it
    is loaded, OPUS-MT: each model a whole page of its own (ui/models.py), the page it opens on `model`'s.

    `demo.runner` holds the runner of the first page's model computations (serving/runner.py), `demo.runners` every
    page's, by model.
    device: where the jobs run: "cpu", "cuda", "auto" or None ($ATTENTION_EXPLORER_DEVICE, else auto;
        serving/device.py).
    model: "own" or "opus-mt" (None: $ATTENTION_EXPLORER_MODEL, else own).
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
    chosen = models.chosen_model(model)
    loaded, load_error = session.open_checkpoint(checkpoint, hub, device)
    own = models.LoadedModel(models.OWN.key, {"": loaded} if loaded else {}, load_error)
    opus_mt = models.at_start_up(chosen, device)
    first, second = (opus_mt, own) if chosen == models.OPUS_MT.key and opus_mt.by_direction else (own, opus_mt)
    runners = {
        page.key: Runner.start(page.checkpoint, on_zerogpu, page.by_direction if page is opus_mt else None)
        for page in (first, second)
        if page.checkpoint is not None
    }
    translators = {page.key: Translator(runners, page.key, EXAMPLES, load_error) for page in (first, second)}
    later = models.later_model(
        chosen, opus_mt, device, lambda loaded: open_later(demo, loaded, own, translators, later)
    )
    # analytics off: no telemetry or version checks from an offline demo; a page's events one at a time
    with SessionOrderedBlocks(title="Attention Explorer", delete_cache=(3600, 3600), analytics_enabled=False) as demo:
        build_page(demo, first, translators[first.key], models.Choice(first, second, second.key, later))
        api.add_endpoints(translators[first.key])  # /translate, /translation_trace: the API and MCP
    if second.by_direction:  # the other model's page, at its own path
        with demo.route(models.MODELS[second.key].label, second.key, show_in_navbar=False):
            build_page(demo, second, translators[second.key], models.Choice(second, first, models.FIRST_PAGE))
    elif later is not None:  # OPUS-MT's page is built when it is loaded (ui/models.py), its path held till then
        models.placeholder_page(demo, second.key)
        demo.later = later
        if models.preloads():
            later.start()
    demo.runner = runners.get(first.key)
    demo.runners = runners
    demo.page_head = page_head()  # ui/server.py puts it in the page's <head>
    return demo


def open_later(
    demo: gr.Blocks, loaded: models.LoadedModel, own: models.LoadedModel, translators: dict, later: models.LaterModel
) -> None:
    """OPUS-MT, loaded after start-up: its runner, which every page's Translate and the API see at once, and its
    page, built into the app."""
    runner = Runner.start(loaded.checkpoint, zerogpu.on_zerogpu(), loaded.by_direction, True)
    for translator in translators.values():
        translator.runners[loaded.key] = runner
    translators[loaded.key] = translator = Translator(translators[own.key].runners, loaded.key, EXAMPLES, "")
    demo.runners[loaded.key] = runner
    choice = models.Choice(loaded, own, later.back_path)
    models.mount_page(demo, loaded.key, lambda: build_page(demo, loaded, translator, choice))


def build_page(demo: gr.Blocks, shown: models.LoadedModel, translator: Translator, choice: models.Choice) -> None:
    """The whole app over one model (inside `demo` or one of its routes): header, player, tabs, and one listener per
    user action, each drawing what its action changed (ui/redraw.py)."""
    loaded, load_error = shown.checkpoint, "" if shown.checkpoint is not None else shown.problem
    before = set(demo.blocks)  # this page's components are the ones made below (another page has the same ids)
    gr.Navbar(visible=False)  # the model choice (ui/models.py) leads between the pages: no navigation bar above
    offered = choice.other.by_direction or choice.other.problem  # loaded, or asked for and not loaded: say so
    header = session.build(load_error, choice.build if offered else None)
    tab_state = gr.State(next_token.TAB_ID)  # the open tab: only its views are drawn
    page = Page(loaded, header.trace, None, tab_state, None, translator.runner_of(shown.key))
    steps = stepping.build(page)
    page = dataclasses.replace(page, step=steps.slider)
    tour_parts = tour.build()  # right under the player bar: a stop's text sits above the view it sets
    # wrap: every tab shows on every screen (a phone hid four behind Gradio's "..." menu)
    with gr.Tabs(elem_id="views", overflow_behavior="wrap") as tabs:
        page = dataclasses.replace(page, tabs=tabs)
        first = next_token.build(page)
        attention_tab = attention.build(page)
        compare_tab = compare.build(page, translator)
        views = [first, attention_tab.view, *compare_tab.views, *positions.build(page)]
        views += [model_tab.build(page), *explain.build(page, attention_tab.opener)]
    session.wire(page, header, translator)
    choice.wire(page)  # the model menu's actions (ui/models.py)
    link, lesson_buttons = below_figure(header)  # the tokens, download, share link and the folded introduction
    targets = share.Targets(header, steps.slider, tabs, tab_state, *attention_tab.opener.outputs[:4], compare_tab)
    views.append(share.link_view(targets, link))
    lesson.wire(page, targets, *lesson_buttons)  # the lesson opens on the view the share link names
    # the first view arrives with the page (in its config): the header, the step and the attention figure
    example = share.wire(page, translator, targets, link, demo, [header.prefill, steps.prefill, attention_tab.prefill])
    if example is not None:
        pair.wire(page, translator, example, targets)  # the blog post's pair, and back to the visitor's sentence
        renewal.wire(page, translator, targets, link)  # a tab whose session the server dropped keeps its sentence
    panels = next(
        (block for key, block in demo.blocks.items() if key not in before and block.elem_id == "explain-panels"), None
    )
    tour.wire(page, loaded, targets, example, tour_parts, panels, attention_tab.pipeline)
    redraw.wire(page, steps.info, views)  # one listener per action, each drawing what depends on it
    demo.load(None, None, None, js=page_script(), **PRIVATE)  # step keys, figures in the page's theme
