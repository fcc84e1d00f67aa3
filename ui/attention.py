"""The "Attention" tab: every head of every layer of the three attention kinds of Figure 1 (encoder
self-attention, masked decoder self-attention, encoder-decoder attention; sections 3.2.2 and 3.2.3),
and inside one head the scores, the mask and the softmax (section 3.2.1).

The kinds come from the trace's registry (`model.trace.ATTENTION_KINDS`); other tabs open a head
here through `HeadOpener` only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import gradio as gr
import numpy as np
from gradio.components.plot import PlotData

import visualizer
from model import Checkpoint, TranslationTrace
from model.trace import ATTENTION_KINDS, AttentionSlice

from .common import PRIVATE, Page, TabView, clamp, plot, step_index
from .text import ABOUT_ATTENTION, ABOUT_HEADS, ABOUT_PIPELINE

TAB_ID = "attention"


def attention_slice(trace: TranslationTrace, step: float | None, kind: str) -> AttentionSlice:
    """One attention kind as far as it exists at this step; an unknown kind is a message, not a traceback."""
    try:
        return trace.attention(kind, step_index(trace, step))
    except ValueError as error:
        raise gr.Error(str(error)) from None


def head_index(weights: np.ndarray, head: str) -> int:
    """'3' -> 2; 'all' and 'mean' -> head 1 (index 0); clamped to the heads there are."""
    return clamp(int(head) if str(head).isdigit() else 1, weights.shape[1])


def attention_view(trace: TranslationTrace, step: float | None, kind: str, layer: float | None,
                   head: str) -> PlotData:
    part = attention_slice(trace, step, kind)
    weights, queries, keys = part.weights, part.queries, part.keys
    highlight = None if kind == "encoder" else len(queries) - 1
    name = part.kind.label
    if head == "all":
        figure = visualizer.attention_grid(weights, queries, keys, highlight_query=highlight,
                                           title=f"{name}: every layer (rows) and head (columns)")
        return plot(figure, f"{kind}-attention-all-heads")
    l = clamp(layer, weights.shape[0])
    if head == "mean":
        figure = visualizer.attention_heatmap(weights[l].mean(axis=0), queries, keys, highlight_query=highlight,
                                              title=f"{name}, layer {l + 1}, mean of {weights.shape[1]} heads")
        return plot(figure, f"{kind}-attention-layer{l + 1}-mean")
    h = head_index(weights, head)
    figure = visualizer.attention_heatmap(weights[l, h], queries, keys, highlight_query=highlight,
                                          title=f"{name}, layer {l + 1}, head {h + 1}")
    return plot(figure, f"{kind}-attention-layer{l + 1}-head{h + 1}")


def pipeline_view(trace: TranslationTrace, step: float | None, kind: str, layer: float | None,
                  head: str) -> PlotData:
    part = attention_slice(trace, step, kind)
    l, h = clamp(layer, part.weights.shape[0]), head_index(part.weights, head)
    stand_in = " (head 1 stands in for all heads)" if not str(head).isdigit() else ""
    figure = visualizer.attention_pipeline(
        part.scores[l, h], np.asarray(part.mask), part.weights[l, h], part.queries, part.keys,
        title=f"{part.kind.label}, layer {l + 1}, head {h + 1}{stand_in}: scores → + mask → softmax",
    )
    return plot(figure, f"{kind}-pipeline-layer{l + 1}-head{h + 1}")


def layer_choices(checkpoint: Checkpoint | None, kind: str) -> list[tuple[str, int]]:
    count = ATTENTION_KINDS[kind].num_layers(checkpoint.config) if checkpoint else 1
    return [(str(number), number) for number in range(1, count + 1)]


@dataclass(frozen=True)
class HeadOpener:
    """How another tab shows one head here: show(trace, step, kind, layer, head) -> {component: value}."""

    outputs: tuple
    show: Callable[..., dict]


@dataclass(frozen=True)
class AttentionTab:
    view: TabView
    opener: HeadOpener


def build(page: Page) -> AttentionTab:
    n_heads = page.checkpoint.config.n_heads if page.checkpoint else 1
    with gr.Tab("Attention", id=TAB_ID) as tab:
        with gr.Row():
            kind = gr.Radio([(spec.label, name) for name, spec in ATTENTION_KINDS.items()], value="cross",
                            label="Attention", elem_id="attention-kind", scale=3)
            layer = gr.Radio(layer_choices(page.checkpoint, "cross"), value=1, label="Layer", elem_id="layer",
                             scale=1, info="not used by all heads")
        head = gr.Radio([("all heads", "all"), ("mean of heads", "mean")]
                        + [(f"head {h}", str(h)) for h in range(1, n_heads + 1)],
                        value="1", label="Head", elem_id="head")
        about_kind = gr.Markdown(ABOUT_ATTENTION["cross"])
        gr.Markdown(ABOUT_HEADS)
        attention_plot = gr.Plot(elem_id="attention-plot", show_label=False)
        # drawn only while open (issue 15): a step redraws one figure, not two
        with gr.Accordion("Inside one head: scores → + mask → softmax", open=False,
                          elem_id="pipeline-box") as pipeline_box:
            gr.Markdown(ABOUT_PIPELINE)
            pipeline_plot = gr.Plot(elem_id="pipeline-plot", show_label=False)
        pipeline_open = gr.State(False)
    page.track(tab, TAB_ID)
    pipeline_box.expand(lambda: True, None, pipeline_open, **PRIVATE)
    pipeline_box.collapse(lambda: False, None, pipeline_open, **PRIVATE)

    def figures(trace, step, kind_value, layer_value, head_value, with_pipeline: bool = False) -> dict:
        args = (trace, step, kind_value, layer_value, head_value)
        return {attention_plot: attention_view(*args), **({pipeline_plot: pipeline_view(*args)} if with_pipeline else {})}

    def on_kind(kind_value, layer_value):
        choices = layer_choices(page.checkpoint, kind_value)
        return {layer: gr.Radio(choices=choices, value=min(int(layer_value or 1), len(choices))),
                about_kind: ABOUT_ATTENTION[kind_value]}

    kind.input(on_kind, [kind, layer], [layer, about_kind], trigger_mode="always_last", **PRIVATE)

    def show_head(trace, step, kind_value, layer_value, head_value) -> dict:
        return {kind: kind_value, layer: gr.Radio(choices=layer_choices(page.checkpoint, kind_value), value=layer_value),
                head: head_value, about_kind: ABOUT_ATTENTION[kind_value],
                **figures(trace, step, kind_value, layer_value, head_value)}

    def render(trace, step, values) -> dict:
        return figures(trace, step, values[kind], values[layer], values[head], values[pipeline_open])

    view = TabView(TAB_ID, [attention_plot, pipeline_plot], render, controls=[kind, layer, head, pipeline_open])
    return AttentionTab(view, HeadOpener((kind, layer, head, about_kind, attention_plot, pipeline_plot), show_head))
