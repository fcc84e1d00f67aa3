"""Shared figure machinery for the views of sections 3.1-3.5: input checks, token axes, heatmaps.

Every view is a matrix over tokens (queries x keys, positions x dimensions) or a chart over
steps, so the pieces live here once: validation with clear errors, numeric token axes
(tickvals/ticktext, because Plotly merges duplicate category labels), per-cell hover built from
customdata, bounded sizes and one palette.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.colors as pcolors
import plotly.graph_objects as go
import plotly.io as pio

from .tokens import display_tokens, escape_text

FONT_FAMILY = "Inter, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"
TEXT_COLOR = "#1f2933"
MUTED_COLOR = "#7b8794"
GRID_COLOR = "#e4e7eb"
ACCENT_COLOR = "#e4572e"  # highlighted query row, chosen candidate
PRIMARY_COLOR = "#4c78a8"
MASKED_COLOR = "#cdd2d9"  # cells a query may not attend to
PALETTE = pcolors.qualitative.T10


def _scale(colors: Sequence[str]) -> list[list]:
    return [[i / (len(colors) - 1), color] for i, color in enumerate(colors)]


ATTENTION_SCALE = _scale(pcolors.sequential.Blues)  # 0 (white) .. 1 (deep blue)
DIVERGING_SCALE = _scale(pcolors.diverging.RdBu[::-1])  # negative blue, 0 white, positive red
SEQUENTIAL_SCALE = _scale(pcolors.sequential.Viridis)
# The white template expanded once: validating it (or any figure) per call costs far more than
# drawing; the views build plain dicts and hand them to `figure` unvalidated.
TEMPLATE = pio.templates["plotly_white"].to_plotly_json()


# ---- input checks ---------------------------------------------------------------------------

def as_array(name: str, value, ndim: int, dtype=np.float32) -> np.ndarray:
    """A numpy array of rank ``ndim`` with at least one element per axis, or ValueError."""
    try:
        array = np.asarray(value, dtype=dtype)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be a numeric array: {error}") from None
    if array.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, got shape {array.shape}")
    if 0 in array.shape:
        raise ValueError(f"{name} is empty (shape {array.shape})")
    return array


def check_axis(name: str, array: np.ndarray, axis: int, size: int, what: str) -> None:
    """ValueError unless ``array.shape[axis] == size`` (the number of ``what``)."""
    if array.shape[axis] != size:
        raise ValueError(f"{name} has shape {array.shape}, but axis {axis} should match the "
                         f"{size} {what}")


def labels_for(name: str, tokens: Sequence[str], size: int | None = None) -> list[str]:
    """Escaped labels for ``tokens``; ValueError if there are none or not ``size`` of them."""
    try:
        labels = display_tokens(tokens)
    except ValueError as error:
        raise ValueError(f"{name}: {error}") from None
    if not labels:
        raise ValueError(f"{name} is empty")
    if size is not None and len(labels) != size:
        raise ValueError(f"{name} has {len(labels)} tokens, but the array has {size} positions")
    return labels


def check_index(name: str, index, size: int) -> int | None:
    """``index`` as an int in [0, size), None passes through, anything else is a ValueError."""
    if index is None:
        return None
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
        raise ValueError(f"{name} must be an integer or None, got {index!r}")
    if not 0 <= index < size:
        raise ValueError(f"{name}={index} is out of range for {size} rows")
    return int(index)


# ---- token heatmaps ---------------------------------------------------------------------------

def indexed(labels: Sequence[str]) -> np.ndarray:
    """"#i token" per position: unique even when tokens repeat (object array)."""
    return np.array([f"#{i} {label}" for i, label in enumerate(labels)], dtype=object)


def hover_template(row_name: str, col_name: str, value_name: str, value: str,
                   row_ref: str = "%{y}", col_ref: str = "%{x}") -> str:
    return (f"{row_name} <b>{row_ref}</b><br>{col_name} <b>{col_ref}</b>"
            f"<br>{value_name} <b>{value}</b><extra></extra>")


def token_heatmap(z: np.ndarray, row_labels: Sequence[str], col_labels: Sequence[str], *,
                  row_name: str = "query", col_name: str = "key", value_name: str = "weight",
                  value_format: str = ".4f", value_text: np.ndarray | str | None = None,
                  **heatmap_kwargs) -> dict:
    """A heatmap trace (dict) over token positions whose hover names both tokens and the value.

    x and y are the "#i token" names (unique, so repeated tokens stay apart) on category axes:
    the hover reads the tokens from them instead of a per-cell customdata, which would make the
    figure's JSON many times bigger. ``value_text`` replaces the formatted z in the hover: one
    string for every cell (e.g. "−∞ (masked)") or (R, C) strings, one per cell.
    """
    if isinstance(value_text, str):
        value = value_text
    elif value_text is not None:
        value = "%{customdata}"
        heatmap_kwargs["customdata"] = np.asarray(value_text, dtype=str)  # fixed-width: cheap to copy
    else:
        value = f"%{{z:{value_format}}}"
    return dict(type="heatmap", z=z, x=indexed(col_labels), y=indexed(row_labels),
                hovertemplate=hover_template(row_name, col_name, value_name, value), **heatmap_kwargs)


def tick_font_size(n: int) -> int:
    return 12 if n <= 24 else 10 if n <= 48 else 8


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
        axis["title"] = dict(text=title, font=dict(size=12, color=MUTED_COLOR), standoff=6)
    return axis


def token_axes(row_labels: Sequence[str], col_labels: Sequence[str], yref: str = "y", *, show_rows: bool = True,
               show_cols: bool = True, row_title: str | None = None,
               col_title: str | None = None) -> tuple[dict, dict]:
    """(x, y) axis settings: rows down (first at the top), columns across with rotated labels, square cells.

    Square cells (x scaled to ``yref``) keep the matrix readable whatever size the page gives the figure.
    """
    angle = -45 if len(col_labels) > 3 else 0
    return (dict(token_axis(col_labels, show=show_cols, angle=angle, title=col_title), scaleanchor=yref),
            token_axis(row_labels, show=show_rows, reverse=True, title=row_title))


def style_token_axes(fig: go.Figure, row_labels: Sequence[str], col_labels: Sequence[str], *,
                     row: int | None = None, col: int | None = None, **axes) -> None:
    """``token_axes`` on one (sub)plot of a graph-object figure."""
    _, yref = axis_refs(fig, row, col)
    x, y = token_axes(row_labels, col_labels, yref, **axes)
    fig.update_xaxes(x, row=row, col=col)
    fig.update_yaxes(y, row=row, col=col)


def axis_refs(fig: go.Figure, row: int | None, col: int | None) -> tuple[str, str]:
    """("x3", "y3")-style references of a subplot, ("x", "y") for a plain figure."""
    if row is None or col is None:
        return "x", "y"
    subplot = fig.get_subplot(row, col)
    return (subplot.xaxis.plotly_name.replace("axis", ""), subplot.yaxis.plotly_name.replace("axis", ""))


def highlight_shape(index: int, n_cols: int, xref: str = "x", yref: str = "y", width: float = 2.5) -> dict:
    """An outline around row ``index`` of a heatmap (the query being inspected)."""
    return dict(type="rect", xref=xref, yref=yref, x0=-0.5, x1=n_cols - 0.5, y0=index - 0.5,
                y1=index + 0.5, line=dict(color=ACCENT_COLOR, width=width), fillcolor="rgba(0,0,0,0)",
                layer="above", name="highlight")


def highlight_rows(index: int | None, n_cols: int, refs: Sequence[tuple[str, str]] = (("x", "y"),),
                   width: float = 2.5) -> list[dict]:
    """Outlines of row ``index`` in every subplot of ``refs`` (("x2", "y2"), ...); none for None."""
    return [] if index is None else [highlight_shape(index, n_cols, x, y, width=width) for x, y in refs]


# ---- figure specs -----------------------------------------------------------------------------

def axis_name(ref: str) -> str:
    """"x3" -> "xaxis3", the layout key of an axis reference."""
    return f"{ref[0]}axis{ref[1:]}"


def subplot_grid(rows: int, cols: int, *, specs: Sequence[Sequence[dict | None]] | None = None,
                 column_widths: Sequence[float] | None = None, row_heights: Sequence[float] | None = None,
                 horizontal_spacing: float = 0.0, vertical_spacing: float = 0.0,
                 titles: Sequence[str] = (), title_size: int = 16,
                 shared_yaxes: bool = False) -> tuple[dict, dict[tuple[int, int], tuple[str, str]]]:
    """The layout of ``plotly.subplots.make_subplots`` (same domains, axis numbering and titles), as a dict.

    Returns (layout with xaxis/yaxis domains, anchors and title annotations, {(row, col): ("x2", "y2")}),
    rows and columns 1-based, row 1 at the top. ``specs`` cells may hold "rowspan"/"colspan" or be None.
    """
    def edges(sizes, spacing):  # (starts, ends) of each column or row, from 0 to 1
        sizes = np.asarray(sizes, dtype=float)
        sizes = sizes * (1 - spacing * (len(sizes) - 1)) / sizes.sum()
        starts = np.concatenate([[0.0], np.cumsum(sizes + spacing)[:-1]])
        # clip: cumulative sums can overshoot 1 by a rounding error (1.0000000000000002), which Plotly rejects
        return np.clip(starts, 0.0, 1.0), np.clip(starts + sizes, 0.0, 1.0)

    widths = np.ones(cols) if column_widths is None else column_widths
    heights = np.ones(rows) if row_heights is None else row_heights
    x0, x1 = edges(widths, horizontal_spacing)
    top_down0, top_down1 = edges(heights, vertical_spacing)
    y1, y0 = 1 - top_down0, 1 - top_down1  # row 1 at the top
    specs = specs or [[{}] * cols for _ in range(rows)]
    layout, refs, annotations = {}, {}, []
    for row in range(rows):
        for col in range(cols):
            spec = specs[row][col]
            if spec is None:
                continue
            n = len(refs) + 1
            suffix = "" if n == 1 else str(n)
            x_dom = [float(x0[col]), float(x1[col + spec.get("colspan", 1) - 1])]
            y_dom = [float(y0[row + spec.get("rowspan", 1) - 1]), float(y1[row])]
            layout[f"xaxis{suffix}"] = dict(anchor=f"y{suffix}", domain=x_dom)
            layout[f"yaxis{suffix}"] = dict(anchor=f"x{suffix}", domain=y_dom)
            if shared_yaxes and col > 0:
                layout[f"yaxis{suffix}"].update(matches=refs[(row + 1, 1)][1], showticklabels=False)
            refs[(row + 1, col + 1)] = (f"x{suffix}", f"y{suffix}")
            if len(refs) <= len(titles):
                annotations.append(dict(text=titles[len(refs) - 1], x=sum(x_dom) / 2, y=y_dom[1], xref="paper",
                                        yref="paper", xanchor="center", yanchor="bottom", showarrow=False,
                                        font=dict(size=title_size)))
    if annotations:
        layout["annotations"] = annotations
    return layout, refs


def on_axes(trace: dict, refs: tuple[str, str]) -> dict:
    """``trace`` drawn on the subplot whose axes are ``refs``."""
    trace["xaxis"], trace["yaxis"] = refs
    return trace


def set_axes(layout: dict, refs: tuple[str, str], x: dict | None = None, y: dict | None = None) -> None:
    """Merge axis settings into the x and y axes ``refs`` of a layout dict."""
    for ref, settings in zip(refs, (x, y)):
        if settings:
            layout.setdefault(axis_name(ref), {}).update(settings)


# ---- sizes and layout -------------------------------------------------------------------------

def cell_px(n: int, budget: float = 720, low: float = 9, high: float = 34) -> float:
    """Pixels per heatmap cell: big for short sentences, never above ``budget`` in total (mostly)."""
    return float(np.clip(budget / max(n, 1), low, high))


def label_px(labels: Sequence[str], font_size: int) -> float:
    """Rough rendered width of the longest label (entities count as one character)."""
    longest = max((len(label.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))
                   for label in labels), default=1)
    return 0.62 * font_size * min(longest, 24)


def token_margins(row_labels: Sequence[str], col_labels: Sequence[str], *, title: bool) -> dict:
    """Margins that fit the y tick labels on the left and the 45°-rotated x labels below."""
    left = label_px(row_labels, tick_font_size(len(row_labels))) + 40
    bottom = 0.75 * label_px(col_labels, tick_font_size(len(col_labels))) + 50
    return dict(l=int(np.clip(left, 60, 220)), r=20, t=70 if title else 30, b=int(np.clip(bottom, 50, 200)))


def heatmap_size(row_labels: Sequence[str], col_labels: Sequence[str], *, title: bool,
                 right: int = 110) -> dict:
    """width, height and margin for one token heatmap: grows with the tokens, bounded (~720 px of cells)."""
    cell = cell_px(max(len(row_labels), len(col_labels)))
    margin = token_margins(row_labels, col_labels, title=title)
    margin["r"] = right
    width = margin["l"] + margin["r"] + len(col_labels) * cell
    height = margin["t"] + margin["b"] + len(row_labels) * cell
    return dict(width=int(max(width, 320)), height=int(max(height, 220)), margin=margin)


def cell_gap(n: int) -> int:
    """White lines between cells while cells are big enough for them not to wash the colours out."""
    return 1 if cell_px(n) >= 14 else 0


def house_layout(title: str = "", **layout) -> dict:
    """House look: white template, one font, escaped plain-text title, readable hover labels."""
    spec = dict(template=TEMPLATE, font=dict(family=FONT_FAMILY, size=12, color=TEXT_COLOR),
                hoverlabel=dict(bgcolor="white", bordercolor=MUTED_COLOR,
                                font=dict(family=FONT_FAMILY, size=12, color=TEXT_COLOR)),
                plot_bgcolor="white")
    if title:
        spec["title"] = dict(text=escape_text(title), x=0.01, xanchor="left", font=dict(size=16))
    for key, value in layout.items():  # axes set earlier keep their settings
        if isinstance(value, dict) and isinstance(spec.get(key), dict):
            spec[key] = {**spec[key], **value}
        else:
            spec[key] = value
    return spec


def figure(data: list[dict], layout: dict, title: str = "") -> go.Figure:
    """A figure from plain trace and layout dicts in the house look, without Plotly's validation (slow)."""
    return go.Figure({"data": data, "layout": house_layout(title, **layout)}, _validate=False)


def finish_layout(fig: go.Figure, title: str = "", **layout) -> go.Figure:
    """``house_layout`` applied to a graph-object figure (views not yet built as dicts)."""
    fig.update_layout(title=None)
    # The template by name: validating the expanded dict would cost ~200 ms; to_json expands the name.
    fig.update_layout(house_layout(title, **layout), template="plotly_white")
    return fig


def colorbar(title: str = "", **kwargs) -> dict:
    """Colour-bar settings; keyword arguments (x, len, tickvals, ...) override the defaults."""
    return {"title": dict(text=title, side="right", font=dict(size=11)), "thickness": 12, "len": 0.8,
            "outlinewidth": 0, "tickfont": dict(size=10), **kwargs}
