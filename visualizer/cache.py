"""The decoder's key/value cache at one decoding step, one layer and head (section 3.1, auto-regressive
decoding; 3.2.3, the two kinds of decoder attention).

Top row, masked self-attention: the cached keys and values, one row per target position decoded so
far (the row written by this step outlined: the cache grew by it), and the bar of what this step's
query reads from them (its softmax weights). Bottom row, encoder-decoder attention: keys and values
projected once from the encoder memory (one row per source token, the same at every step) and this
step's weights over them. Key (K) and value (V) rows show their first `dims` dimensions (of d_head),
named in the title.
Width follows the page; the height grows with the tokens.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .checks import as_array, check_axis, labels_for
from .grid import Refs, on_axes, set_axes, subplot_grid
from .heatmap import highlight_rows, token_axis, token_heatmap
from .theme import ACCENT_COLOR, DIVERGING_SCALE, PRIMARY_COLOR, colorbar, figure

ROW_PX = 20
MAX_DIMS = 16


def cache_figure(
    self_keys: np.ndarray,
    self_values: np.ndarray,
    self_read: np.ndarray,
    cross_keys: np.ndarray,
    cross_values: np.ndarray,
    cross_read: np.ndarray,
    target_tokens: Sequence[str],
    source_tokens: Sequence[str],
    *,
    dims: int = MAX_DIMS,
    title: str = "",
) -> go.Figure:
    """The cache of one head at one step: self K, V (R rows) and read weights; cross K, V (S rows) and reads.

    Args:
        self_keys, self_values: (R, d_head) cached rows, R = step + 1 (CacheStep.self_keys[l, h]).
        self_read: (R,) this step's self-attention weights over them.
        cross_keys, cross_values: (S, d_head); cross_read: (S,).
        target_tokens: R tokens that wrote the self rows; source_tokens: S tokens.
        dims: how many leading dimensions of each row to draw.
    """
    sk, sv = as_array("self_keys", self_keys, 2), as_array("self_values", self_values, 2)
    ck, cv = as_array("cross_keys", cross_keys, 2), as_array("cross_values", cross_values, 2)
    sr, cr = as_array("self_read", self_read, 1), as_array("cross_read", cross_read, 1)
    for name, array, reference in (("self_values", sv, sk), ("cross_values", cv, ck)):
        if array.shape != reference.shape:
            raise ValueError(f"{name} {array.shape} must match the keys {reference.shape}")
    check_axis("self_read", sr, 0, sk.shape[0], "cached rows")
    check_axis("cross_read", cr, 0, ck.shape[0], "source rows")
    targets = labels_for("target_tokens", target_tokens, sk.shape[0])
    sources = labels_for("source_tokens", source_tokens, ck.shape[0])
    d = int(min(max(dims, 1), sk.shape[1]))
    rows = np.array([len(targets), len(sources)], dtype=float)
    layout, refs = subplot_grid(
        2,
        3,
        column_widths=[3, 3, 2],
        row_heights=rows + 2,
        horizontal_spacing=0.04,
        vertical_spacing=0.12,
        title_size=12,
        titles=["self K", "self V", "reads", "cross K (once)", "cross V", "reads"],
    )
    limit = float(
        max(np.abs(sk[:, :d]).max(), np.abs(sv[:, :d]).max(), np.abs(ck[:, :d]).max(), np.abs(cv[:, :d]).max(), 1e-6)
    )
    dim_labels = [str(i) for i in range(d)]
    series = []
    for row, labels, keys, values, read, name in ((1, targets, sk, sv, sr, "self"), (2, sources, ck, cv, cr, "cross")):
        series += key_value_heatmaps(layout, refs, row, labels, keys[:, :d], values[:, :d], dim_labels)
        series.append(read_bars(layout, refs[row, 3], read, labels, wrote_last=name == "self"))
    shapes = highlight_rows(len(targets) - 1, d, [refs[1, 1], refs[1, 2]])
    height = int(rows.sum() * ROW_PX + 190 + (40 if title else 0))
    return figure(
        series,
        dict(
            layout,
            shapes=shapes,
            showlegend=False,
            autosize=True,
            height=max(height, 360),
            margin=dict(l=90, r=60, t=90 if title else 50, b=20),
            coloraxis=dict(cmin=-limit, cmax=limit, colorscale=DIVERGING_SCALE, colorbar=colorbar("value", len=0.5)),
        ),
        f"{title} · dims 1-{d} of {sk.shape[1]}" if title else "",
    )


def key_value_heatmaps(
    layout: dict,
    refs: dict[tuple[int, int], Refs],
    row: int,
    labels: list[str],
    keys: np.ndarray,
    values: np.ndarray,
    dim_labels: list[str],
) -> list[dict]:
    """One grid row's K and V heatmaps (columns 1 and 2), keys and values (rows, dims) sharing the coloraxis;
    sets their axes in layout (token labels on the K panel only)."""
    series = []
    for col, matrix in ((1, keys), (2, values)):
        panel = refs[row, col]
        series.append(
            on_axes(
                token_heatmap(
                    matrix,
                    labels,
                    dim_labels,
                    row_name="row",
                    col_name="dim",
                    value_name="value",
                    value_format=".3f",
                    coloraxis="coloraxis",
                ),
                panel,
            )
        )
        set_axes(layout, panel, token_axis(dim_labels, show=False), token_axis(labels, reverse=True, show=col == 1))
    return series


def read_bars(layout: dict, panel: Refs, read: np.ndarray, labels: list[str], *, wrote_last: bool) -> dict:
    """The horizontal bars of this step's attention weights (R,) or (S,) over the rows, in panel; with
    wrote_last the last bar (the row this step wrote) in the accent colour. Sets the panel's axes in layout."""
    colors = [PRIMARY_COLOR] * len(labels)
    if wrote_last:
        colors[-1] = ACCENT_COLOR  # the row this step wrote
    set_axes(
        layout,
        panel,
        dict(range=[0, 1], nticks=3, tickfont=dict(size=9)),
        dict(autorange="reversed", showticklabels=False),
    )
    return on_axes(
        dict(
            type="bar",
            orientation="h",
            x=read,
            y=np.arange(len(labels)),
            marker_color=colors,
            customdata=np.array(labels, dtype=object),
            hovertemplate="%{customdata}: <b>%{x:.3f}</b><extra></extra>",
        ),
        panel,
    )
