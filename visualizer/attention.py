"""Attention weights as heatmaps: section 3.2 (scaled dot-product and multi-head attention).

Queries run down (first query at the top), keys across, weights on a fixed 0-1 scale so heads and
layers compare at a glance. ``attention_heatmap`` draws one head; the checks, the window and the title
placement here are shared with the other attention views: visualizer/head_grid.py (every layer and head at
once, section 3.2.2), visualizer/pipeline.py (the three steps inside one head, section 3.2.1) and
visualizer/lines.py (the head view as lines).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .checks import as_array, check_index, labels_for
from .heatmap import (
    MIN_HEIGHT_PX,
    PROJECTOR_FONT,
    ROTATED_SHARE,
    Window,
    cell_gap,
    full_window,
    heatmap_size,
    highlight_rows,
    label_px,
    narrow_colorbar,
    short_plot_bar,
    token_axes,
    token_heatmap,
)
from .theme import ATTENTION_SCALE, colorbar, corner_note, figure

COLORBAR_PX = 90  # room right of the last panel for its colour bar (the all-heads grid, the pipeline)
ROW_HIGH_PX = 26  # one head's heatmap: its rows at most this tall, and together at most ROWS_PX, so the title, the
ROWS_PX = 9 * ROW_HIGH_PX  # keys and 8 rows of a sentence of up to 16 tokens share a 1280x720 window with the bar
TITLE_PAD_PX = 40  # a title's distance below the figure's top: clear of Plotly's toolbar (22 px buttons from 2 px down)
TITLE_DROP_PX = 24  # what moving the title down adds to the top margin (and the height)
BOTTOM_UNDER_ROWS_PX = 16  # one head's heatmap: the bottom margin once the keys' labels stand above the rows
NOTE_ROOM_PX = 24  # below the rows, the room of a window note in projector type
TITLE_ROOM_PX = 70  # one head's heatmap: the title's room above the keys' labels (TITLE_PAD_PX and a line of type)
KEYS_PAD_PX = 10  # between the keys' labels and the rows, or the figure's top


def checked_weights(weights, query_tokens, key_tokens, ndim: int, highlight_query=None):
    """Weights of rank ``ndim`` whose last two axes match the tokens, their labels, the highlight."""
    array = as_array("weights", weights, ndim)
    queries = labels_for("query_tokens", query_tokens, array.shape[-2])
    keys = labels_for("key_tokens", key_tokens, array.shape[-1])
    return array, queries, keys, check_index("highlight_query", highlight_query, array.shape[-2])


def shown_window(window: Window | None, shape, queries, keys, highlight):
    """(window, shown queries, shown keys, highlight within them or None) of a possibly windowed matrix."""
    window = window or full_window(shape)
    rows, cols = window
    if not (0 <= rows.start < rows.stop <= shape[-2] and 0 <= cols.start < cols.stop <= shape[-1]):
        raise ValueError(f"window {rows.start}:{rows.stop} x {cols.start}:{cols.stop} is outside {shape[-2:]}")
    inside = highlight is not None and rows.start <= highlight < rows.stop
    return window, queries[rows], keys[cols], highlight - rows.start if inside else None


def below_toolbar(fig: go.Figure, grow: bool = True) -> go.Figure:
    """Move a title down, clear of Plotly's toolbar (which floats over the figure's top right); the figure
    grows by as much (``grow``: its top margin does not hold the title's room yet), so its plot area (sized for
    square cells) keeps its height."""
    if fig.layout.title.text:
        fig.layout.title.update(yref="container", y=1, yanchor="top", pad=dict(t=TITLE_PAD_PX))
        if grow:
            fig.layout.margin.t += TITLE_DROP_PX
            if fig.layout.height:
                fig.layout.height += TITLE_DROP_PX
    return fig


def keys_note() -> dict:
    """ "keys →" left of the keys' labels above the rows (one head's heatmap), where the rows' labels leave room."""
    return dict(corner_note("keys →", 12), x=0, y=1, xshift=-6, yshift=4)


