"""Heatmaps over tokens, the shape of every matrix view (queries x keys, positions x positions).

Rows and columns are token positions named "#i token", so repeated tokens stay apart (Plotly
merges equal category names) and the hover reads both tokens from the axes instead of a per-cell
customdata. Sizes grow with the sentence but stay bounded; the query being inspected is outlined.

Long sentences: a ``Window`` shows a slice of the rows and columns (e.g. 41 keys around the key the
query attends to most) under their true position numbers; tick labels never go below ``MIN_FONT``
px. Figures carry no width (Plotly fills the page's column) unless their cells need more than a
phone's width, and then the plot's own box scrolls.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence

import numpy as np

from .grid import Refs
from .theme import axis_title, outline
from .tokens import shown_length


MIN_FONT = 10  # px: the smallest tick label any token figure draws
WINDOW_HALF = 20  # a window shows the centre key and up to this many keys either side
PHONE_PX = 360  # a figure needing more width than this gets a fixed width and scrolls in its box
MIN_COLUMN_PX = 14  # narrowest column whose rotated 10 px label does not overlap its neighbour


class Window(namedtuple("Window", "rows cols")):
    """The rows and columns (two slices of positions, step 1) of a matrix that a figure shows."""

    __slots__ = ()

    def of(self, matrix: np.ndarray) -> np.ndarray:
        """The shown part of a (..., R, C) matrix."""
        return matrix[..., self.rows, self.cols]


def around(centre: int, n: int, half: int = WINDOW_HALF) -> slice:
    """Up to 2*half + 1 positions of n containing ``centre``, shifted to stay inside 0..n-1."""
    size = min(n, 2 * half + 1)
    start = int(np.clip(centre - half, 0, n - size))
    return slice(start, start + size)


def full_window(shape: Sequence[int]) -> Window:
    """Every row and column of an (..., R, C) matrix."""
    return Window(slice(0, shape[-2]), slice(0, shape[-1]))


def attention_window(weights: np.ndarray, query: int, half: int = WINDOW_HALF, *, rows: bool = False) -> Window:
    """A window around the key that row ``query`` of (..., R, C) ``weights`` attends to most (summed
    over any leading axes: layers, heads); all rows, or with ``rows`` also rows around ``query``."""
    w = np.asarray(weights)
    n_rows, n_cols = w.shape[-2:]
    per_key = w[..., query, :].reshape(-1, n_cols).sum(axis=0)  # (C,)
    best = int(np.argmax(per_key))
    return Window(around(query, n_rows, half) if rows else slice(0, n_rows), around(best, n_cols, half))


def indexed(labels: Sequence[str], start: int = 0) -> np.ndarray:
    """"#i token" per position (counting from ``start``): unique even when tokens repeat (object array)."""
    return np.array([f"#{i} {label}" for i, label in enumerate(labels, start=start)], dtype=object)


def hover_template(row_name: str, col_name: str, value_name: str, value: str,
                   row_ref: str = "%{y}", col_ref: str = "%{x}") -> str:
    return (f"{row_name} <b>{row_ref}</b><br>{col_name} <b>{col_ref}</b>"
            f"<br>{value_name} <b>{value}</b><extra></extra>")


def token_heatmap(z: np.ndarray, row_labels: Sequence[str], col_labels: Sequence[str], *,
                  row_name: str = "query", col_name: str = "key", value_name: str = "weight",
                  value_format: str = ".4f", value_text: np.ndarray | str | None = None,
                  first_row: int = 0, first_col: int = 0, **heatmap_kwargs) -> dict:
    """A heatmap series (dict) over token positions whose hover names both tokens and the value.

    x and y are the "#i token" names on category axes, i counting from ``first_row``/``first_col``. ``value_text`` replaces the formatted z in
    the hover: one string for every cell (e.g. "−∞ (masked)") or (R, C) strings, one per cell.
    """
    if isinstance(value_text, str):
        value = value_text
    elif value_text is not None:
        value = "%{customdata}"
        heatmap_kwargs["customdata"] = np.asarray(value_text, dtype=str)  # fixed-width: cheap to copy
    else:
        value = f"%{{z:{value_format}}}"
    return dict(type="heatmap", z=z, x=indexed(col_labels, first_col), y=indexed(row_labels, first_row),
                hovertemplate=hover_template(row_name, col_name, value_name, value), **heatmap_kwargs)


def tick_font_size(n: int) -> int:
    """14 px for short sentences (readable on a projector, issue 23), 12 px up to 24 tokens, never below
    MIN_FONT (long ones are windowed or scroll instead)."""
    return 14 if n <= 16 else 12 if n <= 24 else MIN_FONT


def token_axis(labels: Sequence[str], *, show: bool = True, angle: int = 0,
               reverse: bool = False, title: str | None = None) -> dict:
    """Axis settings putting ``labels`` at positions 0..n-1 (reversed: first at the top)."""
    n = len(labels)
    axis = dict(type="category", tickmode="array", tickvals=np.arange(n), ticktext=list(labels), showticklabels=show,
                tickangle=angle, tickfont=dict(size=tick_font_size(n)), showgrid=False, zeroline=False,
                ticks="", constrain="domain")
    if reverse:
        axis["autorange"] = "reversed"
    else:
        axis["range"] = [-0.5, n - 0.5]
    if title is not None:
        axis["title"] = dict(axis_title(title), standoff=6)
    return axis


def token_axes(row_labels: Sequence[str], col_labels: Sequence[str], yref: str = "y", *, show_rows: bool = True,
               show_cols: bool = True, row_title: str | None = None, col_title: str | None = None,
               square: bool = True) -> tuple[dict, dict]:
    """(x, y) axis settings: rows down (first at the top), columns across with rotated labels, square cells.

    Square cells (x scaled to ``yref``) keep the matrix readable whatever size the page gives the figure;
    ``square=False`` lets the columns grow to fill the figure's width (one head's heatmap, issue 23).
    """
    angle = -45 if len(col_labels) > 3 else 0
    x = token_axis(col_labels, show=show_cols, angle=angle, title=col_title)
    return (dict(x, scaleanchor=yref) if square else x,
            token_axis(row_labels, show=show_rows, reverse=True, title=row_title))


def highlight_rows(index: int | None, n_cols: int, refs: Sequence[Refs] = (("x", "y"),),
                   width: float = 2.5) -> list[dict]:
    """Outlines of row ``index`` (the query being inspected) in every panel of ``refs``; none for None."""
    if index is None:
        return []
    return [outline(-0.5, n_cols - 0.5, index - 0.5, index + 0.5, width=width, xref=x, yref=y, layer="above",
                    name="highlight") for x, y in refs]


# ---- sizes ------------------------------------------------------------------------------------

def cell_px(n: int, budget: float = 720, low: float = 14, high: float = 34) -> float:
    """Pixels per heatmap cell: big for short sentences, never above ``budget`` in total (mostly);
    never below ``low``, the height a 10 px tick label needs."""
    return float(np.clip(budget / max(n, 1), low, high))


def fit_width(min_px: float, natural_px: float) -> dict:
    """{} (Plotly fills its container) while the figure fits a phone (``min_px`` <= PHONE_PX), else
    {"width": natural_px}: the figure keeps the width its labels need and scrolls in its own box."""
    return {} if min_px <= PHONE_PX else {"width": int(max(min_px, natural_px))}


def label_px(labels: Sequence[str], font_size: int) -> float:
    """Rough rendered width of the longest label."""
    return 0.62 * font_size * min(max((shown_length(label) for label in labels), default=1), 24)


def token_margins(row_labels: Sequence[str], col_labels: Sequence[str], *, title: bool) -> dict:
    """Margins that fit the y tick labels on the left and the 45°-rotated x labels below."""
    left = label_px(row_labels, tick_font_size(len(row_labels))) + 40
    bottom = 0.75 * label_px(col_labels, tick_font_size(len(col_labels))) + 50
    return dict(l=int(np.clip(left, 60, 220)), r=20, t=70 if title else 30, b=int(np.clip(bottom, 50, 200)))


def heatmap_size(row_labels: Sequence[str], col_labels: Sequence[str], *, title: bool,
                 right: int = 110, high: float = 34) -> dict:
    """height and margin for one token heatmap (rows x cells, bounded to ~720 px of cells; ``high`` px at
    most per cell), and a width only where the columns need more than a phone has (see ``fit_width``)."""
    cell = cell_px(max(len(row_labels), len(col_labels)), high=high)
    margin = token_margins(row_labels, col_labels, title=title)
    margin["r"] = right
    sides = margin["l"] + margin["r"]
    height = margin["t"] + margin["b"] + len(row_labels) * cell
    return dict(height=int(max(height, 220)), margin=margin,
                **fit_width(sides + len(col_labels) * MIN_COLUMN_PX, sides + len(col_labels) * cell))


def cell_gap(n: int) -> int:
    """White lines between cells while cells are big enough for them not to wash the colours out."""
    return 1 if cell_px(n) >= 14 else 0
