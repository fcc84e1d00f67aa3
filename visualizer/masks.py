"""Masks of section 3.2.3, as the model used them: True = the query may attend to the key.

Four panels: (a) the source padding mask of a real padded batch (shorter sentences are filled
with [PAD], which no query may attend to), (b) the look-ahead mask that keeps decoder position i
from seeing positions after i, (c) the decoder self-attention mask (look-ahead AND target
padding), (d) the encoder-decoder (cross) attention mask (source padding, same for every query).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .checks import as_array, check_axis, check_index, labels_for
from .grid import Refs, on_axes, set_axes, subplot_grid
from .heatmap import (
    MIN_FONT,
    NARROW_RIGHT_PX,
    cell_px,
    fit_width,
    fitted_rows,
    heatmap_size,
    highlight_rows,
    hover_template,
    token_axes,
    token_heatmap,
    token_margins,
    tick_font_size,
)
from .theme import MASKED_COLOR, PRIMARY_COLOR, colorbar, figure
from .tokens import display_tokens, shown_length

ATTEND, MASKED = "attend", "masked"
CELL_CHAR_PX = 6.5  # a character's width in panel (a)'s cells (font size MIN_FONT)
BATCH_CHARS = 14  # panel (a)'s cells are wide enough for tokens of up to this many characters
GAP_X_PX, GAP_Y_PX = 70.0, 110.0  # between panels; the vertical gaps hold (a)'s position labels and the titles
NARROW_PANEL_PX = 240.0  # a phone: (b) and (c) at most this tall (their cells square across the box's width)
CELL_PX_MAX = 24.0  # panels (b), (c): the biggest cell
NARROW_KEY_PX = 40  # a phone: the attend/masked key across the figure's top
NARROW_BATCH_ROW_PX = 20.0  # a phone: panel (a) turned, a position a row
MASK_SCALE = [[0, MASKED_COLOR], [0.5, MASKED_COLOR], [0.5, PRIMARY_COLOR], [1, PRIMARY_COLOR]]
MASK_COLORAXIS = dict(
    cmin=0,
    cmax=1,
    colorscale=MASK_SCALE,
    colorbar=colorbar(
        "", tickvals=[0.25, 0.75], ticktext=[MASKED, ATTEND], len=0.35, tickfont=dict(size=14), y=1, yanchor="top"
    ),
)


def as_mask(
    name: str,
    value,
    rows: int | None = None,
    cols: int | None = None,
    row_what: str = "rows",
    col_what: str = "columns",
) -> np.ndarray:
    """A 2-D boolean mask; ValueError unless its shape is (rows, cols) where given."""
    mask = as_array(name, value, 2, dtype=bool)
    if rows is not None:
        check_axis(name, mask, 0, rows, row_what)
    if cols is not None:
        check_axis(name, mask, 1, cols, col_what)
    return mask


def mask_series(mask: np.ndarray, row_labels: Sequence[str], col_labels: Sequence[str]) -> dict:
    """Attend/masked cells on the shared two-colour axis, hover naming both tokens and the verdict."""
    return token_heatmap(
        mask.astype(np.float32),
        row_labels,
        col_labels,
        value_name="",
        value_text=np.where(mask, ATTEND, MASKED),
        coloraxis="coloraxis",
        xgap=1,
        ygap=1,
    )


def mask_heatmap(
    mask: np.ndarray,
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    *,
    title: str = "",
    highlight_row: int | None = None,
) -> go.Figure:
    """One mask (R, C): rows are queries, columns keys, "attend" vs "masked" in two colours.

    Raises:
        ValueError: mask not 2-D or its shape does not match the labels.
    """
    rows = labels_for("row_labels", row_labels)
    cols = labels_for("col_labels", col_labels)
    m = as_mask("mask", mask, len(rows), len(cols), "row labels", "column labels")
    highlight = check_index("highlight_row", highlight_row, len(rows))
    xaxis, yaxis = token_axes(rows, cols, row_title="query", col_title="key")
    return figure(
        [mask_series(m, rows, cols)],
        dict(
            xaxis=xaxis,
            yaxis=yaxis,
            shapes=highlight_rows(highlight, len(cols)),
            coloraxis=MASK_COLORAXIS,
            **heatmap_size(rows, cols, title=bool(title)),
        ),
        title,
    )


def batch_series(mask: np.ndarray, batch_tokens: list[list[str]], cell_chars: int) -> dict:
    """Panel (a): sentences down, positions across, each cell showing its token (cut to fit)."""
    rows, cols = mask.shape
    text = np.array([display_tokens(sentence, cell_chars) for sentence in batch_tokens], dtype=object)
    labels = np.array([display_tokens(sentence) for sentence in batch_tokens], dtype=object)  # (B, S_b)
    customdata = np.empty((rows, cols, 3), dtype=object)
    customdata[..., 0] = np.array([f"sentence {r + 1}" for r in range(rows)], dtype=object)[:, None]
    customdata[..., 1] = np.char.add(np.array([f"#{j} " for j in range(cols)])[None, :], labels.astype(str))
    customdata[..., 2] = np.where(mask, ATTEND, MASKED)
    return dict(
        type="heatmap",
        z=mask.astype(np.float32),
        x=np.arange(cols),
        y=np.arange(rows),
        customdata=customdata,
        text=text,
        texttemplate="%{text}" if cell_chars >= 3 else "",
        textfont=dict(size=MIN_FONT),
        coloraxis="coloraxis",
        xgap=2,
        ygap=2,
        hovertemplate=hover_template(
            "", "token", "key", "%{customdata[2]}", row_ref="%{customdata[0]}", col_ref="%{customdata[1]}"
        ),
    )


def every_kth(axis: dict, n: int, panel_px: float, min_px: float = 14) -> dict:
    """Keep every k-th tick label of a token axis so labels stand >= ``min_px`` apart on a panel."""
    every = max(1, int(np.ceil(min_px * n / max(panel_px, 1))))
    if every > 1:
        axis.update(tickvals=axis["tickvals"][::every], ticktext=axis["ticktext"][::every])
    return axis


def batch_axes(n_sentences: int, n_positions: int, panel_px: float) -> tuple[dict, dict]:
    """Panel (a)'s (x, y) axes: positions across (thinned to fit ``panel_px``), sentences down."""
    positions = np.arange(n_positions)
    xaxis = dict(
        tickmode="array",
        tickvals=positions,
        ticktext=[str(p) for p in positions],
        showgrid=False,
        zeroline=False,
        tickfont=dict(size=MIN_FONT),
        title=dict(text="position", font=dict(size=12)),
    )
    yaxis = dict(
        tickmode="array",
        tickvals=np.arange(n_sentences),
        autorange="reversed",
        ticktext=[f"sentence {r + 1}" for r in range(n_sentences)],
        showgrid=False,
        zeroline=False,
    )
    return every_kth(xaxis, n_positions, panel_px), yaxis


