"""Figures for the "Explain" tab: interventions and read-outs that go beyond looking at attention.

- ``probability_change_figure``: per step, how an intervention (heads switched off, 3.2.2;
  positional encodings removed, 3.5) changes the probability of the originally chosen token.
- ``logit_lens_figure``: each decoder layer's output read through the final projection (3.4).
- ``alignment_figure``: source-target links read from encoder-decoder attention (3.2.3).
- ``head_diagnostics_figure``: per-head statistics as layers x heads heatmaps (3.2.2).
- ``attention_comparison``: one head's attention in two runs side by side (e.g. with and without PE).

numpy and plotly only; inputs are checked (ValueError), nothing is shown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .common import (
    ACCENT_COLOR, ATTENTION_SCALE, GRID_COLOR, MUTED_COLOR, PRIMARY_COLOR, SEQUENTIAL_SCALE, TEXT_COLOR, as_array,
    cell_px, check_axis, colorbar, finish_layout, indexed, labels_for, style_token_axes, token_heatmap,
    token_margins,
)
from .tokens import display_tokens, escape_text

DROP_COLOR = "#d1495b"  # probability went down
RISE_COLOR = "#2e86ab"  # probability went up
SPECIAL_LABELS = ("[PAD]", "[BOS]", "[EOS]", "[UNK]")  # drawn muted, like language tags "&lt;2xx&gt;"


def _is_special(label: str) -> bool:
    return label in SPECIAL_LABELS or label.startswith("&lt;2")


def _probabilities(name: str, value, size: int | None = None) -> np.ndarray:
    p = as_array(name, value, 1, dtype=np.float64)
    if size is not None and p.shape[0] != size:
        raise ValueError(f"{name} has {p.shape[0]} values, expected {size}")
    if not np.all(np.isfinite(p)) or p.min() < 0 or p.max() > 1 + 1e-6:
        raise ValueError(f"{name} must be probabilities in [0, 1]")
    return p


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
    p0 = _probabilities("original", original)
    p1 = _probabilities("changed", changed, p0.shape[0])
    labels = labels_for("tokens", tokens, p0.shape[0])
    delta = p1 - p0
    x = np.arange(len(labels))
    custom = np.stack([indexed(labels), p0, p1], axis=-1).astype(object)
    fig = go.Figure(go.Bar(
        x=x, y=delta, marker=dict(color=np.where(delta < 0, DROP_COLOR, RISE_COLOR), line=dict(width=0)),
        customdata=custom, name="change",
        hovertemplate=(f"step %{{x}} · <b>%{{customdata[0]}}</b><br>original p = %{{customdata[1]:.3f}}"
                       f"<br>{escape_text(changed_name)} p = %{{customdata[2]:.3f}}<br>change "
                       "<b>%{y:+.3f}</b><extra></extra>"),
    ))
    fig.add_hline(y=0, line=dict(color=MUTED_COLOR, width=1))
    fig.update_xaxes(tickmode="array", tickvals=x, ticktext=labels, tickangle=-45 if len(labels) > 6 else 0,
                     showgrid=False, title=dict(text="original output token", font=dict(size=12, color=MUTED_COLOR)))
    bound = float(np.clip(1.15 * np.abs(delta).max(), 0.05, 1.05))  # small changes stay visible
    fig.update_yaxes(range=[-bound, bound], tickformat="+.0%", gridcolor=GRID_COLOR, zeroline=False,
                     title=dict(text="change in probability", font=dict(size=12, color=MUTED_COLOR)))
    mean = float(delta.mean())
    fig.add_annotation(text=f"mean change {mean:+.1%} over {len(labels)} tokens",
                       xref="paper", yref="paper", x=1, y=1.02, xanchor="right", yanchor="bottom",
                       showarrow=False, font=dict(size=11, color=MUTED_COLOR))
    width = int(np.clip(160 + 34 * len(labels), 520, 1200))
    return finish_layout(fig, title, width=width, height=380, showlegend=False, bargap=0.3,
                         margin=dict(l=70, r=20, t=70 if title else 40, b=110))


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
    labels = [display_tokens(row, max_chars=14) for row in tokens]
    full = [display_tokens(row) for row in tokens]
    y_labels = [f"layer {layer + 1}" + (" (output)" if layer == n_layers - 1 else "") for layer in range(n_layers)]
    text = np.array(labels, dtype=object)
    hover = np.array([[f"{y_labels[l]} · rank {r + 1}<br><b>{full[l][r]}</b>" for r in range(k)]
                      for l in range(n_layers)], dtype=object)
    fig = go.Figure(go.Heatmap(
        z=p, x=np.arange(k), y=np.arange(n_layers), text=text, texttemplate="%{text}",
        textfont=dict(size=12), customdata=hover, zmin=0, zmax=1, colorscale=ATTENTION_SCALE, xgap=2, ygap=2,
        colorbar=colorbar("probability"), hovertemplate="%{customdata}<br>p = %{z:.3f}<extra></extra>",
    ))
    chosen = display_tokens([chosen_token])[0] if chosen_token is not None else None
    shapes = [dict(type="rect", x0=r - 0.5, x1=r + 0.5, y0=l - 0.5, y1=l + 0.5,
                   line=dict(color=ACCENT_COLOR, width=3), fillcolor="rgba(0,0,0,0)")
              for l in range(n_layers) for r in range(k) if full[l][r] == chosen]
    fig.update_layout(shapes=shapes)
    fig.update_xaxes(tickmode="array", tickvals=np.arange(k), ticktext=[f"rank {r + 1}" for r in range(k)],
                     side="top", showgrid=False, zeroline=False)
    fig.update_yaxes(tickmode="array", tickvals=np.arange(n_layers), ticktext=y_labels, showgrid=False,
                     zeroline=False)
    return finish_layout(fig, title, width=140 + 120 * k + 110, height=int(120 + 46 * n_layers),
                         margin=dict(l=130, r=110, t=90 if title else 50, b=20))


# --------------------------------------------------------------------------- word alignment
def alignment_figure(source_tokens: Sequence[str], target_tokens: Sequence[str],
                     links: Sequence[tuple[int, int]], strengths: Sequence[float] | None = None, *,
                     title: str = "") -> go.Figure:
    """Source tokens on top, target tokens below, a line per alignment link (darker = more attention).

    Args:
        source_tokens: S tokens (top row); target_tokens: T tokens (bottom row).
        links: (source index, target index) pairs into those lists.
        strengths: one weight in [0, 1] per link (line opacity and hover); None = all 1.
        title: plain text (escaped).
    """
    source = labels_for("source_tokens", source_tokens)
    target = labels_for("target_tokens", target_tokens)
    links = [(int(s), int(t)) for s, t in links]
    for s, t in links:
        if not (0 <= s < len(source) and 0 <= t < len(target)):
            raise ValueError(f"link {s}-{t} is out of range for {len(source)} source and {len(target)} target tokens")
    weights = np.ones(len(links)) if strengths is None else np.asarray(strengths, dtype=np.float64)
    if weights.shape != (len(links),):
        raise ValueError(f"strengths must have one value per link ({len(links)}), got shape {weights.shape}")

    n = max(len(source), len(target))
    width = float(np.clip(64 * n, 480, 940))  # pixels between the first and the last token (fits a 1200 px page)

    def spread(count: int) -> np.ndarray:  # both rows span the same width, so links read left to right
        return np.linspace(0, width, count) if count > 1 else np.array([width / 2])

    xs, xt = spread(len(source)), spread(len(target))
    top = max(weights.max(), 1e-9) if len(links) else 1.0
    shapes = [dict(type="line", x0=xs[s], y0=1, x1=xt[t], y1=0, layer="below",
                   line=dict(color=PRIMARY_COLOR, width=1 + 3 * w / top), opacity=float(0.2 + 0.8 * w / top))
              for (s, t), w in zip(links, weights)]
    linked_to = {t: s for s, t in links}
    fig = go.Figure()
    annotations = []
    longest = max(len(label.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")) for label in source + target)
    closest = width / max(n - 1, 1)  # pixels between neighbours in the fuller row
    angle = 0 if closest >= 7.5 * min(longest, 14) else -40  # rotate labels that would overlap
    for row_name, xs_row, labels, y in (("source", xs, source, 1), ("target", xt, target, 0)):
        if row_name == "source":
            notes = [", ".join(f"#{t} {target[t]}" for s2, t in links if s2 == i) or "no link" for i in range(len(labels))]
        else:
            notes = [f"#{linked_to[i]} {source[linked_to[i]]}" if i in linked_to else "no link"
                     for i in range(len(labels))]
        muted = [_is_special(label) for label in labels]
        fig.add_trace(go.Scatter(
            x=xs_row, y=np.full(len(labels), y), mode="markers",
            marker=dict(size=9, color=[GRID_COLOR if m else PRIMARY_COLOR for m in muted],
                        line=dict(width=1, color=MUTED_COLOR)),
            customdata=np.stack([indexed(labels), np.array(notes, dtype=object)], axis=-1), name=row_name,
            hovertemplate=f"{row_name} <b>%{{customdata[0]}}</b><br>linked to %{{customdata[1]}}<extra></extra>",
        ))
        for x, label, m in zip(xs_row, labels, muted):
            annotations.append(dict(
                x=x, y=y, text=label, showarrow=False, textangle=angle, yshift=12 if y == 1 else -12,
                xanchor="center" if angle == 0 else ("left" if y == 1 else "right"),
                yanchor="bottom" if y == 1 else "top",
                font=dict(size=13, color=MUTED_COLOR if m else TEXT_COLOR)))
    for y, name in ((1, "source"), (0, "target")):
        annotations.append(dict(text=name, x=0, xref="paper", y=y, xanchor="right", xshift=-30, showarrow=False,
                                font=dict(size=11, color=MUTED_COLOR)))
    fig.update_layout(shapes=shapes, annotations=annotations)
    pad = 40.0
    fig.update_xaxes(visible=False, range=[-pad, width + pad])
    fig.update_yaxes(visible=False, range=[-0.05, 1.05])
    room = 90 if angle else 40  # rotated labels need more room above and below
    return finish_layout(fig, title, width=int(width + 2 * pad + 150), height=200 + 2 * room, showlegend=False,
                         margin=dict(l=80, r=70, t=room + (50 if title else 10), b=room))


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
    titles = dict(titles or {})
    cell = float(np.clip(220 / max(n_heads, n_layers), 22, 44))
    panel_w, gap = n_heads * cell, 46.0
    plot_w = len(arrays) * panel_w + (len(arrays) - 1) * gap
    fig = make_subplots(rows=1, cols=len(arrays), horizontal_spacing=gap / plot_w if len(arrays) > 1 else 0,
                        subplot_titles=[escape_text(titles.get(name, name)) for name in arrays])
    heads = [f"H{h + 1}" for h in range(n_heads)]
    layers = [f"L{l + 1}" for l in range(n_layers)]
    for col, (name, values) in enumerate(arrays.items(), start=1):
        bits = name == "entropy"
        high = max(float(values.max()), 1.0) if bits else 1.0
        text = np.vectorize(lambda v: f"{v:.1f}" if bits else f"{100 * v:.0f}")(values)
        fig.add_trace(go.Heatmap(
            z=values, x=np.arange(1, n_heads + 1), y=np.arange(1, n_layers + 1), zmin=0, zmax=high, showscale=False,
            colorscale=SEQUENTIAL_SCALE if bits else ATTENTION_SCALE, text=text, texttemplate="%{text}",
            textfont=dict(size=10), xgap=2, ygap=2,
            hovertemplate=(f"layer %{{y}} · head %{{x}}<br>{escape_text(titles.get(name, name))}: "
                           + ("<b>%{z:.2f}</b> bits" if bits else "<b>%{z:.0%}</b>") + "<extra></extra>"),
        ), row=1, col=col)
        fig.update_xaxes(tickmode="array", tickvals=np.arange(1, n_heads + 1), ticktext=heads, showgrid=False,
                         zeroline=False, row=1, col=col, side="bottom")
        fig.update_yaxes(tickmode="array", tickvals=np.arange(1, n_layers + 1), ticktext=layers, showgrid=False,
                         zeroline=False, autorange="reversed", showticklabels=col == 1, row=1, col=col,
                         scaleanchor=f"x{col if col > 1 else ''}")
        if selected is not None:
            l, h = selected
            fig.add_shape(type="rect", x0=h + 0.5, x1=h + 1.5, y0=l + 0.5, y1=l + 1.5, row=1, col=col,
                          line=dict(color=ACCENT_COLOR, width=3), fillcolor="rgba(0,0,0,0)")
    fig.update_annotations(font=dict(size=12))
    return finish_layout(fig, title, width=int(plot_w + 80), height=int(n_layers * cell + 130),
                         margin=dict(l=50, r=30, t=90 if title else 60, b=30))


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
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=gap / plot_w,
                        subplot_titles=[escape_text(name) for name in names])
    for col, weights in ((1, a), (2, b)):
        fig.add_trace(token_heatmap(weights, queries, keys, coloraxis="coloraxis", xgap=1, ygap=1), row=1, col=col)
        style_token_axes(fig, queries, keys, row=1, col=col, show_rows=col == 1,
                         row_title="query" if col == 1 else None, col_title="key")
    margin = token_margins(queries, keys, title=bool(title))
    margin["r"] = 90
    return finish_layout(fig, title, margin=margin, width=int(plot_w + margin["l"] + margin["r"]),
                         height=int(max(a.shape[0] * cell + margin["t"] + margin["b"], 260)),
                         coloraxis=dict(cmin=0, cmax=1, colorscale=ATTENTION_SCALE, colorbar=colorbar("weight")))
