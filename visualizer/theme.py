"""The house look of every figure, and the one way figures are built.

A figure is a plain dict spec (series and layout, "data" and "layout") in one font, one palette
and the white template, handed to Plotly unvalidated: validating the template or the series on
each call costs far more than drawing them, and a view re-renders on every step a user takes.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.colors as pcolors
import plotly.graph_objects as go
import plotly.io as pio

from .tokens import escape_text

FONT_FAMILY = "Inter, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"
TEXT_COLOR = "#1f2933"
MUTED_COLOR = "#616e7c"  # 5.2:1 on white (secondary text stays readable)
GRID_COLOR = "#e4e7eb"
ACCENT_COLOR = "#e4572e"  # highlighted query row, chosen candidate
# a window (or a figure's box) narrower than this is a phone's: the app's scripts and style sheet, the lesson's player
PHONE_WINDOW_PX = 640
ACCENT_TEXT_COLOR = "#b93a1c"  # the accent as text: 5.2:1 on white
PRIMARY_COLOR = "#4c78a8"
MASKED_COLOR = "#cdd2d9"  # cells a query may not attend to
PALETTE = pcolors.qualitative.T10


def _scale(colors: Sequence[str]) -> list[list]:
    return [[i / (len(colors) - 1), color] for i, color in enumerate(colors)]


ATTENTION_SCALE = _scale(pcolors.sequential.Blues)  # 0 (white) .. 1 (deep blue)
DIVERGING_SCALE = _scale(pcolors.diverging.RdBu[::-1])  # negative blue, 0 white, positive red
SEQUENTIAL_SCALE = _scale(pcolors.sequential.Viridis)
TEMPLATE = pio.templates["plotly_white"].to_plotly_json()  # expanded once, at import

# The dark theme, as data: every light colour above -> its dark-safe equivalent (same meaning: text, grid,
# accent...), and each colour scale -> one whose low end is the dark background (0 attention = background,
# as 0 is white in the light scale). The page swaps them in the browser when it is dark (ui/js/figures.js),
# so every figure function draws one (light) spec and follows the page's theme live.
DARK_BACKGROUND = "#1f2937"  # Gradio's dark block background (--block-background-fill, neutral-800)
DARK_COLORS = {
    TEXT_COLOR: "#e5e7eb",
    MUTED_COLOR: "#9ca3af",
    GRID_COLOR: "#374151",
    ACCENT_COLOR: "#ff7b54",
    ACCENT_TEXT_COLOR: "#ff7b54",
    PRIMARY_COLOR: "#6fa8dc",
    MASKED_COLOR: "#4b5563",
    "white": DARK_BACKGROUND,
    "#ffffff": DARK_BACKGROUND,
}
_DARK_BLUES = [DARK_BACKGROUND, "#0b3a6e", "#0f4c8a", "#1f63a8", "#3a7fc4", "#5b9bd5", "#86b9e6", "#b5d6f3", "#e3f0fc"]
_DARK_RDBU = [
    "#f4a582",
    "#e0785f",
    "#c8553d",
    "#9b3a2c",
    "#5c2a26",
    DARK_BACKGROUND,
    "#243f5c",
    "#2f6190",
    "#4a8bc4",
    "#7fb4e0",
    "#b9d8f2",
]  # negative blue .. 0 background .. positive red, brightening outwards
for _light, _dark in ((pcolors.sequential.Blues, _DARK_BLUES), (pcolors.diverging.RdBu[::-1], _DARK_RDBU[::-1])):
    DARK_COLORS.update(zip(_light, _dark))
DARK_TEMPLATE = pio.templates["plotly_dark"].to_plotly_json()


def dark_theme() -> dict:
    """What the page needs to draw a figure dark: {"colors": {light: dark}, "template": {...}} (JSON-able).

    Colours are keyed in lower case without spaces ("rgb(8,48,107)"), as the page compares them.
    """
    template = {
        "layout": {**DARK_TEMPLATE["layout"], "paper_bgcolor": DARK_BACKGROUND, "plot_bgcolor": DARK_BACKGROUND}
    }
    colors = {key.lower().replace(" ", ""): value for key, value in DARK_COLORS.items()}
    return {"colors": colors, "template": template, "background": DARK_BACKGROUND}


def axis_title(text: str, size: int = 12) -> dict:
    """A muted axis title."""
    return dict(text=text, font=dict(size=size, color=MUTED_COLOR))


def corner_note(text: str, size: int = 11) -> dict:
    """A muted note above the top-right corner of the plot (an annotation)."""
    return dict(
        text=text,
        xref="paper",
        yref="paper",
        x=1,
        y=1.02,
        xanchor="right",
        yanchor="bottom",
        showarrow=False,
        font=dict(size=size, color=MUTED_COLOR),
    )


def outline(x0: float, x1: float, y0: float, y1: float, *, width: float = 3, **shape) -> dict:
    """An unfilled rectangle in the accent colour (a chosen cell, the query row); ``shape``: xref, yref, name..."""
    return dict(
        type="rect",
        x0=x0,
        x1=x1,
        y0=y0,
        y1=y1,
        line=dict(color=ACCENT_COLOR, width=width),
        fillcolor="rgba(0,0,0,0)",
        **shape,
    )


def colorbar(title: str = "", **kwargs) -> dict:
    """Colour-bar settings; keyword arguments (x, len, tickvals, ...) override the defaults."""
    return {
        "title": dict(text=title, side="right", font=dict(size=14)),
        "thickness": 12,
        "len": 0.8,
        "outlinewidth": 0,
        "tickfont": dict(size=14),
        **kwargs,
    }


def house_layout(title: str = "", **layout) -> dict:
    """House look: white template, one font, escaped plain-text title, readable hover labels."""
    spec = dict(
        template=TEMPLATE,
        font=dict(family=FONT_FAMILY, size=12, color=TEXT_COLOR),
        hoverlabel=dict(
            bgcolor="white", bordercolor=MUTED_COLOR, font=dict(family=FONT_FAMILY, size=12, color=TEXT_COLOR)
        ),
        plot_bgcolor="white",
    )
    if title:
        spec["title"] = dict(text=escape_text(title), x=0.01, xanchor="left", font=dict(size=16))
    for key, value in layout.items():  # settings given here win over the house defaults, key by key
        if isinstance(value, dict) and isinstance(spec.get(key), dict):
            spec[key] = {**spec[key], **value}
        else:
            spec[key] = value
    return spec


def figure(data: list[dict], layout: dict, title: str = "") -> go.Figure:
    """A figure from plain series and layout dicts in the house look, built without Plotly's validation."""
    return go.Figure({"data": data, "layout": house_layout(title, **layout)}, _validate=False)
