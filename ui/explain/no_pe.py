"""Explain panel "Without positions" (section 3.5): decode again with the positional encodings
removed, compare the original output's probabilities, and one encoder head with and without them.
"""

from __future__ import annotations

import gradio as gr
from gradio.components.plot import PlotData

from model import TranslationTrace
from model.decoding.ablation import Ablation
from visualizer import explain as figures

from ..common import Page, TabView, clamp, plot
from ..text import EXPLAIN_POSITIONS, EXPLAIN_POSITIONS_LEAD
from .panel import (
    MODEL_RUN,
    Intervention,
    cleared_view,
    intervene,
    intervention_views,
    lead,
    more_about,
    require,
    show_result,
    view,
)

HEADING = "Without positional encodings"


def positions_views(
    trace: TranslationTrace, result: Intervention | None, layer: float | None, head: float | None
) -> PlotData | None:
    """Encoder self-attention of one head with and without positional encodings."""
    if result is None:
        return None
    weights = trace.encoder_attention  # (L_enc, h, S, S)
    l, h = clamp(layer, weights.shape[0]), clamp(head, weights.shape[1])
    figure = figures.attention_comparison(
        weights[l, h],
        result.trace.encoder_attention[l, h],
        trace.source_tokens,
        trace.source_tokens,
        names=("with positional encodings", "without"),
        title=f"Encoder self-attention, layer {l + 1}, head {h + 1}",
    )
    return plot(figure, f"encoder-layer{l + 1}-head{h + 1}-with-without-pe")


def build(page: Page) -> list[TabView]:
    checkpoint, config = page.checkpoint, page.checkpoint.config
    with gr.Tab("Without positions", id="positions"):
        lead(EXPLAIN_POSITIONS_LEAD)
        with gr.Row():
            run = gr.Button(
                "Translate without positional encodings", variant="primary", elem_id="nope-run", scale=0, min_width=340
            )
        result_state = gr.State(None)  # this user's Intervention without positional encodings
        result = gr.HTML(elem_id="nope-result")
        probabilities = gr.Plot(elem_id="nope-plot", show_label=False)
        with gr.Row():
            layer = gr.Radio(
                list(range(1, config.n_encoder_layers + 1)), value=1, label="Encoder layer", elem_id="nope-layer"
            )
            head = gr.Radio(list(range(1, config.n_heads + 1)), value=1, label="Head", elem_id="nope-head")
        attention = gr.Plot(elem_id="nope-attention", show_label=False)
        more_about(EXPLAIN_POSITIONS)
    show_result(run, probabilities)

    def on_run(trace):  # the run's result: a new result_state redraws the head below
        require(checkpoint, trace)
        run_result = intervene(page.runner, trace, Ablation(positional_encoding=False))
        html, figure = intervention_views(trace, run_result, HEADING, "no-pe-probabilities")
        return {result_state: run_result, result: html, probabilities: figure}

    run.click(on_run, [page.trace], [result_state, result, probabilities], **MODEL_RUN)

    def draw(trace, step, values) -> dict:
        return {attention: positions_views(trace, values[result_state], values[layer], values[head])}

    return [
        cleared_view({result: "", probabilities: None, result_state: None}),
        view([attention], draw, controls=[result_state, layer, head]),
    ]
