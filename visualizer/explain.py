"""Figures for the "Explain" tab: interventions and read-outs that go beyond looking at attention.

- ``probability_change_figure``: per step, how an intervention (heads switched off, 3.2.2;
  positional encodings removed, 3.5) changes the probability of the originally chosen token.
- ``head_diagnostics_figure``: per-head statistics as layers x heads heatmaps (3.2.2).
- ``attention_comparison``: one head's attention in two runs side by side (e.g. with and without PE).

The tab's word alignment (3.2.3) is drawn by visualizer/alignment.py, the logit lens (3.4) by visualizer/lens.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from .checks import as_array, as_probabilities, check_axis, labels_for
from .grid import STACKED_TITLE_PX, Refs, on_axes, set_axes, spacing, stacked_pair, subplot_grid
from .heatmap import (
    cell_px,
    fit_width,
    indexed,
    token_axes,
    token_heatmap,
    token_margins,
)
from .theme import (
    ATTENTION_SCALE,
    GRID_COLOR,
    MUTED_COLOR,
    SEQUENTIAL_SCALE,
    axis_title,
    colorbar,
    corner_note,
    figure,
    outline,
)
from .tokens import escape_text

DROP_COLOR = "#d1495b"  # probability went down
RISE_COLOR = "#2e86ab"  # probability went up


# --------------------------------------------------------------------------- probability change
def probability_change_figure(
    tokens: Sequence[str],
    original: np.ndarray,
    changed: np.ndarray,
    *,
    changed_name: str = "after the intervention",
    title: str = "",
) -> go.Figure:
    """Bars of p_changed − p_original per output token (red: down, blue: up), both in the hover.

    Args:
        tokens: the T original output tokens (x axis, in order).
        original: (T,) probability of each token in the original run.
        changed: (T,) probability of the same tokens, teacher-forced under the intervention.
        changed_name: how the hover names the second run.
        title: plain text (escaped).
    """
    p0 = as_probabilities("original", original)
    p1 = as_probabilities("changed", changed, p0.shape[0])
    labels = labels_for("tokens", tokens, p0.shape[0])
    delta = p1 - p0
    mean, count = f"{float(delta.mean()):+.1%}", len(labels)
    x = np.arange(len(labels))
    bars = dict(
        type="bar",
        x=x,
        y=delta,
        marker=dict(color=np.where(delta < 0, DROP_COLOR, RISE_COLOR), line=dict(width=0)),
        customdata=np.stack([indexed(labels), p0, p1], axis=-1).astype(object),
        name="change",
        hovertemplate=(
            f"step %{{x}} · <b>%{{customdata[0]}}</b><br>original p = %{{customdata[1]:.3f}}"
            f"<br>{escape_text(changed_name)} p = %{{customdata[2]:.3f}}<br>change "
            "<b>%{y:+.3f}</b><extra></extra>"
        ),
    )
    bound = float(np.clip(1.15 * np.abs(delta).max(), 0.05, 1.05))  # small changes stay visible
    zero_line = dict(
        type="line", xref="x domain", x0=0, x1=1, yref="y", y0=0, y1=0, line=dict(color=MUTED_COLOR, width=1)
    )
    fig = figure(
        [bars],
        dict(
            xaxis=dict(
                tickmode="array",
                tickvals=x,
                ticktext=labels,
                tickangle=-45 if len(labels) > 6 else 0,
                showgrid=False,
                title=axis_title("original output token"),
            ),
            yaxis=dict(
                range=[-bound, bound],
                tickformat="+.0%",
                gridcolor=GRID_COLOR,
                zeroline=False,
                title=axis_title("change in probability"),
            ),
            shapes=[zero_line],
            annotations=[corner_note(f"mean change {mean} over {count} tokens")],
            # a phone: the note joins the y axis's title as its second line (above the plot it met the title
            # broken into lines)
            meta=dict(
                narrow=dict(
                    annotations=[],
                    yaxis=dict(title=axis_title(f"change in probability<br>mean {mean} over {count} tokens")),
                )
            ),
            height=400,
            showlegend=False,
            bargap=0.3,
            **fit_width(90 + 14 * len(labels), 90 + 20 * len(labels)),
            margin=dict(l=70, r=20, t=100 if title else 40, b=110),
        ),
        title,
    )
    if title:  # just above the plot area, clear of Plotly's toolbar (which floats at the very top)
        fig.layout.title.update(yref="paper", y=1, yanchor="bottom", pad=dict(b=28))
    return fig


# --------------------------------------------------------------------------- head diagnostics
def head_diagnostics_figure(
    stats: Mapping[str, np.ndarray],
    titles: Mapping[str, str] | None = None,
    *,
    selected: tuple[int, int] | None = None,
    title: str = "",
) -> go.Figure:
    """One layers x heads heatmap per statistic, values written in the cells.

    Args:
        stats: {name: (L, h) array}; "entropy" (bits) gets its own scale, the others are shares in [0, 1].
        titles: panel titles per name (default: the names).
        selected: a (layer, head) 0-based cell to outline in every panel.
        title: plain text (escaped).
    """
    if not stats:
        raise ValueError("stats is empty")
    arrays = {name: as_array(name, value, 2, dtype=np.float64) for name, value in stats.items()}
    shape = next(iter(arrays.values())).shape
    for name, array in arrays.items():
        check_axis(name, array, 0, shape[0], "layers")
        check_axis(name, array, 1, shape[1], "heads")
    n_layers, n_heads = shape
    names = {name: escape_text(dict(titles or {}).get(name, name)) for name in arrays}
    cell = float(np.clip(220 / max(n_heads, n_layers), 22, 44))
    panel_w, gap = n_heads * cell, 46.0
    plot_w = len(arrays) * panel_w + (len(arrays) - 1) * gap
    layout, refs = subplot_grid(
        1, len(arrays), horizontal_spacing=spacing(gap, plot_w, len(arrays)), titles=list(names.values()), title_size=12
    )
    heads, layers = np.arange(1, n_heads + 1), np.arange(1, n_layers + 1)
    series, shapes = [], []
    for col, (name, values) in enumerate(arrays.items(), start=1):
        panel = refs[1, col]
        series.append(on_axes(diagnostic_heatmap(name, values, names[name], heads, layers), panel))
        set_axes(layout, panel, *diagnostic_axes(panel, heads, layers, show_layers=col == 1))
        if selected is not None:
            l, h = selected
            shapes.append(outline(h + 0.5, h + 1.5, l + 0.5, l + 1.5, xref=panel[0], yref=panel[1]))
    return figure(
        series,
        dict(
            layout,
            shapes=shapes,
            width=int(plot_w + 80),
            height=int(n_layers * cell + 130),
            margin=dict(l=50, r=30, t=90 if title else 60, b=30),
            meta=dict(narrow=narrow_diagnostics(list(names.values()), n_layers, n_heads, bool(title))),
        ),
        title,
    )


NARROW_COLUMNS = 2  # a phone: the statistics' panels two abreast (four abreast their cells were 5 px)
NARROW_BOX_PX = 360  # the width a phone's box gives a figure
NARROW_TITLE_CHARS = 20  # a panel title wider than this breaks into lines (12 px type over half a phone)


def narrow_diagnostics(titles: list[str], n_layers: int, n_heads: int, has_title: bool) -> dict:
    """The layout a phone draws instead (``meta.narrow``, applied by ui/js/figures.js): the panels NARROW_COLUMNS
    abreast in rows, each naming its layers and its title broken into lines that fit its width."""
    columns = min(NARROW_COLUMNS, len(titles))
    rows = -(-len(titles) // columns)
    margin = dict(l=34, r=8, t=(90 if has_title else 60) + 14, b=28)
    gap_x, gap_y = 26.0, 64.0  # px: between panels across; down, room for the heads' labels and a 2-line title
    cell = (NARROW_BOX_PX - margin["l"] - margin["r"] - (columns - 1) * gap_x) / (columns * n_heads)
    plot_w = NARROW_BOX_PX - margin["l"] - margin["r"]
    plot_h = rows * n_layers * cell + (rows - 1) * gap_y
    layout, refs = subplot_grid(
        rows,
        columns,
        horizontal_spacing=spacing(gap_x, plot_w, columns),
        vertical_spacing=spacing(gap_y, plot_h, rows),
        titles=[wrapped(title, NARROW_TITLE_CHARS) for title in titles],
        title_size=12,
    )
    for _, y in refs.values():
        layout[f"yaxis{y[1:]}"]["showticklabels"] = True  # every panel names its layers
    return dict(layout, height=int(plot_h + margin["t"] + margin["b"]), margin=margin)


def wrapped(text: str, width: int) -> str:
    """`text` broken at spaces into lines of at most `width` characters (a longer word stays whole), joined by
    Plotly's <br>."""
    lines: list[str] = []
    for word in text.split(" "):
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "<br>".join(lines)


