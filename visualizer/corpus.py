"""Figures of what every head does across a corpus, beside the one-sentence views.

- ``head_role_grid``: every head of every kind (3.2.2, 3.2.3) as a dot coloured by its role
  (Voita et al. 2019) and sized by its importance (Michel et al. 2019), as Dodrio's head overview.
- ``pruning_curves_figure``: BLEU and loss as heads are switched off, by importance vs at random.

The corpus panels' other figures: one head's query-key map in visualizer/qk_map.py, attribution beside
attention in visualizer/attribution.py.

Pure: numpy arrays and token lists in, Plotly figures (dict specs) out; widths follow the page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from .checks import as_array
from .grid import Refs, on_axes, set_axes, subplot_grid
from .theme import (
    ACCENT_COLOR,
    GRID_COLOR,
    MUTED_COLOR,
    PALETTE,
    PRIMARY_COLOR,
    axis_title,
    figure,
)
from .tokens import escape_text

# One colour per role name (model/analysis/corpus/roles.py ROLES); an unknown role takes the next palette colour.
ROLE_COLORS = {
    "previous": PALETTE[0],
    "same": PALETTE[4],
    "next": PALETTE[1],
    "rare": PALETTE[6],
    "eos": PALETTE[3],
    "punctuation": PALETTE[5],
    "aligned": PALETTE[2],
    "monotone": PALETTE[8],
    "broad": PALETTE[9],
    "mixed": PALETTE[7],
}


def role_color(role: str, order: Sequence[str]) -> str:
    return ROLE_COLORS.get(role, PALETTE[(len(ROLE_COLORS) + list(order).index(role)) % len(PALETTE)])


# --------------------------------------------------------------------------- head roles
def head_role_grid(
    roles: Mapping[str, np.ndarray],
    importance: Mapping[str, np.ndarray],
    *,
    kind_labels: Mapping[str, str] | None = None,
    role_text: Mapping[str, str] | None = None,
    details: Mapping[str, np.ndarray] | None = None,
    selected: tuple[str, int, int] | None = None,
    title: str = "",
) -> go.Figure:
    """One panel per attention kind (stacked), layers down and heads across; each head a dot coloured by
    its role and sized by its importance (area proportional to importance / the largest).

    Args:
        roles: {kind: (L, h) role names}; importance: {kind: (L, h) non-negative scores}.
        kind_labels: panel titles per kind; role_text: legend text per role name.
        details: {kind: (L, h) strings} added to each dot's hover (plain text, escaped).
        selected: (kind, layer, head) 0-based, outlined.
        title: plain text (escaped).
    Each dot's customdata[0] is "kind:layer:head" (1-based), for a click that opens the head.
    """
    kinds, names, sizes = checked_roles(roles, importance)
    top = max(float(sizes[kind].max()) for kind in kinds) or 1.0
    order = list(dict.fromkeys(role for kind in kinds for role in names[kind].ravel()))
    heights = [names[kind].shape[0] + 1.2 for kind in kinds]
    labels = dict(kind_labels or {})
    layout, refs = subplot_grid(
        len(kinds),
        1,
        row_heights=heights,
        vertical_spacing=0.08,
        titles=[escape_text(labels.get(kind, kind)) for kind in kinds],
        title_size=12,
    )
    series, shapes, legend_done = [], [], set()
    for row, kind in enumerate(kinds, start=1):
        panel = refs[row, 1]
        extra = None if details is None else np.asarray(details[kind], dtype=str)
        for role in order:
            dots = role_dots(kind, role, names[kind], sizes[kind], top, labels, role_text, extra, order)
            if dots is None:
                continue
            dots["showlegend"] = role not in legend_done
            series.append(on_axes(dots, panel))
            legend_done.add(role)
        set_axes(layout, panel, *role_axes(*names[kind].shape))
        if selected is not None and selected[0] == kind:
            shapes.append(selected_circle(selected[1], selected[2], panel))
    height = int(60 * sum(heights) + 160)
    return figure(
        series,
        dict(
            layout,
            shapes=shapes,
            autosize=True,
            height=height,
            showlegend=True,
            legend=dict(orientation="h", x=0, y=-0.04, yanchor="top", font=dict(size=11)),
            margin=dict(l=45, r=15, t=80 if title else 40, b=90),
        ),
        title,
    )


def checked_roles(
    roles: Mapping[str, np.ndarray], importance: Mapping[str, np.ndarray]
) -> tuple[list[str], dict[str, np.ndarray], dict[str, np.ndarray]]:
    """(the kinds, {kind: (L, h) role names}, {kind: (L, h) importance}), the two of a kind the same shape and
    every importance finite and non-negative."""
    if not roles or set(roles) != set(importance):
        raise ValueError("roles and importance must name the same, non-empty set of kinds")
    kinds = list(roles)
    names, sizes = {}, {}
    for kind in kinds:
        names[kind] = np.asarray(roles[kind], dtype=str)
        sizes[kind] = as_array(f"importance[{kind}]", importance[kind], 2, dtype=np.float64)
        if names[kind].shape != sizes[kind].shape:
            raise ValueError(f"{kind}: roles {names[kind].shape} and importance {sizes[kind].shape} differ")
        if not np.all(np.isfinite(sizes[kind])) or sizes[kind].min() < 0:
            raise ValueError(f"importance[{kind}] must be finite and non-negative")
    return kinds, names, sizes


def role_dots(
    kind: str,
    role: str,
    names: np.ndarray,
    importance: np.ndarray,
    top: float,
    labels: Mapping[str, str],
    role_text: Mapping[str, str] | None,
    extra: np.ndarray | None,
    order: Sequence[str],
) -> dict | None:
    """The dots of one kind's heads of one role (None if it has none): names (L, h) the roles, importance (L, h)
    the scores, a dot's area importance / top. customdata[0] is "kind:layer:head" (1-based), [1] the hover;
    the caller decides showlegend."""
    layer, head = np.nonzero(names == role)
    if not len(layer):
        return None
    text = dict(role_text or {}).get(role, role)
    hover = [
        f"{escape_text(labels.get(kind, kind))}<br>layer {l + 1} · head {h + 1}<br>role <b>"
        f"{escape_text(text)}</b><br>importance {importance[l, h]:.3g}"
        + ("" if extra is None else "<br>" + escape_text(extra[l, h]).replace("\n", "<br>"))
        for l, h in zip(layer, head)
    ]
    return dict(
        type="scatter",
        x=head + 1,
        y=layer + 1,
        mode="markers",
        name=escape_text(text),
        legendgroup=role,
        showlegend=True,
        marker=dict(
            color=role_color(role, order),
            size=8 + 26 * np.sqrt(importance[layer, head] / top),
            line=dict(width=0),
            opacity=0.9,
        ),
        customdata=np.stack(
            [
                np.array([f"{kind}:{l + 1}:{h + 1}" for l, h in zip(layer, head)], dtype=object),
                np.array(hover, dtype=object),
            ],
            axis=-1,
        ),
        hovertemplate="%{customdata[1]}<extra></extra>",
    )


def role_axes(n_layers: int, n_heads: int) -> tuple[dict, dict]:
    """A kind's panel's (x, y) axes: heads "H1".. across, layers "L1".. down with grid lines."""
    xaxis = dict(
        tickmode="array",
        tickvals=np.arange(1, n_heads + 1),
        ticktext=[f"H{h}" for h in range(1, n_heads + 1)],
        range=[0.4, n_heads + 0.6],
        showgrid=False,
        zeroline=False,
        fixedrange=True,
    )
    yaxis = dict(
        tickmode="array",
        tickvals=np.arange(1, n_layers + 1),
        ticktext=[f"L{l}" for l in range(1, n_layers + 1)],
        range=[n_layers + 0.6, 0.4],
        showgrid=True,
        gridcolor=GRID_COLOR,
        zeroline=False,
        fixedrange=True,
    )
    return xaxis, yaxis


def selected_circle(l: int, h: int, panel: Refs) -> dict:
    """An accent circle around the dot of layer l, head h (0-based) in panel."""
    return dict(
        type="circle",
        x0=h + 0.55,
        x1=h + 1.45,
        y0=l + 0.55,
        y1=l + 1.45,
        xref=panel[0],
        yref=panel[1],
        line=dict(color=ACCENT_COLOR, width=2.5),
        name="selected",
    )


# --------------------------------------------------------------------------- pruning
def pruning_curves_figure(
    pruned: np.ndarray,
    bleu_importance: np.ndarray,
    loss_importance: np.ndarray,
    bleu_random: np.ndarray,
    loss_random: np.ndarray,
    *,
    total_heads: int,
    current: int | None = None,
    title: str = "",
) -> go.Figure:
    """BLEU (top) and loss (bottom) against the number of heads switched off: least important first
    (solid) vs random orders (dashed, one line each). ``current``: a number of heads to mark."""
    x = as_array("pruned", pruned, 1, dtype=np.float64)
    curves = {
        "bleu": as_array("bleu_importance", bleu_importance, 1, dtype=np.float64),
        "loss": as_array("loss_importance", loss_importance, 1, dtype=np.float64),
    }
    randoms = {
        "bleu": np.asarray(bleu_random, dtype=np.float64).reshape(-1, len(x)),
        "loss": np.asarray(loss_random, dtype=np.float64).reshape(-1, len(x)),
    }
    for name, values in curves.items():
        if values.shape != x.shape:
            raise ValueError(f"{name} has {values.shape[0]} points but pruned has {x.shape[0]}")
    layout, refs = subplot_grid(
        2, 1, vertical_spacing=0.12, titles=["val BLEU", "val loss (nats per token)"], title_size=12
    )
    series = []
    for row, name in enumerate(("bleu", "loss"), start=1):
        panel = refs[row, 1]
        series += [on_axes(line, panel) for line in pruning_lines(x, curves[name], randoms[name], name, row == 1)]
        set_axes(
            layout,
            panel,
            dict(
                range=[-0.5, total_heads + 0.5],
                gridcolor=GRID_COLOR,
                zeroline=False,
                title=axis_title("heads switched off") if row == 2 else None,
            ),
            dict(gridcolor=GRID_COLOR, zeroline=False),
        )
    shapes = []
    if current is not None:
        shapes = [
            dict(
                type="line",
                x0=current,
                x1=current,
                xref=refs[row, 1][0],
                y0=0,
                y1=1,
                yref=f"{refs[row, 1][1]} domain",
                line=dict(color=ACCENT_COLOR, width=2, dash="dot"),
            )
            for row in (1, 2)
        ]
    return figure(
        series,
        dict(
            layout,
            shapes=shapes,
            autosize=True,
            height=520,
            legend=dict(orientation="h", x=0, y=1.08, yanchor="bottom"),
            margin=dict(l=55, r=15, t=110 if title else 70, b=50),
        ),
        title,
    )


def pruning_lines(x: np.ndarray, curve: np.ndarray, randoms: np.ndarray, name: str, legend: bool) -> list[dict]:
    """One panel's lines over x, the number of heads off: the importance order's curve (solid) and a dashed line
    per random order (randoms: (orders, len(x))); named in the legend where `legend`."""
    unit = "BLEU" if name == "bleu" else "nats"
    importance = dict(
        type="scatter",
        x=x,
        y=curve,
        mode="lines+markers",
        name="least important first",
        legendgroup="importance",
        showlegend=legend,
        line=dict(color=PRIMARY_COLOR, width=2.5),
        hovertemplate=f"%{{x}} heads off (least important first)<br><b>%{{y:.2f}}</b> {unit}<extra></extra>",
    )
    return [importance] + [
        dict(
            type="scatter",
            x=x,
            y=values,
            mode="lines+markers",
            name="random order",
            legendgroup="random",
            showlegend=legend and index == 0,
            line=dict(color=MUTED_COLOR, width=1.5, dash="dash"),
            marker=dict(size=5),
            hovertemplate=f"%{{x}} heads off (random order {index + 1})<br><b>%{{y:.2f}}</b> {unit}<extra></extra>",
        )
        for index, values in enumerate(randoms)
    ]
