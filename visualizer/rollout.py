"""Attention rollout to the source beside raw cross-attention (Abnar & Zuidema 2020, section 3;
the encoder-decoder attention of "Attention Is All You Need" 3.2.3).

Two heatmaps with the same rows (one per output token, the decoding step that chose it) and the same
columns (the source tokens): left, how much each source token flows into that step through the whole
stack (rollout, rows sum to 1); right, the last decoder layer's cross-attention averaged over heads.
Width follows the page (autosize); only the height is set, from the number of rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .checks import as_array, check_index, labels_for
from .grid import STACKED_TITLE_PX, on_axes, set_axes, stacked_pair, subplot_grid
from .heatmap import highlight_rows, token_axis, token_heatmap, token_margins
from .theme import ATTENTION_SCALE, colorbar, figure

ROW_PX = 24  # pixels per output token row


def scale_top(values: np.ndarray) -> float:
    """The top of a colour scale that shows ``values`` in [0, 1]: their maximum rounded up to 0.05 (>= 0.05)."""
    return float(np.clip(np.ceil(float(np.max(values)) * 20) / 20, 0.05, 1.0))


def paired_heatmaps(
    left: np.ndarray,
    right: np.ndarray,
    rows: Sequence[str],
    cols: Sequence[str],
    *,
    names: tuple[str, str],
    highlight_row: int | None = None,
    title: str = "",
    value_name: str = "weight",
    left_scale: str | None = None,
) -> go.Figure:
    """Two (R, C) heatmaps over the same tokens side by side, shared rows.

    left, right: (R, C) values in [0, 1]; rows: R row tokens; cols: C column tokens;
    names: the two panel titles (plain text, escaped); highlight_row: a row to outline in both.
    left_scale: None = one 0-1 colour scale for both; else the left panel gets its own scale, 0 to its
    maximum (rounded up), beside it, with this name and that range on its colour bar (rollout's values stay
    far below 1 and looked blank on the 0-1 scale).
    """
    a, b = as_array("left", left, 2), as_array("right", right, 2)
    if a.shape != b.shape:
        raise ValueError(f"left {a.shape} and right {b.shape} must have the same shape")
    row_labels = labels_for("rows", rows, a.shape[0])
    col_labels = labels_for("cols", cols, a.shape[1])
    highlight = check_index("highlight_row", highlight_row, a.shape[0])
    layout, refs = subplot_grid(
        1,
        2,
        shared_yaxes=True,
        horizontal_spacing=0.06 if left_scale is None else 0.16,
        titles=[labels_for("names", list(names))[i] for i in range(2)],
        title_size=12,
    )
    series = []
    own = left_scale is not None
    for col, values in ((1, a), (2, b)):
        panel = refs[1, col]
        axis = "coloraxis2" if own and col == 1 else "coloraxis"
        series.append(
            on_axes(
                token_heatmap(values, row_labels, col_labels, value_name=value_name, coloraxis=axis, xgap=1, ygap=1),
                panel,
            )
        )
        set_axes(
            layout,
            panel,
            token_axis(col_labels, angle=-45 if len(col_labels) > 3 else 0),
            token_axis(row_labels, reverse=True, show=col == 1, title="output token" if col == 1 else None),
        )
    margin = token_margins(row_labels, col_labels, title=bool(title))
    margin["r"] = 70
    scales = {}
    panel_px = a.shape[0] * ROW_PX
    colorbars = {"coloraxis2": 0, "coloraxis": 1} if own else None  # a phone: each panel's colour bar beside it
    if own:
        top = scale_top(a)
        scales["coloraxis2"] = dict(
            cmin=0,
            cmax=top,
            colorscale=ATTENTION_SCALE,
            colorbar=colorbar(f"{left_scale} (0–{top:.2f})", x=layout["xaxis"]["domain"][1] + 0.01, xanchor="left"),
        )
    return figure(
        series,
        dict(
            layout,
            **scales,
            autosize=True,
            margin=margin,
            height=int(max(a.shape[0] * ROW_PX + margin["t"] + margin["b"], 280)),
            shapes=highlight_rows(highlight, a.shape[1], [refs[1, 1], refs[1, 2]]),
            coloraxis=dict(cmin=0, cmax=1, colorscale=ATTENTION_SCALE, colorbar=colorbar(value_name)),
            meta=dict(narrow=stacked_pair(layout, panel_px, margin["b"] + STACKED_TITLE_PX, margin, colorbars)),
        ),
        title,
    )


def rollout_figure(
    flow: np.ndarray,
    cross: np.ndarray,
    source_tokens: Sequence[str],
    output_tokens: Sequence[str],
    *,
    highlight_step: int | None = None,
    title: str = "",
) -> go.Figure:
    """Rollout to the source (T, S) beside raw cross-attention (T, S), rows = output tokens.

    flow: SourceFlow.source_distribution (rows sum to 1); cross: mean over heads of the last decoder
    layer's cross-attention. highlight_step: the 0-based step to outline.
    """
    return paired_heatmaps(
        flow,
        cross,
        output_tokens,
        source_tokens,
        highlight_row=highlight_step,
        title=title,
        names=("rollout: source share (own scale)", "raw cross-attention, last layer, mean of heads"),
        left_scale="rollout share",
    )
