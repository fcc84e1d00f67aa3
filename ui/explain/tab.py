"""The "Explain" tab: what other attention viewers do not show, in twelve panels over the user's trace
("Attention Is All You Need"): switch heads off (3.2.2), branch at a step (3, greedy decoding), the
logit lens (3.1, 3.4), beam vs greedy (6.1), word alignment (3.2.3), head diagnostics (3.2.2) and
translation without positional encodings (3.5); and five views of issue 16: heads forming during training
(5), the paper's Figures 3-5 on this model (Appendix), attention rollout to the source (Abnar & Zuidema 2020),
the KV cache while stepping (3.1) and what changed from one step to the next (3.1, 3.4).

Each panel module builds and wires itself and returns a `Panel`; this shell lays them out and draws
the panels' trace views when the tab opens, for a new trace (which also clears the model runs'
results) and, for the step-following ones, when the step changes while the tab is open.
"""

from __future__ import annotations

import gradio as gr

from ..attention import HeadOpener
from ..common import PRIVATE, Page, TabView
from ..text import ABOUT_EXPLAIN
from . import ablation, beam, branching, cache, changes, diagnostics, film_view, no_pe, paper, readouts, rollout
from . import corpus_heads  # issue 25 (one import, one list entry below)
from .panel import Panel

TAB_ID = "explain"


def draw_all(panels: list[Panel], values: dict, page: Page) -> dict:
    """The trace views of every panel that has them, {component: value}."""
    trace, step = values[page.trace], values[page.step]
    return {component: value for panel in panels if panel.draw
            for component, value in panel.draw(trace, step, values).items()}


def wire(page: Page, tab: gr.Tab, panels: list[Panel]) -> TabView:
    """Draw the panels' trace views when the tab opens and for a new trace while it is open; the ones that
    follow the step are a TabView of the page's redraw listener (ui/redraw.py), so a step is one event."""
    drawn = [panel for panel in panels if panel.draw and not panel.follows_step]
    following = [panel for panel in panels if panel.draw and panel.follows_step]
    controls = {control for panel in drawn for control in panel.inputs}
    outputs = [output for panel in drawn for output in panel.outputs]
    cleared = {component: value for panel in panels for component, value in panel.cleared.items()}

    tab.select(lambda values: {page.tab: TAB_ID, **draw_all(drawn, values, page)},
               {page.trace, page.step, *controls}, [page.tab, *outputs], **PRIVATE)

    def on_new_trace(values):
        return {**cleared, **(draw_all(drawn, values, page) if values[page.tab] == TAB_ID else {})}

    page.translate_event.success(on_new_trace, {page.tab, page.trace, page.step, *controls},
                                 [*cleared, *outputs], **PRIVATE)
    return TabView(TAB_ID, [output for panel in following for output in panel.outputs],
                   lambda trace, step, values: draw_all(following, values, page),
                   inputs=[control for panel in following for control in panel.inputs])


def build(page: Page, opener: HeadOpener) -> TabView | None:
    """The tab and its panels (call inside the page's gr.Tabs) -> the view of its step-following panels."""
    with gr.Tab("Explain", id=TAB_ID, elem_id="explain-tab") as tab:
        gr.Markdown(ABOUT_EXPLAIN)
        if page.checkpoint is None:
            gr.Markdown("No model is loaded, so there is nothing to explain.")
            return None
        with gr.Tabs(elem_id="explain-panels"):
            panels = [ablation.build(page), branching.build(page), readouts.build_lens(page), beam.build(page),
                      readouts.build_alignment(page), diagnostics.build(page, opener), no_pe.build(page),
                      film_view.build(page), paper.build(page), rollout.build(page), cache.build(page),
                      changes.build(page),
                      corpus_heads.build_corpus(page, opener), corpus_heads.build_attribution(page)]
    return wire(page, tab, panels)
