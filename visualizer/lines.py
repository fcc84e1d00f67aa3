"""Attention as lines between two token columns: the head view of section 3.2.2 (BertViz's "head view",
the figure of the 2017 Transformer blog post), for any of the three attention kinds of section 3.2.3.

Queries stand in the left column, keys in the right one (first token at the top), and every query-key
pair whose weight reaches ``LINE_THRESHOLD`` is a straight line between them in its head's colour,
as opaque as its weight (the weight rounded up to a tenth: one series per head and opacity level
keeps the figure light; the exact weight is in the hover and in each line's data). Several heads together draw
each head's strongest line per query only (the legend isolates a head on a double-click); one head's lines are
wide. Selecting a token keeps only its lines (every one at the threshold or above, in every head drawn) and writes
their weights beside the tokens at their other end, one column of numbers per head.

Each line is four points: its query end, its middle (where the hover reads "head, query, key, weight"), its key
end and a gap (NaN). Its ``customdata`` rows are (query position, key position, weight), positions counted in the
whole sentence even when a ``Window`` shows only part of it. Several heads' lines are told apart by
visualizer/line_styles.py.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .attention import below_toolbar, shown_window, window_note
from .checks import as_array, check_index, checked_heads, labels_for
from .heatmap import PHONE_PX, Window, fit_width, label_px, tick_font_size
from .line_styles import head_color, head_dash, head_shift, opacity
from .theme import ACCENT_COLOR, ACCENT_TEXT_COLOR, MUTED_COLOR, TEXT_COLOR, figure

LINE_THRESHOLD = 0.05  # lines of a smaller weight are not drawn (the figure says how many)
QUERY_X, KEY_X = 0.0, 1.0  # the two columns, in the x axis' units
LINE_WIDTH = (3.5, 2.5)  # px: one head's lines (read from the back of a room), several heads' lines
ROW_PX = (18, 30)  # px between two tokens of a column: at least a label's height, at most this
ROWS_BUDGET_PX = 560  # the rows of a long column together take about this much
LABEL_PAD_PX = 18  # between a column's marker and the far edge of its labels' margin
MARGIN_PX = (60, 240)  # a side margin's range (the token labels live there)
LINES_MIN_PX = 120  # the narrowest gap between the columns that still reads as lines
WEIGHT_COLUMN_PX = 30  # one head's column of weights beside the other end of a selected token's lines
TOP_PX, TITLE_PX = 52, 40  # top margin (the note, the columns' names), what a title adds
BOTTOM_PX, LEGEND_ROW_PX = 12, 30  # bottom margin without the legend; each row of the legend
LEGEND_ITEM_PX = 80  # a legend entry's width ("head 8" and its line); the legend wraps at the plot's width
WIDE_LEGEND_ITEMS = 8  # entries a row of the legend holds in a box of 640 px and more (ui/js/figures.js NARROW_PX)
SIDES = ("query", "key")


def strongest_keys(keep: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Of the (H, Tq, Tk) lines in ``keep``, each head's strongest line per query only (ties: the first key):
    several heads' lines together stay readable."""
    best = np.argmax(np.where(keep, weights, -1.0), axis=-1)  # (H, Tq)
    strongest = np.zeros_like(keep)
    np.put_along_axis(strongest, best[..., None], True, axis=-1)
    return strongest & keep


def _checked_selection(selected, shape) -> tuple[str, int] | None:
    """("query", i) or ("key", j) within the weights' (..., Tq, Tk) shape, or None."""
    if selected is None:
        return None
    side, index = selected
    if side not in SIDES:
        raise ValueError(f"selected must be ('query', i) or ('key', j), got {selected!r}")
    return side, check_index(f"selected {side}", index, shape[-2] if side == "query" else shape[-1])


