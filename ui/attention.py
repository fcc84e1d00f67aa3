"""The "Attention" tab: every head of every layer of the three attention kinds of Figure 1 (encoder
self-attention, masked decoder self-attention, encoder-decoder attention; sections 3.2.2 and 3.2.3),
and inside one head the scores, the mask and the softmax (section 3.2.1).

The kinds come from the trace's registry (`model.decoding.trace.ATTENTION_KINDS`); other tabs open a head
here through `HeadOpener` only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import gradio as gr
import numpy as np
from gradio.components.plot import PlotData

import visualizer
from model import Checkpoint, TranslationTrace
from model.decoding.trace import ATTENTION_KINDS, AttentionSlice
from visualizer.head_grid import GRID_COLUMNS
from visualizer.heatmap import WINDOW_HALF, step_window
from visualizer.lines import attention_lines
from visualizer.tokens import decoder_rows

from .common import KIND_CHOICES, Page, TabView, clamp, plot, set_initial, step_index
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


def query_labels(trace: TranslationTrace, part: AttentionSlice) -> list[str]:
    """Row labels of an attention slice: encoder rows are source tokens, decoder rows "input → predicted"."""
    return part.queries if part.kind.name == "encoder" else decoder_rows(part.queries, trace.output_tokens)


def view_window(trace: TranslationTrace, step: float | None, part: AttentionSlice, show_all: bool):
    """None (everything) or the window visualizer.heatmap.step_window decides: around the decoder's query at this
    step, or for encoder self-attention around the source token cross-attention reads most at this step."""
    if show_all:
        return None
    if part.kind.name != "encoder":
        return step_window(part.weights, len(part.queries) - 1)
    return step_window(part.weights, reads=trace.cross_attention[..., step_index(trace, step), :])


def attention_view(
    trace: TranslationTrace,
    step: float | None,
    kind: str,
    layer: float | None,
    head: str,
    show_all: bool = False,
    named: tuple[Sequence[int], Sequence[int]] = ((), ()),
) -> PlotData:
    """One head, the mean of a layer's heads, or all of them (head "all": the grid, whose labels always name the
    step's query and the `named` (query rows, key columns), positions in the whole sentence)."""
    part = attention_slice(trace, step, kind)
    weights, queries, keys = part.weights, query_labels(trace, part), part.keys
    highlight = None if kind == "encoder" else len(queries) - 1
    name, shown = part.kind.label, dict(window=view_window(trace, step, part, show_all), highlight_query=highlight)
    l = clamp(layer, weights.shape[0])
    if head == "all":  # one layer at a time: its heads as small multiples that fit the figure's box
        own = [highlight] if kind == "decoder_self" else []  # the step's query is the last key it reads too
        figure = visualizer.attention_grid(
            weights,
            queries,
            keys,
            **shown,
            layer=l,
            columns=GRID_COLUMNS,
            title=f"{name}, layer {l + 1}: every head",
            named_queries=named[0],
            named_keys=[*own, *named[1]],
        )
        return plot(figure, f"{kind}-attention-layer{l + 1}-all-heads")
    if head == "mean":
        figure = visualizer.attention_heatmap(
            weights[l].mean(axis=0),
            queries,
            keys,
            **shown,
            title=f"{name}, layer {l + 1}, mean of {weights.shape[1]} heads",
        )
        return plot(figure, f"{kind}-attention-layer{l + 1}-mean")
    h = head_index(weights, head)
    figure = visualizer.attention_heatmap(
        weights[l, h], queries, keys, **shown, title=f"{name}, layer {l + 1}, head {h + 1}"
    )
    return plot(figure, f"{kind}-attention-layer{l + 1}-head{h + 1}")


VIEWS = [("heatmap", "heatmap"), ("lines", "lines")]  # how the attention figure draws the weights


def token_choices(trace: TranslationTrace | None, kind: str) -> list[tuple[str, str]]:
    """ "every token", then each query and key of `kind` in the whole sentence ("query #3 ▁it" -> "query/3")."""
    choices = [("every token", "")]
    if trace is None:
        return choices
    part = trace.attention(kind)
    for side, tokens in (("query", query_labels(trace, part)), ("key", part.keys)):
        choices += [(f"{side} #{i} {token}", f"{side}/{i}") for i, token in enumerate(tokens)]
    return choices


def selected_token(choice: str | None, part: AttentionSlice) -> tuple[str, int] | None:
    """ "query/3" -> ("query", 3) while that token exists at this step; None for every token or a later one."""
    side, _, index = str(choice or "").partition("/")
    if side not in ("query", "key") or not index.isdigit():
        return None
    count = len(part.queries) if side == "query" else len(part.keys)
    return (side, int(index)) if int(index) < count else None


