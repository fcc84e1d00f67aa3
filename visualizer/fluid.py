"""Figures that follow the width of the page: a phone (390 px) must never scroll sideways.

Some shared views (visualizer/attention.py's heatmap, visualizer/explain.py's head grids) size their
own width from the tokens; the Explain tab's newer views reuse them inside narrow panels, so they drop
that width and let Plotly fill the container, keeping the height the view chose.
"""

from __future__ import annotations

import plotly.graph_objects as go


def fluid(figure: go.Figure) -> go.Figure:
    """The same figure with no fixed width (autosize to its container); changes `figure` and returns it."""
    figure.layout.width = None
    figure.layout.autosize = True
    return figure
