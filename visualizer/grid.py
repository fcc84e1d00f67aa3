"""Subplots as plain layout dicts: the grid of ``plotly.subplots.make_subplots`` without its graph objects.

Views with several panels (the heads of section 3.2.2, the steps of 3.2.1, the masks of 3.2.3)
lay them out here: axis domains, axis references ("x2", "y2") and panel titles, then put each
series on its panel and merge axis settings into the layout.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

Refs = tuple[str, str]  # ("x2", "y2"): the axes of one panel


STACKED_TITLE_PX = 28  # a phone's stacked panels (stacked_pair): room for the lower panel's title above it


def axis_name(ref: str) -> str:
    """ "x3" -> "xaxis3", the layout key of an axis reference."""
    return f"{ref[0]}axis{ref[1:]}"


def _edges(sizes: Sequence[float], spacing: float) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) in [0, 1] of panels of relative ``sizes`` with ``spacing`` between them."""
    sizes = np.asarray(sizes, dtype=float)
    sizes = sizes * (1 - spacing * (len(sizes) - 1)) / sizes.sum()
    starts = np.concatenate([[0.0], np.cumsum(sizes + spacing)[:-1]])
    # clip: cumulative sums can overshoot 1 by a rounding error (1.0000000000000002), which Plotly rejects
    return np.clip(starts, 0.0, 1.0), np.clip(starts + sizes, 0.0, 1.0)


def subplot_grid(
    rows: int,
    cols: int,
    *,
    specs: Sequence[Sequence[dict | None]] | None = None,
    column_widths: Sequence[float] | None = None,
    row_heights: Sequence[float] | None = None,
    horizontal_spacing: float = 0.0,
    vertical_spacing: float = 0.0,
    titles: Sequence[str] = (),
    title_size: int = 16,
    shared_yaxes: bool = False,
) -> tuple[dict, dict[tuple[int, int], Refs]]:
    """The layout of ``plotly.subplots.make_subplots`` (same domains, axis numbering and titles), as a dict.

    Returns (layout with xaxis/yaxis domains, anchors and title annotations, {(row, col): ("x2", "y2")}),
    rows and columns 1-based, row 1 at the top. ``specs`` cells may hold "rowspan"/"colspan" or be None.
    Titles are plain annotations: escape any text that came from a user.
    """
    x0, x1 = _edges(np.ones(cols) if column_widths is None else column_widths, horizontal_spacing)
    top_down0, top_down1 = _edges(np.ones(rows) if row_heights is None else row_heights, vertical_spacing)
    y1, y0 = 1 - top_down0, 1 - top_down1  # row 1 at the top
    specs = specs or [[{}] * cols for _ in range(rows)]
    layout, refs, annotations = {}, {}, []
    for row in range(rows):
        for col in range(cols):
            spec = specs[row][col]
            if spec is None:
                continue
            n = len(refs) + 1
            suffix = "" if n == 1 else str(n)
            x_dom = [float(x0[col]), float(x1[col + spec.get("colspan", 1) - 1])]
            y_dom = [float(y0[row + spec.get("rowspan", 1) - 1]), float(y1[row])]
            layout[f"xaxis{suffix}"] = dict(anchor=f"y{suffix}", domain=x_dom)
            layout[f"yaxis{suffix}"] = dict(anchor=f"x{suffix}", domain=y_dom)
            if shared_yaxes and col > 0:
                layout[f"yaxis{suffix}"].update(matches=refs[(row + 1, 1)][1], showticklabels=False)
            refs[(row + 1, col + 1)] = (f"x{suffix}", f"y{suffix}")
            if len(refs) <= len(titles):
                annotations.append(
                    dict(
                        text=titles[len(refs) - 1],
                        x=sum(x_dom) / 2,
                        y=y_dom[1],
                        xref="paper",
                        yref="paper",
                        xanchor="center",
                        yanchor="bottom",
                        showarrow=False,
                        font=dict(size=title_size),
                    )
                )
    if annotations:
        layout["annotations"] = annotations
    return layout, refs


def stacked_pair(layout: dict, panel_px: float, gap_px: float, margin: dict, colorbars: dict | None = None) -> dict:
    """The two panels of a 1x2 ``subplot_grid`` (``layout``, its titles as annotations) one above the other, each
    ``panel_px`` tall and as wide as the box, ``gap_px`` between them (the upper panel's labels across, the lower
    one's title), the rows named beside both: the layout a phone draws instead (``meta.narrow``, applied by
    ui/js/figures.js), where side by side the titles print over each other and the panels' cells are too small to
    name. colorbars: {coloraxis name: 0 (beside the upper panel) or 1 (the lower)}; one not named keeps its place."""
    plot_px = 2 * panel_px + gap_px
    domains = ([(panel_px + gap_px) / plot_px, 1.0], [0.0, panel_px / plot_px])
    notes = [dict(note, x=0.5, y=domain[1]) for note, domain in zip(layout.get("annotations", []), domains)]
    narrow = dict(
        height=int(plot_px + margin["t"] + margin["b"]),
        annotations=notes,
        xaxis=dict(domain=[0.0, 1.0]),
        yaxis=dict(domain=domains[0]),
        xaxis2=dict(domain=[0.0, 1.0]),
        yaxis2=dict(domain=domains[1], showticklabels=True),
    )
    for name, panel in (colorbars or {}).items():
        low, high = domains[panel]
        narrow[name] = dict(
            colorbar=dict(
                x=1.0, xanchor="left", y=(low + high) / 2, yanchor="middle", len=high - low, lenmode="fraction"
            )
        )
    return narrow


def spacing(gap_px: float, total_px: float, panels: int) -> float:
    """A gap of ``gap_px`` between ``panels`` panels as a fraction of ``total_px`` (0 for one panel)."""
    return gap_px / total_px if panels > 1 else 0.0


def on_axes(series: dict, refs: Refs) -> dict:
    """``series`` drawn on the panel whose axes are ``refs``."""
    series["xaxis"], series["yaxis"] = refs
    return series


def set_axes(layout: dict, refs: Refs, x: dict | None = None, y: dict | None = None) -> None:
    """Merge axis settings into the x and y axes ``refs`` of a layout dict."""
    for ref, settings in zip(refs, (x, y)):
        if settings:
            layout.setdefault(axis_name(ref), {}).update(settings)


def panel_centre(layout: dict, refs: Refs) -> tuple[float, float]:
    """The middle of a panel in paper coordinates (where an empty panel says so)."""
    x, y = (layout[axis_name(ref)]["domain"] for ref in refs)
    return sum(x) / 2, sum(y) / 2
