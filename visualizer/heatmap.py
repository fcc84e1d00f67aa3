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
LABEL_LINE_EM = 1.25  # rows of labels stand at least this many font sizes apart (a line's height, 1.2 em, and a gap)
WINDOW_HALF = 20  # a window shows the centre key and up to this many keys either side
PHONE_PX = 360  # a figure needing more width than this gets a fixed width and scrolls in its box
MIN_COLUMN_PX = 14  # narrowest column whose rotated 10 px label does not overlap its neighbour
PROJECTOR_FONT = 14  # px: the tick labels of a sentence of up to PROJECTOR_SENTENCE tokens (a projector)
PROJECTOR_SENTENCE = 16  # tokens
SHORT_FONT = 12  # px: the tick labels of a sentence of up to SHORT_SENTENCE tokens
SHORT_SENTENCE = 24  # tokens
ROTATE_ABOVE = 3  # columns: more than this many and their labels turn 45°
HIGHLIGHT_WIDTH = 2.5  # px: the outline of the inspected query row
CELLS_BUDGET_PX = 720  # a heatmap's cells together take about this many pixels
CELL_PX = (14, 34)  # px: a cell never smaller (a 10 px label's height) nor bigger than this
CHAR_EM = 0.62  # a label character's width, in units of its font size
LABEL_CHARS = 24  # a label's width is counted up to this many characters (longer ones are cut)
LEFT_PAD_PX, BOTTOM_PAD_PX = 40, 50  # beside the longest row label, below the rotated column labels
ROTATED_SHARE = 0.75  # the height of a 45°-rotated label per unit of its length (about cos 45°, rounded up)
LEFT_MARGIN_PX = (60, 220)  # the left margin's range
BOTTOM_MARGIN_PX = (50, 200)  # the bottom margin's range
TOP_MARGIN_PX = (30, 70)  # without, with a title
RIGHT_MARGIN_PX = 20  # token_margins' right margin
COLORBAR_ROOM_PX = 110  # heatmap_size's right margin: room for a colour bar
MIN_HEIGHT_PX = 220  # a heatmap figure never shorter
SHORT_BAR_PX = 120  # a colour bar never shorter than this: its three tick labels stay apart beside one row
NARROW_BAR_PX = 56  # a phone: the colour bar lies under the key labels, in this much more height
NARROW_RIGHT_PX = 16  # a phone: the right margin once the colour bar has moved under the plot
NARROW_LEFT_SLACK_PX = 30  # a phone: what the left margin gives back of LEFT_PAD_PX (row labels are estimated wide)


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


def step_window(weights: np.ndarray, query: int | None = None, reads: np.ndarray | None = None) -> Window:
    """The one rule of which rows and keys a figure of one decoding step shows (long sentences):

    - a decoder's attention, (..., R, C) ``weights`` whose row ``query`` is the step's: the rows around it and the
      keys around the key it attends to most (summed over layers and heads);
    - encoder self-attention (``query`` None): the rows and keys around the source token the step's query reads
      most, ``reads`` (..., S) its cross-attention (summed over layers and heads).
    Each side holds up to 2 * WINDOW_HALF + 1 positions; a short sentence is shown whole."""
    if query is not None:
        return attention_window(weights, query, rows=True)
    per_key = np.asarray(reads).reshape(-1, np.shape(reads)[-1]).sum(axis=0)  # (S,)
    n, centre = np.shape(weights)[-1], int(np.argmax(per_key))
    return Window(around(centre, n), around(centre, n))


def indexed(labels: Sequence[str], start: int = 0) -> np.ndarray:
    """ "#i token" per position (counting from ``start``): unique even when tokens repeat (object array)."""
    return np.array([f"#{i} {label}" for i, label in enumerate(labels, start=start)], dtype=object)


def hover_template(
    row_name: str, col_name: str, value_name: str, value: str, row_ref: str = "%{y}", col_ref: str = "%{x}"
) -> str:
    return f"{row_name} <b>{row_ref}</b><br>{col_name} <b>{col_ref}</b><br>{value_name} <b>{value}</b><extra></extra>"


