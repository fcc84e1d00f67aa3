"""The "Next token" tab: the top-k next-token candidates of the current decoding step and the
entropy of the distribution (section 3.4: a softmax over the shared vocabulary).
"""

from __future__ import annotations

from gradio.components.plot import PlotData

import visualizer
from model import TranslationTrace

from .common import Page, TabView, figure_tab, plot, step_index
from .text import ABOUT_NEXT

TAB_ID = "next"


def candidates_view(trace: TranslationTrace, step: float | None) -> PlotData:
    t = step_index(trace, step)
    ids = trace.candidate_ids[t].tolist()
    chosen = ids.index(trace.output_ids[t]) if trace.output_ids[t] in ids else None
    figure = visualizer.candidates_chart(
        trace.candidate_tokens[t],
        trace.candidate_probs[t],
        chosen,
        entropy_bits=float(trace.entropy[t]),
        title=f"Step {t + 1}: the {len(ids)} most probable next tokens",
    )
    return plot(figure, f"candidates-step-{t + 1}")


def build(page: Page) -> TabView:
    return figure_tab(page, "Next token", TAB_ID, ABOUT_NEXT, "candidates-plot", candidates_view)
