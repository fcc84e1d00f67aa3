"""Attention weights as heatmaps: section 3.2 (scaled dot-product and multi-head attention).

Queries run down (first query at the top), keys across, weights on a fixed 0-1 scale so heads and
layers compare at a glance. ``attention_heatmap`` draws one head, ``attention_grid`` every layer and
head at once (the BertViz "model view", section 3.2.2), and ``attention_pipeline`` the three steps
inside one head (section 3.2.1): scores QKᵀ/√d_k, the mask, the softmax.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .checks import as_array, check_index, labels_for
from .grid import axis_name, on_axes, set_axes, spacing, subplot_grid
from .heatmap import (
    MIN_COLUMN_PX, Window, cell_gap, cell_px, fit_width, full_window, heatmap_size, highlight_rows,
    hover_template, indexed, narrow_colorbar, short_plot_bar, token_axes, token_heatmap, token_margins,
)
from .theme import ATTENTION_SCALE, DIVERGING_SCALE, MASKED_COLOR, MUTED_COLOR, colorbar, corner_note, figure

MASKED_TEXT = "−∞ (masked)"
COLORBAR_PX = 90  # room right of the last panel for its colour bar
ROWS_PX = 270  # one head's heatmap: its rows together at most this tall (cells never below a label's height), so
#  the figure of a sentence of up to 19 tokens, a tour stop's text and the player bar share a 1280x720 screen
TITLE_PAD_PX = 36  # a title's distance below the figure's top: clear of Plotly's toolbar
TITLE_DROP_PX = 24  # what moving the title down adds to the top margin (and the height)
# the grid of every head (section 3.2.2)
GRID_WIDTH_PX = 700  # a row of panels is drawn for about this width (what a 1280 px screen gives the figure) ...
HEAD_PX = (64, 200)  # ... each head's panel within this range (the figure has no width: its panels shrink to fit)
HEAD_ASPECT = (0.4, 1.5)  # a panel's height / width follows queries / keys within this range
HEAD_GAP_PX = (8.0, 12.0)  # between panels: across, down
HEAD_TITLE_FONT = 14  # px: "head h" and "layer l"
GRID_TICK_FONT = 14  # px: the token labels (projector type)
GRID_CHAR_PX = 8.7  # a tick label character's width
GRID_LEFT_PX, GRID_LEFT_MARGIN_PX = 50, (80, 260)  # beside the query labels; the left margin's range
GRID_BOTTOM_PX, GRID_BOTTOM_MARGIN_PX = 20, (50, 200)  # below the key labels; the bottom margin's range
GRID_TOP_MARGIN_PX = (60, 90)  # without, with a title
GRID_HIGHLIGHT_WIDTH = 1.5  # px: the inspected query's outline in every small panel
WINDOW_NOTE_SHIFT_PX = 22  # the window note, up clear of the head titles
COLORBAR_SPAN_PX = 400  # the colour bar's length in pixels (at most the plot's height)
# inside one head (section 3.2.1)
PIPELINE_CELLS_PX = (280, 720)  # cells budget: side by side, stacked
PIPELINE_CELL_PX = (14, 28)  # a cell's range
PIPELINE_GAP_PX = 90.0  # between panels (room for the middle colour bar when side by side)
PIPELINE_TITLE_FONT = 13  # px
SCORE_BAR_SHARE, WEIGHT_BAR_SHARE = 0.6, 0.3  # stacked: the bars' lengths, as shares of the plot's height
BAR_GAP_PX = 8  # between a panel and its colour bar
PIPELINE_MIN_HEIGHT_PX = 260
PIPELINE_TITLES = ("QKᵀ/√d_k", "+ mask", "softmax")


def _checked(weights, query_tokens, key_tokens, ndim: int, highlight_query=None):
    """Weights of rank ``ndim`` whose last two axes match the tokens, their labels, the highlight."""
    array = as_array("weights", weights, ndim)
    queries = labels_for("query_tokens", query_tokens, array.shape[-2])
    keys = labels_for("key_tokens", key_tokens, array.shape[-1])
    return array, queries, keys, check_index("highlight_query", highlight_query, array.shape[-2])


def _shown(window: Window | None, shape, queries, keys, highlight):
    """(window, shown queries, shown keys, highlight within them or None) of a possibly windowed matrix."""
    window = window or full_window(shape)
    rows, cols = window
    if not (0 <= rows.start < rows.stop <= shape[-2] and 0 <= cols.start < cols.stop <= shape[-1]):
        raise ValueError(f"window {rows.start}:{rows.stop} x {cols.start}:{cols.stop} is outside {shape[-2:]}")
    inside = highlight is not None and rows.start <= highlight < rows.stop
    return window, queries[rows], keys[cols], highlight - rows.start if inside else None


def below_toolbar(fig: go.Figure) -> go.Figure:
    """Move a title down, clear of Plotly's toolbar (which floats over the figure's top right); the figure
    grows by as much, so its plot area (sized for square cells) keeps its height."""
    if fig.layout.title.text:
        fig.layout.title.update(yref="container", y=1, yanchor="top", pad=dict(t=TITLE_PAD_PX))
        fig.layout.margin.t += TITLE_DROP_PX
        if fig.layout.height:
            fig.layout.height += TITLE_DROP_PX
    return fig


def window_note(window: Window, shape, yshift: int = 0) -> list[dict]:
    """A corner note naming the shown positions when the window hides some ([] when all are shown)."""
    (rows, cols), (n_rows, n_cols) = window, shape[-2:]
    parts = [f"{what} {part.start}–{part.stop - 1} of 0–{n - 1}"
             for what, part, n in (("queries", rows, n_rows), ("keys", cols, n_cols)) if part.stop - part.start < n]
    return [dict(corner_note("showing " + ", ".join(parts)), yshift=yshift)] if parts else []


def attention_heatmap(weights: np.ndarray, query_tokens: Sequence[str], key_tokens: Sequence[str], *,
                      title: str = "", highlight_query: int | None = None, window: Window | None = None) -> go.Figure:
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
    full, queries, keys, highlight = _checked(weights, query_tokens, key_tokens, 2, highlight_query)
    window, queries, keys, highlight = _shown(window, full.shape, queries, keys, highlight)
    w = window.of(full)
    gap = cell_gap(max(w.shape))
    # rows of 30 px at most, ROWS_PX together: with the title and the keys they fit under the bar at 720 px
    size = heatmap_size(queries, keys, title=bool(title), high=30, rows_px=ROWS_PX)
    plot_px = size["height"] - size["margin"]["t"] - size["margin"]["b"]
    series = token_heatmap(w, queries, keys, zmin=0, zmax=1, colorscale=ATTENTION_SCALE,
                           colorbar=colorbar("weight", **short_plot_bar(plot_px)),
                           xgap=gap, ygap=gap, first_row=window.rows.start, first_col=window.cols.start)
    # the columns grow to fill the box (a projector: big cells; the width is a minimum, page_script.py)
    xaxis, yaxis = token_axes(queries, keys, row_title="query", col_title="key", square=False)
    fig = below_toolbar(figure([series], dict(xaxis=xaxis, yaxis=yaxis, shapes=highlight_rows(highlight, len(keys)),
                                annotations=window_note(window, full.shape), **size), title))
    margin = fig.layout.margin
    fig.layout.meta = dict(narrow=narrow_colorbar(fig.layout.height, margin.t, margin.b, margin.l))
    return fig


def thinned_ticks(labels: Sequence[str], panel_px: float, first: int = 0, min_px: float = GRID_TICK_FONT + 1,
                  font: int = GRID_TICK_FONT) -> dict:
    """Tick settings naming every k-th position of a small panel so labels sit >= ``min_px`` apart."""
    n = len(labels)
    every = max(1, int(np.ceil(min_px * n / max(panel_px, 1))))
    shown = np.arange(0, n, every)
    return dict(tickmode="array", tickvals=shown, ticktext=[f"{first + i} {labels[i]}" for i in shown],
                tickfont=dict(size=font), showticklabels=True)


def grid_cells(n_layers: int, n_heads: int, layer: int | None, columns: int | None):
    """The panels of the grid: (rows, columns, {(row, col): (layer, head)}), 1-based rows and columns, 0-based
    layers and heads; each layer's heads fill rows of ``columns`` panels."""
    columns = min(columns or n_heads, n_heads)
    rows_per_layer = -(-n_heads // columns)
    layers = range(n_layers) if layer is None else [layer]
    cells = {(index * rows_per_layer + head // columns + 1, head % columns + 1): (l, head)
             for index, l in enumerate(layers) for head in range(n_heads)}
    return len(layers) * rows_per_layer, columns, cells


def attention_grid(weights: np.ndarray, query_tokens: Sequence[str], key_tokens: Sequence[str], *,
                   title: str = "", highlight_query: int | None = None, window: Window | None = None,
                   layer: int | None = None, columns: int | None = None) -> go.Figure:
    """Every head of every layer (or of one ``layer``) in one figure of small multiples, one shared 0-1 scale.

    A layer's heads fill rows of ``columns`` panels (default: all of them in one row, a row per layer).
    Labelled at its edges: "head h" above each panel (above the top row where a layer is one row), "layer l"
    left of a layer's first row, key tokens under the bottom row and query tokens left of the first column
    (every k-th where cells are small; the hover names every cell). The figure has no fixed width: its
    panels shrink or grow with the box the page gives it.

    Args:
        weights: (L, H, Tq, Tk) attention weights.
        query_tokens, key_tokens: Tq and Tk tokens; the hover names the query and key tokens, the layer
            and the head.
        title: plain text (escaped).
        highlight_query: a query row to outline in every cell.
        window: the rows and columns shown (long sentences); None = all.
        layer: draw this layer only (0-based); None = every layer.
        columns: panels per row; None = every head of a layer in one row.

    Raises:
        ValueError: weights not 4-D, their last two axes do not match the token counts, the window lies outside,
            or the layer does not exist.
    """
    full, queries, keys, highlight = _checked(weights, query_tokens, key_tokens, 4, highlight_query)
    window, queries, keys, highlight = _shown(window, full.shape, queries, keys, highlight)
    w = window.of(full)
    n_layers, n_heads, n_queries, n_keys = w.shape
    if layer is not None and not 0 <= layer < n_layers:
        raise ValueError(f"layer {layer} is outside 0..{n_layers - 1}")
    n_rows, n_cols, cells = grid_cells(n_layers, n_heads, layer, columns)
    one_row_per_layer = n_cols == n_heads
    panel_w = float(np.clip(GRID_WIDTH_PX / n_cols, *HEAD_PX))
    panel_h = panel_w * float(np.clip(n_queries / n_keys, *HEAD_ASPECT))
    gap_x, gap_y = HEAD_GAP_PX[0], HEAD_GAP_PX[1] + (0 if one_row_per_layer else HEAD_TITLE_FONT + 6)
    plot_w = n_cols * panel_w + (n_cols - 1) * gap_x
    plot_h = n_rows * panel_h + (n_rows - 1) * gap_y
    specs = [[{} if (row, col) in cells else None for col in range(1, n_cols + 1)] for row in range(1, n_rows + 1)]
    titles = [f"head {cells[cell][1] + 1}" for cell in sorted(cells)]
    layout, refs = subplot_grid(
        n_rows, n_cols, specs=specs, titles=titles[:n_cols] if one_row_per_layer else titles,
        title_size=HEAD_TITLE_FONT, horizontal_spacing=spacing(gap_x, plot_w, n_cols),
        vertical_spacing=spacing(gap_y, plot_h, n_rows),
    )
    # The axes are categories named "#i token" (unique per position): the hover reads the tokens
    # from x and y instead of a (Tq, Tk) customdata per cell, which keeps the JSON ten times smaller.
    x, y = indexed(keys, window.cols.start), indexed(queries, window.rows.start)
    template = hover_template("query", "key", "weight", "%{z:.4f}")
    series = [on_axes(dict(type="heatmap", z=w[l, head], x=x, y=y, coloraxis="coloraxis",
                           hovertemplate=f"layer {l + 1} · head {head + 1}<br>{template}"), refs[cell])
              for cell, (l, head) in sorted(cells.items())]
    hidden = dict(type="category", showticklabels=False, showgrid=False, zeroline=False, ticks="")
    key_ticks = thinned_ticks(keys, panel_w, window.cols.start)
    query_ticks = thinned_ticks(queries, panel_h, window.rows.start)  # horizontal labels: a line each
    bottom = {col: max(row for row, c in cells if c == col) for col in range(1, n_cols + 1)}
    for (row, col), cell in sorted(refs.items()):
        xaxis = dict(hidden, **key_ticks, tickangle=-90) if row == bottom[col] else hidden
        yaxis = dict(hidden, autorange="reversed")
        if col == 1:
            yaxis.update(query_ticks)
            l, head = cells[row, col]
            if head == 0:
                yaxis["title"] = dict(text=f"layer {l + 1}", font=dict(size=HEAD_TITLE_FONT, color=MUTED_COLOR))
        set_axes(layout, cell, xaxis, yaxis)
    longest_query, longest_key = (max(map(len, ticks["ticktext"])) for ticks in (query_ticks, key_ticks))
    margin = dict(l=int(np.clip(GRID_CHAR_PX * longest_query + GRID_LEFT_PX, *GRID_LEFT_MARGIN_PX)), r=COLORBAR_PX,
                  t=GRID_TOP_MARGIN_PX[bool(title)],
                  b=int(np.clip(GRID_CHAR_PX * longest_key + GRID_BOTTOM_PX, *GRID_BOTTOM_MARGIN_PX)))
    return below_toolbar(figure(series, dict(
        layout, shapes=highlight_rows(highlight, n_keys, [refs[cell] for cell in sorted(refs)],
                                      width=GRID_HIGHLIGHT_WIDTH),
        annotations=layout.get("annotations", []) + window_note(window, full.shape, yshift=WINDOW_NOTE_SHIFT_PX),
        height=int(plot_h + margin["t"] + margin["b"]), margin=margin,
        coloraxis=dict(cmin=0, cmax=1, colorscale=ATTENTION_SCALE,
                       colorbar=colorbar("weight", len=min(1.0, COLORBAR_SPAN_PX / plot_h))),
    ), title))


STACK_ABOVE = 16  # keys: wider panels go one above the other so the softmax panel is never cut off


def attention_pipeline(scores: np.ndarray, mask: np.ndarray, weights: np.ndarray,
                       query_tokens: Sequence[str], key_tokens: Sequence[str], *, title: str = "",
                       highlight_query: int | None = None, window: Window | None = None) -> go.Figure:
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
    full, queries, keys, highlight = _checked(weights, query_tokens, key_tokens, 2, highlight_query)
    s = as_array("scores", scores, 2)
    allowed = as_array("mask", mask, 2, dtype=bool)
    for name, array in (("scores", s), ("mask", allowed)):
        if array.shape != full.shape:
            raise ValueError(f"{name} has shape {array.shape}, weights {full.shape}; they must match")
    window, queries, keys, highlight = _shown(window, full.shape, queries, keys, highlight)
    w, s, allowed = window.of(full), window.of(s), window.of(allowed)

    # Symmetric colour range over the finite scores, so 0 is white in both score panels.
    finite = s[np.isfinite(s) & (np.abs(s) < 1e30)]
    bound = float(np.abs(finite).max()) if finite.size and np.abs(finite).max() > 0 else 1.0
    masked_scores = np.where(allowed, s, np.nan).astype(np.float32)
    overlay = np.where(allowed, np.nan, 0.0).astype(np.float32)  # grey where masked, gap elsewhere

    n_queries, n_keys = w.shape
    stacked = n_keys > STACK_ABOVE
    cell = cell_px(max(w.shape), PIPELINE_CELLS_PX[stacked], *PIPELINE_CELL_PX)
    panel_w, panel_h, gap = n_keys * cell, n_queries * cell, PIPELINE_GAP_PX
    if stacked:
        plot_w, plot_h = panel_w, 3 * panel_h + 2 * gap
        layout, refs = subplot_grid(3, 1, vertical_spacing=gap / plot_h, titles=PIPELINE_TITLES,
                                    title_size=PIPELINE_TITLE_FONT)
        panels = [refs[row, 1] for row in (1, 2, 3)]
    else:
        plot_w, plot_h = 3 * panel_w + 2 * gap, panel_h
        layout, refs = subplot_grid(1, 3, shared_yaxes=True, horizontal_spacing=gap / plot_w, title_size=PIPELINE_TITLE_FONT,
                                    titles=PIPELINE_TITLES)
        panels = [refs[1, col] for col in (1, 2, 3)]
    at = dict(first_row=window.rows.start, first_col=window.cols.start, xgap=1, ygap=1)
    series = [
        on_axes(token_heatmap(s, queries, keys, value_name="score", coloraxis="coloraxis", **at), panels[0]),
        on_axes(token_heatmap(masked_scores, queries, keys, value_name="score", coloraxis="coloraxis",
                              hoverongaps=False, **at), panels[1]),
        on_axes(token_heatmap(overlay, queries, keys, value_name="score", value_text=MASKED_TEXT,
                              colorscale=[[0, MASKED_COLOR], [1, MASKED_COLOR]], zmin=0, zmax=1, showscale=False,
                              hoverongaps=False, name="masked", **at), panels[1]),
        on_axes(token_heatmap(w, queries, keys, coloraxis="coloraxis2", **at), panels[2]),
    ]
    for index, refs_of_panel in enumerate(panels):
        first = stacked or index == 0
        set_axes(layout, refs_of_panel, *token_axes(queries, keys, refs_of_panel[1], show_rows=first,
                                                    row_title="query" if first else None, col_title="key"))

    margin = token_margins(queries, keys, title=bool(title))
    margin["r"] = COLORBAR_PX
    if stacked:  # the scores' bar beside the two score panels, the weights' beside the softmax
        score_bar = colorbar("score", x=1.0, xanchor="left", y=1, yanchor="top", len=SCORE_BAR_SHARE)
        weight_bar = colorbar("weight", x=1.0, xanchor="left", y=0, yanchor="bottom", len=WEIGHT_BAR_SHARE)
    else:
        bar_x = layout[axis_name(panels[1][0])]["domain"][1] + BAR_GAP_PX / plot_w
        score_bar = colorbar("score", x=bar_x, xanchor="left")
        weight_bar = colorbar("weight", x=1.0 + BAR_GAP_PX / plot_w, xanchor="left")
    sides = margin["l"] + margin["r"]
    columns = n_keys if stacked else 3 * n_keys
    return below_toolbar(figure(series, dict(
        layout, margin=margin, shapes=highlight_rows(highlight, n_keys, panels),
        annotations=layout.get("annotations", []) + window_note(window, full.shape),
        height=int(max(plot_h + margin["t"] + margin["b"], PIPELINE_MIN_HEIGHT_PX)),
        **fit_width(columns * MIN_COLUMN_PX + sides + (0 if stacked else 2 * gap), plot_w + sides),
        coloraxis=dict(cmin=-bound, cmax=bound, colorscale=DIVERGING_SCALE, colorbar=score_bar),
        coloraxis2=dict(cmin=0, cmax=1, colorscale=ATTENTION_SCALE, colorbar=weight_bar),
    ), title))
