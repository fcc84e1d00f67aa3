"""How the checkpoint was trained: section 5.3 (the learning-rate schedule: warm-up, then
1/√step decay) and section 6 (BLEU on held-out data), from the checkpoint's own logs.

``training_curves_figure`` reads ``training_log.json``; ``metrics_table_markdown`` reads the
``scores`` of ``metrics.json``. Both tolerate missing parts: a checkpoint may have none.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from .grid import on_axes, panel_centre, set_axes, spacing, subplot_grid
from .theme import GRID_COLOR, MUTED_COLOR, PALETTE, axis_title, figure

NO_METRICS = "_No evaluation scores recorded for this checkpoint._"
PANEL_TITLES = ("loss (label-smoothed cross-entropy)", "learning rate", "validation BLEU")
TITLE_PX = 13  # the panel titles' type
MARGIN_PX = dict(l=60, r=20, t=80, b=90)
LEGEND_DROP_PX = 50  # a phone: the legend's top this far below the plot (under the step labels and the axis title)
NARROW_PANEL_PX = 170  # a phone: the panels one above the other, each this tall
NARROW_GAP_PX = 80  # between them: the step labels, the axis title "step" and the next panel's title
NARROW_LEGEND_PX = 70  # a phone: the legend's rows (its five entries wrap into three)


def curve(log: dict, section: str, key: str) -> tuple[np.ndarray, np.ndarray] | None:
    """(steps, values) of ``log[section][key]`` against ``log[section]["step"]``; None if nothing usable.

    Tolerates a missing section or key, lists of unequal length (cut to the shorter) and null or
    non-numeric entries (dropped).
    """
    part = log.get(section)
    if not isinstance(part, dict):
        return None
    steps, values = part.get("step"), part.get(key)
    if not isinstance(steps, (list, tuple, np.ndarray)) or not isinstance(values, (list, tuple, np.ndarray)):
        return None
    n = min(len(steps), len(values))
    pairs = [(s, v) for s, v in zip(steps[:n], values[:n]) if number(s) is not None and number(v) is not None]
    if not pairs:
        return None
    x, y = zip(*pairs)
    return np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)


def number(value) -> float | None:
    """A finite float, or None for null, text, NaN and infinities."""
    if isinstance(value, bool):
        return None
    try:
        result = float(value)
    except (TypeError, ValueError):
        return None
    return result if math.isfinite(result) else None


# (section, key, legend name, panel column, markers)
CURVES = [
    ("train", "loss", "training loss", 1, False),
    ("validation", "loss", "validation loss", 1, True),
    ("train", "learning_rate", "learning rate", 2, False),
    ("validation", "bleu_de_en", "BLEU de→en", 3, True),
    ("validation", "bleu_en_de", "BLEU en→de", 3, True),
]


def training_curves_figure(log: dict | None) -> go.Figure:
    """Loss (training and validation), learning rate and validation BLEU against the step.

    Args:
        log: the parsed ``training_log.json``: {"train": {"step", "loss", "learning_rate",
            "tokens_per_second"}, "validation": {"step", "loss", "bleu_de_en", "bleu_en_de"}}.
            Missing or empty parts leave their panel reading "no data".

    Raises:
        ValueError: log is neither a dict nor None.
    """
    if log is None:
        log = {}
    if not isinstance(log, dict):
        raise ValueError(f"log must be the dict of training_log.json, got {type(log).__name__}")
    layout, refs = subplot_grid(1, 3, horizontal_spacing=0.08, titles=PANEL_TITLES, title_size=TITLE_PX)
    series, filled = [], set()
    for index, (section, key, name, col, markers) in enumerate(CURVES):
        data = curve(log, section, key)
        if data is None:
            continue
        x, y = data
        series.append(
            on_axes(
                dict(
                    type="scatter",
                    x=x,
                    y=y,
                    name=name,
                    mode="lines+markers" if markers else "lines",
                    line=dict(color=PALETTE[index % len(PALETTE)], width=2 if markers else 1.5),
                    marker=dict(size=6),
                    hovertemplate=f"{name}<br>step %{{x:,}}<br>%{{y:.4g}}<extra></extra>",
                ),
                refs[1, col],
            )
        )
        filled.add(col)
    for col in (1, 2, 3):
        set_axes(
            layout,
            refs[1, col],
            dict(title=axis_title("step"), gridcolor=GRID_COLOR, zeroline=False),
            dict(gridcolor=GRID_COLOR, zeroline=False),
        )
        if col not in filled:  # an empty panel draws no axes: say so in its middle
            layout["annotations"].append(no_data_note(layout, refs[1, col]))
            set_axes(layout, refs[1, col], dict(visible=False), dict(visible=False))
    set_axes(layout, refs[1, 2], y=dict(exponentformat="e"))
    return figure(
        series,
        dict(
            layout,
            width=1100,
            height=400,
            margin=dict(MARGIN_PX),
            legend=dict(orientation="h", x=0, y=-0.22, yanchor="top"),
            meta=dict(narrow=stacked_curves(sorted({1, 2, 3} - filled))),
        ),
        "Training",
    )


def no_data_note(layout: dict, panel) -> dict:
    """A "no data" note in the middle of an empty panel (it draws no axes)."""
    x, y = panel_centre(layout, panel)
    return dict(
        text="no data",
        xref="paper",
        yref="paper",
        x=x,
        y=y,
        showarrow=False,
        name="no data",
        font=dict(size=14, color=MUTED_COLOR),
    )


def stacked_curves(empty: list[int]) -> dict:
    """The layout a phone draws instead (``meta.narrow``, applied by ui/js/figures.js): the three panels one above
    the other, each as wide as the box, so every panel title fits above its panel; the ``empty`` panels (1-3)
    say so in their middle, the legend lies under the last one."""
    plot_h = 3 * NARROW_PANEL_PX + 2 * NARROW_GAP_PX
    layout, refs = subplot_grid(
        3, 1, vertical_spacing=spacing(NARROW_GAP_PX, plot_h, 3), titles=PANEL_TITLES, title_size=TITLE_PX
    )
    layout["annotations"] += [no_data_note(layout, refs[col, 1]) for col in empty]
    margin = dict(MARGIN_PX, b=LEGEND_DROP_PX + NARROW_LEGEND_PX)
    return dict(
        layout,
        height=plot_h + margin["t"] + margin["b"],
        margin=margin,
        legend=dict(y=-LEGEND_DROP_PX / plot_h),
    )


def markdown_cell(value) -> str:
    """Text safe in a Markdown table cell."""
    text = str(value)
    for char in "\\|*_`[]<>":
        text = text.replace(char, "\\" + char)
    return text


def score_cell(value) -> str:
    result = number(value)
    return "–" if result is None else f"{result:.2f}"


def metrics_table_markdown(metrics: dict | None) -> str:
    """A Markdown table of BLEU and chrF per split, direction and decoding, from ``metrics.json``.

    Args:
        metrics: the parsed ``metrics.json``; its ``scores`` is {split: {direction: {decoding:
            {"bleu": x, "chrf": y}}}}, e.g. scores["test_2016_flickr"]["de-en"]["beam4"]["bleu"].

    Returns:
        The table, or a one-line note when there are no scores.
    """
    scores = metrics.get("scores") if isinstance(metrics, dict) else None
    rows = []
    if isinstance(scores, dict):
        for split, directions in scores.items():
            for direction, decodings in directions.items() if isinstance(directions, dict) else ():
                for decoding, values in decodings.items() if isinstance(decodings, dict) else ():
                    values = values if isinstance(values, dict) else {}
                    rows.append(
                        f"| {markdown_cell(split)} | {markdown_cell(direction)} | {markdown_cell(decoding)} "
                        f"| {score_cell(values.get('bleu'))} | {score_cell(values.get('chrf'))} |"
                    )
    if not rows:
        return NO_METRICS
    header = "| split | direction | decoding | BLEU | chrF |\n| --- | --- | --- | ---: | ---: |"
    return "\n".join([header, *rows])


NO_PUBLISHED_SCORES = "*No published scores: this copy of the model card (README.md) has no Benchmarks table.*"


def published_scores_markdown(rows: list[dict] | None) -> str:
    """A Markdown table of a card's published scores (rows {"testset", "BLEU", "chr-F"}, as the card writes them),
    or a one-line note when there are none."""
    rows = [row for row in rows or [] if isinstance(row, dict)]
    if not rows:
        return NO_PUBLISHED_SCORES
    header = "| testset | BLEU | chr-F |\n| --- | ---: | ---: |"
    lines = [
        f"| {markdown_cell(str(row.get('testset', '')))} | {markdown_cell(str(row.get('BLEU', '')))} "
        f"| {markdown_cell(str(row.get('chr-F', '')))} |"
        for row in rows
    ]
    return "\n".join([header, *lines])
