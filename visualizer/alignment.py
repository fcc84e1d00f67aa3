"""Word alignment read from encoder-decoder attention (section 3.2.3) for the Explain tab: source tokens on top,
target tokens below, a line per link (darker = more attention); sentences longer than MATRIX_ABOVE tokens get a
target x source matrix of the links instead, as lines would tangle.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np
import plotly.graph_objects as go

from .checks import labels_for
from .heatmap import fit_width, heatmap_size, indexed, label_px, token_axes, token_heatmap
from .theme import ATTENTION_SCALE, GRID_COLOR, MUTED_COLOR, PRIMARY_COLOR, TEXT_COLOR, colorbar, figure
from .tokens import shown_length

MATRIX_ABOVE = 40  # tokens: longer sentences get a links matrix instead of lines (a hairball)
PAD_PX = 40.0  # beyond the first and the last token, left and right
LABEL_FONT = 13  # a token's label, px


def alignment_figure(
    source_tokens: Sequence[str],
    target_tokens: Sequence[str],
    links: Sequence[tuple[int, int]],
    strengths: Sequence[float] | None = None,
    *,
    special_tokens: Collection[str] = (),
    title: str = "",
    input_tokens: Sequence[str] | None = None,
) -> go.Figure:
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
    longest = max(shown_length(label) for label in source + target)
    closest = width / max(n - 1, 1)  # pixels between neighbours in the fuller row
    angle = 0 if closest >= 7.5 * min(longest, 14) else -40  # rotate labels that would overlap
    series, annotations = token_rows(source, target, source_tokens, target_tokens, xs, xt, links, special_tokens, angle)
    # slanted labels reach above and below the rows as far as their length turned, and past the first token (the
    # targets, anchored at their right end) and the last (the sources, at their left end): the margins hold them
    rise, slant = (float(abs(f(np.radians(angle)))) for f in (np.sin, np.cos))
    lengths = [label_px(row, LABEL_FONT) for row in (source, target)]
    above, below = (int(max(40, rise * length + 30)) for length in lengths)
    reach = [slant * length - PAD_PX if angle else 0.0 for length in lengths]
    margin = dict(
        l=int(max(80, reach[1] + 16)), r=int(max(70, reach[0] + 16)), t=above + (50 if title else 10), b=below
    )
    return figure(
        series,
        dict(
            shapes=link_lines(xs, xt, links, weights),
            annotations=annotations,
            xaxis=dict(visible=False, range=[-PAD_PX, width + PAD_PX]),
            yaxis=dict(visible=False, range=[-0.05, 1.05]),
            height=200 + above + below,
            **fit_width(7.5 * max(n, 1) + 2 * PAD_PX + 150, width + 2 * PAD_PX + 150),
            showlegend=False,
            margin=margin,
            meta=dict(narrow=upright_labels(annotations, source, target, title=bool(title))),
        ),
        title,
    )


def upright_labels(annotations: list[dict], source: list[str], target: list[str], *, title: bool) -> dict:
    """The layout a phone draws instead (``meta.narrow``, applied by ui/js/figures.js): every token's label turned
    upright (a line of type apart, where slanted labels a phone's width apart print over each other), the
    margins above and below as tall as the longest label."""
    turned = [dict(note, textangle=-90, xanchor="center") if "yshift" in note else note for note in annotations]
    top, bottom = (int(label_px(row, LABEL_FONT)) + 30 for row in (source, target))
    return dict(
        annotations=turned, height=200 + top + bottom, margin=dict(l=80, r=30, t=top + (70 if title else 10), b=bottom)
    )


def link_lines(xs: np.ndarray, xt: np.ndarray, links: list[tuple[int, int]], weights: np.ndarray) -> list[dict]:
    """A line shape per link, from source x xs[s] (top) to target x xt[t] (bottom), wider and more opaque the
    stronger the link against the strongest."""
    # (links,) in [0, 1]; divided first, so the opacity below never exceeds 1 by a rounding error
    share = weights / (max(weights.max(), 1e-9) if len(links) else 1.0)
    return [
        dict(
            type="line",
            x0=xs[s],
            y0=1,
            x1=xt[t],
            y1=0,
            layer="below",
            line=dict(color=PRIMARY_COLOR, width=1 + 3 * w),
            opacity=0.2 + 0.8 * w,
        )
        for (s, t), w in zip(links, share)
    ]


def token_rows(
    source: list[str],
    target: list[str],
    source_tokens: Sequence[str],
    target_tokens: Sequence[str],
    xs: np.ndarray,
    xt: np.ndarray,
    links: list[tuple[int, int]],
    special_tokens: Collection[str],
    angle: int,
) -> tuple[list[dict], list[dict]]:
    """The source row (top, labels at xs) and the target row (bottom, at xt), special tokens muted -> (their
    two marker series, their token labels and the rows' names as annotations)."""
    source_notes, target_notes = link_notes(source, target, links)
    series, annotations = [], []
    for name, xs_row, row_labels, row_tokens, notes, y in (
        ("source", xs, source, source_tokens, source_notes, 1),
        ("target", xt, target, target_tokens, target_notes, 0),
    ):
        markers, row_annotations = token_row(
            name, xs_row, y, row_labels, notes, [token in special_tokens for token in row_tokens], angle
        )
        series.append(markers)
        annotations += row_annotations
    annotations += [
        dict(
            text=name,
            x=0,
            xref="paper",
            y=y,
            xanchor="right",
            xshift=-30,
            showarrow=False,
            font=dict(size=11, color=MUTED_COLOR),
        )
        for name, y in (("source", 1), ("target", 0))
    ]
    return series, annotations


def link_notes(source: list[str], target: list[str], links: list[tuple[int, int]]) -> tuple[list[str], list[str]]:
    """What each source token and each target token is linked to, as the hover writes it ("no link" if nothing)."""
    linked_to = {t: s for s, t in links}
    source_notes = [
        ", ".join(f"#{t} {target[t]}" for s2, t in links if s2 == i) or "no link" for i in range(len(source))
    ]
    target_notes = [
        f"#{linked_to[i]} {source[linked_to[i]]}" if i in linked_to else "no link" for i in range(len(target))
    ]
    return source_notes, target_notes


def token_row(
    name: str, xs: np.ndarray, y: int, labels: list[str], notes: list[str], muted: list[bool], angle: int
) -> tuple[dict, list[dict]]:
    """One row of the alignment figure: a marker series (hover: the token and its links), a label per token."""
    markers = dict(
        type="scatter",
        x=xs,
        y=np.full(len(labels), y),
        mode="markers",
        name=name,
        marker=dict(
            size=9, color=[GRID_COLOR if m else PRIMARY_COLOR for m in muted], line=dict(width=1, color=MUTED_COLOR)
        ),
        customdata=np.stack([indexed(labels), np.array(notes, dtype=object)], axis=-1),
        hovertemplate=f"{name} <b>%{{customdata[0]}}</b><br>linked to %{{customdata[1]}}<extra></extra>",
    )
    labels_above = y == 1
    annotations = [
        dict(
            x=x,
            y=y,
            text=label,
            showarrow=False,
            textangle=angle,
            yshift=12 if labels_above else -12,
            xanchor="center" if angle == 0 else ("left" if labels_above else "right"),
            yanchor="bottom" if labels_above else "top",
            font=dict(size=LABEL_FONT, color=MUTED_COLOR if m else TEXT_COLOR),
        )
        for x, label, m in zip(xs, labels, muted)
    ]
    return markers, annotations


def alignment_matrix(
    source: list[str], target: list[str], links: list[tuple[int, int]], weights: np.ndarray, title: str
) -> go.Figure:
    """The links as a target x source matrix: a cell per link coloured by its strength, the rest 0."""
    z = np.zeros((len(target), len(source)), dtype=np.float32)  # (T, S)
    for (s, t), w in zip(links, weights):
        z[t, s] = w
    cells = token_heatmap(
        z,
        target,
        source,
        row_name="target",
        col_name="source",
        value_name="link strength",
        value_format=".3f",
        zmin=0,
        zmax=max(float(z.max()), 1e-9),
        colorscale=ATTENTION_SCALE,
        colorbar=colorbar("strength"),
    )
    xaxis, yaxis = token_axes(target, source, row_title="target (input → predicted)", col_title="source")
    return figure([cells], dict(xaxis=xaxis, yaxis=yaxis, **heatmap_size(target, source, title=bool(title))), title)
