"""Watch the heads form: every head's attention entropy over a training film, as small multiples.

Training (section 5 of "Attention Is All You Need") turns near-uniform attention (3.2.1: a softmax
over similar scores) into sharp, aligned heads. One small panel per (layer, head): its mean
entropy in bits over the evaluations of the film, the shown evaluation marked. A line that falls
is a head that learns to look somewhere in particular. Width follows the page; the height is set.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .checks import as_array, check_index
from .grid import on_axes, set_axes, subplot_grid
from .theme import ACCENT_COLOR, MUTED_COLOR, PRIMARY_COLOR, figure

ROW_PX = 64  # pixels per layer row of panels


def entropy_multiples_figure(
    steps: np.ndarray, entropy: np.ndarray, *, current: int | None = None, title: str = ""
) -> go.Figure:
    """One line per head of one attention kind: its mean entropy (bits) at each evaluation.

    Args:
        steps: (N,) training steps of the film's frames, increasing.
        entropy: (N, L, h) mean entropy of each head at each frame (FilmSummary.entropy[kind]).
        current: 0-based frame to mark in every panel (the frame the slider shows).
        title: plain text (escaped).
    """
    x = as_array("steps", steps, 1, dtype=np.float64)
    values = as_array("entropy", entropy, 3, dtype=np.float64)
    if values.shape[0] != x.shape[0]:
        raise ValueError(f"entropy has {values.shape[0]} frames but steps has {x.shape[0]}")
    if not np.all(np.isfinite(values)) or values.min() < 0:
        raise ValueError("entropy must be finite and non-negative (bits)")
    frame = check_index("current", current, x.shape[0])
    n_frames, n_layers, n_heads = values.shape
    layout, refs = subplot_grid(
        n_layers,
        n_heads,
        horizontal_spacing=0.012,
        vertical_spacing=0.05,
        titles=[f"H{h + 1}" for h in range(n_heads)],
        title_size=10,
    )
    top = float(values.max()) * 1.08 or 1.0
    series = []
    for l in range(n_layers):
        for h in range(n_heads):
            panel = refs[l + 1, h + 1]
            series.append(
                on_axes(
                    dict(
                        type="scatter",
                        x=x,
                        y=values[:, l, h],
                        mode="lines",
                        line=dict(color=PRIMARY_COLOR, width=1.5),
                        name=f"L{l + 1} H{h + 1}",
                        hovertemplate=f"layer {l + 1} · head {h + 1}<br>step %{{x}}: "
                        "<b>%{y:.2f}</b> bits<extra></extra>",
                    ),
                    panel,
                )
            )
            if frame is not None:
                series.append(
                    on_axes(
                        dict(
                            type="scatter",
                            x=[x[frame]],
                            y=[values[frame, l, h]],
                            mode="markers",
                            marker=dict(color=ACCENT_COLOR, size=6),
                            hoverinfo="skip",
                        ),
                        panel,
                    )
                )
            y_axis = dict(range=[0, top], showticklabels=h == 0, nticks=3, tickfont=dict(size=9))
            if h == 0:
                y_axis["title"] = dict(text=f"L{l + 1}", font=dict(size=10, color=MUTED_COLOR))
            x_axis = dict(showticklabels=l == n_layers - 1, nticks=3, tickfont=dict(size=9), showgrid=False)
            if n_frames > 1:
                x_axis["range"] = [x[0], x[-1]]
            set_axes(layout, panel, x_axis, y_axis)
    return figure(
        series,
        dict(
            layout,
            showlegend=False,
            autosize=True,
            height=int(70 + n_layers * ROW_PX),
            margin=dict(l=50, r=10, t=80 if title else 40, b=30),
        ),
        title,
    )
