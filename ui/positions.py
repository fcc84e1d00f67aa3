"""The "Positional encoding" (section 3.5) and "Masks" (section 3.2.3) tabs of the source sentence."""

from __future__ import annotations

from gradio.components.plot import PlotData

import visualizer
from model import TranslationTrace

from .common import Page, TabView, figure_tab, plot, step_index
from .text import ABOUT_MASKS, ABOUT_POSITIONS


def positions_view(trace: TranslationTrace) -> PlotData:
    return plot(visualizer.positional_encoding_figure(trace.positional_encoding, tokens=trace.source_tokens),
                "positional-encoding")


def masks_view(trace: TranslationTrace, step: float | None) -> PlotData:
    t = step_index(trace, step)
    figure = visualizer.masks_figure(
        trace.batch_padding_mask, trace.batch_tokens, trace.causal_mask, trace.decoder_mask, trace.cross_mask,
        trace.source_tokens, trace.target_tokens, step=t,
    )
    return plot(figure, "masks")


def build(page: Page) -> list[TabView]:
    return [figure_tab(page, "Positional encoding", "positions", ABOUT_POSITIONS, "pe-plot",
                       lambda trace, step: positions_view(trace)),
            figure_tab(page, "Masks", "masks", ABOUT_MASKS, "mask-plot", masks_view)]
