"""The "Explain" tab: what other attention viewers do not show, in fourteen panels over the user's trace
("Attention Is All You Need"): switch heads off (3.2.2), branch at a step (3, greedy decoding), the
logit lens (3.1, 3.4), beam vs greedy (6.1), word alignment (3.2.3), head diagnostics (3.2.2) and
translation without positional encodings (3.5); and five more views: heads forming during training
(5), the paper's Figures 3-5 on this model (Appendix), attention rollout to the source (Abnar & Zuidema 2020),
the KV cache while stepping (3.1) and what changed from one step to the next (3.1, 3.4); and two more:
every head across a corpus (roles, importance and pruning, query-key maps) and attribution vs attention.

Each panel module builds and wires itself and returns its views (`TabView`s of the page's one redraw,
ui/redraw.py: what each follows, the step or only the trace, and its controls); this shell lays them out.
A panel's model runs (its buttons) go through the page's runner and keep or show their results; the results
are reset for a new trace by the panel's `cleared_view`.
"""

from __future__ import annotations

import gradio as gr

from ..attention import HeadOpener
from ..common import Page, TabView
from ..text import ABOUT_EXPLAIN
from . import (
    ablation,
    attribution,
    beam,
    branching,
    cache,
    changes,
    corpus_heads,
    diagnostics,
    film_view,
    no_pe,
    paper,
    readouts,
    rollout,
)
from .panel import TAB_ID


def build(page: Page, opener: HeadOpener) -> list[TabView]:
    """The tab and its panels (call inside the page's gr.Tabs) -> the views of its panels."""
    with gr.Tab("Explain", id=TAB_ID, elem_id="explain-tab") as tab:
        gr.Markdown(ABOUT_EXPLAIN)
        page.track(tab, TAB_ID)
        if page.checkpoint is None:
            gr.Markdown("No model is loaded, so there is nothing to explain.")
            return []
        # every panel in view; only gr.Tab children: Gradio places a tab's button by its index among
        # all the children, so a gr.State here would put one panel's button over the next one's
        with gr.Tabs(elem_id="explain-panels", overflow_behavior="wrap"):
            panels = [
                ablation.build(page),
                branching.build(page),
                readouts.build_lens(page),
                beam.build(page),
                readouts.build_alignment(page),
                diagnostics.build(page, opener),
                no_pe.build(page),
                film_view.build(page),
                paper.build(page),
                rollout.build(page),
                cache.build(page),
                changes.build(page),
                corpus_heads.build_corpus(page, opener),
                attribution.build(page),
            ]
    return [panel_view for views in panels for panel_view in views]
