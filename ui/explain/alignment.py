"""Explain panel "Word alignment" (section 3.2.3): each output token linked to the source token its encoder-decoder
attention weighs most, exportable as Pharaoh pairs. Reads the kept trace: no model call.
"""

from __future__ import annotations

import gradio as gr
from gradio.components.plot import PlotData

from model import TranslationTrace
from model.analysis import readouts
from model.text.special_tokens import SPECIAL_TOKENS
from visualizer.alignment import alignment_figure

from ..attention import HeadOpener
from ..common import Page, TabView, plot
from .panel import Panel, view

LEAD = (
    "each output token is linked to the source token its cross-attention weighs "
    "most; darker lines are stronger links, listed as Pharaoh pairs below."
)
ABOUT = """
*Word alignment from cross-attention* (section 3.2.3). For each output token, the encoder-decoder attention of
the step that *chose* it is averaged over all heads and the chosen layers, and the source token with the most
weight is linked to it. Weight on special tokens (the own model's language tag and `[EOS]`, OPUS-MT's `</s>`: a
frequent "nowhere" sink) does not count, and the output's end token gets no link.

*Pharaoh format* `i-j`: *i* = source position, *j* = target position, both 0-based and counting real tokens
only: special tokens (the language tag `<2xx>`, `[EOS]`, `</s>`) are not counted, so the first source word is 0.
*Subwords* counts tokens as shown; *words* counts whitespace-separated words (a subword without `▁` joins the word before it),
the convention of word-level aligners such as fast_align.
"""


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


def build(page: Page, opener: HeadOpener, tab: gr.Tab) -> list[TabView]:
    n_layers = page.checkpoint.config.n_decoder_layers
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

    def draw(trace, step, values) -> dict:
        links, pairs = alignment_views(trace, values[layers], values[level])
        return {figure: links, pharaoh: pairs}

    return [view([figure, pharaoh], draw, controls=[layers, level])]


PANEL = Panel(place=50, id="align", title="Word alignment", lead=LEAD, about=ABOUT, build=build)
