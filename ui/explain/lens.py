"""Explain panel "Logit lens" (sections 3.1 and 3.4): each decoder layer's output at the current step read through
the shared projection. Reads the kept trace: no model call.
"""

from __future__ import annotations

import gradio as gr
from gradio.components.plot import PlotData

from model import TranslationTrace
from visualizer.lens import logit_lens_figure

from ..attention import HeadOpener
from ..common import Page, TabView, plot, step_index
from .panel import Panel, view

LEAD = (
    "what each decoder layer would predict at this step, one row per layer; the last "
    "row is the model's real prediction and the outlined cell is the token it chose."
)
ABOUT = """
Each decoder layer's output at the current step is read through the final projection (the shared embedding
matrix, section 3.4) and a softmax. The model is post-LN (section 3.1): every layer ends in
`LayerNorm(x + Sublayer(x))`, so each layer output is already normalised like the last one and no extra
normalisation is applied.
"""


def lens_view(trace: TranslationTrace, step: float | None) -> PlotData:
    t = step_index(trace, step)
    figure = logit_lens_figure(
        trace.logit_lens_tokens[t],
        trace.logit_lens_probs[t],
        trace.output_tokens[t],
        title=f"Step {t + 1}: top tokens read from each decoder layer",
    )
    return plot(figure, f"logit-lens-step-{t + 1}")


def build(page: Page, opener: HeadOpener, tab: gr.Tab) -> list[TabView]:
    lens = gr.Plot(elem_id="lens-plot", show_label=False)
    return [view([lens], lambda trace, step, values: {lens: lens_view(trace, step)}, follows_step=True)]


PANEL = Panel(place=30, id="lens", title="Logit lens", lead=LEAD, about=ABOUT, build=build)