def masks_figure(
    batch_padding_mask: np.ndarray,
    batch_tokens: list[list[str]],
    causal_mask: np.ndarray,
    decoder_mask: np.ndarray,
    cross_mask: np.ndarray,
    source_tokens: Sequence[str],
    target_tokens: Sequence[str],
    *,
    step: int | None = None,
) -> go.Figure:
    """The four masks of one translation in one figure (see the module docstring).

    Args:
        batch_padding_mask: (B, S_b) True = real token, False = [PAD], for a padded batch of B
            sentences whose tokens are ``batch_tokens`` (B lists of S_b tokens).
        causal_mask, decoder_mask: (T, T) over the T ``target_tokens`` (decoder inputs).
        cross_mask: (T, S) target queries x the S ``source_tokens``.
        step: the decoding step shown: panel (b) has rows 0..step, (c) and (d) outline row step.

    Raises:
        ValueError: a mask has the wrong rank or a shape that does not match its tokens.
    """
    batch, causal, decoder, cross, target, source = checked_masks(
        batch_padding_mask, batch_tokens, causal_mask, decoder_mask, cross_mask, source_tokens, target_tokens
    )
    n_target, n_source = len(target), len(source)
    t = check_index("step", step, n_target)
    last = n_target - 1 if t is None else t

    # (a) and (d) run across the whole figure (their rows are as long as the source), (b) and (c)
    # side by side between them: nothing is cut off at 100 source tokens, and long rows thin their labels.
    cell = cell_px(n_target, budget=360, low=12, high=CELL_PX_MAX)
    source_cell = 8.0 if n_source > 60 else 14.0  # (a), (d): 8 px cells with every 2nd label beyond 60 tokens
    row_h = [30.0 * batch.shape[0], n_target * cell, n_target * cell * 0.6]
    longest = max((shown_length(label) for sentence in batch_tokens for label in display_tokens(sentence)), default=1)
    batch_cell = max(source_cell, min(longest, BATCH_CHARS) * CELL_CHAR_PX + 6)  # (a): every token whole in its cell
    plot_w = max(2 * n_target * cell + GAP_X_PX, n_source * source_cell, batch.shape[1] * batch_cell)
    plot_h = sum(row_h) + 2 * GAP_Y_PX
    layout, refs = mask_grid(row_h, plot_w, plot_h, t)
    cell_chars = int((plot_w / batch.shape[1] - 6) / CELL_CHAR_PX)
    series = [on_axes(batch_series(batch, batch_tokens, cell_chars), refs[1, 1])]
    set_axes(layout, refs[1, 1], *batch_axes(*batch.shape, plot_w))

    panels = [(refs[2, 1], causal[: last + 1], target), (refs[2, 2], decoder, target), (refs[3, 1], cross, source)]
    for col, (cell_refs, mask, keys) in enumerate(panels, start=1):
        series.append(on_axes(mask_series(mask, target[: mask.shape[0]], keys), cell_refs))
        axes = mask_axes(col, target, keys, cell_refs, last, plot_w if col == 3 else n_target * cell, row_h[2])
        set_axes(layout, cell_refs, *axes)
    shapes = highlight_rows(t, n_target, [refs[2, 1], refs[2, 2]]) + highlight_rows(t, n_source, [refs[3, 1]])

    margin = token_margins(target, source, title=False)
    margin.update(r=110, t=40)
    sides = margin["l"] + margin["r"]
    return figure(
        series,
        dict(
            layout,
            coloraxis=MASK_COLORAXIS,
            margin=margin,
            shapes=shapes,
            height=int(plot_h + margin["t"] + margin["b"]),
            meta=dict(narrow=stacked_masks(series[0], target, t, margin)),
            **fit_width(plot_w + sides, plot_w + sides),
        ),
    )