def token_heatmap(
    z: np.ndarray,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    row_name: str = "query",
    col_name: str = "key",
    value_name: str = "weight",
    value_format: str = ".4f",
    value_text: np.ndarray | str | None = None,
    first_row: int = 0,
    first_col: int = 0,
    **heatmap_kwargs,
) -> dict:
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
    return dict(
        type="heatmap",
        z=z,
        x=indexed(col_labels, first_col),
        y=indexed(row_labels, first_row),
        hovertemplate=hover_template(row_name, col_name, value_name, value),
        **heatmap_kwargs,
    )


def tick_font_size(n: int) -> int:
    """PROJECTOR_FONT for short sentences (readable on a projector), SHORT_FONT up to SHORT_SENTENCE
    tokens, never below MIN_FONT (long ones are windowed or scroll instead)."""
    return PROJECTOR_FONT if n <= PROJECTOR_SENTENCE else SHORT_FONT if n <= SHORT_SENTENCE else MIN_FONT


def token_axis(
    labels: Sequence[str], *, show: bool = True, angle: int = 0, reverse: bool = False, title: str | None = None
) -> dict:
    """Axis settings putting ``labels`` at positions 0..n-1 (reversed: first at the top)."""
    n = len(labels)
    axis = dict(
        type="category",
        tickmode="array",
        tickvals=np.arange(n),
        ticktext=list(labels),
        showticklabels=show,
        tickangle=angle,
        tickfont=dict(size=tick_font_size(n)),
        showgrid=False,
        zeroline=False,
        ticks="",
        constrain="domain",
    )
    if reverse:
        axis["autorange"] = "reversed"
    else:
        axis["range"] = [-0.5, n - 0.5]
    if title is not None:
        axis["title"] = dict(axis_title(title), standoff=6)
    return axis


def fitted_rows(labels: Sequence[str], row_px: float, font: int, marked: int | None = None) -> dict:
    """Tick settings naming rows 0..n-1, ``row_px`` apart, with ``labels``: in ``font`` px type where a line of it
    fits a row, else smaller down to MIN_FONT, and where even that does not fit every k-th row, the ``marked`` row
    (the step's query) always among them (the hover names every row)."""
    size = int(min(font, max(MIN_FONT, row_px / LABEL_LINE_EM)))
    every = max(1, int(np.ceil(LABEL_LINE_EM * size / max(row_px, 1e-9))))
    rows = np.arange(0, len(labels), every)
    if marked is not None:
        rows = np.union1d(rows[np.abs(rows - marked) >= every], [marked])
    return dict(tickvals=rows.tolist(), ticktext=[labels[row] for row in rows], tickfont=dict(size=size))


def token_axes(
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    yref: str = "y",
    *,
    show_rows: bool = True,
    show_cols: bool = True,
    row_title: str | None = None,
    col_title: str | None = None,
    square: bool = True,
) -> tuple[dict, dict]:
    """(x, y) axis settings: rows down (first at the top), columns across with rotated labels, square cells.

    Square cells (x scaled to ``yref``) keep the matrix readable whatever size the page gives the figure;
    ``square=False`` lets the columns grow to fill the figure's width (one head's heatmap).
    """
    angle = -45 if len(col_labels) > ROTATE_ABOVE else 0
    x = token_axis(col_labels, show=show_cols, angle=angle, title=col_title)
    return (
        dict(x, scaleanchor=yref) if square else x,
        token_axis(row_labels, show=show_rows, reverse=True, title=row_title),
    )


def highlight_rows(
    index: int | None, n_cols: int, refs: Sequence[Refs] = (("x", "y"),), width: float = HIGHLIGHT_WIDTH
) -> list[dict]:
    """Outlines of row ``index`` (the query being inspected) in every panel of ``refs``; none for None."""
    if index is None:
        return []
    return [
        outline(
            -0.5, n_cols - 0.5, index - 0.5, index + 0.5, width=width, xref=x, yref=y, layer="above", name="highlight"
        )
        for x, y in refs
    ]


# ---- sizes ------------------------------------------------------------------------------------


def cell_px(n: int, budget: float = CELLS_BUDGET_PX, low: float = CELL_PX[0], high: float = CELL_PX[1]) -> float:
    """Pixels per heatmap cell: big for short sentences, never above ``budget`` in total (mostly);
    never below ``low``, the height a 10 px tick label needs."""
    return float(np.clip(budget / max(n, 1), low, high))


