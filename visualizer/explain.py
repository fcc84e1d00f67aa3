"""Figures for the "Explain" tab: interventions and read-outs that go beyond looking at attention.

- ``probability_change_figure``: per step, how an intervention (heads switched off, 3.2.2;
  positional encodings removed, 3.5) changes the probability of the originally chosen token.
- ``logit_lens_figure``: each decoder layer's output read through the final projection (3.4).
- ``alignment_figure``: source-target links read from encoder-decoder attention (3.2.3).
- ``head_diagnostics_figure``: per-head statistics as layers x heads heatmaps (3.2.2).
- ``attention_comparison``: one head's attention in two runs side by side (e.g. with and without PE).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from .checks import as_array, as_probabilities, check_axis, labels_for
from .grid import on_axes, set_axes, spacing, subplot_grid
from .heatmap import cell_px, fit_width, heatmap_size, indexed, token_axes, token_heatmap, token_margins
from .theme import (
    ATTENTION_SCALE, GRID_COLOR, MUTED_COLOR, PRIMARY_COLOR, SEQUENTIAL_SCALE, TEXT_COLOR, axis_title, colorbar,
    corner_note, figure, outline,
)
from .tokens import display_tokens, escape_text, shown_length

DROP_COLOR = "#d1495b"  # probability went down
RISE_COLOR = "#2e86ab"  # probability went up


# --------------------------------------------------------------------------- probability change
def probability_change_figure(tokens: Sequence[str], original: np.ndarray, changed: np.ndarray, *,
                              changed_name: str = "after the intervention", title: str = "") -> go.Figure:
    """Bars of p_changed − p_original per output token (red: down, blue: up), both in the hover.

    Args:
        tokens: the T original output tokens (x axis, in order).
        original: (T,) probability of each token in the original run.
        changed: (T,) probability of the same tokens, teacher-forced under the intervention.
        changed_name: how the hover names the second run.
        title: plain text (escaped).
    """
    p0 = as_probabilities("original", original)
    p1 = as_probabilities("changed", changed, p0.shape[0])
    labels = labels_for("tokens", tokens, p0.shape[0])
    delta = p1 - p0
    x = np.arange(len(labels))
    bars = dict(
        type="bar", x=x, y=delta, marker=dict(color=np.where(delta < 0, DROP_COLOR, RISE_COLOR), line=dict(width=0)),
        customdata=np.stack([indexed(labels), p0, p1], axis=-1).astype(object), name="change",
        hovertemplate=(f"step %{{x}} · <b>%{{customdata[0]}}</b><br>original p = %{{customdata[1]:.3f}}"
                       f"<br>{escape_text(changed_name)} p = %{{customdata[2]:.3f}}<br>change "
                       "<b>%{y:+.3f}</b><extra></extra>"),
    )
    bound = float(np.clip(1.15 * np.abs(delta).max(), 0.05, 1.05))  # small changes stay visible
    zero_line = dict(type="line", xref="x domain", x0=0, x1=1, yref="y", y0=0, y1=0,
                     line=dict(color=MUTED_COLOR, width=1))
    fig = figure([bars], dict(
        xaxis=dict(tickmode="array", tickvals=x, ticktext=labels, tickangle=-45 if len(labels) > 6 else 0,
                   showgrid=False, title=axis_title("original output token")),
        yaxis=dict(range=[-bound, bound], tickformat="+.0%", gridcolor=GRID_COLOR, zeroline=False,
                   title=axis_title("change in probability")),
        shapes=[zero_line], annotations=[corner_note(f"mean change {float(delta.mean()):+.1%} over {len(labels)} tokens")],
        height=400, showlegend=False, bargap=0.3, **fit_width(90 + 14 * len(labels), 90 + 20 * len(labels)),
        margin=dict(l=70, r=20, t=100 if title else 40, b=110),
    ), title)
    if title:  # just above the plot area, clear of Plotly's toolbar (which floats at the very top)
        fig.layout.title.update(yref="paper", y=1, yanchor="bottom", pad=dict(b=28))
    return fig


# --------------------------------------------------------------------------- logit lens
def logit_lens_figure(tokens: Sequence[Sequence[str]], probs: np.ndarray, chosen_token: str | None = None, *,
                      title: str = "") -> go.Figure:
    """A layers x rank table: the top tokens read from each decoder layer's output, coloured by probability.

    Args:
        tokens: L lists of k tokens, most probable first (layer 1 first; the last layer is the model's output).
        probs: (L, k) their probabilities.
        chosen_token: the token decoding chose at this step; its cells are outlined.
        title: plain text (escaped).
    """
    p = as_array("probs", probs, 2, dtype=np.float64)
    n_layers, k = p.shape
    if len(tokens) != n_layers or any(len(row) != k for row in tokens):
        raise ValueError(f"tokens must be {n_layers} lists of {k} tokens to match probs {p.shape}")
    full = [display_tokens(row) for row in tokens]
    y_labels = [f"layer {layer + 1}" + (" (output)" if layer == n_layers - 1 else "") for layer in range(n_layers)]
    hover = np.array([[f"{y_labels[l]} · rank {r + 1}<br><b>{full[l][r]}</b>" for r in range(k)]
                      for l in range(n_layers)], dtype=object)
    cells = dict(
        type="heatmap", z=p, x=np.arange(k), y=np.arange(n_layers),
        text=np.array([display_tokens(row, max_chars=14) for row in tokens], dtype=object), texttemplate="%{text}",
        textfont=dict(size=12), customdata=hover, zmin=0, zmax=1, colorscale=ATTENTION_SCALE, xgap=2, ygap=2,
        colorbar=colorbar("probability"), hovertemplate="%{customdata}<br>p = %{z:.3f}<extra></extra>",
    )
    chosen = display_tokens([chosen_token])[0] if chosen_token is not None else None
    shapes = [outline(r - 0.5, r + 0.5, l - 0.5, l + 0.5) for l in range(n_layers) for r in range(k)
              if full[l][r] == chosen]
    return figure([cells], dict(
        xaxis=dict(tickmode="array", tickvals=np.arange(k), ticktext=[f"rank {r + 1}" for r in range(k)],
                   side="top", showgrid=False, zeroline=False),
        yaxis=dict(tickmode="array", tickvals=np.arange(n_layers), ticktext=y_labels, showgrid=False, zeroline=False),
        shapes=shapes, width=140 + 120 * k + 110, height=int(120 + 46 * n_layers),
        margin=dict(l=130, r=110, t=90 if title else 50, b=20),
    ), title)


# --------------------------------------------------------------------------- word alignment
def _token_row(name: str, xs: np.ndarray, y: int, labels: list[str], notes: list[str], muted: list[bool],
               angle: int) -> tuple[dict, list[dict]]:
    """One row of the alignment figure: a marker series (hover: the token and its links), a label per token."""
    markers = dict(
        type="scatter", x=xs, y=np.full(len(labels), y), mode="markers", name=name,
        marker=dict(size=9, color=[GRID_COLOR if m else PRIMARY_COLOR for m in muted],
                    line=dict(width=1, color=MUTED_COLOR)),
        customdata=np.stack([indexed(labels), np.array(notes, dtype=object)], axis=-1),
        hovertemplate=f"{name} <b>%{{customdata[0]}}</b><br>linked to %{{customdata[1]}}<extra></extra>",
    )
    labels_above = y == 1
    annotations = [dict(x=x, y=y, text=label, showarrow=False, textangle=angle, yshift=12 if labels_above else -12,
                        xanchor="center" if angle == 0 else ("left" if labels_above else "right"),
                        yanchor="bottom" if labels_above else "top",
                        font=dict(size=13, color=MUTED_COLOR if m else TEXT_COLOR))
                   for x, label, m in zip(xs, labels, muted)]
    return markers, annotations


MATRIX_ABOVE = 40  # tokens: longer sentences get a links matrix instead of lines (a hairball)


def alignment_matrix(source: list[str], target: list[str], links: list[tuple[int, int]], weights: np.ndarray,
                     title: str) -> go.Figure:
    """The links as a target x source matrix: a cell per link coloured by its strength, the rest 0."""
    z = np.zeros((len(target), len(source)), dtype=np.float32)  # (T, S)
    for (s, t), w in zip(links, weights):
        z[t, s] = w
    cells = token_heatmap(z, target, source, row_name="target", col_name="source", value_name="link strength",
                          value_format=".3f", zmin=0, zmax=max(float(z.max()), 1e-9), colorscale=ATTENTION_SCALE,
                          colorbar=colorbar("strength"))
    xaxis, yaxis = token_axes(target, source, row_title="target (input → predicted)", col_title="source")
    return figure([cells], dict(xaxis=xaxis, yaxis=yaxis, **heatmap_size(target, source, title=bool(title))), title)


def alignment_figure(source_tokens: Sequence[str], target_tokens: Sequence[str],
                     links: Sequence[tuple[int, int]], strengths: Sequence[float] | None = None, *,
                     special_tokens: Collection[str] = (), title: str = "",
                     input_tokens: Sequence[str] | None = None) -> go.Figure:
    """Source tokens on top, target tokens below, a line per alignment link (darker = more attention);
    beyond MATRIX_ABOVE tokens a target x source matrix of the links instead (lines would tangle).

    Args:
        source_tokens: S tokens (top row); target_tokens: T predicted tokens (bottom row).
        links: (source index, target index) pairs into those lists.
        strengths: one weight in [0, 1] per link (line opacity and hover); None = all 1.
        special_tokens: the tokenizer's special tokens ([EOS], language tags...), drawn muted.
        title: plain text (escaped).
        input_tokens: the T tokens the decoder read at each step; given, target rows are named
            "input → predicted" like the rows of the attention views.
    """
    source = labels_for("source_tokens", source_tokens)
    target = labels_for("target_tokens", target_tokens)
    if input_tokens is not None:
        inputs = labels_for("input_tokens", input_tokens, len(target))
        target = [f"{read} → {out}" for read, out in zip(inputs, target)]
    links = [(int(s), int(t)) for s, t in links]
    for s, t in links:
        if not (0 <= s < len(source) and 0 <= t < len(target)):
            raise ValueError(f"link {s}-{t} is out of range for {len(source)} source and {len(target)} target tokens")
    weights = np.ones(len(links)) if strengths is None else np.asarray(strengths, dtype=np.float64)
    if weights.shape != (len(links),):
        raise ValueError(f"strengths must have one value per link ({len(links)}), got shape {weights.shape}")
    if max(len(source), len(target)) > MATRIX_ABOVE:
        return alignment_matrix(source, target, links, weights, title)

    n = max(len(source), len(target))
    width = float(np.clip(64 * n, 480, 940))  # pixels between the first and the last token (fits a 1200 px page)

    def spread(count: int) -> np.ndarray:  # both rows span the same width, so links read left to right
        return np.linspace(0, width, count) if count > 1 else np.array([width / 2])

    xs, xt = spread(len(source)), spread(len(target))
    # (links,) in [0, 1]; divided first, so the opacity below never exceeds 1 by a rounding error
    share = weights / (max(weights.max(), 1e-9) if len(links) else 1.0)
    shapes = [dict(type="line", x0=xs[s], y0=1, x1=xt[t], y1=0, layer="below",
                   line=dict(color=PRIMARY_COLOR, width=1 + 3 * w), opacity=0.2 + 0.8 * w)
              for (s, t), w in zip(links, share)]
    longest = max(shown_length(label) for label in source + target)
    closest = width / max(n - 1, 1)  # pixels between neighbours in the fuller row
    angle = 0 if closest >= 7.5 * min(longest, 14) else -40  # rotate labels that would overlap
    linked_to = {t: s for s, t in links}
    source_notes = [", ".join(f"#{t} {target[t]}" for s2, t in links if s2 == i) or "no link" for i in range(len(source))]
    target_notes = [f"#{linked_to[i]} {source[linked_to[i]]}" if i in linked_to else "no link"
                    for i in range(len(target))]
    series, annotations = [], []
    for name, xs_row, labels, tokens, notes, y in (("source", xs, source, source_tokens, source_notes, 1),
                                                   ("target", xt, target, target_tokens, target_notes, 0)):
        markers, row_labels = _token_row(name, xs_row, y, labels, notes,
                                           [token in special_tokens for token in tokens], angle)
        series.append(markers)
        annotations += row_labels
    annotations += [dict(text=name, x=0, xref="paper", y=y, xanchor="right", xshift=-30, showarrow=False,
                         font=dict(size=11, color=MUTED_COLOR)) for name, y in (("source", 1), ("target", 0))]
    pad = 40.0
    room = 90 if angle else 40  # rotated labels need more room above and below
    return figure(series, dict(
        shapes=shapes, annotations=annotations, xaxis=dict(visible=False, range=[-pad, width + pad]),
        yaxis=dict(visible=False, range=[-0.05, 1.05]), height=200 + 2 * room,
        **fit_width(7.5 * max(n, 1) + 2 * pad + 150, width + 2 * pad + 150),
        showlegend=False, margin=dict(l=80, r=70, t=room + (50 if title else 10), b=room),
    ), title)


# --------------------------------------------------------------------------- head diagnostics
def head_diagnostics_figure(stats: Mapping[str, np.ndarray], titles: Mapping[str, str] | None = None, *,
                            selected: tuple[int, int] | None = None, title: str = "") -> go.Figure:
    """One layers x heads heatmap per statistic, values written in the cells.

    Args:
        stats: {name: (L, h) array}; "entropy" (bits) gets its own scale, the others are shares in [0, 1].
        titles: panel titles per name (default: the names).
        selected: a (layer, head) 0-based cell to outline in every panel.
        title: plain text (escaped).
    """
    if not stats:
        raise ValueError("stats is empty")
    arrays = {name: as_array(name, value, 2, dtype=np.float64) for name, value in stats.items()}
    shape = next(iter(arrays.values())).shape
    for name, array in arrays.items():
        check_axis(name, array, 0, shape[0], "layers")
        check_axis(name, array, 1, shape[1], "heads")
    n_layers, n_heads = shape
    names = {name: escape_text(dict(titles or {}).get(name, name)) for name in arrays}
    cell = float(np.clip(220 / max(n_heads, n_layers), 22, 44))
    panel_w, gap = n_heads * cell, 46.0
    plot_w = len(arrays) * panel_w + (len(arrays) - 1) * gap
    layout, refs = subplot_grid(1, len(arrays), horizontal_spacing=spacing(gap, plot_w, len(arrays)),
                                titles=list(names.values()), title_size=12)
    heads, layers = np.arange(1, n_heads + 1), np.arange(1, n_layers + 1)
    series, shapes = [], []
    for col, (name, values) in enumerate(arrays.items(), start=1):
        panel = refs[1, col]
        bits = name == "entropy"
        text = np.array([[f"{v:.1f}" if bits else f"{100 * v:.0f}" for v in row] for row in values])
        series.append(on_axes(dict(
            type="heatmap", z=values, x=heads, y=layers, zmin=0, zmax=max(float(values.max()), 1.0) if bits else 1.0,
            showscale=False, colorscale=SEQUENTIAL_SCALE if bits else ATTENTION_SCALE, text=text,
            texttemplate="%{text}", textfont=dict(size=10), xgap=2, ygap=2,
            hovertemplate=(f"layer %{{y}} · head %{{x}}<br>{names[name]}: "
                           + ("<b>%{z:.2f}</b> bits" if bits else "<b>%{z:.0%}</b>") + "<extra></extra>"),
        ), panel))
        set_axes(layout, panel,
                 dict(tickmode="array", tickvals=heads, ticktext=[f"H{h}" for h in heads], showgrid=False,
                      zeroline=False, side="bottom"),
                 dict(tickmode="array", tickvals=layers, ticktext=[f"L{l}" for l in layers], showgrid=False,
                      zeroline=False, autorange="reversed", showticklabels=col == 1, scaleanchor=panel[0]))
        if selected is not None:
            l, h = selected
            shapes.append(outline(h + 0.5, h + 1.5, l + 0.5, l + 1.5, xref=panel[0], yref=panel[1]))
    return figure(series, dict(layout, shapes=shapes, width=int(plot_w + 80), height=int(n_layers * cell + 130),
                               margin=dict(l=50, r=30, t=90 if title else 60, b=30)), title)


# --------------------------------------------------------------------------- two runs side by side
def attention_comparison(first: np.ndarray, second: np.ndarray, query_tokens: Sequence[str],
                         key_tokens: Sequence[str], *, names: tuple[str, str] = ("first", "second"),
                         title: str = "") -> go.Figure:
    """One head's (Tq, Tk) attention in two runs of the same sentence, side by side on one 0-1 scale."""
    a = as_array("first", first, 2)
    b = as_array("second", second, 2)
    if a.shape != b.shape:
        raise ValueError(f"first {a.shape} and second {b.shape} must have the same shape")
    queries = labels_for("query_tokens", query_tokens, a.shape[0])
    keys = labels_for("key_tokens", key_tokens, a.shape[1])
    cell = cell_px(max(a.shape), budget=420, low=8, high=30)
    gap = 70.0
    plot_w = 2 * a.shape[1] * cell + gap
    layout, refs = subplot_grid(1, 2, shared_yaxes=True, horizontal_spacing=gap / plot_w,
                                titles=[escape_text(name) for name in names])
    series = []
    for col, weights in ((1, a), (2, b)):
        panel = refs[1, col]
        series.append(on_axes(token_heatmap(weights, queries, keys, coloraxis="coloraxis", xgap=1, ygap=1), panel))
        set_axes(layout, panel, *token_axes(queries, keys, panel[1], show_rows=col == 1,
                                            row_title="query" if col == 1 else None, col_title="key"))
    margin = token_margins(queries, keys, title=bool(title))
    margin["r"] = 90
    return figure(series, dict(
        layout, margin=margin, width=int(plot_w + margin["l"] + margin["r"]),
        height=int(max(a.shape[0] * cell + margin["t"] + margin["b"], 260)),
        coloraxis=dict(cmin=0, cmax=1, colorscale=ATTENTION_SCALE, colorbar=colorbar("weight")),
    ), title)