def stacked_masks(batch_panel: dict, target: list[str], step: int | None, margin: dict) -> dict:
    """The layout a phone draws instead (``meta.narrow``, applied by ui/js/figures.js): the four panels one above
    the other, (b) and (c) as wide as the box (cells kept square, (b) only as tall as the rows it has up to the
    step), short titles, the key above the panels, the query labels of (b) and (d) fitted to their rows
    (`fitted_rows`, the step's among them); panel (a) turned (``batch_panel``'s cells transposed: positions down,
    a column per sentence, wide enough for every token, [PAD] included)."""
    n_sentences, n_positions = np.shape(batch_panel["z"])
    n_target = len(target)
    shown = n_target if step is None else step + 1  # (b)'s rows
    square = min(NARROW_PANEL_PX, n_target * CELL_PX_MAX)
    row_h = [
        NARROW_BATCH_ROW_PX * n_positions,
        square * shown / n_target,
        square,
        min(0.6 * square, 0.6 * n_target * CELL_PX_MAX),
    ]
    plot_h = sum(row_h) + 3 * GAP_Y_PX
    layout, _ = subplot_grid(
        4,
        1,
        row_heights=row_h,
        vertical_spacing=GAP_Y_PX / plot_h,
        title_size=14,
        titles=(
            "(a) padding mask of a batch",
            look_ahead_title(step),
            "(c) decoder self-attention",
            "(d) cross-attention",
        ),
    )
    font = tick_font_size(n_target)
    layout["yaxis2"].update(
        range=[shown - 0.5, -0.5], **fitted_rows(target[:shown], square / n_target, font, marked=step)
    )
    layout["yaxis4"].update(fitted_rows(target, row_h[3] / n_target, MIN_FONT, marked=step))
    key = dict(orientation="h", x=0.5, xanchor="center", y=1, yref="container", yanchor="top", len=0.7, thickness=12)
    top = NARROW_KEY_PX + 30
    turned = dict(
        z=np.transpose(batch_panel["z"]).tolist(),
        x=list(range(n_sentences)),
        y=list(range(n_positions)),
        text=np.transpose(batch_panel["text"]).tolist(),
        customdata=np.transpose(batch_panel["customdata"], (1, 0, 2)).tolist(),
    )
    layout["xaxis"].update(
        tickmode="array",
        tickvals=list(range(n_sentences)),
        ticktext=[f"sentence {r + 1}" for r in range(n_sentences)],
        title=dict(text=""),
        tickfont=dict(size=12),
    )
    layout["yaxis"].update(
        tickmode="array",
        tickvals=list(range(n_positions)),
        ticktext=[str(p) for p in range(n_positions)],
        autorange="reversed",
        title=dict(text="position", font=dict(size=12)),
    )
    return dict(
        layout,
        traces=[turned],
        coloraxis=dict(colorbar=key),
        margin=dict(l=max(60, margin["l"] - 30), r=NARROW_RIGHT_PX, t=top, b=margin["b"]),
        height=int(plot_h + top + margin["b"]),
    )


