"""Explain panel "Flow to the source": attention rollout (Abnar & Zuidema 2020) through the encoder and the
decoder's cross-attention (section 3.2.3), beside raw cross-attention. Reads the kept trace: no model call.
"""

from __future__ import annotations

import gradio as gr
from gradio.components.plot import PlotData

from model import TranslationTrace
from model.analysis.rollout import SourceFlow, trace_source_flow
from visualizer.rollout import rollout_figure

from ..attention import HeadOpener
from ..common import Page, TabView, plot, step_index
from .panel import Panel, view

LEAD = (
    "for each output token (row), which source tokens it draws on once the encoder's mixing "
    "is followed down (left), beside raw cross-attention (right); darker = more."
)
ABOUT = f"""
Raw cross-attention (section 3.2.3) says where one decoder layer reads in the encoder's
output, but every encoder position has already mixed the whole sentence. *Attention rollout* (Abnar & Zuidema
2020, "Quantifying Attention Flow in Transformers") follows the mixing down the stack to the source tokens.
Left: for each output token (row), the share of each source token (rows sum to 1); right: the last decoder
layer's cross-attention, averaged over heads. The outlined row is the current step.

*Method.* {SourceFlow.METHOD} The decoder's masked self-attention mixes target positions the same way, and
half of each decoder layer's state is replaced through cross-attention by encoder memory; the source part of
each row, renormalised, is shown. Feed-forward layers and layer norms act per position and are left out.
"""


def rollout_view(trace: TranslationTrace, step: float | None) -> PlotData:
    """Rollout to the source beside the last layer's mean cross-attention, the current step outlined."""
    flow = trace_source_flow(trace)  # (T, S) and friends: a few small matrix products, cheap per step
    t = step_index(trace, step)
    figure = rollout_figure(
        flow.source_distribution,
        trace.cross_attention[-1].mean(0),  # (h, T, S) -> (T, S)
        trace.source_tokens,
        trace.output_tokens,
        highlight_step=t,
        title=f"Where each output token comes from (step {t + 1} outlined)",
    )
    return plot(figure, "rollout-to-source")


def build(page: Page, opener: HeadOpener, tab: gr.Tab) -> list[TabView]:
    figure = gr.Plot(elem_id="rollout-plot", show_label=False)
    return [view([figure], lambda trace, step, values: {figure: rollout_view(trace, step)}, follows_step=True)]


PANEL = Panel(
    place=100,
    id="rollout",
    title="Flow to the source",
    lead=LEAD,
    about=ABOUT,
    build=build,
)
