"""The "Positional encoding" (section 3.5) and "Masks" (section 3.2.3) tabs of the source sentence.

Neither the table nor the padded batch is part of a trace: the table is a function of the config and
the padding panel needs this sentence beside another, so both come from the runner at draw time.
"""

from __future__ import annotations

from gradio.components.plot import PlotData

import visualizer
from visualizer.positional import MIN_PE_ROWS
from visualizer.steps import step_masks
from model import TranslationTrace

from .common import Page, TabView, figure_tab, plot, step_index
from .text import about_masks, about_positions


def positions_view(runner, trace: TranslationTrace) -> PlotData:
    """Rows 0..P-1 of the table, P = max(S, T, MIN_PE_ROWS): rows 0..S-1 feed the source, 0..T-1 the target."""
    table = runner.positional_encoding(max(len(trace.source_tokens), len(trace.target_tokens), MIN_PE_ROWS))
    layout = runner.checkpoint.config.positional_layout  # the columns' order of sines and cosines
    figure = visualizer.positional_encoding_figure(table, tokens=trace.source_tokens, layout=layout)
    return plot(figure, "positional-encoding")


def masks_view(runner, trace: TranslationTrace, step: float | None) -> PlotData:
    t = step_index(trace, step)
    batch = runner.padding_example(trace)
    return plot(step_masks(trace, batch, t), "masks")


TAB_IDS = ("positions", "masks")  # the two tabs this module builds


def build(page: Page) -> list[TabView]:
    checkpoint = page.checkpoint
    layout = checkpoint.config.positional_layout if checkpoint else "interleaved"
    pad = checkpoint.tokenizer.id_to_token(checkpoint.config.pad_id) if checkpoint else "[PAD]"
    return [
        figure_tab(
            page,
            "Positional encoding",
            TAB_IDS[0],
            about_positions(layout),
            "pe-plot",
            lambda trace, step: positions_view(page.runner, trace),
        ),
        figure_tab(
            page,
            "Masks",
            TAB_IDS[1],
            about_masks(pad),
            "mask-plot",
            lambda trace, step: masks_view(page.runner, trace, step),
        ),
    ]