def look_ahead_title(step: int | None) -> str:
    """Panel (b)'s title: the step its rows stop at, where there is one."""
    return "(b) look-ahead mask" + ("" if step is None else f" at step {step + 1}")


def mask_grid(
    row_heights: list[float], plot_w: float, plot_h: float, step: int | None
) -> tuple[dict, dict[tuple[int, int], Refs]]:
    """The panels' grid: (a) across the top, (b) and (c) side by side, (d) across the bottom; rows
    `row_heights` px high in a plot of plot_w x plot_h px. -> (layout, refs by (row, col))."""
    return subplot_grid(
        3,
        2,
        specs=[[{"colspan": 2}, None], [{}, {}], [{"colspan": 2}, None]],
        row_heights=row_heights,
        horizontal_spacing=GAP_X_PX / plot_w,
        vertical_spacing=GAP_Y_PX / plot_h,
        title_size=14,
        titles=(
            "(a) source padding mask of a padded batch: padding keys are masked",
            look_ahead_title(step),
            "(c) decoder self-attention mask",
            "(d) cross-attention mask",
        ),
    )


def checked_masks(
    batch_padding_mask: np.ndarray,
    batch_tokens: list[list[str]],
    causal_mask: np.ndarray,
    decoder_mask: np.ndarray,
    cross_mask: np.ndarray,
    source_tokens: Sequence[str],
    target_tokens: Sequence[str],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[str], list[str]]:
    """masks_figure's inputs checked against each other: (batch (B, S_b), causal (T, T), decoder (T, T),
    cross (T, S) as boolean masks, the T target labels, the S source labels)."""
    if isinstance(batch_tokens, str) or not len(batch_tokens):
        raise ValueError("batch_tokens must be a non-empty list of token lists")
    batch = as_mask("batch_padding_mask", batch_padding_mask, len(batch_tokens), None, "batch sentences")
    for index, sentence in enumerate(batch_tokens):
        labels_for(f"batch_tokens[{index}]", sentence, batch.shape[1])
    target = labels_for("target_tokens", target_tokens)
    source = labels_for("source_tokens", source_tokens)
    n_target, n_source = len(target), len(source)
    causal = as_mask("causal_mask", causal_mask, n_target, n_target, "target tokens", "target tokens")
    decoder = as_mask("decoder_mask", decoder_mask, n_target, n_target, "target tokens", "target tokens")
    cross = as_mask("cross_mask", cross_mask, n_target, n_source, "target tokens", "source tokens")
    return batch, causal, decoder, cross, target, source


def mask_axes(
    col: int, target: list[str], keys: list[str], cell_refs: Refs, last: int, width_px: float, strip_px: float
) -> tuple[dict, dict]:
    """The (x, y) axes of panel (b) (col 1, rows up to `last`), (c) (col 2) or (d) (col 3, a strip
    `strip_px` high, row `last` always named) of masks_figure: target queries by keys, labels thinned to fit."""
    n_target = len(target)
    xaxis, yaxis = token_axes(
        target, keys, cell_refs[1], show_rows=col != 2, row_title="query" if col != 2 else None, col_title="key"
    )
    xaxis = every_kth(xaxis, len(keys), width_px)
    if col == 1:  # (b) stops at the step: its future rows have no cells, so no labels either
        yaxis.update(tickvals=yaxis["tickvals"][: last + 1], ticktext=yaxis["ticktext"][: last + 1])
    if col == 3:  # a long strip: cells need not be square; every k-th row named, the step's among them
        xaxis.pop("scaleanchor", None)
        yaxis.update(fitted_rows(target, strip_px / n_target, MIN_FONT, marked=last))
    # Panel (b) stops at the step: a fixed range keeps its rows level with those of (c).
    yaxis.update(range=[n_target - 0.5, -0.5], autorange=False)
    return xaxis, yaxis