def _line_series(
    weights: np.ndarray,
    keep: np.ndarray,
    head: int,
    name: str,
    window: Window,
    queries: list[str],
    keys: list[str],
    width: float,
    dash: str = "solid",
    shift: float = 0.0,
) -> list[dict]:
    """The lines of one head, one series per opacity level: (Tq, Tk) windowed weights, ``keep`` the pairs drawn;
    positions in the whole sentence's numbering; ``shift`` rows moves both ends of every line (heads fanned out)."""
    rows, cols = np.nonzero(keep)  # (N,) each, row-major: query by query
    w = weights[rows, cols]
    levels = opacity(w)
    series = []
    for level in np.unique(levels):
        at = levels == level
        r, c, v = rows[at], cols[at], w[at]
        n = len(r)
        x = np.tile([QUERY_X, (QUERY_X + KEY_X) / 2, KEY_X, np.nan], n)
        y = np.stack([r, (r + c) / 2, c, np.full(n, np.nan)], axis=1).ravel() + shift  # (4N,)
        data = np.stack([r + window.rows.start, c + window.cols.start, v], axis=1).astype(np.float64)  # (N, 3)
        hover = np.full((n, 4), "", dtype=object)
        hover[:, 1] = [
            f"{name}<br>query <b>#{window.rows.start + i} {queries[i]}</b><br>"
            f"key <b>#{window.cols.start + j} {keys[j]}</b><br>weight <b>{value:.4f}</b>"
            for i, j, value in zip(r, c, v)
        ]
        series.append(
            dict(
                type="scatter",
                mode="lines",
                x=x,
                y=y,
                customdata=np.repeat(data, 4, axis=0),
                hovertext=hover.ravel(),
                hovertemplate="%{hovertext}<extra></extra>",
                name=name,
                legendgroup=name,
                showlegend=False,
                opacity=round(float(level), 2),
                line=dict(color=head_color(head), width=width, dash=dash),
                meta=dict(head=head, side="lines"),
            )
        )
    # the legend's entry: an empty series at full opacity, so a head of faint lines is named in its true colour
    return [
        dict(
            type="scatter",
            mode="lines",
            x=[None],
            y=[None],
            name=name,
            legendgroup=name,
            hoverinfo="skip",
            line=dict(color=head_color(head), width=3, dash=dash),
            meta=dict(head=head, side="legend"),
        ),
        *series,
    ]


def _column(side: str, labels: list[str], first: int, highlight: int | None, font: int) -> dict:
    """One column of tokens: markers at its x, labels outside (queries left, keys right); ``highlight``
    (a local index or None) in the accent colour."""
    n = len(labels)
    colors = [ACCENT_TEXT_COLOR if i == highlight else TEXT_COLOR for i in range(n)]
    labels = [f"<b>{label}</b>" if i == highlight else label for i, label in enumerate(labels)]
    return dict(
        type="scatter",
        mode="markers+text",
        name="queries" if side == "query" else "keys",
        showlegend=False,
        cliponaxis=False,
        x=np.full(n, QUERY_X if side == "query" else KEY_X),
        y=np.arange(n, dtype=float),
        text=labels,
        textposition="middle left" if side == "query" else "middle right",
        textfont=dict(size=font, color=colors),
        customdata=np.arange(first, first + n),
        marker=dict(size=7, color=[ACCENT_COLOR if i == highlight else MUTED_COLOR for i in range(n)]),
        meta=dict(side=side),
        hovertemplate=f"{side} <b>#%{{customdata}} %{{text}}</b><extra></extra>",
    )


def _weight_column(
    weights: np.ndarray,
    keep: np.ndarray,
    selected: tuple[str, int],
    head: int,
    name: str,
    slot: int,
    step: float,
    font: int,
) -> dict:
    """The weights of one head's lines from the selected token, written beside the tokens at their other
    end (inside the line area, one column per head): marker in the head's colour, number in the text's."""
    side, index = selected
    row = weights[index] if side == "query" else weights[:, index]  # (Tk,) or (Tq,)
    drawn = np.nonzero(keep[index] if side == "query" else keep[:, index])[0]
    # one column per head, ``step`` apart: left of the keys for a selected query, right of the queries for a key
    x = KEY_X - step * (slot + 1) if side == "query" else QUERY_X + step * (slot + 0.3)
    return dict(
        type="scatter",
        mode="markers+text",
        x=np.full(len(drawn), x),
        y=drawn.astype(float),
        text=[f"{row[j]:.2f}".lstrip("0") for j in drawn],
        textposition="middle right",
        textfont=dict(size=font, color=TEXT_COLOR),  # as big as the tokens (14 px on a wide screen, page script)
        cliponaxis=False,
        marker=dict(size=5, symbol="square", color=head_color(head)),
        name=name,
        legendgroup=name,
        showlegend=False,
        customdata=row[drawn].astype(np.float64),
        hovertemplate=f"{name}: %{{customdata:.4f}}<extra></extra>",
        meta=dict(head=head, side="weights"),
    )


