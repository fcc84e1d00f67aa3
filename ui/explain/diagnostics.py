"""Explain panel "Head diagnostics" (section 3.2.2): per layer and head, the entropy of the attention,
how diagonal it is, and how much goes to special tokens and punctuation; choosing a head opens it in
the Attention tab (through that tab's `HeadOpener`).
"""

from __future__ import annotations

import gradio as gr
import numpy as np
from gradio.components.plot import PlotData

from model import TranslationTrace
from model.analysis import readouts
from model.decoding.trace import ATTENTION_KINDS
from visualizer.explain import head_diagnostics_figure

from ..attention import TAB_ID as ATTENTION_TAB, HeadOpener
from ..common import KIND_CHOICES, PRIVATE, Page, TabView, plot
from .panel import Panel, view

LEAD = (
    "one cell per layer (row) and head (column) over your sentence: how "
    "spread out its attention is, how diagonal, and how much lands on special tokens."
)
ABOUT = """
Per layer and head (section 3.2.2), averaged over the sentence's queries: the *entropy* of the attention in bits
(low = focused), how *diagonal* it is (weight within one position of the query's own position; for
cross-attention, of the proportional source position), and how much goes to *special tokens* (the own model's
`[EOS]`, `[BOS]` and language tag; OPUS-MT's `</s>` and `<pad>`) and to *tokens ending in punctuation* (a
tokenizer may glue a final mark to its word, as in `▁Schnee.`, so the word counts too): heads often park
attention there when they have nothing to do. Choose a head to open it in the Attention tab.
"""

READING = "diag-reading"  # the text that opens on what the heads do with this sentence
RESTING = 0.5  # a head with at least this share of its attention on special tokens "rests" there

TITLES = {
    "entropy": "entropy (bits)",
    "diagonal": "diagonal (%)",
    "special": "to special tokens (%)",
    "punctuation": "to tokens ending in punctuation (%)",
}


def reading(stats: dict[str, np.ndarray], kind: str) -> str:
    """One plain sentence of what the heads of one attention kind do with this sentence, from their diagnostics
    (L, h): the most and least focused head, how many rest on special tokens; the technical numbers after it."""
    entropy, special = stats["entropy"], stats["special"]
    narrow, wide = (np.unravel_index(int(pick(entropy)), entropy.shape) for pick in (np.argmin, np.argmax))
    resting = int((special >= RESTING).sum())
    name = ATTENTION_KINDS[kind].label.split(" (")[0]

    def head(at) -> str:
        return f"layer {at[0] + 1}, head {at[1] + 1}"

    return (
        f"In {name.lower()} over your sentence, {head(narrow)} looks most narrowly (mostly at one token per query) "
        f"and {head(wide)} most widely, and {resting} of the {special.size} heads put at least half their attention "
        f"on special tokens such as the end mark, where a head rests when it has nothing to do. In detail: entropy "
        f"{entropy[narrow]:.2f} and {entropy[wide]:.2f} bits."
    )


def diagnostics_views(trace: TranslationTrace, kind: str) -> tuple[PlotData, gr.Dropdown, str]:
    """(layers x heads heatmaps, dropdown of heads to open, reading) for one attention kind."""
    stats = readouts.trace_head_diagnostics(trace, kind)
    figure = head_diagnostics_figure(
        stats, TITLES, title=f"{ATTENTION_KINDS[kind].label}: every head over this sentence"
    )
    n_layers, n_heads = stats["entropy"].shape
    choices = [
        (
            f"layer {l + 1}, head {h + 1}  ·  {stats['entropy'][l, h]:.1f} bits · diagonal "
            f"{100 * stats['diagonal'][l, h]:.0f}% · specials {100 * stats['special'][l, h]:.0f}%",
            f"{l + 1}-{h + 1}",
        )
        for l in range(n_layers)
        for h in range(n_heads)
    ]
    return plot(figure, f"{kind}-head-diagnostics"), gr.Dropdown(choices=choices, value=None), reading(stats, kind)


def parse_head(value: str | None) -> tuple[int, int]:
    """'2-3' (layer 2, head 3, 1-based) -> (2, 3)."""
    try:
        layer, head = (int(part) for part in str(value).split("-"))
    except ValueError:
        raise gr.Error(f"Not a head: {value!r}") from None
    return layer, head


def build(page: Page, opener: HeadOpener, tab: gr.Tab) -> list[TabView]:
    with gr.Row():
        kind = gr.Radio(
            KIND_CHOICES,
            value="encoder",
            label="Attention",
            elem_id="diag-kind",
        )
        head = gr.Dropdown(
            [],
            label="Open a head in the Attention tab",
            info="choose a layer and head: the Attention tab opens on it",
            elem_id="diag-head",
        )
    said = gr.Markdown(elem_id=READING)
    figure = gr.Plot(elem_id="diag-plot", show_label=False)

    def draw(trace, step, values) -> dict:
        heatmaps, heads, text = diagnostics_views(trace, values[kind])
        return {figure: heatmaps, head: heads, said: text}

    def on_open_head(trace, kind_value, value):  # sets the Attention tab's controls; the redraw draws the head
        if trace is None or not value:
            return gr.skip()
        layer, head_number = parse_head(value)
        return {
            page.tabs: gr.Tabs(selected=ATTENTION_TAB),
            page.tab: ATTENTION_TAB,
            **opener.show(kind_value, layer, str(head_number)),
        }

    page.listen(head.input, on_open_head, [page.trace, kind, head], [page.tabs, page.tab, *opener.outputs], **PRIVATE)
    return [view([said, figure, head], draw, controls=[kind])]


PANEL = Panel(
    place=60,
    id="diagnostics",
    title="Head diagnostics",
    lead=LEAD,
    about=ABOUT,
    build=build,
    reading=READING,
)