def diagnostic_heatmap(name: str, values: np.ndarray, label: str, heads: np.ndarray, layers: np.ndarray) -> dict:
    """One statistic's (L, h) heatmap, its values written in the cells: "entropy" in bits on its own scale,
    any other statistic a share in [0, 1] written as a percentage; the hover names it `label`."""
    bits = name == "entropy"
    text = np.array([[f"{v:.1f}" if bits else f"{100 * v:.0f}" for v in row] for row in values])
    return dict(
        type="heatmap",
        z=values,
        x=heads,
        y=layers,
        zmin=0,
        zmax=max(float(values.max()), 1.0) if bits else 1.0,
        showscale=False,
        colorscale=SEQUENTIAL_SCALE if bits else ATTENTION_SCALE,
        text=text,
        texttemplate="%{text}",
        textfont=dict(size=10),
        xgap=2,
        ygap=2,
        hovertemplate=(
            f"layer %{{y}} · head %{{x}}<br>{label}: "
            + ("<b>%{z:.2f}</b> bits" if bits else "<b>%{z:.0%}</b>")
            + "<extra></extra>"
        ),
    )


def diagnostic_axes(panel: Refs, heads: np.ndarray, layers: np.ndarray, *, show_layers: bool) -> tuple[dict, dict]:
    """A statistic panel's (x, y) axes: heads "H1".. across, layers "L1".. down (named on the first panel
    only), square cells."""
    xaxis = dict(
        tickmode="array",
        tickvals=heads,
        ticktext=[f"H{h}" for h in heads],
        showgrid=False,
        zeroline=False,
        side="bottom",
    )
    yaxis = dict(
        tickmode="array",
        tickvals=layers,
        ticktext=[f"L{l}" for l in layers],
        showgrid=False,
        zeroline=False,
        autorange="reversed",
        showticklabels=show_layers,
        scaleanchor=panel[0],
    )
    return xaxis, yaxis


