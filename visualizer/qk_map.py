"""One head's query-key map (AttentionViz, Yeh et al. 2023): the head's queries and keys over a corpus projected
into one plane, the user's sentence drawn on top, for the Explain tab's corpus panels.

Pure: numpy arrays and token lists in, a Plotly figure (dict specs) out; its width follows the page.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .checks import as_array, labels_for
from .heatmap import indexed
from .theme import ACCENT_COLOR, GRID_COLOR, SEQUENTIAL_SCALE, axis_title, colorbar, figure
from .tokens import escape_text

QUERY_COLOR, KEY_COLOR = "#2ca02c", "#d6338a"  # AttentionViz's green queries and pink keys
MAX_LABELLED_POINTS = 40  # the user's sentence gets text labels on the map up to this many points


def plural(name: str) -> str:
    """ "target query" -> "target queries", "source key" -> "source keys"."""
    return name[:-1] + "ies" if name.endswith("y") and not name.endswith("ey") else name + "s"


def qk_scatter(
    coords: np.ndarray,
    is_key: np.ndarray,
    tokens: Sequence[str],
    positions: np.ndarray,
    *,
    color_by: str = "side",
    current: np.ndarray | None = None,
    current_is_key: np.ndarray | None = None,
    current_tokens: Sequence[str] | None = None,
    current_positions: np.ndarray | None = None,
    query_name: str = "query",
    key_name: str = "key",
    title: str = "",
) -> go.Figure:
    """One head's queries (circles) and keys (diamonds) over the corpus in one plane, the user's sentence on top.

    Args:
        coords: (N, 2) corpus points; is_key: (N,) True for keys; tokens: N tokens; positions: (N,) ints.
        color_by: "side" (queries green, keys pink, as AttentionViz) or "position" (a colour scale).
        current, current_is_key, current_tokens, current_positions: the same for the user's sentence
            (M points), drawn large and outlined, labelled while M <= MAX_LABELLED_POINTS.
        query_name, key_name: how the legend and hover name the two sides (e.g. "target query").
    """
    xy = as_array("coords", coords, 2, dtype=np.float64)
    if xy.shape[1] != 2:
        raise ValueError(f"coords must be (N, 2), got {xy.shape}")
    keys = np.asarray(is_key, dtype=bool)
    where = np.asarray(positions, dtype=np.int64)
    labels = labels_for("tokens", tokens, xy.shape[0])
    if keys.shape != (xy.shape[0],) or where.shape != (xy.shape[0],):
        raise ValueError("is_key and positions need one value per point")
    if color_by not in ("side", "position"):
        raise ValueError(f"color_by must be 'side' or 'position', got {color_by!r}")
    sides = ((False, query_name, "circle", QUERY_COLOR), (True, key_name, "diamond", KEY_COLOR))
    series = corpus_points(xy, keys, labels, where, sides, color_by=color_by, faded=current is not None)
    if current is not None:
        series += sentence_points(current, current_is_key, current_tokens, current_positions, sides)
    return figure(
        series,
        dict(
            xaxis=dict(title=axis_title("PC 1"), gridcolor=GRID_COLOR, zeroline=False, scaleanchor="y"),
            yaxis=dict(title=axis_title("PC 2"), gridcolor=GRID_COLOR, zeroline=False),
            autosize=True,
            height=560,
            legend=dict(orientation="h", x=0, y=-0.12, yanchor="top"),
            margin=dict(l=55, r=20, t=70 if title else 30, b=100),
        ),
        title,
    )


def corpus_points(
    xy: np.ndarray,
    keys: np.ndarray,
    labels: list[str],
    where: np.ndarray,
    sides: tuple[tuple[bool, str, str, str], ...],
    *,
    color_by: str,
    faded: bool,
) -> list[dict]:
    """The corpus's points xy (N, 2), one series per side (is_key, name, symbol, colour) that has any, coloured
    by side or by position (N,); faded when the user's sentence is drawn on top."""
    top_position = max(int(where.max()), 1)
    series = []
    for side, name, symbol, colour in sides:
        chosen = keys == side
        if not chosen.any():
            continue
        # the corpus steps back when the user's sentence is drawn on top
        marker = dict(size=5, symbol=symbol, opacity=0.25 if faded else 0.55, line=dict(width=0))
        if color_by == "side":
            marker["color"] = colour
        else:
            marker.update(
                color=where[chosen],
                colorscale=SEQUENTIAL_SCALE,
                cmin=0,
                cmax=top_position,
                colorbar=colorbar("position", len=0.6) if not side else None,
                showscale=not side,
            )
        series.append(
            dict(
                type="scattergl",
                x=xy[chosen, 0],
                y=xy[chosen, 1],
                mode="markers",
                name=f"{escape_text(plural(name))} (corpus)",
                marker=marker,
                customdata=np.stack([np.array(labels, dtype=object)[chosen], where[chosen]], axis=-1),
                hovertemplate=f"{escape_text(name)} <b>%{{customdata[0]}}</b><br>position %{{customdata[1]}}<extra></extra>",
            )
        )
    return series


def sentence_points(
    current: np.ndarray,
    current_is_key: np.ndarray | None,
    current_tokens: Sequence[str] | None,
    current_positions: np.ndarray | None,
    sides: tuple[tuple[bool, str, str, str], ...],
) -> list[dict]:
    """The user's sentence's points current (M, 2), large and outlined, one series per side that has any;
    labelled with their tokens while M <= MAX_LABELLED_POINTS."""
    here = as_array("current", current, 2, dtype=np.float64)
    here_keys = np.asarray(current_is_key, dtype=bool)
    here_labels = labels_for("current_tokens", current_tokens, here.shape[0])
    here_where = np.asarray(current_positions, dtype=np.int64)
    if here_keys.shape != (here.shape[0],) or here_where.shape != (here.shape[0],):
        raise ValueError("current_is_key and current_positions need one value per current point")
    text_mode = "markers+text" if here.shape[0] <= MAX_LABELLED_POINTS else "markers"
    series = []
    for side, name, symbol, colour in sides:
        chosen = here_keys == side
        if not chosen.any():
            continue
        series.append(
            dict(
                type="scatter",
                x=here[chosen, 0],
                y=here[chosen, 1],
                mode=text_mode,
                name=f"this sentence: {escape_text(plural(name))}",
                text=np.array(here_labels, dtype=object)[chosen],
                textposition="top center",
                textfont=dict(size=11, color=colour),
                marker=dict(size=12, symbol=symbol, color=colour, line=dict(color=ACCENT_COLOR, width=2)),
                customdata=np.stack([indexed(here_labels)[chosen], here_where[chosen]], axis=-1),
                hovertemplate=f"this sentence's {escape_text(name)} <b>%{{customdata[0]}}</b><extra></extra>",
            )
        )
    return series
