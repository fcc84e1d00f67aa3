"""Explain panels that read more out of the trace, no model run: the logit lens (sections 3.1 and 3.4,
each decoder layer through the shared projection) and word alignment from encoder-decoder attention
(section 3.2.3), exportable as Pharaoh pairs.
"""

from __future__ import annotations

import gradio as gr
from gradio.components.plot import PlotData

from model import TranslationTrace
from model.analysis import readouts
from model.text.tokenizer import SPECIAL_TOKENS
from visualizer import explain as figures
from visualizer.alignment import alignment_figure

from ..common import Page, TabView, plot, step_index
from ..text import EXPLAIN_ALIGNMENT, EXPLAIN_ALIGNMENT_LEAD, EXPLAIN_LENS, EXPLAIN_LENS_LEAD
from .panel import lead, more_about, view


def lens_view(trace: TranslationTrace, step: float | None) -> PlotData:
    t = step_index(trace, step)
    figure = figures.logit_lens_figure(
        trace.logit_lens_tokens[t],
        trace.logit_lens_probs[t],
        trace.output_tokens[t],
        title=f"Step {t + 1}: top tokens read from each decoder layer",
    )
    return plot(figure, f"logit-lens-step-{t + 1}")


def alignment_views(trace: TranslationTrace, layers: list[int] | None, level: str) -> tuple[PlotData, str]:
    """(links plot, Pharaoh text) for 1-based decoder `layers` (none ticked: all) at 'subword'/'word' level."""
    n_layers = trace.cross_attention.shape[0]
    chosen = sorted({int(layer) - 1 for layer in layers or [] if 1 <= int(layer) <= n_layers}) or list(range(n_layers))
    alignment = readouts.word_alignment(trace.cross_attention, trace.source_tokens, trace.output_tokens, chosen)
    strengths = [float(alignment.strength[t]) for _, t in alignment.links]
    names = ", ".join(str(layer + 1) for layer in chosen)
    figure = alignment_figure(
        trace.source_tokens,
        trace.output_tokens,
        alignment.links,
        strengths,
        special_tokens=SPECIAL_TOKENS,
        input_tokens=trace.target_tokens,
        title=f"Cross-attention alignment, heads averaged, decoder layer(s) {names}",
    )
    return plot(figure, "alignment"), alignment.pharaoh(words=level == "word")


def build_lens(page: Page) -> list[TabView]:
    with gr.Tab("Logit lens", id="lens"):
        lead(EXPLAIN_LENS_LEAD)
        lens = gr.Plot(elem_id="lens-plot", show_label=False)
        more_about(EXPLAIN_LENS)
    return [view([lens], lambda trace, step, values: {lens: lens_view(trace, step)}, follows_step=True)]


def build_alignment(page: Page) -> list[TabView]:
    n_layers = page.checkpoint.config.n_decoder_layers
    with gr.Tab("Word alignment", id="align"):
        lead(EXPLAIN_ALIGNMENT_LEAD)
        with gr.Row():
            layers = gr.CheckboxGroup(
                [(str(l), l) for l in range(1, n_layers + 1)],
                value=list(range(1, n_layers + 1)),
                label="Decoder layers to average",
                elem_id="align-layers",
            )
            level = gr.Radio(
                [("subwords", "subword"), ("words", "word")],
                value="subword",
                label="Pharaoh indices count",
                elem_id="align-level",
            )
        figure = gr.Plot(elem_id="align-plot", show_label=False)
        pharaoh = gr.Textbox(
            label="Pharaoh alignment (source-target, 0-based)",
            interactive=False,
            buttons=["copy"],
            elem_id="align-pharaoh",
        )
        more_about(EXPLAIN_ALIGNMENT)

    def draw(trace, step, values) -> dict:
        links, pairs = alignment_views(trace, values[layers], values[level])
        return {figure: links, pharaoh: pairs}

    return [view([figure, pharaoh], draw, controls=[layers, level])]