def lines_view(
    trace: TranslationTrace,
    step: float | None,
    kind: str,
    layer: float | None,
    head: str,
    show_all: bool = False,
    token: str | None = None,
) -> PlotData:
    """One layer's heads as lines between query and key tokens (every head, their mean, or one head)."""
    part = attention_slice(trace, step, kind)
    l = clamp(layer, part.weights.shape[0])
    weights, heads, names, which = part.weights[l], None, None, "every head"
    if head == "mean":
        weights, names, which = (
            weights.mean(axis=0, keepdims=True),
            [f"mean of {weights.shape[0]} heads"],
            "mean of heads",
        )
    elif head != "all":
        heads = [head_index(part.weights, head)]
        which = f"head {heads[0] + 1}"
    figure = attention_lines(
        weights,
        query_labels(trace, part),
        part.keys,
        heads=heads,
        head_names=names,
        selected=selected_token(token, part),
        window=view_window(trace, step, part, show_all),
        highlight_query=None if kind == "encoder" else len(part.queries) - 1,
        title=f"{part.kind.label}, layer {l + 1}, {which}",
    )
    return plot(figure, f"{kind}-lines-layer{l + 1}-{which.replace(' ', '-')}")


def pipeline_view(
    trace: TranslationTrace, step: float | None, kind: str, layer: float | None, head: str, show_all: bool = False
) -> PlotData:
    part = attention_slice(trace, step, kind)
    l, h = clamp(layer, part.weights.shape[0]), head_index(part.weights, head)
    stand_in = " (head 1 stands in for all heads)" if not str(head).isdigit() else ""
    figure = visualizer.attention_pipeline(
        part.scores[l, h],
        np.asarray(part.mask),
        part.weights[l, h],
        query_labels(trace, part),
        part.keys,
        window=view_window(trace, step, part, show_all),
        title=f"{part.kind.label}, layer {l + 1}, head {h + 1}{stand_in}: scores → + mask → softmax",
    )
    return plot(figure, f"{kind}-pipeline-layer{l + 1}-head{h + 1}")


def layer_choices(checkpoint: Checkpoint | None, kind: str) -> list[tuple[str, int]]:
    count = ATTENTION_KINDS[kind].num_layers(checkpoint.config) if checkpoint else 1
    return [(str(number), number) for number in range(1, count + 1)]


def head_choices(checkpoint: Checkpoint | None) -> list[tuple[str, str]]:
    """The Head radio's choices: every head of a layer, their mean, or one head ("1".."h")."""
    n_heads = checkpoint.config.n_heads if checkpoint else 1
    return [("all heads", "all"), ("mean of heads", "mean")] + [(f"head {h}", str(h)) for h in range(1, n_heads + 1)]


def grid_choices(checkpoint: Checkpoint | None, kind: str) -> list[tuple[str, str]]:
    """ "layer l · head h" for every cell of the all-heads grid (gr.Plot has no click event in Gradio 6)."""
    n_heads = checkpoint.config.n_heads if checkpoint else 1
    return [
        (f"layer {layer} · head {h}", f"{layer}/{h}")
        for _, layer in layer_choices(checkpoint, kind)
        for h in range(1, n_heads + 1)
    ]


def opened_head(choice: str | None) -> tuple[int, str] | None:
    """A grid cell "l/h" chosen -> (layer, head) for the Layer and Head radios; None for no choice."""
    if not choice or "/" not in str(choice):
        return None
    layer_value, head_value = str(choice).split("/", 1)
    return int(layer_value), head_value


@dataclass(frozen=True)
class HeadOpener:
    """How another tab shows one head here: show(kind, layer, head) -> {component: value} of this tab's
    controls (with the open tab set to TAB_ID, the page's redraw then draws the head)."""

    outputs: tuple
    show: Callable[..., dict]


@dataclass(frozen=True)
class AttentionTab:
    view: TabView
    opener: HeadOpener
    pipeline: tuple = ()  # (the "inside one head" accordion, its open-state): the tour opens it
    prefill: Callable[..., None] = lambda trace, path, view: None  # (trace, path, view): the page arrives showing it


@dataclass(frozen=True)
class AttentionControls:
    """The controls beside the attention figure, and the prose about the chosen kind."""

    kind: gr.Radio
    layer: gr.Radio
    head: gr.Radio
    view_as: gr.Radio
    keep_token: gr.Dropdown
    open_head: gr.Dropdown
    show_all: gr.Checkbox
    about_kind: gr.Markdown


def side_controls(page: Page) -> AttentionControls:
    """The side column's controls (kind, layer, head, how to draw, one token's lines, a head of the grid to open,
    every token) and the "About this view" prose, made in the open Gradio column."""
    kind = gr.Radio(KIND_CHOICES, value="cross", label="Attention", elem_id="attention-kind")
    layer = gr.Radio(layer_choices(page.checkpoint, "cross"), value=1, label="Layer", elem_id="layer")
    head = gr.Radio(
        head_choices(page.checkpoint),
        value="1",
        label="Head",
        elem_id="head",
    )
    view_as = gr.Radio(
        VIEWS,
        value="heatmap",
        label="Draw as",
        elem_id="attention-view",
        info="lines: one layer's heads, a line per query and key",
    )
    keep_token = gr.Dropdown(
        token_choices(None, "cross"),
        value="",
        label="Keep one token's lines",
        elem_id="lines-token",
        visible=False,
    )
    open_head = gr.Dropdown(
        grid_choices(page.checkpoint, "cross"),
        value=None,
        label="Open a head of the grid",
        elem_id="grid-open-head",
    )
    show_all = gr.Checkbox(
        False,
        label=f"Show all tokens (long sentences show {2 * WINDOW_HALF + 1} around the current query)",
        elem_id="attention-window-all",
    )
    with gr.Accordion("About this view", open=True, elem_classes="view-about"):
        about_kind = gr.Markdown(ABOUT_ATTENTION["cross"])
        gr.Markdown(ABOUT_HEADS)
    return AttentionControls(kind, layer, head, view_as, keep_token, open_head, show_all, about_kind)


