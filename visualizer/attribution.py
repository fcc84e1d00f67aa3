"""Attribution beside attention, for the Explain tab: integrated gradients and input x gradient over the source
tokens next to each layer's cross-attention at one step, and their rank correlation (Spearman's rho) at every
step.

Pure: numpy arrays and token lists in, a Plotly figure (dict specs) out; its width follows the page, and a
figure whose columns need more than a phone scrolls in its own box (visualizer/heatmap.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .checks import as_array, check_index, labels_for
from .grid import Refs, axis_name, on_axes, set_axes, subplot_grid
from .heatmap import MIN_COLUMN_PX, cell_px, fit_width, token_axis, token_heatmap, token_margins
from .theme import ACCENT_COLOR, DIVERGING_SCALE, GRID_COLOR, MUTED_COLOR, PALETTE, axis_title, colorbar, figure

RHO_PANEL_PX = 150  # the rho panel: with the tokens' panel it fits under the bar at 1280x720
PANEL_GAP_PX = 90  # between the two panels (the rotated token labels and the rho title)
NARROW_LEGEND_PX = 40  # a phone: the layers' legend lies across under the rho panel, in this much more height
RHO_TITLE = "Spearman ρ between |IG| and attention, per step"
NARROW_RHO_TITLE = "ρ(|IG|, attention) per step"


def attribution_figure(
    source_tokens: Sequence[str],
    integrated: np.ndarray,
    input_x_gradient: np.ndarray,
    attention: np.ndarray,
    correlation: np.ndarray,
    *,
    step: int,
    output_tokens: Sequence[str] | None = None,
    completeness: tuple[float, float] | None = None,
    title: str = "",
) -> go.Figure:
    """Top: rows IG, input x gradient and each layer's head-mean cross-attention over the source tokens at
    one step, each row scaled by its largest |value| (hover: the raw value). Bottom: Spearman's rho between
    |IG| and each layer's attention at every step, the shown step marked.

    Args:
        source_tokens: S tokens; integrated, input_x_gradient: (S,) signed attributions at the step;
        attention: (L, S) head-mean cross-attention at the step; correlation: (L, T) rho per layer and step
            (NaN where undefined); step: 0-based step shown; output_tokens: T tokens (the bottom axis).
        completeness: (sum of IG, f(x) - f(baseline)) at the step, written in the corner.
    """
    cols = labels_for("source_tokens", source_tokens)
    ig = as_array("integrated", integrated, 1, dtype=np.float64)
    ixg = as_array("input_x_gradient", input_x_gradient, 1, dtype=np.float64)
    att = as_array("attention", attention, 2, dtype=np.float64)
    rho = as_array("correlation", correlation, 2, dtype=np.float64)
    if ig.shape != (len(cols),) or ixg.shape != (len(cols),) or att.shape[1] != len(cols):
        raise ValueError(f"attributions and attention need one value per source token ({len(cols)})")
    if rho.shape[0] != att.shape[0]:
        raise ValueError(f"correlation has {rho.shape[0]} layers but attention has {att.shape[0]}")
    t = check_index("step", step, rho.shape[1])
    steps = (
        labels_for("output_tokens", output_tokens, rho.shape[1])
        if output_tokens is not None
        else [str(i + 1) for i in range(rho.shape[1])]
    )
    rows = ["integrated gradients", "input × gradient", *[f"attention, layer {l + 1}" for l in range(att.shape[0])]]
    cell = cell_px(len(cols), budget=760, low=MIN_COLUMN_PX, high=40)
    layout, refs = subplot_grid(
        2,
        1,
        row_heights=[len(rows) * 30 + 10, RHO_PANEL_PX],
        vertical_spacing=0.2,
        titles=[f"step {t + 1}: source tokens", RHO_TITLE],
        title_size=14,
    )
    series = [attribution_rows(layout, refs[1, 1], rows, cols, np.vstack([ig, ixg, att]))]  # (2 + L, S) rows
    series += rho_lines(layout, refs[2, 1], rho, steps)
    annotations = list(layout.get("annotations", []))
    if completeness is not None:
        annotations.append(completeness_note(completeness))
    margin = token_margins(rows, cols, title=bool(title))
    margin.update(r=90, t=110 if title else 80)
    sides = margin["l"] + margin["r"]
    height = int(len(rows) * 30 + 10 + RHO_PANEL_PX + margin["t"] + margin["b"] + PANEL_GAP_PX)
    return figure(
        series,
        dict(
            layout,
            annotations=annotations,
            shapes=[step_line(t, refs[2, 1])],
            height=height,
            margin=margin,
            # beside the rho panel: below it, the legend covered the output tokens' labels
            legend=dict(orientation="v", x=1.01, xanchor="left", y=0, yanchor="bottom"),
            autosize=True,
            meta=dict(narrow=narrow_layout(refs[1, 1], rows, cols, annotations, height, margin)),
            **fit_width(sides + len(cols) * MIN_COLUMN_PX, sides + len(cols) * cell),
        ),
        title,
    )


def short_row_label(row: str) -> str:
    """A row's name as a phone shows it beside the cells (the hover keeps the whole name)."""
    return {"integrated gradients": "IG", "input × gradient": "input × grad"}.get(row, row.replace("attention, ", ""))


