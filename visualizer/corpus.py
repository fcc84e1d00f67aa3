"""Figures of what every head does across a corpus, beside the one-sentence views.

- ``head_role_grid``: every head of every kind (3.2.2, 3.2.3) as a dot coloured by its role
  (Voita et al. 2019) and sized by its importance (Michel et al. 2019), as Dodrio's head overview.
- ``pruning_curves_figure``: BLEU and loss as heads are switched off, by importance vs at random.
- ``qk_scatter``: one head's queries and keys in one plane (AttentionViz, Yeh et al. 2023), the
  user's sentence on top.
- ``attribution_figure``: integrated gradients and input x gradient over the source tokens beside
  each layer's cross-attention, and their rank correlation at every step.

Pure: numpy arrays and token lists in, Plotly figures (dict specs) out; widths follow the page, a
figure whose columns need more than a phone scrolls in its own box (visualizer/heatmap.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from .checks import as_array, check_index, labels_for
from .grid import on_axes, set_axes, subplot_grid
from .heatmap import MIN_COLUMN_PX, cell_px, fit_width, indexed, token_axis, token_heatmap, token_margins
from .theme import (
    ACCENT_COLOR, DIVERGING_SCALE, GRID_COLOR, MUTED_COLOR, PALETTE, PRIMARY_COLOR, SEQUENTIAL_SCALE, axis_title,
    colorbar, figure,
)
from .tokens import escape_text

# One colour per role name (model/corpus/roles.py ROLES); an unknown role takes the next palette colour.
ROLE_COLORS = {"previous": PALETTE[0], "same": PALETTE[4], "next": PALETTE[1], "rare": PALETTE[6],
               "eos": PALETTE[3], "punctuation": PALETTE[5], "broad": PALETTE[9], "mixed": PALETTE[7]}
QUERY_COLOR, KEY_COLOR = "#2ca02c", "#d6338a"  # AttentionViz's green queries and pink keys
MAX_LABELLED_POINTS = 40  # the user's sentence gets text labels on the map up to this many points
RHO_PANEL_PX = 150  # the attribution figure's rho panel: with the tokens' panel it fits under the bar at 1280x720
PANEL_GAP_PX = 90  # the attribution figure: between its two panels (the rotated token labels and the rho title)


def plural(name: str) -> str:
    """"target query" -> "target queries", "source key" -> "source keys"."""
    return name[:-1] + "ies" if name.endswith("y") and not name.endswith("ey") else name + "s"


def role_color(role: str, order: Sequence[str]) -> str:
    return ROLE_COLORS.get(role, PALETTE[(len(ROLE_COLORS) + list(order).index(role)) % len(PALETTE)])


# --------------------------------------------------------------------------- head roles
def head_role_grid(roles: Mapping[str, np.ndarray], importance: Mapping[str, np.ndarray], *,
                   kind_labels: Mapping[str, str] | None = None, role_text: Mapping[str, str] | None = None,
                   details: Mapping[str, np.ndarray] | None = None, selected: tuple[str, int, int] | None = None,
                   title: str = "") -> go.Figure:
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
    top = max(float(sizes[kind].max()) for kind in kinds) or 1.0
    order = list(dict.fromkeys(role for kind in kinds for role in names[kind].ravel()))
    heights = [names[kind].shape[0] + 1.2 for kind in kinds]
    labels = dict(kind_labels or {})
    layout, refs = subplot_grid(len(kinds), 1, row_heights=heights, vertical_spacing=0.08,
                                titles=[escape_text(labels.get(kind, kind)) for kind in kinds], title_size=12)
    series, shapes, legend_done = [], [], set()
    for row, kind in enumerate(kinds, start=1):
        panel = refs[row, 1]
        n_layers, n_heads = names[kind].shape
        extra = None if details is None else np.asarray(details[kind], dtype=str)
        for role in order:
            layer, head = np.nonzero(names[kind] == role)
            if not len(layer):
                continue
            text = dict(role_text or {}).get(role, role)
            hover = [f"{escape_text(labels.get(kind, kind))}<br>layer {l + 1} · head {h + 1}<br>role <b>"
                     f"{escape_text(text)}</b><br>importance {sizes[kind][l, h]:.3g}"
                     + ("" if extra is None else "<br>" + escape_text(extra[l, h]).replace("\n", "<br>"))
                     for l, h in zip(layer, head)]
            area = sizes[kind][layer, head] / top
            series.append(on_axes(dict(
                type="scatter", x=head + 1, y=layer + 1, mode="markers", name=escape_text(text), legendgroup=role,
                showlegend=role not in legend_done,
                marker=dict(color=role_color(role, order), size=8 + 26 * np.sqrt(area), line=dict(width=0),
                            opacity=0.9),
                customdata=np.stack([np.array([f"{kind}:{l + 1}:{h + 1}" for l, h in zip(layer, head)], dtype=object),
                                     np.array(hover, dtype=object)], axis=-1),
                hovertemplate="%{customdata[1]}<extra></extra>"), panel))
            legend_done.add(role)
        set_axes(layout, panel,
                 dict(tickmode="array", tickvals=np.arange(1, n_heads + 1), ticktext=[f"H{h}" for h in range(1, n_heads + 1)],
                      range=[0.4, n_heads + 0.6], showgrid=False, zeroline=False, fixedrange=True),
                 dict(tickmode="array", tickvals=np.arange(1, n_layers + 1), ticktext=[f"L{l}" for l in range(1, n_layers + 1)],
                      range=[n_layers + 0.6, 0.4], showgrid=True, gridcolor=GRID_COLOR, zeroline=False, fixedrange=True))
        if selected is not None and selected[0] == kind:
            l, h = selected[1], selected[2]
            shapes.append(dict(type="circle", x0=h + 0.55, x1=h + 1.45, y0=l + 0.55, y1=l + 1.45, xref=panel[0],
                               yref=panel[1], line=dict(color=ACCENT_COLOR, width=2.5), name="selected"))
    height = int(60 * sum(heights) + 160)
    return figure(series, dict(layout, shapes=shapes, autosize=True, height=height, showlegend=True,
                               legend=dict(orientation="h", x=0, y=-0.04, yanchor="top", font=dict(size=11)),
                               margin=dict(l=45, r=15, t=80 if title else 40, b=90)), title)


# --------------------------------------------------------------------------- pruning
def pruning_curves_figure(pruned: np.ndarray, bleu_importance: np.ndarray, loss_importance: np.ndarray,
                          bleu_random: np.ndarray, loss_random: np.ndarray, *, total_heads: int,
                          current: int | None = None, title: str = "") -> go.Figure:
    """BLEU (top) and loss (bottom) against the number of heads switched off: least important first
    (solid) vs random orders (dashed, one line each). ``current``: a number of heads to mark."""
    x = as_array("pruned", pruned, 1, dtype=np.float64)
    curves = {"bleu": as_array("bleu_importance", bleu_importance, 1, dtype=np.float64),
              "loss": as_array("loss_importance", loss_importance, 1, dtype=np.float64)}
    randoms = {"bleu": np.asarray(bleu_random, dtype=np.float64).reshape(-1, len(x)),
               "loss": np.asarray(loss_random, dtype=np.float64).reshape(-1, len(x))}
    for name, values in curves.items():
        if values.shape != x.shape:
            raise ValueError(f"{name} has {values.shape[0]} points but pruned has {x.shape[0]}")
    layout, refs = subplot_grid(2, 1, vertical_spacing=0.12, titles=["val BLEU", "val loss (nats per token)"],
                                title_size=12)
    series = []
    for row, name in enumerate(("bleu", "loss"), start=1):
        panel = refs[row, 1]
        unit = "BLEU" if name == "bleu" else "nats"
        series.append(on_axes(dict(
            type="scatter", x=x, y=curves[name], mode="lines+markers", name="least important first",
            legendgroup="importance", showlegend=row == 1, line=dict(color=PRIMARY_COLOR, width=2.5),
            hovertemplate=f"%{{x}} heads off (least important first)<br><b>%{{y:.2f}}</b> {unit}<extra></extra>"), panel))
        for index, values in enumerate(randoms[name]):
            series.append(on_axes(dict(
                type="scatter", x=x, y=values, mode="lines+markers", name="random order", legendgroup="random",
                showlegend=row == 1 and index == 0, line=dict(color=MUTED_COLOR, width=1.5, dash="dash"),
                marker=dict(size=5), hovertemplate=f"%{{x}} heads off (random order {index + 1})<br><b>%{{y:.2f}}</b> "
                                                   f"{unit}<extra></extra>"), panel))
        set_axes(layout, panel, dict(range=[-0.5, total_heads + 0.5], gridcolor=GRID_COLOR, zeroline=False,
                                     title=axis_title("heads switched off") if row == 2 else None),
                 dict(gridcolor=GRID_COLOR, zeroline=False))
    shapes = []
    if current is not None:
        shapes = [dict(type="line", x0=current, x1=current, xref=refs[row, 1][0], y0=0, y1=1,
                       yref=f"{refs[row, 1][1]} domain", line=dict(color=ACCENT_COLOR, width=2, dash="dot"))
                  for row in (1, 2)]
    return figure(series, dict(layout, shapes=shapes, autosize=True, height=520,
                               legend=dict(orientation="h", x=0, y=1.08, yanchor="bottom"),
                               margin=dict(l=55, r=15, t=110 if title else 70, b=50)), title)


# --------------------------------------------------------------------------- query-key map
def qk_scatter(coords: np.ndarray, is_key: np.ndarray, tokens: Sequence[str], positions: np.ndarray, *,
               color_by: str = "side", current: np.ndarray | None = None, current_is_key: np.ndarray | None = None,
               current_tokens: Sequence[str] | None = None, current_positions: np.ndarray | None = None,
               query_name: str = "query", key_name: str = "key", title: str = "") -> go.Figure:
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
    top_position = max(int(where.max()), 1)
    series = []
    for side, name, symbol, colour in ((False, query_name, "circle", QUERY_COLOR), (True, key_name, "diamond", KEY_COLOR)):
        chosen = keys == side
        if not chosen.any():
            continue
        marker = dict(size=5, symbol=symbol, opacity=0.55 if current is None else 0.25, line=dict(width=0))  # the
        # corpus steps back when the user's sentence is drawn on top
        if color_by == "side":
            marker["color"] = colour
        else:
            marker.update(color=where[chosen], colorscale=SEQUENTIAL_SCALE, cmin=0, cmax=top_position,
                          colorbar=colorbar("position", len=0.6) if not side else None, showscale=not side)
        series.append(dict(
            type="scattergl", x=xy[chosen, 0], y=xy[chosen, 1], mode="markers", name=f"{escape_text(plural(name))} (corpus)",
            marker=marker, customdata=np.stack([np.array(labels, dtype=object)[chosen], where[chosen]], axis=-1),
            hovertemplate=f"{escape_text(name)} <b>%{{customdata[0]}}</b><br>position %{{customdata[1]}}<extra></extra>"))
    if current is not None:
        here = as_array("current", current, 2, dtype=np.float64)
        here_keys = np.asarray(current_is_key, dtype=bool)
        here_labels = labels_for("current_tokens", current_tokens, here.shape[0])
        here_where = np.asarray(current_positions, dtype=np.int64)
        if here_keys.shape != (here.shape[0],) or here_where.shape != (here.shape[0],):
            raise ValueError("current_is_key and current_positions need one value per current point")
        text_mode = "markers+text" if here.shape[0] <= MAX_LABELLED_POINTS else "markers"
        for side, name, symbol, colour in ((False, query_name, "circle", QUERY_COLOR), (True, key_name, "diamond", KEY_COLOR)):
            chosen = here_keys == side
            if not chosen.any():
                continue
            series.append(dict(
                type="scatter", x=here[chosen, 0], y=here[chosen, 1], mode=text_mode, name=f"this sentence: {escape_text(plural(name))}",
                text=np.array(here_labels, dtype=object)[chosen], textposition="top center",
                textfont=dict(size=11, color=colour),
                marker=dict(size=12, symbol=symbol, color=colour, line=dict(color=ACCENT_COLOR, width=2)),
                customdata=np.stack([indexed(here_labels)[chosen], here_where[chosen]], axis=-1),
                hovertemplate=f"this sentence's {escape_text(name)} <b>%{{customdata[0]}}</b><extra></extra>"))
    return figure(series, dict(
        xaxis=dict(title=axis_title("PC 1"), gridcolor=GRID_COLOR, zeroline=False, scaleanchor="y"),
        yaxis=dict(title=axis_title("PC 2"), gridcolor=GRID_COLOR, zeroline=False),
        autosize=True, height=560, legend=dict(orientation="h", x=0, y=-0.12, yanchor="top"),
        margin=dict(l=55, r=20, t=70 if title else 30, b=100)), title)


# --------------------------------------------------------------------------- attribution vs attention
def attribution_figure(source_tokens: Sequence[str], integrated: np.ndarray, input_x_gradient: np.ndarray,
                       attention: np.ndarray, correlation: np.ndarray, *, step: int,
                       output_tokens: Sequence[str] | None = None, completeness: tuple[float, float] | None = None,
                       title: str = "") -> go.Figure:
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
    steps = labels_for("output_tokens", output_tokens, rho.shape[1]) if output_tokens is not None else \
        [str(i + 1) for i in range(rho.shape[1])]
    n_layers = att.shape[0]
    rows = ["integrated gradients", "input × gradient", *[f"attention, layer {l + 1}" for l in range(n_layers)]]
    raw = np.vstack([ig, ixg, att])  # (2 + L, S)
    scale = np.abs(raw).max(axis=1, keepdims=True)
    shown = raw / np.where(scale > 0, scale, 1.0)
    text = np.array([[f"{v:+.4f}" for v in row] for row in raw])
    cell = cell_px(len(cols), budget=760, low=MIN_COLUMN_PX, high=40)
    layout, refs = subplot_grid(2, 1, row_heights=[len(rows) * 30 + 10, RHO_PANEL_PX], vertical_spacing=0.2,
                                titles=[f"step {t + 1}: source tokens", "Spearman ρ between |IG| and attention, per step"],
                                title_size=14)
    heat = on_axes(token_heatmap(shown, rows, cols, row_name="", col_name="source", value_name="value",
                                 value_text=text, zmin=-1, zmax=1, colorscale=DIVERGING_SCALE, xgap=1, ygap=1,
                                 colorbar=colorbar("share of row max", len=0.4, y=0.8)), refs[1, 1])
    set_axes(layout, refs[1, 1], token_axis(cols, angle=-45 if len(cols) > 3 else 0),
             dict(token_axis(rows, reverse=True), ticktext=rows))
    series = [heat]
    for l in range(n_layers):
        series.append(on_axes(dict(
            type="scatter", x=np.arange(rho.shape[1]), y=rho[l], mode="lines+markers", name=f"layer {l + 1}",
            line=dict(color=PALETTE[l % len(PALETTE)], width=2), marker=dict(size=5),
            customdata=np.array(steps, dtype=object),
            hovertemplate=f"layer {l + 1} · step %{{x}} (%{{customdata}})<br>ρ <b>%{{y:.2f}}</b><extra></extra>"),
            refs[2, 1]))
    set_axes(layout, refs[2, 1],
             dict(tickmode="array", tickvals=np.arange(rho.shape[1]), ticktext=steps, tickangle=-45,
                  tickfont=dict(size=10), showgrid=False, title=axis_title("output token (step)")),
             dict(range=[-1.05, 1.05], gridcolor=GRID_COLOR, zeroline=True, zerolinecolor=MUTED_COLOR,
                  title=axis_title("ρ")))
    shapes = [dict(type="line", x0=t, x1=t, xref=refs[2, 1][0], y0=0, y1=1, yref=f"{refs[2, 1][1]} domain",
                   line=dict(color=ACCENT_COLOR, width=2, dash="dot"))]
    annotations = list(layout.get("annotations", []))
    if completeness is not None:
        annotations.append(dict(text=f"Σ IG {completeness[0]:+.3f} vs f(x) − f(0) {completeness[1]:+.3f}",
                                xref="paper", yref="paper", x=1, y=1.0, xanchor="right", yanchor="bottom", yshift=18,
                                showarrow=False, font=dict(size=11, color=MUTED_COLOR)))
    margin = token_margins(rows, cols, title=bool(title))
    margin.update(r=90, t=110 if title else 80)
    sides = margin["l"] + margin["r"]
    height = int(len(rows) * 30 + 10 + RHO_PANEL_PX + margin["t"] + margin["b"] + PANEL_GAP_PX)
    return figure(series, dict(layout, annotations=annotations, shapes=shapes, height=height, margin=margin,
                               # beside the rho panel: below it, the legend covered the output tokens' labels
                               legend=dict(orientation="v", x=1.01, xanchor="left", y=0, yanchor="bottom"), autosize=True,
                               **fit_width(sides + len(cols) * MIN_COLUMN_PX, sides + len(cols) * cell)), title)
