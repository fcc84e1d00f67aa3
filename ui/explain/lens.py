"""Explain panel "Logit lens" (sections 3.1 and 3.4): each decoder layer's output at the current step read through
the shared projection.

The lens is not part of a translation's trace: reading every layer through the projection onto the whole vocabulary
costs as much as a large model's decoding, so it is read once per translation when the Explain tab opens (the job
`serving.jobs.logit_lens`, through the page's runner), kept for its sentence in this user's gr.State (`kept_for`), and
every step then reads from what is kept.
"""

from __future__ import annotations

import gradio as gr
from gradio.components.plot import PlotData

from model import TranslationTrace
from model.analysis.logit_lens import LogitLens
from serving import jobs
from visualizer.lens import logit_lens_figure

from ..attention import HeadOpener
from ..common import Page, TabView, plot, step_index
from .panel import Panel, code, kept_for, sentence_matches, view

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


READING = "lens-reading"  # the text that opens on where the decoder settles on its word


def reading(trace: TranslationTrace, lens: LogitLens, step: float | None) -> str:
    """One plain sentence, read from the lens at the step: from which decoder layer on every layer puts first the
    token the model writes, and what the first layer would have written; the technical name after it."""
    t = step_index(trace, step)
    chosen, firsts = trace.output_tokens[t], [layer[0] for layer in lens.tokens[t]]  # each layer's top token
    n_layers = len(firsts)
    settled = next((layer for layer in range(n_layers) if set(firsts[layer:]) == {chosen}), None)
    if settled is None:
        said = (
            f"At step {t + 1} the model writes {code(chosen)}, though its last layer puts {code(firsts[-1])} first: "
            "the token was imposed here, not chosen (a forced token, or the end written at the length limit)."
        )
    elif settled == 0:
        said = f"At step {t + 1} every one of the {n_layers} decoder layers already puts {code(chosen)} first."
    else:
        said = (
            f"At step {t + 1} the decoder settles on {code(chosen)} from layer {settled + 1} of {n_layers} on; "
            f"its first layer would have written {code(firsts[0])}."
        )
    return said + " (The logit lens: each layer's output read through the model's own output projection.)"


def lens_view(trace: TranslationTrace, lens: LogitLens, step: float | None) -> PlotData:
    """The figure of `trace`'s logit lens (`lens`, read for it) at the step."""
    t = step_index(trace, step)
    figure = logit_lens_figure(
        lens.tokens[t],
        lens.probs[t],
        trace.output_tokens[t],
        title=f"Step {t + 1}: top tokens read from each decoder layer",
    )
    return plot(figure, f"logit-lens-step-{t + 1}")


def build(page: Page, opener: HeadOpener, tab: gr.Tab) -> list[TabView]:
    said = gr.Markdown(elem_id=READING, elem_classes="explain-reading")
    figure = gr.Plot(elem_id="lens-plot", show_label=False)
    kept = gr.State(None)  # this user's lens of the trace on screen: {"source_ids", "output_ids", "lens"}

    def draw(trace: TranslationTrace, step, values) -> dict:
        known = values[kept]
        lens = known["lens"] if sentence_matches(trace, known) else jobs.logit_lens(page.runner, trace)
        return {
            said: reading(trace, lens, step),
            figure: lens_view(trace, lens, step),
            kept: kept_for(trace, lens=lens),
        }

    return [view([said, figure, kept], draw, inputs=[kept], follows_step=True)]


PANEL = Panel(place=30, id="lens", title="Logit lens", lead=LEAD, about=ABOUT, build=build, reading=READING)
