"""The next-token distribution at one decoding step: section 3.4 (the softmax over the vocabulary).

The decoder's output, projected by the (shared) embedding matrix and passed through a softmax,
gives a probability for every subword; greedy decoding takes the most probable one. The chart
shows the top k, the chosen one highlighted, and the entropy of the whole distribution.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .checks import as_probabilities, check_index, labels_for
from .heatmap import tick_font_size
from .theme import ACCENT_COLOR, GRID_COLOR, PRIMARY_COLOR, axis_title, corner_note, figure


def percent(p: float) -> str:
    """Bar text; "&lt;" because Plotly reads "<" as the start of a tag."""
    return "&lt;0.1%" if 0 < p < 0.001 else f"{100 * p:.1f}%"


def candidates_chart(
    tokens: Sequence[str],
    probs: np.ndarray,
    chosen_index: int | None,
    *,
    entropy_bits: float | None = None,
    title: str = "",
) -> go.Figure:
    """Horizontal bars of the k most probable next tokens, most probable on top.

    Args:
        tokens: k candidate tokens.
        probs: (k,) their probabilities (0-1).
        chosen_index: the position in ``tokens`` of the token decoding chose (highlighted), or None.
        entropy_bits: entropy of the full next-token distribution, shown in the corner.
        title: plain text (escaped).

    Raises:
        ValueError: probs not 1-D, not k of them, outside [0, 1], or chosen_index out of range.
    """
    p = as_probabilities("probs", probs)
    labels = labels_for("tokens", tokens, p.shape[0])
    chosen = check_index("chosen_index", chosen_index, p.shape[0])

    order = np.argsort(-p, kind="stable")  # most probable first, ties keep their order
    ranked = [labels[i] for i in order]
    is_chosen = order == chosen
    ticktext = [f"<b>{label}</b>" if hit else label for label, hit in zip(ranked, is_chosen)]
    status = np.where(is_chosen, "chosen", "")
    bars = dict(
        type="bar",
        x=p[order],
        y=np.arange(len(order)),
        orientation="h",
        marker=dict(color=[ACCENT_COLOR if hit else PRIMARY_COLOR for hit in is_chosen], line=dict(width=0)),
        text=[percent(v) for v in p[order]],
        textposition="outside",
        cliponaxis=False,
        textfont=dict(size=11),
        customdata=np.stack([np.array(ranked, dtype=object), status], axis=-1),
        hovertemplate="<b>%{customdata[0]}</b> %{customdata[1]}<br>p = %{x:.4f}<extra></extra>",
    )
    layout = dict(
        yaxis=dict(
            tickmode="array",
            tickvals=np.arange(len(order)),
            ticktext=ticktext,
            autorange="reversed",
            tickfont=dict(size=tick_font_size(len(order)) + 1),
            showgrid=False,
            ticks="",
        ),
        xaxis=dict(
            range=[0, 1],
            tickformat=".0%",
            dtick=0.25,
            gridcolor=GRID_COLOR,
            zeroline=False,
            title=axis_title("probability"),
        ),
        bargap=0.25,
        showlegend=False,
        height=int(np.clip(110 + 30 * len(order), 200, 640)),
        margin=dict(l=20, r=60, t=70 if title else 40, b=50),
    )
    if entropy_bits is not None:
        layout["annotations"] = [corner_note(f"entropy {float(entropy_bits):.2f} bits", size=12)]
    return figure([bars], layout, title)
