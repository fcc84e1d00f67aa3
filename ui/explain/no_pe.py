"""Explain panel "Without positions" (section 3.5): decode again with the positional encodings
removed, compare the original output's probabilities, and one encoder head with and without them.
"""

from __future__ import annotations

import gradio as gr
from gradio.components.plot import PlotData

from model import TranslationTrace
from model.decoding.ablation import Ablation
from visualizer.explain import attention_comparison

from ..attention import HeadOpener
from ..common import Page, TabView, clamp, plot
from .panel import (
    MODEL_RUN,
    Intervention,
    Panel,
    kept_for,
    sentence_matches,
    cleared_view,
    intervene,
    intervention_views,
    require,
    show_result,
    view,
)

LEAD = (
    "translates your sentence again without telling the model where each token stands (its positional encodings); "
    "the bars show how each original token's probability changes."
)
ABOUT = """
*Without positional encodings* (section 3.5). Attention itself ignores order: without the sinusoids added to
the embeddings, the encoder sees a bag of tokens (the same token gets the same attention row wherever it
stands) and the decoder does not know how far it has got. The sentence is decoded again with the encodings
removed from encoder and decoder, and the original output is teacher-forced to compare per-step
probabilities; below the bars, one encoder head with and without them.
"""

HEADING = "Without positional encodings"
DOING = "Without the word positions"  # what the run did, in plain words (the result's opening)
RUN, READING = "nope-run", "nope-result"  # the button, and the result that opens on what it changed


def positions_views(
    trace: TranslationTrace, result: Intervention | None, layer: float | None, head: float | None
) -> PlotData | None:
    """Encoder self-attention of one head with and without positional encodings."""
    if result is None:
        return None
    weights = trace.encoder_attention  # (L_enc, h, S, S)
    l, h = clamp(layer, weights.shape[0]), clamp(head, weights.shape[1])
    figure = attention_comparison(
        weights[l, h],
        result.trace.encoder_attention[l, h],
        trace.source_tokens,
        trace.source_tokens,
        names=("with positional encodings", "without"),
        title=f"Encoder self-attention, layer {l + 1}, head {h + 1}",
    )
    return plot(figure, f"encoder-layer{l + 1}-head{h + 1}-with-without-pe")


def build(page: Page, opener: HeadOpener, tab: gr.Tab) -> list[TabView]:
    checkpoint, config = page.checkpoint, page.checkpoint.config
    with gr.Row():
        run = gr.Button(
            "Translate without positional encodings", variant="primary", elem_id=RUN, scale=0, min_width=340
        )
    kept = gr.State(None)  # this user's run: {"source_ids", "output_ids", "result" (Intervention)}
    result = gr.HTML(elem_id=READING)
    probabilities = gr.Plot(elem_id="nope-plot", show_label=False)
    with gr.Row():
        layer = gr.Radio(
            list(range(1, config.n_encoder_layers + 1)), value=1, label="Encoder layer", elem_id="nope-layer"
        )
        head = gr.Radio(list(range(1, config.n_heads + 1)), value=1, label="Head", elem_id="nope-head")
    attention = gr.Plot(elem_id="nope-attention", show_label=False)
    show_result(run, probabilities)

    def on_run(trace):  # the run kept: a new `kept` redraws the view
        require(checkpoint, trace)
        return {kept: kept_for(trace, result=intervene(page.runner, trace, Ablation(positional_encoding=False)))}

    page.listen(run.click, on_run, [page.trace], [kept], **MODEL_RUN)

    def draw_run(trace, step, values) -> dict:
        if not sentence_matches(trace, values[kept]):
            return {result: "", probabilities: None}
        html, figure = intervention_views(trace, values[kept]["result"], HEADING, "no-pe-probabilities", DOING)
        return {result: html, probabilities: figure}

    def draw_head(trace, step, values) -> dict:
        run_result = values[kept]["result"] if sentence_matches(trace, values[kept]) else None
        return {attention: positions_views(trace, run_result, values[layer], values[head])}

    return [
        cleared_view({kept: None}),
        view([result, probabilities], draw_run, controls=[kept]),
        view([attention], draw_head, controls=[kept, layer, head]),
    ]


PANEL = Panel(
    place=70,
    id="positions",
    title="Without positions",
    lead=LEAD,
    about=ABOUT,
    build=build,
    reading=READING,
    run=RUN,
)