# --------------------------------------------------------------------------- two runs side by side
def attention_comparison(
    first: np.ndarray,
    second: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    *,
    names: tuple[str, str] = ("first", "second"),
    title: str = "",
) -> go.Figure:
    """One head's (Tq, Tk) attention in two runs of the same sentence, side by side on one 0-1 scale."""
    a = as_array("first", first, 2)
    b = as_array("second", second, 2)
    if a.shape != b.shape:
        raise ValueError(f"first {a.shape} and second {b.shape} must have the same shape")
    queries = labels_for("query_tokens", query_tokens, a.shape[0])
    keys = labels_for("key_tokens", key_tokens, a.shape[1])
    cell = cell_px(max(a.shape), budget=420, low=8, high=30)
    gap = 70.0
    plot_w = 2 * a.shape[1] * cell + gap
    layout, refs = subplot_grid(
        1, 2, shared_yaxes=True, horizontal_spacing=gap / plot_w, titles=[escape_text(name) for name in names]
    )
    series = []
    for col, weights in ((1, a), (2, b)):
        panel = refs[1, col]
        series.append(on_axes(token_heatmap(weights, queries, keys, coloraxis="coloraxis", xgap=1, ygap=1), panel))
        set_axes(
            layout,
            panel,
            *token_axes(
                queries, keys, panel[1], show_rows=col == 1, row_title="query" if col == 1 else None, col_title="key"
            ),
        )
    margin = token_margins(queries, keys, title=bool(title))
    margin["r"] = 90
    narrow_cell = (NARROW_BOX_PX - margin["l"] - margin["r"]) / a.shape[1]  # a phone: each panel the box's width
    narrow_gap = margin["b"] + STACKED_TITLE_PX
    return figure(
        series,
        dict(
            layout,
            margin=margin,
            width=int(plot_w + margin["l"] + margin["r"]),
            height=int(max(a.shape[0] * cell + margin["t"] + margin["b"], 260)),
            coloraxis=dict(cmin=0, cmax=1, colorscale=ATTENTION_SCALE, colorbar=colorbar("weight")),
            meta=dict(narrow=stacked_pair(layout, a.shape[0] * narrow_cell, narrow_gap, margin)),
        ),
        title,
    )