def _notes(
    drawn: int, total: int, threshold: float, window: Window, shape, selection_hidden: bool, strongest: bool = False
) -> str:
    """What the figure leaves out: lines below the threshold (and, for several heads, all but each head's strongest
    line per query), positions outside the window."""
    which = "each head's strongest per query, " if strongest else ""
    parts = [f"{drawn} of {total} lines drawn ({which}weight ≥ {threshold:g})"]
    if strongest:
        parts.append("double-click a head in the legend to see it alone")
    parts += [note["text"] for note in window_note(window, shape)]
    if selection_hidden:
        parts.append("the selected token is outside the shown tokens")
    return " · ".join(parts)


def _size(
    queries: list[str], keys: list[str], *, title: bool, n_heads: int, weight_columns: int
) -> tuple[dict, int, float]:
    """(height, margins and maybe a width; the labels' font; the x distance between two weight columns).

    The width is the least the figure needs (the page may widen it): the labels beside both columns and
    the line area, wide enough for a column of weights per head when a token is selected. The legend
    (below the plot) gets as many rows as it needs at that width."""
    n = max(len(queries), len(keys))
    row_px = float(np.clip(ROWS_BUDGET_PX / n, *ROW_PX))
    font = min(tick_font_size(n), int(row_px) - 4)
    left, right = (int(np.clip(label_px(labels, font) + LABEL_PAD_PX, *MARGIN_PX)) for labels in (queries, keys))
    lines_px = max(LINES_MIN_PX, WEIGHT_COLUMN_PX * (weight_columns + 1))
    least = left + right + lines_px
    per_row = max(1, int(max(lines_px, PHONE_PX - left - right) // LEGEND_ITEM_PX))  # a phone's legend entries a row
    narrow_rows, legend_rows = (int(np.ceil(n_heads / per)) for per in (per_row, WIDE_LEGEND_ITEMS))
    margin = dict(l=left, r=right, t=TOP_PX + (TITLE_PX if title else 0), b=BOTTOM_PX + legend_rows * LEGEND_ROW_PX)
    height = int(n * row_px + margin["t"] + margin["b"])
    extra = (narrow_rows - legend_rows) * LEGEND_ROW_PX  # a phone's layout (meta.narrow): its legend's rows, in as
    narrow = dict(margin=dict(b=margin["b"] + extra), height=extra)  # much more height (attention_lines adds the rest)
    return (
        dict(height=height, margin=margin, meta=dict(narrow=narrow), **fit_width(least, least)),
        font,
        (WEIGHT_COLUMN_PX / lines_px),
    )


def attention_lines(
    weights: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    *,
    heads: Sequence[int] | None = None,
    head_names: Sequence[str] | None = None,
    selected: tuple[str, int] | None = None,
    highlight_query: int | None = None,
    window: Window | None = None,
    threshold: float = LINE_THRESHOLD,
    title: str = "",
    column_titles: tuple[str, str] = SIDES,
) -> go.Figure:
    """One layer's attention as lines from query tokens (left) to key tokens (right), a colour per head.

    Args:
        weights: (H, Tq, Tk) attention weights of one layer's heads, each row a distribution over keys.
        query_tokens: Tq tokens (left column); key_tokens: Tk tokens (right column).
        heads: 0-based heads of ``weights`` to draw (None = all), each in its colour (``head_color``).
        head_names: a name per head of ``weights`` (legend and hover); default "head 1", "head 2", ...
        selected: ("query", i) or ("key", j), positions in the whole sentence: only that token's
            lines are drawn, and their weights are written beside the tokens at their other end.
        highlight_query: a query drawn in the accent colour (the decoding step being inspected).
        window: the query rows and key columns shown (long sentences); None = all.
        threshold: lines below this weight are not drawn; the figure counts them.
        title: plain text (escaped). column_titles: the names under the two columns.

    Raises:
        ValueError: weights not 3-D, not matching the tokens, heads/selection/window out of range.
    """
    full = as_array("weights", weights, 3)
    queries = labels_for("query_tokens", query_tokens, full.shape[1])
    keys = labels_for("key_tokens", key_tokens, full.shape[2])
    heads, names = checked_heads(heads, head_names, full.shape[0])
    selection = _checked_selection(selected, full.shape)
    window, queries, keys, highlight = shown_window(
        window, full.shape, queries, keys, check_index("highlight_query", highlight_query, full.shape[1])
    )
    shown = window.of(full)  # (H, tq, tk)
    several = len(heads) > 1
    keep, selection, hidden = _kept_lines(shown, threshold, selection, window, several)  # (H, tq, tk)
    size, font, step = _size(
        queries, keys, title=bool(title), n_heads=len(heads), weight_columns=len(heads) if selection else 0
    )
    series = _heads_series(shown, keep, heads, names, window, queries, keys)
    marked = {side: index for side, index in [selection or ("", None)]}
    series += [
        _column("query", queries, window.rows.start, marked.get("query", highlight), font),
        _column("key", keys, window.cols.start, marked.get("key"), font),
    ]
    if selection is not None:
        series += [
            _weight_column(shown[h], keep[h], selection, h, names[h], slot, step, font) for slot, h in enumerate(heads)
        ]
    n = max(len(queries), len(keys))
    total = int(np.prod(shown.shape[1:])) * len(heads)
    strongest = several and selection is None and not hidden
    note = _notes(int(keep[heads].sum()), total, threshold, window, full.shape, hidden, strongest=strongest)
    fig = below_toolbar(
        figure(
            series,
            dict(
                xaxis=dict(visible=False, range=[QUERY_X - 0.02, KEY_X + 0.02], fixedrange=True),
                yaxis=dict(visible=False, range=[n - 0.5, -0.5], fixedrange=True),
                annotations=_annotations(column_titles, note),
                hovermode="closest",
                showlegend=True,
                legend=dict(
                    orientation="h", x=0, xanchor="left", y=0, yanchor="bottom", yref="container", font=dict(size=11)
                ),
                **size,
            ),
            title,
        )
    )
    fig.layout.meta["narrow"]["height"] += fig.layout.height  # the phone's legend rows on top of this height
    return fig


def _heads_series(shown, keep, heads, names, window, queries, keys) -> list[dict]:
    """Every drawn head's lines and legend entry: one head wide and solid; several heads each in its colour and
    dash pattern, fanned out around each token, so that heads drawing the same line lie side by side instead of
    the last one covering the others."""
    several = len(heads) > 1
    return [
        series
        for slot, h in enumerate(heads)
        for series in _line_series(
            shown[h],
            keep[h],
            h,
            names[h],
            window,
            queries,
            keys,
            LINE_WIDTH[several],
            *((head_dash(h), head_shift(slot, len(heads))) if several else ("solid", 0.0)),
        )
    ]


def _kept_lines(
    shown: np.ndarray, threshold: float, selection: tuple[str, int] | None, window: Window, several: bool
) -> tuple[np.ndarray, tuple[str, int] | None, bool]:
    """The (H, tq, tk) lines drawn: those at the threshold or above; only the selected token's (with its position
    in the window, or None and hidden=True outside it); else, for several heads, each head's strongest per query
    (a tangle otherwise) -> (keep, selection, hidden)."""
    keep = shown >= threshold
    if selection is not None:
        return _selected_lines(keep, selection, window)
    return (strongest_keys(keep, shown) if several else keep), None, False


def _selected_lines(
    keep: np.ndarray, selection: tuple[str, int], window: Window
) -> tuple[np.ndarray, tuple[str, int] | None, bool]:
    """Only the selected token's lines: (keep (H, tq, tk) with every other line dropped, the selection as a
    position in the window or None, whether the selected token lies outside the window)."""
    side, index = selection
    part = window.rows if side == "query" else window.cols
    only = np.zeros_like(keep)
    if not part.start <= index < part.stop:
        return only, None, True
    local = index - part.start
    if side == "query":
        only[:, local] = keep[:, local]
    else:
        only[:, :, local] = keep[:, :, local]
    return only, (side, local), False


def _annotations(column_titles: tuple[str, str], note_text: str) -> list[dict]:
    """The two columns' names above them and, above those, the note of what the figure leaves out."""
    headers = [
        dict(
            text=f"<b>{text}</b>",
            x=x,
            xref="x",
            y=1,
            yref="paper",
            yanchor="bottom",
            yshift=4,
            xanchor=anchor,
            showarrow=False,
            font=dict(size=12, color=MUTED_COLOR),
        )
        for text, x, anchor in ((column_titles[0], QUERY_X, "right"), (column_titles[1], KEY_X, "left"))
    ]
    note = dict(
        text=note_text,
        x=0.5,
        xref="paper",
        xanchor="center",
        y=1,
        yref="paper",
        yanchor="bottom",
        yshift=24,
        showarrow=False,
        font=dict(size=11, color=MUTED_COLOR),
    )
    return [*headers, note]