def wire_controls(page: Page, c: AttentionControls) -> None:
    """The controls' actions and followers: the token list follows the sentence and the kind (shown while drawing
    lines); a new kind resets the layer choices, the grid's heads and the prose; a grid cell opened sets the layer
    and head radios. Each action's answer draws that head too (ui/redraw.py)."""
    page.follow(
        [page.trace, c.kind],
        [c.keep_token],
        lambda values: {c.keep_token: gr.update(choices=token_choices(values[page.trace], values[c.kind]), value="")},
    )
    page.follow(
        [c.view_as], [c.keep_token], lambda values: {c.keep_token: gr.update(visible=values[c.view_as] == "lines")}
    )

    def on_kind(kind_value, layer_value):
        choices = layer_choices(page.checkpoint, kind_value)
        return {
            c.layer: gr.Radio(choices=choices, value=min(int(layer_value or 1), len(choices))),
            c.open_head: gr.Dropdown(choices=grid_choices(page.checkpoint, kind_value), value=None),
            c.about_kind: ABOUT_ATTENTION[kind_value],
        }

    page.listen(c.kind.input, on_kind, [c.kind, c.layer], [c.layer, c.open_head, c.about_kind])

    def on_open(choice) -> dict:  # the radios change, and that head is drawn
        cell = opened_head(choice)
        return gr.skip() if cell is None else {c.layer: cell[0], c.head: cell[1]}  # dismissed: nothing changes

    page.listen(c.open_head.input, on_open, [c.open_head], [c.layer, c.head])


def build(page: Page) -> AttentionTab:
    with gr.Tab("Attention", id=TAB_ID) as tab:
        # controls and prose beside the figure (at 1280x720 the player bar, the controls and the figure
        # fit one screen); on a narrow screen the columns stack, controls first
        with gr.Row(equal_height=False, elem_classes="view-row"):
            with gr.Column(scale=1, min_width=280, elem_classes="view-side"):
                c = side_controls(page)
            with gr.Column(scale=3, min_width=340, elem_classes="view-main"):
                attention_plot = gr.Plot(elem_id="attention-plot", show_label=False)
                # drawn only while open: a step redraws one figure, not two
                with gr.Accordion(
                    "Inside one head: scores → + mask → softmax", open=False, elem_id="pipeline-box"
                ) as pipeline_box:
                    gr.Markdown(ABOUT_PIPELINE)
                    pipeline_plot = gr.Plot(elem_id="pipeline-plot", show_label=False)
        pipeline_open = gr.State(False)
    page.track(tab, TAB_ID)
    page.listen(pipeline_box.expand, lambda: {pipeline_open: True}, outputs=[pipeline_open])
    page.listen(pipeline_box.collapse, lambda: {pipeline_open: False}, outputs=[pipeline_open])
    wire_controls(page, c)

    def show_head(kind_value, layer_value, head_value) -> dict:
        return {
            c.kind: kind_value,
            c.layer: gr.Radio(choices=layer_choices(page.checkpoint, kind_value), value=layer_value),
            c.head: head_value,
            c.about_kind: ABOUT_ATTENTION[kind_value],
        }

    def render(trace, step, values) -> dict:
        args = (trace, step, values[c.kind], values[c.layer], values[c.head], bool(values.get(c.show_all, False)))
        if values.get(c.view_as, "heatmap") == "lines":
            main = lines_view(*args, values.get(c.keep_token))
        else:
            main = attention_view(*args)
        with_pipeline = values.get(pipeline_open, False)
        return {attention_plot: main, **({pipeline_plot: pipeline_view(*args)} if with_pipeline else {})}

    view = TabView(
        TAB_ID,
        [attention_plot, pipeline_plot],
        render,
        controls=[c.kind, c.layer, c.head, c.show_all, pipeline_open, c.view_as, c.keep_token],
    )
    opener = HeadOpener((c.kind, c.layer, c.head, c.about_kind), show_head)

    def prefill(trace: TranslationTrace, path: str, shown) -> None:  # ui/share.py's first view (a heatmap)
        set_initial(c.kind, shown.kind)
        set_initial(c.layer, shown.layer, choices=layer_choices(page.checkpoint, shown.kind))
        set_initial(c.head, shown.head)
        set_initial(c.about_kind, ABOUT_ATTENTION[shown.kind])
        set_initial(c.keep_token, choices=token_choices(trace, shown.kind))
        set_initial(attention_plot, attention_view(trace, shown.step, shown.kind, shown.layer, shown.head))

    return AttentionTab(view, opener, (pipeline_box, pipeline_open), prefill)
