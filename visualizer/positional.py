"""Sinusoidal positional encoding, section 3.5: PE(pos, 2i) = sin(pos / 10000^(2i/d_model)),
PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)): the paper's "interleaved" layout. Marian's models (OPUS-MT) lay the
same sinusoids out in "halves": the d_model/2 sines first, PE(pos, i), then the cosines, PE(pos, d_model/2 + i).
Which column holds which sinusoid follows the layout the figure is given (`sinusoid_of`).

Three panels from the encoding matrix the model adds to its embeddings: (a) the whole matrix,
positions x dimensions, with the positions of the sentence marked; (b) a few dimensions as waves
over position, from the fastest (dimension 0) to the slowest (d_model - 2, d_model - 1); (c) the dot product of every pair of
positions, which depends only on their distance: why the paper expected relative positions to be
easy to attend to.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .checks import as_array, labels_for
from .grid import on_axes, set_axes, subplot_grid
from .heatmap import fit_width
from .theme import (
    ACCENT_COLOR,
    DIVERGING_SCALE,
    GRID_COLOR,
    PALETTE,
    SEQUENTIAL_SCALE,
    axis_title,
    colorbar,
    figure,
    outline,
)

PANEL_TITLES = (
    "(a) PE: positions × dimensions",
    "(b) fast (low) to slow (high) dimensions over position",
    "(c) PE·PEᵀ: similarity of positions",
)
MIN_PE_ROWS = (
    64  # the page's table shows rows 0..max(S, T, this)-1 (capped at max_positions): its sinusoids read as waves
)
HEIGHT_PX = 860  # the figure's height: panel (a) gives every position a row of (HEIGHT - margins) / P pixels
MARGIN_PX = dict(l=110, r=130, t=80, b=60)  # room for token labels (left) and the two colour bars (right)
WIDTH_PX = (720, 1120)  # the figure's width range (fit_width): narrower boxes scroll
TICK_GAP_PX = 11  # position labels at least this far apart (the label font is 10-11 px)
TICK_FONT_PX = (10, 11)  # the label font: row height - 1.5 px, within this range
POSITION_TICK_STEP = 8  # after the sentence, every 8th position is numbered
STACKED_ROWS = (0.45, 0.3, 0.25)  # a narrow box: (a), (b), (c) one above the other, these shares of the height
STACKED_GAP = 0.06  # between the stacked panels (room for the next one's title), a share of the height
STACKED_HEIGHT_PX = 1500
STACKED_MARGIN_PX = dict(l=80, r=70, t=80, b=50)
STACKED_TITLE_LIFT_PX = 8  # a narrow box: the panel titles this far above their panels, clear of a top row's label
WAVE_SPACING = 2.6  # vertical offset between stacked sinusoids in panel (b) (each spans [-1, 1])
WAVE_MARGIN = 1.3  # room above the top wave and below the bottom one


LAYOUTS = ("interleaved", "halves")  # model/core/positional.py's layouts of the table's columns
# panel (b)'s sinusoids when none are asked for, fast to slow: (i, cosine?) of sin/cos(pos / 10000^(2i/d_model));
# i = d_model/4 and d_model/2 - 1 are added per width. In the interleaved layout: dimensions 0, 1, 8, 32, 64.
DEFAULT_WAVES = ((0, False), (0, True), (4, False), (16, False), (32, False))


def check_layout(layout: str) -> None:
    if layout not in LAYOUTS:
        raise ValueError(f"unknown positional layout {layout!r}; expected one of {', '.join(LAYOUTS)}")


def sinusoid_of(dim: int, d_model: int, layout: str = "interleaved") -> tuple[str, int]:
    """("sin" or "cos", i) of a column of the table: it holds sin or cos of pos / 10000^(2i/d_model)."""
    check_layout(layout)
    if layout == "halves":
        half = d_model // 2
        return ("cos", dim - half) if dim >= half else ("sin", dim)
    return ("sin" if dim % 2 == 0 else "cos"), dim // 2


def dimension_of(i: int, cosine: bool, d_model: int, layout: str = "interleaved") -> int:
    """The column holding sin (cosine False) or cos of pos / 10000^(2i/d_model): `sinusoid_of` inverted."""
    check_layout(layout)
    return i + (d_model // 2 if cosine else 0) if layout == "halves" else 2 * i + int(cosine)


def default_dims(d_model: int, layout: str = "interleaved") -> list[int]:
    """Panel (b)'s columns, fast to slow: DEFAULT_WAVES, then i = d_model/4 and the slowest, d_model/2 - 1 (sines),
    those past the table's d_model/2 frequencies dropped."""
    waves = [*DEFAULT_WAVES, (d_model // 4, False), (d_model // 2 - 1, False)]
    return [dimension_of(i, cosine, d_model, layout) for i, cosine in waves if 0 <= i < d_model // 2]


def dimension_axis_title(d_model: int, layout: str) -> str:
    """Panel (a)'s x title: which columns are sines and which cosines."""
    if layout == "halves":
        half = d_model // 2
        return f"dimension (0–{half - 1} sin, {half}–{d_model - 1} cos)"
    return "dimension (even sin, odd cos)"


def position_ticks(n_positions: int, labels: list[str], row_px: float) -> dict:
    """y ticks: the sentence's tokens at their positions, then every 8th position as a number."""
    values = list(range(len(labels)))
    text = list(labels)
    step = POSITION_TICK_STEP
    start = step * (len(labels) // step + 1) if labels else 0
    for position in range(start, n_positions, step):
        values.append(position)
        text.append(str(position))
    every = max(1, int(np.ceil(TICK_GAP_PX / max(row_px, 1e-9))))  # labels >= 11 px apart, never below 10 px
    if every > 1:  # long sentences: every k-th token (and the numbered positions stay as they are)
        keep = [i for i, value in enumerate(values) if value >= len(labels) or value % every == 0]
        values, text = [values[i] for i in keep], [text[i] for i in keep]
    return dict(
        tickmode="array",
        tickvals=np.array(values),
        ticktext=text,
        tickfont=dict(size=int(np.clip(row_px - 1.5, *TICK_FONT_PX))),
    )


def matrix_panel(
    enc: np.ndarray, labels: list[str], token_of: np.ndarray, layout: dict, matrix, pe_layout: str
) -> tuple[dict, list]:
    """(a) the matrix -> (its heatmap, its shapes). Its rows are categories named "position token", which the
    hover reads instead of a (P, D) customdata repeating each token along the row. In the halves layout a line
    parts the sines from the cosines."""
    n_positions, d_model = enc.shape
    columns = dimension_axis_title(d_model, pe_layout).removeprefix("dimension ")
    heatmap = on_axes(
        dict(
            type="heatmap",
            z=enc,
            x=np.arange(d_model),
            y=np.array([f"{p}{token}" for p, token in enumerate(token_of)]),
            zmin=-1,
            zmax=1,
            coloraxis="coloraxis",
            hovertemplate=f"position %{{y}}<br>dimension %{{x}} {columns}<br>value %{{z:.4f}}<extra></extra>",
        ),
        matrix,
    )
    layout["coloraxis"] = dict(
        cmin=-1,
        cmax=1,
        colorscale=DIVERGING_SCALE,
        colorbar=colorbar("PE value", x=layout["xaxis"]["domain"][1] + 0.01, xanchor="left", len=0.5),
    )
    row_px = (HEIGHT_PX - MARGIN_PX["t"] - MARGIN_PX["b"]) / n_positions
    set_axes(
        layout,
        matrix,
        dict(
            title=axis_title(dimension_axis_title(d_model, pe_layout)),
            showgrid=False,
            zeroline=False,
            range=[-0.5, d_model - 0.5],
        ),
        dict(
            type="category",
            title=axis_title("position"),
            autorange="reversed",
            showgrid=False,
            zeroline=False,
            **position_ticks(n_positions, labels, row_px),
        ),
    )
    shapes = (
        [
            outline(
                -0.5, d_model - 0.5, -0.5, len(labels) - 0.5, width=2, name="sentence", xref=matrix[0], yref=matrix[1]
            )
        ]
        if labels
        else []
    )
    if pe_layout == "halves":  # the sines | the cosines
        half = d_model // 2 - 0.5
        shapes.append(
            dict(
                type="line",
                name="sin | cos",
                x0=half,
                x1=half,
                y0=0,
                y1=1,
                xref=matrix[0],
                yref=f"{matrix[1]} domain",
                line=dict(color=ACCENT_COLOR, width=2, dash="dot"),
            )
        )
    return heatmap, shapes


def waves_panel(
    enc: np.ndarray, chosen: list[int], labels: list[str], token_of: np.ndarray, layout: dict, waves, pe_layout: str
) -> tuple[list, list]:
    """(b) sinusoids -> (their lines, shapes): the matrix's own columns (so what is drawn is what the model adds),
    stacked one above the other because neighbouring dimensions have similar frequencies."""
    n_positions = enc.shape[0]
    positions = np.arange(n_positions)
    offsets = -WAVE_SPACING * np.arange(len(chosen))
    names, lines = [], []
    for index, dim in enumerate(chosen):
        kind, _ = sinusoid_of(dim, enc.shape[1], pe_layout)
        names.append(f"dim {dim} ({kind})")
        lines.append(
            on_axes(
                dict(
                    type="scatter",
                    x=positions,
                    y=enc[:, dim] + offsets[index],
                    mode="lines+markers",
                    name=names[-1],
                    line=dict(width=1.6, color=PALETTE[index % len(PALETTE)], shape="spline", smoothing=0.8),
                    marker=dict(size=3.5),
                    customdata=np.stack([token_of, enc[:, dim].astype(object)], axis=-1),
                    hovertemplate=f"{names[-1]}<br>position %{{x}}%{{customdata[0]}}<br>value %{{customdata[1]:.4f}}"
                    "<extra></extra>",
                ),
                waves,
            )
        )
    shapes = (
        [
            dict(
                type="rect",
                x0=-0.5,
                x1=len(labels) - 0.5,
                y0=0,
                y1=1,
                xref=waves[0],
                yref=f"{waves[1]} domain",
                fillcolor=ACCENT_COLOR,
                opacity=0.08,
                line=dict(width=0),
            )
        ]
        if labels
        else []
    )
    shown = n_positions  # every position: the slow dimensions need the whole range to be seen changing
    # the waves' names at their right ends (the right margin): the gap at their left holds (a)'s colour bar
    wave_y = dict(
        tickmode="array", tickvals=offsets, ticktext=names, gridcolor=GRID_COLOR, zeroline=False, side="right"
    )
    if chosen:
        wave_y["range"] = [offsets[-1] - WAVE_MARGIN, WAVE_MARGIN]
    set_axes(
        layout,
        waves,
        dict(title=axis_title("position"), gridcolor=GRID_COLOR, zeroline=False, range=[-0.5, shown - 0.5]),
        wave_y,
    )
    return lines, shapes


def similarity_panel(enc: np.ndarray, layout: dict, similar) -> dict:
    """(c) dot products of positions: D/2 on the diagonal, falling off with distance."""
    n_positions = enc.shape[0]
    positions = np.arange(n_positions)
    similarity = (enc.astype(np.float64) @ enc.T.astype(np.float64)).astype(np.float32)  # (P, P)
    heatmap = on_axes(
        dict(
            type="heatmap",
            z=similarity,
            x=positions,
            y=positions,
            coloraxis="coloraxis2",
            hovertemplate="positions %{y} · %{x}<br>PE·PE %{z:.2f}<extra></extra>",
        ),
        similar,
    )
    layout["coloraxis2"] = dict(
        colorscale=SEQUENTIAL_SCALE, colorbar=colorbar("PE·PE", x=1.0 + 0.01, xanchor="left", y=0.22, len=0.42)
    )
    set_axes(
        layout,
        similar,
        dict(title=axis_title("position"), showgrid=False, zeroline=False, range=[-0.5, n_positions - 0.5]),
        dict(title=axis_title("position"), autorange="reversed", showgrid=False, zeroline=False),
    )
    return heatmap


def stacked_layout(n_positions: int, labels: list[str]) -> dict:
    """The layout a narrow box (a phone) draws instead (ui/js/figures.js applies it): the three panels one
    above the other, the matrix tallest, in a taller figure with narrower side margins; the matrix's position
    labels (`position_ticks`) thinned for its rows there, the titles lifted clear of the top rows' labels."""
    layout, _ = subplot_grid(
        3, 1, row_heights=STACKED_ROWS, vertical_spacing=STACKED_GAP, titles=PANEL_TITLES, title_size=14
    )
    for title in layout["annotations"]:
        title["yshift"] = STACKED_TITLE_LIFT_PX
    (a_bottom, a_top), (c_bottom, c_top) = layout["yaxis"]["domain"], layout["yaxis3"]["domain"]
    bars = {
        name: dict(colorbar=dict(x=1.01, xanchor="left", y=(bottom + top) / 2, yanchor="middle", len=top - bottom))
        for name, (bottom, top) in (("coloraxis", (a_bottom, a_top)), ("coloraxis2", (c_bottom, c_top)))
    }
    plot_h = STACKED_HEIGHT_PX - STACKED_MARGIN_PX["t"] - STACKED_MARGIN_PX["b"]
    ticks = position_ticks(n_positions, labels, (a_top - a_bottom) * plot_h / n_positions)
    layout["yaxis"].update(ticks, tickvals=ticks["tickvals"].tolist())
    layout["yaxis2"]["side"] = "left"  # stacked, the waves' names sit at their left (the right margin is narrow)
    return dict(layout, **bars, height=STACKED_HEIGHT_PX, margin=dict(STACKED_MARGIN_PX))


def positional_encoding_figure(
    pe: np.ndarray,
    tokens: Sequence[str] | None = None,
    dims: tuple[int, ...] | None = None,
    layout: str = "interleaved",
) -> go.Figure:
    """The positional-encoding matrix, some of its sinusoids, and the similarity of positions.

    Args:
        pe: (P, D) positional encodings, values in [-1, 1].
        tokens: the sentence; tokens[i] labels position i (at most P tokens). None: no marking.
        dims: dimensions drawn in panel (b); those >= D are dropped. None: fast and slow ones (`default_dims`:
            in the interleaved layout 0, 1, 8, 32, 64, D/2, D-2, wavelengths 2π up to 2π·10000^((D-2)/D)).
        layout: how pe's columns hold the sinusoids (LAYOUTS): "interleaved" (the paper's: even = sin, odd = cos)
            or "halves" (Marian's: the first D/2 sin, the rest cos); it names panel (b)'s waves and (a)'s axis.

    Raises:
        ValueError: pe not 2-D, more tokens than positions, or an unknown layout.
    """
    check_layout(layout)
    enc = as_array("pe", pe, 2)
    n_positions, d_model = enc.shape
    labels = [] if tokens is None else labels_for("tokens", tokens)
    if len(labels) > n_positions:
        raise ValueError(f"{len(labels)} tokens but pe has only {n_positions} positions")
    if dims is None:
        dims = default_dims(d_model, layout)
    chosen = list(dict.fromkeys(int(d) for d in dims if 0 <= int(d) < d_model))  # in order, no repeats

    # (a) fills the left column, full height, so each position gets a row tall enough for its token.
    grid, refs = subplot_grid(
        2,
        2,
        specs=[[{"rowspan": 2}, {}], [None, {}]],
        column_widths=[0.45, 0.55],
        horizontal_spacing=0.13,
        vertical_spacing=0.13,
        titles=PANEL_TITLES,
        title_size=14,
    )
    token_of = np.array([f" {label}" for label in labels] + [""] * (n_positions - len(labels)), dtype=object)
    matrix, matrix_shapes = matrix_panel(enc, labels, token_of, grid, refs[1, 1], layout)
    lines, wave_shapes = waves_panel(enc, chosen, labels, token_of, grid, refs[1, 2], layout)
    similarity = similarity_panel(enc, grid, refs[2, 2])
    return figure(
        [matrix, *lines, similarity],
        dict(
            grid,
            shapes=matrix_shapes + wave_shapes,
            height=HEIGHT_PX,
            margin=dict(MARGIN_PX),
            showlegend=False,
            meta=dict(narrow=stacked_layout(n_positions, labels)),
            **fit_width(*WIDTH_PX),
        ),
        f"Positional encoding (section 3.5): {n_positions} positions × d_model = {d_model}"
        + (" (sines, then cosines)" if layout == "halves" else ""),
    )
