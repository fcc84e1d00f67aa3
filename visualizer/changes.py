"""What changed from decoding step t-1 to t ("Attention Is All You Need" 3.1, auto-regressive
decoding; 3.2.3, the decoder's two attention kinds; 3.4, the softmax over the vocabulary).

- ``row_change_figure``: for each decoder attention kind, the new query row (primary colour) beside the
  row of the step before (grey, hover "step before"), over the same keys; the self-attention key that just appeared is in the accent colour.
- ``candidate_change_figure``: the top-k next-token candidates of this step, those that entered
  marked, rank moves written beside the bars, and those that left the top-k (with their old probability).
Width follows the page; heights are set.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .checks import as_probabilities, labels_for
from .grid import on_axes, set_axes, subplot_grid
from .heatmap import indexed, tick_font_size
from .theme import ACCENT_COLOR, GRID_COLOR, MUTED_COLOR, PRIMARY_COLOR, axis_title, figure
from .tokens import escape_text

PANEL_PX = 200


def row_change_figure(
    panels: Sequence[tuple[str, Sequence[str], np.ndarray, np.ndarray | None, bool]], *, title: str = ""
) -> go.Figure:
    """One panel per attention kind: previous row (muted) and new row (bars) over the keys.

    panels: (panel title, K keys, new_row (K,), previous_row (K_prev,) or None at step 0,
    grows) per kind; grows = the last key is new at this step (masked self-attention).
    """
    if not panels:
        raise ValueError("panels is empty")
    layout, refs = subplot_grid(
        len(panels), 1, vertical_spacing=0.22, title_size=12, titles=[escape_text(panel[0]) for panel in panels]
    )
    series = []
    for row, (_, keys, new_row, previous_row, grows) in enumerate(panels, start=1):
        new = as_probabilities("new_row", new_row)
        labels = labels_for("keys", keys, new.shape[0])
        names = indexed(labels)
        refs_row = refs[row, 1]
        if previous_row is not None:
            previous = as_probabilities("previous_row", previous_row)
            if previous.shape[0] not in (new.shape[0], new.shape[0] - 1):
                raise ValueError(f"previous_row has {previous.shape[0]} keys; expected {new.shape[0]} or one fewer")
            series.append(
                on_axes(
                    dict(
                        type="bar",
                        x=names[: previous.shape[0]],
                        y=previous,
                        name="step before",
                        marker_color=GRID_COLOR,
                        marker_line=dict(color=MUTED_COLOR, width=1),
                        hovertemplate="step before · %{x}: <b>%{y:.3f}</b><extra></extra>",
                        showlegend=False,
                    ),
                    refs_row,
                )
            )
        colors = [PRIMARY_COLOR] * len(labels)
        if grows:
            colors[-1] = ACCENT_COLOR
        series.append(
            on_axes(
                dict(
                    type="bar",
                    x=names,
                    y=new,
                    name="this step",
                    marker_color=colors,
                    hovertemplate="this step · %{x}: <b>%{y:.3f}</b><extra></extra>",
                    showlegend=False,
                ),
                refs_row,
            )
        )
        set_axes(
            layout,
            refs_row,
            dict(
                type="category",
                tickmode="array",
                tickvals=names,
                ticktext=labels,
                tickangle=-45 if len(labels) > 6 else 0,
                tickfont=dict(size=tick_font_size(len(labels))),
            ),
            dict(range=[0, 1], nticks=3, title=axis_title("weight")),
        )
    return figure(
        series,
        dict(
            layout,
            barmode="group",
            autosize=True,
            bargap=0.25,
            height=int(len(panels) * PANEL_PX + 120 + (40 if title else 0)),
            margin=dict(l=60, r=20, t=90 if title else 50, b=60),
        ),
        title,
    )


def rank_note(before: int | None, after: int) -> str:
    """'new', '=' or '↑2' / '↓1' (ranks 0-based; up = more probable than before)."""
    if before is None:
        return "new"
    return "=" if before == after else (f"↑{before - after}" if before > after else f"↓{after - before}")


def candidate_change_figure(
    tokens: Sequence[str],
    probs: np.ndarray,
    ranks_before: Sequence[int | None],
    left_tokens: Sequence[str] = (),
    left_probs: np.ndarray | Sequence[float] = (),
    *,
    title: str = "",
) -> go.Figure:
    """This step's top-k (bars, entered ones in the accent colour, rank move beside) and those that left.

    tokens, probs: this step's k candidates, most probable first; ranks_before: each one's 0-based rank
    at the step before, None = not in that top-k; left_tokens, left_probs: candidates of the step before
    that are no longer in the top-k, with their probability then.
    """
    p = as_probabilities("probs", probs)
    labels = labels_for("tokens", tokens, p.shape[0])
    if len(ranks_before) != len(labels):
        raise ValueError(f"ranks_before has {len(ranks_before)} entries, expected {len(labels)}")
    gone = labels_for("left_tokens", left_tokens) if len(left_tokens) else []
    gone_p = as_probabilities("left_probs", left_probs, len(gone)) if gone else np.zeros(0)
    notes = [rank_note(before, after) for after, before in enumerate(ranks_before)]
    names = list(indexed(labels, start=1)) + [f"left: {label}" for label in gone]  # ranks #1, #2, ...
    colors = [ACCENT_COLOR if before is None else PRIMARY_COLOR for before in ranks_before] + [GRID_COLOR] * len(gone)
    text = notes + ["left"] * len(gone)
    bars = dict(
        type="bar",
        orientation="h",
        x=np.concatenate([p, gone_p]),
        y=np.array(names, dtype=object),
        marker=dict(color=colors, line=dict(color=MUTED_COLOR, width=[0] * len(labels) + [1] * len(gone))),
        text=text,
        textposition="outside",
        cliponaxis=False,
        hovertemplate="%{y}: <b>%{x:.3f}</b> (%{text})<extra></extra>",
    )
    return figure(
        [bars],
        dict(
            xaxis=dict(
                range=[0, max(float(np.concatenate([p, gone_p]).max()) * 1.25, 0.05)], title=axis_title("probability")
            ),
            yaxis=dict(type="category", autorange="reversed", tickfont=dict(size=11)),
            showlegend=False,
            autosize=True,
            height=int(len(names) * 26 + 110 + (40 if title else 0)),
            margin=dict(l=130, r=40, t=70 if title else 30, b=50),
        ),
        title,
    )
