"""Every layer and head at once (section 3.2.2, the BertViz "model view"): small multiples of one head's
attention on one shared 0-1 scale, a layer's heads in rows of panels, labelled at the grid's edges.

Every token's label is in the figure; the page names as many as its drawn cells hold (ui/js/figures.js, from the
figure's ``meta.cells``): the step's query and the positions a view names (``named_queries``, ``named_keys``: the
tokens the Compare tab's summary names) always, the others where they stand a label's height apart.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .attention import COLORBAR_PX, TITLE_DROP_PX, below_toolbar, checked_weights, shown_window, window_note
from .grid import Refs, on_axes, set_axes, spacing, subplot_grid
from .heatmap import (
    LABEL_LINE_EM,
    NARROW_BAR_PX,
    NARROW_RIGHT_PX,
    Window,
    foot_colorbar,
    highlight_rows,
    hover_template,
    indexed,
)
from .theme import ATTENTION_SCALE, MUTED_COLOR, colorbar, figure

GRID_COLUMNS = 4  # the page's "all heads": a layer's heads in rows of up to this many panels (8 heads: two rows)
MIN_COLUMNS = 3  # ... and of no fewer, however long the sentence (`fitted_columns`)
GRID_WIDTH_PX = 600  # a row of panels is drawn for about this width (what a 1280x720 screen gives the panels) ...
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
LABEL_PX = LABEL_LINE_EM * GRID_TICK_FONT  # a row this tall (a column this wide) holds its label apart from the next
LABELLED_PANEL_PX = 420  # a panel grows up to this tall so each query row holds its label (up to 24 rows)
WINDOW_NOTE_SHIFT_PX = 22  # the window note, up clear of the head titles
COLORBAR_SPAN_PX = 400  # the colour bar's length in pixels (at most the plot's height)
NARROW_COLUMNS, NARROW_WIDTH_PX = 2, 240  # a phone: two panels a row, drawn for about this width together
NARROW_TICK_FONT = 10  # px: a phone's token labels

Cells = dict[tuple[int, int], tuple[int, int]]  # (row, col) of a panel, 1-based -> (layer, head), 0-based


def every_tick(labels: Sequence[str], first: int = 0, font: int = GRID_TICK_FONT) -> dict:
    """Tick settings naming every position of a panel "i token" (i counting from ``first``) in ``font`` px: the page
    leaves out what its drawn cells cannot hold (ui/js/figures.js)."""
    return dict(
        tickmode="array",
        tickvals=np.arange(len(labels)),
        ticktext=[f"{first + i} {label}" for i, label in enumerate(labels)],
        tickfont=dict(size=font),
        showticklabels=True,
    )


def fitted_columns(n_keys: int, columns: int) -> int:
    """Panels a row: ``columns``, or fewer (down to MIN_COLUMNS) where a row of that many, drawn GRID_WIDTH_PX wide,
    leaves a key's column narrower than a label in projector type (LABEL_PX): a projector names every key of a
    short sentence (up to 8 keys in rows of 4, 11 in rows of 3)."""
    low = min(MIN_COLUMNS, columns)
    for count in range(columns, low, -1):
        if (GRID_WIDTH_PX - (count - 1) * HEAD_GAP_PX[0]) / count >= LABEL_PX * n_keys:
            return count
    return low


def cell_labels(window: Window, named_queries: Sequence[int], named_keys: Sequence[int]) -> dict:
    """``meta.cells`` (ui/js/figures.js names the grid's labels at its drawn cell size from it): the positions
    (0-based in the sentence) whose labels are always drawn, as the panels' rows and columns count them (those
    outside the window left out), in the order given: where two are too close for both labels, the first wins."""

    def shown(positions: Sequence[int], part: slice) -> list[int]:
        return list(dict.fromkeys(int(p) - part.start for p in positions if part.start <= int(p) < part.stop))

    return dict(keep=dict(x=shown(named_keys, window.cols), y=shown(named_queries, window.rows)))


def grid_cells(n_layers: int, n_heads: int, layer: int | None, columns: int | None) -> tuple[int, int, Cells]:
    """The panels of the grid: (rows, columns, {(row, col): (layer, head)}), 1-based rows and columns, 0-based
    layers and heads; each layer's heads fill rows of ``columns`` panels."""
    columns = min(columns or n_heads, n_heads)
    rows_per_layer = -(-n_heads // columns)
    layers = range(n_layers) if layer is None else [layer]
    cells = {
        (index * rows_per_layer + head // columns + 1, head % columns + 1): (l, head)
        for index, l in enumerate(layers)
        for head in range(n_heads)
    }
    return len(layers) * rows_per_layer, columns, cells


def attention_grid(
    weights: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    *,
    title: str = "",
    highlight_query: int | None = None,
    window: Window | None = None,
    layer: int | None = None,
    columns: int | None = None,
    named_queries: Sequence[int] = (),
    named_keys: Sequence[int] = (),
) -> go.Figure:
    """Every head of every layer (or of one ``layer``) in one figure of small multiples, one shared 0-1 scale.

    A layer's heads fill rows of up to ``columns`` panels (`fitted_columns`; default: all of them in one row, a
    row per layer). Labelled at its edges: "head h" above each panel (above the top row where a layer is one row),
    "layer l" left of a layer's first row, key tokens under the bottom row and query tokens left of the first
    column: every token in the figure, as many drawn as the page's cells hold, the highlighted query and the named
    positions always (``meta.cells``; the hover names every cell). The figure has no fixed width: its panels
    shrink or grow with the box the page gives it.

    Args:
        weights: (L, H, Tq, Tk) attention weights.
        query_tokens, key_tokens: Tq and Tk tokens; the hover names the query and key tokens, the layer
            and the head.
        title: plain text (escaped).
        highlight_query: a query row to outline in every cell.
        window: the rows and columns shown (long sentences); None = all.
        layer: draw this layer only (0-based); None = every layer.
        columns: panels per row at most; None = every head of a layer in one row.
        named_queries, named_keys: positions (0-based, in the whole sentence) whose labels the page always draws
            (the first first, where two are too close for both).

    Raises:
        ValueError: weights not 4-D, their last two axes do not match the token counts, the window lies outside,
            or the layer does not exist.
    """
    full, queries, keys, highlight = checked_weights(weights, query_tokens, key_tokens, 4, highlight_query)
    window, queries, keys, highlight = shown_window(window, full.shape, queries, keys, highlight)
    w = window.of(full)  # (L, H, tq, tk)
    n_layers, n_heads, n_queries, n_keys = w.shape
    if layer is not None and not 0 <= layer < n_layers:
        raise ValueError(f"layer {layer} is outside 0..{n_layers - 1}")
    n_rows, n_cols, cells = grid_cells(n_layers, n_heads, layer, columns and fitted_columns(n_keys, columns))
    panel_w = float(np.clip((GRID_WIDTH_PX - (n_cols - 1) * HEAD_GAP_PX[0]) / n_cols, *HEAD_PX))
    panel_h = panel_w * float(np.clip(n_queries / n_keys, *HEAD_ASPECT))
    panel_h = max(panel_h, min(LABEL_PX * n_queries, LABELLED_PANEL_PX))  # a label on every query row, if it fits
    layout, refs, plot_h = head_panels(cells, n_rows, n_cols, n_cols == n_heads, panel_w, panel_h)
    series = head_heatmaps(w, cells, refs, queries, keys, window)
    margin = head_axes(layout, refs, cells, queries, keys, window, title=bool(title))
    fig = below_toolbar(
        figure(
            series,
            dict(
                layout,
                shapes=highlight_rows(
                    highlight, n_keys, [refs[cell] for cell in sorted(refs)], width=GRID_HIGHLIGHT_WIDTH
                ),
                annotations=layout.get("annotations", [])
                + window_note(window, full.shape, yshift=WINDOW_NOTE_SHIFT_PX),
                height=int(plot_h + margin["t"] + margin["b"]),
                margin=margin,
                coloraxis=dict(
                    cmin=0,
                    cmax=1,
                    colorscale=ATTENTION_SCALE,
                    colorbar=colorbar("weight", len=min(1.0, COLORBAR_SPAN_PX / plot_h)),
                ),
            ),
            title,
        )
    )
    fig.layout.meta = dict(cells=cell_labels(window, named_queries, named_keys))
    if n_cols > NARROW_COLUMNS:
        narrow = narrow_grid(w.shape, layer, queries, keys, window, highlight, title=bool(title))
        narrow["annotations"] = narrow.get("annotations", []) + window_note(window, full.shape, WINDOW_NOTE_SHIFT_PX)
        fig.layout.meta["narrow"] = narrow
    return fig


def head_panels(
    cells: Cells, n_rows: int, n_cols: int, one_row_per_layer: bool, panel_w: float, panel_h: float
) -> tuple[dict, dict[tuple[int, int], Refs], float]:
    """The grid's subplots, panel_w x panel_h px each, "head h" above each panel (above the top row only where
    a layer is one row) -> (layout, refs by (row, col), the plot's height in px)."""
    gap_x, gap_y = HEAD_GAP_PX[0], HEAD_GAP_PX[1] + (0 if one_row_per_layer else HEAD_TITLE_FONT + 6)
    plot_w = n_cols * panel_w + (n_cols - 1) * gap_x
    plot_h = n_rows * panel_h + (n_rows - 1) * gap_y
    specs = [[{} if (row, col) in cells else None for col in range(1, n_cols + 1)] for row in range(1, n_rows + 1)]
    titles = [f"head {cells[cell][1] + 1}" for cell in sorted(cells)]
    layout, refs = subplot_grid(
        n_rows,
        n_cols,
        specs=specs,
        titles=titles[:n_cols] if one_row_per_layer else titles,
        title_size=HEAD_TITLE_FONT,
        horizontal_spacing=spacing(gap_x, plot_w, n_cols),
        vertical_spacing=spacing(gap_y, plot_h, n_rows),
    )
    return layout, refs, plot_h


def head_heatmaps(
    w: np.ndarray,
    cells: Cells,
    refs: dict[tuple[int, int], Refs],
    queries: list[str],
    keys: list[str],
    window: Window,
) -> list[dict]:
    """One heatmap of w (L, H, tq, tk) per panel, on the shared coloraxis; the hover names layer and head."""
    # The axes are categories named "#i token" (unique per position): the hover reads the tokens
    # from x and y instead of a (Tq, Tk) customdata per cell, which keeps the JSON ten times smaller.
    x, y = indexed(keys, window.cols.start), indexed(queries, window.rows.start)
    template = hover_template("query", "key", "weight", "%{z:.4f}")
    return [
        on_axes(
            dict(
                type="heatmap",
                z=w[l, head],
                x=x,
                y=y,
                coloraxis="coloraxis",
                hovertemplate=f"layer {l + 1} · head {head + 1}<br>{template}",
            ),
            refs[cell],
        )
        for cell, (l, head) in sorted(cells.items())
    ]


def head_axes(
    layout: dict,
    refs: dict[tuple[int, int], Refs],
    cells: Cells,
    queries: list[str],
    keys: list[str],
    window: Window,
    *,
    title: bool,
    font: int = GRID_TICK_FONT,
) -> dict:
    """Set every panel's axes in layout: key labels under each column's bottom panel, query labels and "layer l"
    left of the first column (every token, ``font`` px), nothing elsewhere. -> the figure's margin, wide enough for
    those labels."""
    hidden = dict(type="category", showticklabels=False, showgrid=False, zeroline=False, ticks="")
    key_ticks = every_tick(keys, window.cols.start, font)
    query_ticks = every_tick(queries, window.rows.start, font)
    bottom = {col: max(row for row, c in cells if c == col) for _, col in cells}  # each column's lowest row
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
    char_px = GRID_CHAR_PX * font / GRID_TICK_FONT
    return dict(
        l=int(np.clip(char_px * longest_query + GRID_LEFT_PX, *GRID_LEFT_MARGIN_PX)),
        r=COLORBAR_PX,
        t=GRID_TOP_MARGIN_PX[title],
        b=int(np.clip(char_px * longest_key + GRID_BOTTOM_PX, *GRID_BOTTOM_MARGIN_PX)),
    )


def narrow_grid(
    shape: tuple[int, int, int, int],
    layer: int | None,
    queries: list[str],
    keys: list[str],
    window: Window,
    highlight: int | None,
    *,
    title: bool,
) -> dict:
    """The layout a phone draws instead (``meta.narrow``, applied by ui/js/figures.js): NARROW_COLUMNS panels a
    row, drawn for NARROW_WIDTH_PX, labels from NARROW_TICK_FONT px (rows tall enough for one each, as far as
    LABELLED_PANEL_PX allows), the colour bar across under the keys. The panels keep their order (head h is the
    h-th subplot either way), so the same traces fall into place."""
    n_layers, n_heads, n_queries, n_keys = shape
    n_rows, n_cols, cells = grid_cells(n_layers, n_heads, layer, NARROW_COLUMNS)
    panel_w = NARROW_WIDTH_PX / n_cols
    panel_h = panel_w * float(np.clip(n_queries / n_keys, *HEAD_ASPECT))
    panel_h = max(panel_h, min(LABEL_LINE_EM * NARROW_TICK_FONT * n_queries, LABELLED_PANEL_PX))
    layout, refs, plot_h = head_panels(cells, n_rows, n_cols, n_cols == n_heads, panel_w, panel_h)
    margin = head_axes(layout, refs, cells, queries, keys, window, title=title, font=NARROW_TICK_FONT)
    margin.update(r=NARROW_RIGHT_PX, b=margin["b"] + NARROW_BAR_PX, t=margin["t"] + (TITLE_DROP_PX if title else 0))
    height = int(plot_h + margin["t"] + margin["b"])
    return dict(
        layout,
        shapes=highlight_rows(highlight, n_keys, [refs[cell] for cell in sorted(refs)], width=GRID_HIGHLIGHT_WIDTH),
        margin=margin,
        height=height,
        coloraxis=dict(colorbar=foot_colorbar(height)),
    )
