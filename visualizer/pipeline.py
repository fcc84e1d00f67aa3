"""Inside one attention head (section 3.2.1): the scaled dot products QKᵀ/√d_k, the same with the mask (masked
cells grey, −∞ before the softmax) and the softmax weights.

Side by side where a projector's box gives each key a column as wide as a label in projector type, its rows as
tall (the colour bars under the panels); else one above the other, each panel the box's width; on a phone
(``meta.narrow``) one above the other, labels in the largest type the phone's columns hold. The columns fill the
figure's width and the rows keep their height, so no two row labels overlap whatever box the page gives.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .attention import COLORBAR_PX, TITLE_DROP_PX, below_toolbar, checked_weights, shown_window, window_note
from .checks import as_array
from .grid import Refs, axis_name, on_axes, set_axes, subplot_grid
from .heatmap import (
    LABEL_LINE_EM,
    LEFT_MARGIN_PX,
    LEFT_PAD_PX,
    MIN_FONT,
    NARROW_BAR_PX,
    NARROW_RIGHT_PX,
    PROJECTOR_FONT,
    TOP_MARGIN_PX,
    Window,
    cell_px,
    foot_colorbar,
    highlight_rows,
    label_px,
    token_axes,
    token_heatmap,
    token_margins,
)
from .theme import ATTENTION_SCALE, DIVERGING_SCALE, MASKED_COLOR, colorbar, figure

MASKED_TEXT = "−∞ (masked)"
PIPELINE_TITLES = ("QKᵀ/√d_k", "+ mask", "softmax")
PIPELINE_TITLE_FONT = 14  # px
REFS: list[Refs] = [("x", "y"), ("x2", "y2"), ("x3", "y3")]  # the three panels, side by side or one above the other
PROJECTOR_BOX_PX = 860  # the figure's box on a 1280x720 screen (the Attention tab's main column)
LABEL_PX = LABEL_LINE_EM * PROJECTOR_FONT  # a row this tall (a column this wide) holds a projector label apart
CELL_MAX_PX = 28  # a row never taller
SIDE_GAP_PX = 24  # between the panels side by side (their colour bars lie under them)
STACKED_CELLS_PX = 720  # one above the other: the rows of a panel together about this tall ...
STACKED_GAP_PX = 90  # ... with this between panels (the keys' labels and the next title)
SCORE_BAR_SHARE, WEIGHT_BAR_SHARE = 0.6, 0.3  # stacked: the bars' lengths, as shares of the plot's height
BAR_SHARE = 0.8  # under the panels: a bar's length (its title before it), as a share of the panels it stands under
KEY_PAD_PX = 30  # below the keys' labels (and, one above the other, the next panel's title)
NARROW_BOX_PX = 360  # a phone's box
NARROW_FONTS = (PROJECTOR_FONT, 12, MIN_FONT)  # px: a phone's labels, the largest its columns hold
NARROW_BAR_LEN_PX = 170  # a phone: each colour bar's length (its title before it)
PIPELINE_MIN_HEIGHT_PX = 260


def attention_pipeline(
    scores: np.ndarray,
    mask: np.ndarray,
    weights: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    *,
    title: str = "",
    highlight_query: int | None = None,
    window: Window | None = None,
) -> go.Figure:
    """Section 3.2.1 inside one head: QKᵀ/√d_k, the same with the mask, the softmax; side by side where each key's
    column holds a label in projector type in a projector's box (`side_cell`), else one above the other; a phone's
    layout in ``meta.narrow`` (`narrow_pipeline`).

    Args:
        scores: (Tq, Tk) scaled dot products before the mask, on a diverging scale centred at 0.
        mask: (Tq, Tk) booleans, True = the query may attend to the key; masked cells are −∞
            before the softmax and are drawn as grey cells whose hover reads "−∞ (masked)".
        weights: (Tq, Tk) softmax weights on the 0-1 scale.
        query_tokens, key_tokens: Tq and Tk tokens.
        window: the rows and columns shown (long sentences); None = all.

    Raises:
        ValueError: an array is not 2-D, its shape does not match the tokens, or the window lies outside.
    """
    full, queries, keys, highlight = checked_weights(weights, query_tokens, key_tokens, 2, highlight_query)
    s = as_array("scores", scores, 2)
    allowed = as_array("mask", mask, 2, dtype=bool)
    for name, array in (("scores", s), ("mask", allowed)):
        if array.shape != full.shape:
            raise ValueError(f"{name} has shape {array.shape}, weights {full.shape}; they must match")
    window, queries, keys, highlight = shown_window(window, full.shape, queries, keys, highlight)
    w, s, allowed = window.of(full), window.of(s), window.of(allowed)  # (tq, tk) each

    # Symmetric colour range over the finite scores, so 0 is white in both score panels.
    finite = s[np.isfinite(s) & (np.abs(s) < 1e30)]
    bound = float(np.abs(finite).max()) if finite.size and np.abs(finite).max() > 0 else 1.0

    margin = token_margins(queries, keys, title=bool(title))
    cell = side_cell(len(keys), margin["l"])
    arranged = side_by_side(queries, keys, margin, cell) if cell >= LABEL_PX else stacked(queries, keys, margin)
    notes = window_note(window, full.shape)
    narrow = narrow_pipeline(queries, keys, title=bool(title))
    narrow["annotations"] += notes
    score_bar, weight_bar = arranged.pop("bars")
    return below_toolbar(
        figure(
            pipeline_heatmaps(s, allowed, w, queries, keys, window, REFS),
            dict(
                arranged,
                shapes=highlight_rows(highlight, len(keys), REFS),
                annotations=arranged["annotations"] + notes,
                coloraxis=dict(cmin=-bound, cmax=bound, colorscale=DIVERGING_SCALE, colorbar=score_bar),
                coloraxis2=dict(cmin=0, cmax=1, colorscale=ATTENTION_SCALE, colorbar=weight_bar),
                meta=dict(narrow=narrow),
            ),
            title,
        )
    )


def side_cell(n_keys: int, left: float) -> float:
    """A key's column in px with the three panels side by side in a projector's box, the left margin ``left``."""
    return (PROJECTOR_BOX_PX - left - NARROW_RIGHT_PX - 2 * SIDE_GAP_PX) / (3 * n_keys)


def panel_axes(layout: dict, queries: list[str], keys: list[str], *, rows_each: bool, font: int | None = None) -> None:
    """Each panel's axes in ``layout``: rows down (named left of the first panel, or of each where ``rows_each``),
    the keys' labels turned upright under each panel (a label's height apart: LABEL_PX), columns filling the width."""
    for index, refs in enumerate(REFS):
        named = rows_each or index == 0
        x, y = token_axes(queries, keys, refs[1], show_rows=named, row_title="query" if named else None, square=False)
        x["tickangle"] = -90
        if font is not None:
            x["tickfont"] = y["tickfont"] = dict(size=font)
        if rows_each:  # one above the other: each panel its own rows (the side-by-side layout's are shared)
            y.update(matches=None, showticklabels=True)
        set_axes(layout, refs, x, y)


def side_by_side(queries: list[str], keys: list[str], margin: dict, cell: float) -> dict:
    """The panels side by side, rows ``cell`` px tall (within LABEL_PX..CELL_MAX_PX), each colour bar laid under
    the panels it keys (the scores' under the first two, the weights' under the softmax) -> layout with "bars"."""
    row = float(np.clip(cell, LABEL_PX, CELL_MAX_PX))
    plot_w = PROJECTOR_BOX_PX - margin["l"] - NARROW_RIGHT_PX
    layout, _ = subplot_grid(
        1,
        3,
        shared_yaxes=True,
        horizontal_spacing=SIDE_GAP_PX / plot_w,
        titles=PIPELINE_TITLES,
        title_size=PIPELINE_TITLE_FONT,
    )
    panel_axes(layout, queries, keys, rows_each=False)
    keys_px = label_px(keys, PROJECTOR_FONT) + KEY_PAD_PX
    margin = dict(margin, r=NARROW_RIGHT_PX, b=int(keys_px + NARROW_BAR_PX))
    height = int(max(len(queries) * row + margin["t"] + margin["b"], PIPELINE_MIN_HEIGHT_PX))
    under = [layout[axis_name(x)]["domain"] for x, _ in REFS]
    bars = foot_bars(height, (under[0][0], under[1][1]), under[2])
    return dict(layout, margin=margin, height=height, bars=bars)


def stacked(queries: list[str], keys: list[str], margin: dict) -> dict:
    """The panels one above the other, each the box's width, rows sized to the matrix, the colour bars right of the
    plot (the scores' beside the two score panels, the weights' beside the softmax) -> layout with "bars"."""
    row = cell_px(max(len(queries), len(keys)), STACKED_CELLS_PX, high=CELL_MAX_PX)
    plot_h = 3 * len(queries) * row + 2 * STACKED_GAP_PX
    layout, _ = subplot_grid(
        3, 1, vertical_spacing=STACKED_GAP_PX / plot_h, titles=PIPELINE_TITLES, title_size=PIPELINE_TITLE_FONT
    )
    panel_axes(layout, queries, keys, rows_each=True)
    for x, _ in REFS:
        layout[axis_name(x)]["tickangle"] = -45  # long sentences: the keys' labels slanted into the gap
    margin = dict(margin, r=COLORBAR_PX)
    bars = (
        colorbar("score", x=1.0, xanchor="left", y=1, yanchor="top", len=SCORE_BAR_SHARE),
        colorbar("weight", x=1.0, xanchor="left", y=0, yanchor="bottom", len=WEIGHT_BAR_SHARE),
    )
    height = int(max(plot_h + margin["t"] + margin["b"], PIPELINE_MIN_HEIGHT_PX))
    return dict(layout, margin=margin, height=height, bars=bars)


def foot_bars(height: int, scores: Sequence[float], weights: Sequence[float]) -> tuple[dict, dict]:
    """(the scores' colour bar, the weights') laid across the foot of a figure ``height`` px tall, each under the
    span of the plot (paper x: from, to) it keys, its title before it."""

    def bar(name: str, span: Sequence[float]) -> dict:
        return {
            **colorbar(name),
            **foot_colorbar(height),
            "x": (span[0] + span[1]) / 2,
            "len": BAR_SHARE * (span[1] - span[0]),
            "title": dict(text=name, side="right", font=dict(size=PROJECTOR_FONT)),
        }

    return bar("score", scores), bar("weight", weights)


def stacked_bars(height: int) -> tuple[dict, dict]:
    """A phone's (scores' bar, weights' bar): one above the other at the foot of a figure ``height`` px tall, each
    NARROW_BAR_LEN_PX long across the middle of the figure (not of its plot, which the row labels narrow)."""
    across = dict(xref="container", x=0.58, lenmode="pixels", len=NARROW_BAR_LEN_PX)  # right of centre: its title
    scores, weights = foot_bars(height, (0.0, 1.0), (0.0, 1.0))
    return dict(scores, **across, y=2 * NARROW_BAR_PX / height), dict(weights, **across)


def narrow_font(queries: list[str], n_keys: int) -> tuple[int, int]:
    """(labels' px, left margin px) of a phone's layout: the largest of NARROW_FONTS whose key columns, in a phone's
    box less the row labels in that type, are a label's height apart (else the smallest)."""
    for font in NARROW_FONTS:
        left = int(np.clip(label_px(queries, font) + LEFT_PAD_PX, *LEFT_MARGIN_PX))
        if (NARROW_BOX_PX - left - NARROW_RIGHT_PX) / n_keys >= LABEL_LINE_EM * font or font == MIN_FONT:
            return font, left
    raise AssertionError("unreachable: NARROW_FONTS ends with MIN_FONT")


def narrow_pipeline(queries: list[str], keys: list[str], *, title: bool) -> dict:
    """The layout a phone draws instead (``meta.narrow``, applied by ui/js/figures.js): the panels one above the
    other, each with its rows and its keys (turned upright) in the largest type the phone's columns hold
    (`narrow_font`), rows that tall at least, both colour bars across under the softmax, the scores' above."""
    font, left = narrow_font(queries, len(keys))
    column = (NARROW_BOX_PX - left - NARROW_RIGHT_PX) / len(keys)
    row = float(np.clip(column, LABEL_LINE_EM * font, CELL_MAX_PX))
    gap = label_px(keys, font) + KEY_PAD_PX
    plot_h = 3 * len(queries) * row + 2 * gap
    layout, _ = subplot_grid(3, 1, vertical_spacing=gap / plot_h, titles=PIPELINE_TITLES, title_size=font + 2)
    panel_axes(layout, queries, keys, rows_each=True, font=font)
    margin = dict(
        l=left,
        r=NARROW_RIGHT_PX,
        t=TOP_MARGIN_PX[title] + (TITLE_DROP_PX if title else 0),
        b=int(gap + 2 * NARROW_BAR_PX),
    )
    height = int(plot_h + margin["t"] + margin["b"])
    scores, weights = stacked_bars(height)
    return dict(
        layout, margin=margin, height=height, coloraxis=dict(colorbar=scores), coloraxis2=dict(colorbar=weights)
    )


def pipeline_heatmaps(
    s: np.ndarray,
    allowed: np.ndarray,
    w: np.ndarray,
    queries: list[str],
    keys: list[str],
    window: Window,
    panels: list[Refs],
) -> list[dict]:
    """The scores s (tq, tk) in the first panel; in the second the scores where allowed (tq, tk) with a grey
    overlay where masked; the weights w (tq, tk) in the third."""
    masked_scores = np.where(allowed, s, np.nan).astype(np.float32)
    overlay = np.where(allowed, np.nan, 0.0).astype(np.float32)  # grey where masked, gap elsewhere
    at = dict(first_row=window.rows.start, first_col=window.cols.start, xgap=1, ygap=1)
    return [
        on_axes(token_heatmap(s, queries, keys, value_name="score", coloraxis="coloraxis", **at), panels[0]),
        on_axes(
            token_heatmap(
                masked_scores, queries, keys, value_name="score", coloraxis="coloraxis", hoverongaps=False, **at
            ),
            panels[1],
        ),
        on_axes(
            token_heatmap(
                overlay,
                queries,
                keys,
                value_name="score",
                value_text=MASKED_TEXT,
                colorscale=[[0, MASKED_COLOR], [1, MASKED_COLOR]],
                zmin=0,
                zmax=1,
                showscale=False,
                hoverongaps=False,
                name="masked",
                **at,
            ),
            panels[1],
        ),
        on_axes(token_heatmap(w, queries, keys, coloraxis="coloraxis2", **at), panels[2]),
    ]
