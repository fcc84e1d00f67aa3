"""The "Next token" tab: the top-k next-token candidates of the current decoding step and the
entropy of the distribution (section 3.4: a softmax over the shared vocabulary).
"""

from __future__ import annotations

from gradio.components.plot import PlotData

from model import TranslationTrace
from visualizer.steps import step_candidates

from .common import Page, TabView, figure_tab, plot, step_index
from .text import ABOUT_NEXT

TAB_ID = "next"


def candidates_view(trace: TranslationTrace, step: float | None) -> PlotData:
    t = step_index(trace, step)
    return plot(step_candidates(trace, t), f"candidates-step-{t + 1}")


def build(page: Page) -> TabView:
    return figure_tab(page, "Next token", TAB_ID, ABOUT_NEXT, "candidates-plot", candidates_view)