def window_note(window: Window, shape, yshift: int = 0) -> list[dict]:
    """A corner note naming the shown positions when the window hides some ([] when all are shown)."""
    (rows, cols), (n_rows, n_cols) = window, shape[-2:]
    parts = [
        f"{what} {part.start}–{part.stop - 1} of 0–{n - 1}"
        for what, part, n in (("queries", rows, n_rows), ("keys", cols, n_cols))
        if part.stop - part.start < n
    ]
    return [dict(corner_note("showing " + ", ".join(parts)), yshift=yshift)] if parts else []


def under_rows(note: dict) -> dict:
    """A corner note moved under the plot's bottom-right corner: above it stand the keys' labels."""
    return {**note, "y": 0, "yanchor": "top", "yshift": -4}


def attention_heatmap(
    weights: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    *,
    title: str = "",
    highlight_query: int | None = None,
    window: Window | None = None,
) -> go.Figure:
    """One head's attention: rows are queries, columns keys, colour the softmax weight.

    Args:
        weights: (Tq, Tk) attention weights, each row a distribution over the keys.
        query_tokens: Tq tokens, one per row; key_tokens: Tk tokens, one per column.
        title: plain text (escaped).
        highlight_query: a row to outline, e.g. the decoding step being inspected.
        window: the rows and columns shown (long sentences); None = all. Labels keep their positions.

    Raises:
        ValueError: weights not 2-D, their shape does not match the token counts, or the window lies outside.
    """
    full, queries, keys, highlight = checked_weights(weights, query_tokens, key_tokens, 2, highlight_query)
    window, queries, keys, highlight = shown_window(window, full.shape, queries, keys, highlight)
    w = window.of(full)
    gap = cell_gap(max(w.shape))
    # rows of 30 px at most, ROWS_PX together: with the title and the keys they fit under the bar at 720 px
    size = heatmap_size(queries, keys, title=bool(title), high=ROW_HIGH_PX, rows_px=ROWS_PX)
    plot_px = size["height"] - size["margin"]["t"] - size["margin"]["b"]
    series = token_heatmap(
        w,
        queries,
        keys,
        zmin=0,
        zmax=1,
        colorscale=ATTENTION_SCALE,
        colorbar=colorbar("weight", **short_plot_bar(plot_px)),
        xgap=gap,
        ygap=gap,
        first_row=window.rows.start,
        first_col=window.cols.start,
    )
    # the keys' labels above the rows, under the title: on a 1280x720 projector the title, the keys and the first
    # rows stand in the first screen together with the sentence and the player bar (below the rows they fell under
    # the fold); their room (at projector size, ui/js/figures.js) moves from the bottom margin to the top one
    margin, rows_px = size["margin"], size["height"] - size["margin"]["t"] - size["margin"]["b"]
    keys_px = ROTATED_SHARE * label_px(keys, PROJECTOR_FONT) + KEYS_PAD_PX
    margin["t"] = int((TITLE_ROOM_PX if title else KEYS_PAD_PX) + keys_px)
    notes = [under_rows(note) for note in window_note(window, full.shape)]  # which rows and keys a window shows
    under = BOTTOM_UNDER_ROWS_PX + (NOTE_ROOM_PX if notes else 0)
    margin["b"] = max(under, MIN_HEIGHT_PX - margin["t"] - rows_px)  # the rows keep their height
    size["height"] = margin["t"] + margin["b"] + rows_px
    # the columns grow to fill the box (a projector: big cells; the width is a minimum, ui/js/figures.js)
    xaxis, yaxis = token_axes(queries, keys, row_title="query", square=False)
    xaxis.update(side="top")
    fig = below_toolbar(
        figure(
            [series],
            dict(
                xaxis=xaxis,
                yaxis=yaxis,
                shapes=highlight_rows(highlight, len(keys)),
                annotations=[keys_note(), *notes],
                **size,
            ),
            title,
        ),
        grow=False,
    )
    margin = fig.layout.margin
    fig.layout.meta = dict(narrow=narrow_colorbar(fig.layout.height, margin.b, margin.l))
    return fig
