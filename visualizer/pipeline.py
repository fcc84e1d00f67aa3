"""Inside one attention head (section 3.2.1): the scaled dot products QKᵀ/√d_k, the same with the mask (masked
cells grey, −∞ before the softmax) and the softmax weights, side by side for short sentences and one above the
other for longer ones.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .attention import COLORBAR_PX, below_toolbar, checked_weights, shown_window, window_note
from .checks import as_array
from .grid import Refs, axis_name, on_axes, set_axes, subplot_grid
from .heatmap import (
    MIN_COLUMN_PX,
    Window,
    cell_px,
    fit_width,
    highlight_rows,
    token_axes,
    token_heatmap,
    token_margins,
)
from .theme import ATTENTION_SCALE, DIVERGING_SCALE, MASKED_COLOR, colorbar, figure

MASKED_TEXT = "−∞ (masked)"
PIPELINE_CELLS_PX = (280, 720)  # cells budget: side by side, stacked
PIPELINE_CELL_PX = (14, 28)  # a cell's range
PIPELINE_GAP_PX = 90.0  # between panels (room for the middle colour bar when side by side)
PIPELINE_TITLE_FONT = 13  # px
SCORE_BAR_SHARE, WEIGHT_BAR_SHARE = 0.6, 0.3  # stacked: the bars' lengths, as shares of the plot's height
BAR_GAP_PX = 8  # between a panel and its colour bar
PIPELINE_MIN_HEIGHT_PX = 260
PIPELINE_TITLES = ("QKᵀ/√d_k", "+ mask", "softmax")
STACK_ABOVE = 16  # keys: wider panels go one above the other so the softmax panel is never cut off


def attention_pipeline(
    scores: np.ndarray,
    mask: np.ndarray,
    weights: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    *,
    title: str = "",
    highlight_query: int | None = None,
    window: Window | None = None,
) -> go.Figure:
    """Section 3.2.1 inside one head: QKᵀ/√d_k, the same with the mask, the softmax; side by side for
    up to STACK_ABOVE keys, else one above the other (each panel the full width of its container).

    Args:
        scores: (Tq, Tk) scaled dot products before the mask, on a diverging scale centred at 0.
        mask: (Tq, Tk) booleans, True = the query may attend to the key; masked cells are −∞
            before the softmax and are drawn as grey cells whose hover reads "−∞ (masked)".
        weights: (Tq, Tk) softmax weights on the 0-1 scale.
        query_tokens, key_tokens: Tq and Tk tokens.
        window: the rows and columns shown (long sentences); None = all.

    Raises:
        ValueError: an array is not 2-D, its shape does not match the tokens, or the window lies outside.
    """
    full, queries, keys, highlight = checked_weights(weights, query_tokens, key_tokens, 2, highlight_query)
    s = as_array("scores", scores, 2)
    allowed = as_array("mask", mask, 2, dtype=bool)
    for name, array in (("scores", s), ("mask", allowed)):
        if array.shape != full.shape:
            raise ValueError(f"{name} has shape {array.shape}, weights {full.shape}; they must match")
    window, queries, keys, highlight = shown_window(window, full.shape, queries, keys, highlight)
    w, s, allowed = window.of(full), window.of(s), window.of(allowed)  # (tq, tk) each

    # Symmetric colour range over the finite scores, so 0 is white in both score panels.
    finite = s[np.isfinite(s) & (np.abs(s) < 1e30)]
    bound = float(np.abs(finite).max()) if finite.size and np.abs(finite).max() > 0 else 1.0

    n_keys = w.shape[1]
    stacked = n_keys > STACK_ABOVE
    layout, panels, plot_w, plot_h = pipeline_panels(*w.shape, stacked)
    series = pipeline_heatmaps(s, allowed, w, queries, keys, window, panels)
    for index, refs_of_panel in enumerate(panels):
        first = stacked or index == 0
        set_axes(
            layout,
            refs_of_panel,
            *token_axes(
                queries, keys, refs_of_panel[1], show_rows=first, row_title="query" if first else None, col_title="key"
            ),
        )

    margin = token_margins(queries, keys, title=bool(title))
    margin["r"] = COLORBAR_PX
    score_bar, weight_bar = pipeline_colorbars(layout, panels, plot_w, stacked)
    sides = margin["l"] + margin["r"]
    columns = n_keys if stacked else 3 * n_keys
    return below_toolbar(
        figure(
            series,
            dict(
                layout,
                margin=margin,
                shapes=highlight_rows(highlight, n_keys, panels),
                annotations=layout.get("annotations", []) + window_note(window, full.shape),
                height=int(max(plot_h + margin["t"] + margin["b"], PIPELINE_MIN_HEIGHT_PX)),
                **fit_width(columns * MIN_COLUMN_PX + sides + (0 if stacked else 2 * PIPELINE_GAP_PX), plot_w + sides),
                coloraxis=dict(cmin=-bound, cmax=bound, colorscale=DIVERGING_SCALE, colorbar=score_bar),
                coloraxis2=dict(cmin=0, cmax=1, colorscale=ATTENTION_SCALE, colorbar=weight_bar),
            ),
            title,
        )
    )


def pipeline_panels(n_queries: int, n_keys: int, stacked: bool) -> tuple[dict, list[Refs], float, float]:
    """The three panels, one above the other (stacked) or side by side, cells sized to the matrix ->
    (layout, the panels' refs in order, the plot's width and height in px)."""
    cell = cell_px(max(n_queries, n_keys), PIPELINE_CELLS_PX[stacked], *PIPELINE_CELL_PX)
    panel_w, panel_h, gap = n_keys * cell, n_queries * cell, PIPELINE_GAP_PX
    if stacked:
        plot_w, plot_h = panel_w, 3 * panel_h + 2 * gap
        layout, refs = subplot_grid(
            3, 1, vertical_spacing=gap / plot_h, titles=PIPELINE_TITLES, title_size=PIPELINE_TITLE_FONT
        )
        return layout, [refs[row, 1] for row in (1, 2, 3)], plot_w, plot_h
    plot_w, plot_h = 3 * panel_w + 2 * gap, panel_h
    layout, refs = subplot_grid(
        1,
        3,
        shared_yaxes=True,
        horizontal_spacing=gap / plot_w,
        title_size=PIPELINE_TITLE_FONT,
        titles=PIPELINE_TITLES,
    )
    return layout, [refs[1, col] for col in (1, 2, 3)], plot_w, plot_h


def pipeline_heatmaps(
    s: np.ndarray,
    allowed: np.ndarray,
    w: np.ndarray,
    queries: list[str],
    keys: list[str],
    window: Window,
    panels: list[Refs],
) -> list[dict]:
    """The scores s (tq, tk) in the first panel; in the second the scores where allowed (tq, tk) with a grey
    overlay where masked; the weights w (tq, tk) in the third."""
    masked_scores = np.where(allowed, s, np.nan).astype(np.float32)
    overlay = np.where(allowed, np.nan, 0.0).astype(np.float32)  # grey where masked, gap elsewhere
    at = dict(first_row=window.rows.start, first_col=window.cols.start, xgap=1, ygap=1)
    return [
        on_axes(token_heatmap(s, queries, keys, value_name="score", coloraxis="coloraxis", **at), panels[0]),
        on_axes(
            token_heatmap(
                masked_scores, queries, keys, value_name="score", coloraxis="coloraxis", hoverongaps=False, **at
            ),
            panels[1],
        ),
        on_axes(
            token_heatmap(
                overlay,
                queries,
                keys,
                value_name="score",
                value_text=MASKED_TEXT,
                colorscale=[[0, MASKED_COLOR], [1, MASKED_COLOR]],
                zmin=0,
                zmax=1,
                showscale=False,
                hoverongaps=False,
                name="masked",
                **at,
            ),
            panels[1],
        ),
        on_axes(token_heatmap(w, queries, keys, coloraxis="coloraxis2", **at), panels[2]),
    ]


def pipeline_colorbars(layout: dict, panels: list[Refs], plot_w: float, stacked: bool) -> tuple[dict, dict]:
    """(the scores' colour bar, the weights'): stacked, both right of the plot, the scores' beside the two score
    panels and the weights' beside the softmax; side by side, the scores' right of the middle panel."""
    if stacked:
        score_bar = colorbar("score", x=1.0, xanchor="left", y=1, yanchor="top", len=SCORE_BAR_SHARE)
        weight_bar = colorbar("weight", x=1.0, xanchor="left", y=0, yanchor="bottom", len=WEIGHT_BAR_SHARE)
    else:
        bar_x = layout[axis_name(panels[1][0])]["domain"][1] + BAR_GAP_PX / plot_w
        score_bar = colorbar("score", x=bar_x, xanchor="left")
        weight_bar = colorbar("weight", x=1.0 + BAR_GAP_PX / plot_w, xanchor="left")
    return score_bar, weight_bar
