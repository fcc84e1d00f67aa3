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
from ..common import Page, TabView, markdown_text, plot
from .panel import Panel, view

LEAD = (
    "each output token is linked to the source token it reads most; darker lines are stronger links, also listed "
    "as position pairs below."
)
READING = "align-reading"  # the text that opens on how clear the links of this sentence are
CLEAR_LINK = 0.5  # a link that holds at least this share of its token's attention reads as clear
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


def reading(alignment: readouts.Alignment) -> str:
    """One plain sentence of how clear this sentence's links are (each output token's share of attention on the
    source token it is linked to, CLEAR_LINK or more: clear), the technical name after it."""
    n = len(alignment.links)
    clear = sum(float(alignment.strength[t]) >= CLEAR_LINK for _, t in alignment.links)
    s, t = min(alignment.links, key=lambda link: alignment.strength[link[1]], default=(0, 0))
    weakest = (
        f"the least sure, “{alignment.output_tokens[t]}”, gives only {alignment.strength[t]:.0%} to "
        f"“{alignment.source_tokens[s]}”"
    )
    if n == 0:
        said = "The translation has no token to link to the source"
    elif clear == n:
        said = f"All {n} linked output tokens read their source token clearly (at least half of their attention on it)"
    elif clear == 0:
        said = (
            f"None of the {n} linked output tokens reads one source token clearly (half of its attention or more): "
            f"each spreads its reading over several; {weakest}, so the links are best guesses"
        )
    else:
        said = (
            f"Of the {n} linked output tokens, {clear} read their source token clearly (at least half of their "
            f"attention on it); the others spread their reading over several; {weakest}, so their links are guesses"
        )
    return f"{said}. Below: the links as Pharaoh pairs (source-target positions), as word aligners write them."


def alignment_views(trace: TranslationTrace, layers: list[int] | None, level: str) -> tuple[PlotData, str, str]:
    """(links plot, Pharaoh text, reading) for 1-based decoder `layers` (none ticked: all) at 'subword'/'word'
    level."""
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
    return plot(figure, "alignment"), alignment.pharaoh(words=level == "word"), reading(alignment)


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
    said = gr.Markdown(elem_id=READING)
    figure = gr.Plot(elem_id="align-plot", show_label=False)
    pharaoh = gr.Textbox(
        label="Pharaoh alignment (source-target, 0-based)",
        interactive=False,
        buttons=["copy"],
        elem_id="align-pharaoh",
    )

    def draw(trace, step, values) -> dict:
        links, pairs, text = alignment_views(trace, values[layers], values[level])
        return {figure: links, pharaoh: pairs, said: markdown_text(text)}

    return [view([said, figure, pharaoh], draw, controls=[layers, level])]


PANEL = Panel(place=50, id="align", title="Word alignment", lead=LEAD, about=ABOUT, build=build, reading=READING)
