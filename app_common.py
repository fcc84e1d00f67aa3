"""Helpers shared by app.py and explain_tab.py (which cannot import app.py: it runs as __main__).

Small and Gradio-facing: a Plotly figure as a gr.Plot value, and the decoding step of the slider.
"""

from __future__ import annotations

import json

import numpy as np
from gradio.components.plot import PlotData

from model import TranslationTrace


def plot(figure, name: str) -> PlotData:
    """A Plotly figure for gr.Plot with the toolbar always shown; its camera icon saves `name`.png."""
    config = {"displayModeBar": True, "displaylogo": False,
              "toImageButtonOptions": {"format": "png", "filename": name, "scale": 2}}
    # gr.Plot's front end passes a "config" key of the figure JSON to Plotly; splice it in front.
    return PlotData(type="plotly", plot='{"config": %s, %s' % (json.dumps(config), figure.to_json()[1:]))


def step_index(trace: TranslationTrace, step: float | None) -> int:
    """The 1-based step of the slider -> a 0-based index into the trace, clamped to the steps there are."""
    return int(np.clip(int(step or 1), 1, trace.num_steps)) - 1
