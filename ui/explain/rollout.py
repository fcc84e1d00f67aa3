"""Explain panel "Flow to the source": attention rollout (Abnar & Zuidema 2020) through the encoder and the
decoder's cross-attention (section 3.2.3), beside raw cross-attention. Reads the kept trace: no model call.
"""

from __future__ import annotations

import gradio as gr
import numpy as np
from gradio.components.plot import PlotData

from model import TranslationTrace
from model.analysis.rollout import SourceFlow, trace_source_flow
from visualizer.rollout import rollout_figure

from ..attention import HeadOpener
from ..common import Page, TabView, markdown_text, plot, step_index
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


READING = "rollout-reading"  # the text that opens on where the step's token comes from


def reading(trace: TranslationTrace, flow: SourceFlow, step: float | None) -> str:
    """One plain sentence: the source token the step's output token draws on most once the encoder's mixing is
    followed down, and whether the last layer's cross-attention alone points to the same one; the names after it."""
    t = step_index(trace, step)
    followed = int(np.argmax(flow.source_distribution[t]))
    raw = int(np.argmax(trace.cross_attention[-1, :, t].mean(0)))  # (h, S) -> (S,)
    source, output = trace.source_tokens, trace.output_tokens[t]
    alone = "to the same token" if raw == followed else f"elsewhere, to “{source[raw]}”"
    return (
        f"At step {t + 1}, “{output}” draws most on “{source[followed]}” ({flow.source_distribution[t, followed]:.0%}) "
        f"once the encoder's mixing is followed down, and the last layer's attention alone points {alone}. Left: "
        f"attention rollout; right: raw cross-attention."
    )


def rollout_view(trace: TranslationTrace, step: float | None, flow: SourceFlow | None = None) -> PlotData:
    """Rollout to the source (`flow`, computed here when not given) beside the last layer's mean cross-attention,
    the current step outlined."""
    flow = flow or trace_source_flow(trace)  # (T, S) and friends: a few small matrix products, cheap per step
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
    said = gr.Markdown(elem_id=READING)
    figure = gr.Plot(elem_id="rollout-plot", show_label=False)

    def draw(trace, step, values) -> dict:
        flow = trace_source_flow(trace)
        return {said: markdown_text(reading(trace, flow, step)), figure: rollout_view(trace, step, flow)}

    return [view([said, figure], draw, follows_step=True)]


PANEL = Panel(
    place=100,
    id="rollout",
    title="Flow to the source",
    lead=LEAD,
    about=ABOUT,
    build=build,
    reading=READING,
)