def narrow_layout(
    panel: Refs, rows: list[str], cols: list[str], annotations: list[dict], height: int, margin: dict
) -> dict:
    """The layout a phone draws instead (``meta.narrow``, applied by ui/js/figures.js): short row labels and a
    narrow right margin, so the cells take the width the colour bar and the legend held (no colour bar: the hover
    gives each raw value); the layers' legend across under the rho panel; the rho panel's title shortened."""
    plot_px = max(height - margin["t"] - margin["b"], 1)
    short_rows = [short_row_label(row) for row in rows]
    y_axis = axis_name(panel[1])
    return dict(
        margin=dict(
            l=token_margins(short_rows, cols, title=False)["l"],
            r=16,
            t=margin["t"],
            b=margin["b"] + NARROW_LEGEND_PX,
        ),
        height=height + NARROW_LEGEND_PX,
        legend=dict(
            orientation="h",
            x=0,
            xanchor="left",
            y=-margin["b"] / plot_px,
            yanchor="top",
            entrywidthmode="fraction",
            entrywidth=1 / 3,
        ),
        annotations=[
            dict(note, text=NARROW_RHO_TITLE) if note.get("text") == RHO_TITLE else note for note in annotations
        ],
        **{y_axis: dict(ticktext=short_rows)},  # merged into the axis (ui/js/figures.js)
        traces=[dict(showscale=False)],  # the hover gives each raw value; the lead says how rows are scaled
    )


def attribution_rows(layout: dict, panel: Refs, rows: list[str], cols: list[str], raw: np.ndarray) -> dict:
    """The top panel's heatmap of raw (rows, S): each row scaled by its largest |value| on a diverging -1..1
    scale, the raw value written in the hover. Sets the panel's axes in layout."""
    scale = np.abs(raw).max(axis=1, keepdims=True)
    shown = raw / np.where(scale > 0, scale, 1.0)
    text = np.array([[f"{v:+.4f}" for v in row] for row in raw])
    heat = on_axes(
        token_heatmap(
            shown,
            rows,
            cols,
            row_name="",
            col_name="source",
            value_name="value",
            value_text=text,
            zmin=-1,
            zmax=1,
            colorscale=DIVERGING_SCALE,
            xgap=1,
            ygap=1,
            colorbar=colorbar("share of row max", len=0.4, y=0.8),
        ),
        panel,
    )
    set_axes(
        layout,
        panel,
        token_axis(cols, angle=-45 if len(cols) > 3 else 0),
        dict(token_axis(rows, reverse=True), ticktext=rows),
    )
    return heat


def rho_lines(layout: dict, panel: Refs, rho: np.ndarray, steps: list[str]) -> list[dict]:
    """The bottom panel: a line of rho (L, T) per layer across the steps, named by their output tokens. Sets the
    panel's axes in layout."""
    series = [
        on_axes(
            dict(
                type="scatter",
                x=np.arange(rho.shape[1]),
                y=rho[l],
                mode="lines+markers",
                name=f"layer {l + 1}",
                line=dict(color=PALETTE[l % len(PALETTE)], width=2),
                marker=dict(size=5),
                customdata=np.array(steps, dtype=object),
                hovertemplate=f"layer {l + 1} · step %{{x}} (%{{customdata}})<br>ρ <b>%{{y:.2f}}</b><extra></extra>",
            ),
            panel,
        )
        for l in range(rho.shape[0])
    ]
    set_axes(
        layout,
        panel,
        dict(
            tickmode="array",
            tickvals=np.arange(rho.shape[1]),
            ticktext=steps,
            tickangle=-45,
            tickfont=dict(size=10),
            showgrid=False,
            title=axis_title("output token (step)"),
        ),
        dict(
            range=[-1.05, 1.05], gridcolor=GRID_COLOR, zeroline=True, zerolinecolor=MUTED_COLOR, title=axis_title("ρ")
        ),
    )
    return series


def step_line(t: int, panel: Refs) -> dict:
    """A dotted accent line across the rho panel at step t, the step the top panel shows."""
    return dict(
        type="line",
        x0=t,
        x1=t,
        xref=panel[0],
        y0=0,
        y1=1,
        yref=f"{panel[1]} domain",
        line=dict(color=ACCENT_COLOR, width=2, dash="dot"),
    )


def completeness_note(completeness: tuple[float, float]) -> dict:
    """The figure's top-right note: the sum of IG against f(x) − f(baseline), which it should equal."""
    return dict(
        text=f"Σ IG {completeness[0]:+.3f} vs f(x) − f(0) {completeness[1]:+.3f}",
        xref="paper",
        yref="paper",
        x=1,
        y=1.0,
        xanchor="right",
        yanchor="bottom",
        yshift=18,
        showarrow=False,
        font=dict(size=11, color=MUTED_COLOR),
    )
