"""One encoder self-attention head drawn the way "Attention Is All You Need" draws it (Appendix,
Figures 3-5): the sentence twice, as two columns of tokens, queries on the left and keys on the
right, a line from query i to key j whose opacity is the weight A[i, j]. The figure's query words
(e.g. "making", "its") have their lines in the accent colour, the rest in the primary colour; the
figure's target words are written in bold.

Lines under MIN_WEIGHT are left out (they would be invisible anyway and cost a shape each).
Width follows the page; the height grows with the sentence.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

import numpy as np
import plotly.graph_objects as go

from .checks import as_array, labels_for
from .theme import ACCENT_COLOR, MUTED_COLOR, PRIMARY_COLOR, TEXT_COLOR, figure

MIN_WEIGHT = 0.02  # lines fainter than this are not drawn
TOKEN_PX = 22  # vertical pixels per token


def _indices(name: str, values: Collection[int], size: int) -> set[int]:
    chosen = {int(v) for v in values}
    if any(not 0 <= v < size for v in chosen):
        raise ValueError(f"{name} must lie in 0..{size - 1}, got {sorted(chosen)}")
    return chosen


def paper_lines_figure(
    weights: np.ndarray,
    tokens: Sequence[str],
    *,
    query_tokens: Collection[int] = (),
    target_tokens: Collection[int] = (),
    only_queries: bool = False,
    title: str = "",
) -> go.Figure:
    """Lines between two token columns, opacity = attention weight, as in the paper's Figures 3-5.

    Args:
        weights: (S, S) one head's self-attention, rows (queries) summing to 1.
        tokens: S tokens, the same on both sides.
        query_tokens: indices whose lines are drawn in the accent colour (the figure's query word).
        target_tokens: indices written in bold on the key side (the words the paper's head finds).
        only_queries: draw only the lines of `query_tokens` (as Figures 3 and 4 do); else every query's.
        title: plain text (escaped).
    """
    w = as_array("weights", weights, 2, dtype=np.float64)
    if w.shape[0] != w.shape[1]:
        raise ValueError(f"weights must be square self-attention (S, S), got shape {w.shape}")
    if not np.all(np.isfinite(w)) or w.min() < 0 or w.max() > 1 + 1e-6:
        raise ValueError("weights must be attention weights in [0, 1]")
    labels = labels_for("tokens", tokens, w.shape[0])
    n = len(labels)
    queries = _indices("query_tokens", query_tokens, n)
    targets = _indices("target_tokens", target_tokens, n)
    if only_queries and not queries:
        raise ValueError("only_queries needs query_tokens")
    y = -np.arange(n, dtype=float)  # first token at the top
    drawn = sorted(queries) if only_queries else range(n)
    markers = [
        dict(
            type="scatter",
            x=np.full(n, x),
            y=y,
            mode="markers",
            hoverinfo="skip",
            showlegend=False,
            marker=dict(size=5, color=MUTED_COLOR),
        )
        for x in (0.0, 1.0)
    ]
    return figure(
        markers,
        dict(
            shapes=weight_lines(w, y, drawn, queries),
            annotations=token_column(labels, y, "left", queries, queries)
            + token_column(labels, y, "right", targets, queries),
            xaxis=dict(visible=False, range=[-0.05, 1.05], fixedrange=True),
            yaxis=dict(visible=False, range=[-n + 0.5, 0.5], fixedrange=True),
            showlegend=False,
            autosize=True,
            height=int(n * TOKEN_PX + (110 if title else 60)),
            margin=dict(l=110, r=110, t=80 if title else 30, b=20),
        ),
        title,
    )


def weight_lines(w: np.ndarray, y: np.ndarray, drawn: Iterable[int], queries: set[int]) -> list[dict]:
    """A line shape from query i (left, x 0) to key j (right, x 1) for each drawn i and each weight w[i, j] of
    at least MIN_WEIGHT, with that weight as its opacity; the lines of `queries` in the accent colour."""
    shapes = []
    for i in drawn:
        for j in np.flatnonzero(w[i] >= MIN_WEIGHT):
            shapes.append(
                dict(
                    type="line",
                    x0=0,
                    x1=1,
                    y0=y[i],
                    y1=y[j],
                    layer="below",
                    line=dict(color=ACCENT_COLOR if i in queries else PRIMARY_COLOR, width=2),
                    opacity=float(min(w[i, j], 1.0)),
                    name=f"{i}-{j}",
                )
            )
    return shapes


def token_column(labels: list[str], y: np.ndarray, side: str, bold: set[int], queries: set[int]) -> list[dict]:
    """The tokens of one side ("left": the queries at x 0, "right": the keys at x 1) as annotations at heights
    y, those in `bold` written in bold; on the left the `queries` in the accent colour."""
    x = 0.0 if side == "left" else 1.0
    return [
        dict(
            x=x,
            y=y[k],
            text=f"<b>{label}</b>" if k in bold else label,
            showarrow=False,
            xanchor="right" if side == "left" else "left",
            xshift=-6 if side == "left" else 6,
            font=dict(size=12, color=ACCENT_COLOR if side == "left" and k in queries else TEXT_COLOR),
        )
        for k, label in enumerate(labels)
    ]