def fit_width(min_px: float, natural_px: float) -> dict:
    """{} (Plotly fills its container) while the figure fits a phone (``min_px`` <= PHONE_PX), else
    {"width": natural_px}: the figure keeps the width its labels need and scrolls in its own box."""
    return {} if min_px <= PHONE_PX else {"width": int(max(min_px, natural_px))}


def label_px(labels: Sequence[str], font_size: int) -> float:
    """Rough rendered width of the longest label."""
    return CHAR_EM * font_size * min(max((shown_length(label) for label in labels), default=1), LABEL_CHARS)


def token_margins(row_labels: Sequence[str], col_labels: Sequence[str], *, title: bool) -> dict:
    """Margins that fit the y tick labels on the left and the 45°-rotated x labels below."""
    left = label_px(row_labels, tick_font_size(len(row_labels))) + LEFT_PAD_PX
    bottom = ROTATED_SHARE * label_px(col_labels, tick_font_size(len(col_labels))) + BOTTOM_PAD_PX
    return dict(
        l=int(np.clip(left, *LEFT_MARGIN_PX)),
        r=RIGHT_MARGIN_PX,
        t=TOP_MARGIN_PX[bool(title)],
        b=int(np.clip(bottom, *BOTTOM_MARGIN_PX)),
    )


def heatmap_size(
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    title: bool,
    right: int = COLORBAR_ROOM_PX,
    high: float = CELL_PX[1],
    rows_px: float | None = None,
) -> dict:
    """height and margin for one token heatmap (rows x cells, bounded to ~720 px of cells; ``high`` px at
    most per cell; the rows together about ``rows_px`` at most, where given, cells never below the
    height of a label), and a width only where the columns need more than a phone has (see ``fit_width``)."""
    cell = cell_px(max(len(row_labels), len(col_labels)), high=high)
    row_cell = cell if rows_px is None else cell_px(len(row_labels), budget=rows_px, high=cell)
    margin = token_margins(row_labels, col_labels, title=title)
    margin["r"] = right
    sides = margin["l"] + margin["r"]
    height = margin["t"] + margin["b"] + len(row_labels) * row_cell
    return dict(
        height=int(max(height, MIN_HEIGHT_PX)),
        margin=margin,
        **fit_width(sides + len(col_labels) * MIN_COLUMN_PX, sides + len(col_labels) * cell),
    )


def short_plot_bar(plot_px: float) -> dict:
    """Colour-bar length for a plot ``plot_px`` tall: its share of the plot (theme.colorbar's default), or
    SHORT_BAR_PX pixels hanging from the plot's top where that share would crowd its tick labels (one row)."""
    if plot_px * 0.8 >= SHORT_BAR_PX:
        return {}
    return dict(lenmode="pixels", len=SHORT_BAR_PX, y=1, yanchor="top")


def cell_gap(n: int) -> int:
    """White lines between cells while cells are big enough for them not to wash the colours out."""
    return 1 if cell_px(n) >= CELL_PX[0] else 0


def foot_colorbar(height: int) -> dict:
    """A phone's colour bar laid across the foot of a figure ``height`` px tall, its top NARROW_BAR_PX above the
    foot (container coordinates: in place however short the plot, one row included)."""
    return dict(
        orientation="h",
        x=0.5,
        xanchor="center",
        lenmode="fraction",
        len=0.8,
        thickness=10,
        yref="container",
        y=NARROW_BAR_PX / height,
        yanchor="top",
        title=dict(side="right"),
    )


def narrow_colorbar(height: int, bottom: int, left: int) -> dict:
    """The layout a phone draws instead (``meta.narrow``, applied by ui/js/figures.js) for a one-trace heatmap
    ``height`` px tall with these margins: its colour bar laid across under the key labels (``foot_colorbar``, in
    NARROW_BAR_PX more height) and the left margin without the slack kept for wide fonts, so the cells take the
    width the bar and the slack held."""
    bar = foot_colorbar(height + NARROW_BAR_PX)
    return dict(
        margin=dict(l=max(LEFT_MARGIN_PX[0], left - NARROW_LEFT_SLACK_PX), r=NARROW_RIGHT_PX, b=bottom + NARROW_BAR_PX),
        height=height + NARROW_BAR_PX,
        traces=[dict(colorbar=bar)],
    )
