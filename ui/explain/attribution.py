"""Explain panel "Attribution vs attention": for each output token, what the output depends on
(integrated gradients, Sundararajan et al. 2017; input x gradient) beside where each layer's cross-attention
reads (section 3.2.3), and their rank correlation at every step (Jain & Wallace 2019).

Pure views first ((trace, attribution, step) -> figure / markdown), then the wiring: one button runs the
model job `jobs.corpus_attribution` (serving/jobs.py) through the page's runner and keeps the result in gr.State; the view
registers with the page's one redraw (ui/redraw.py) and follows the step with no model call.
"""

from __future__ import annotations

import gradio as gr
import numpy as np
from gradio.components.plot import PlotData

from model import Checkpoint, TranslationTrace
from model.analysis.corpus.attribution import Attribution, rank_correlation
from serving import jobs
from visualizer.attribution import attribution_figure

from ..attention import HeadOpener
from ..common import Page, TabView, markdown_text, plot, step_index
from .panel import (
    MODEL_RUN,
    Panel,
    cleared_view,
    code,
    kept_for,
    require,
    sentence_matches,
    show_result,
    view,
)

IG_STEPS = 32  # integration steps live (completeness error is shown on the figure)

LEAD = (
    "which source words each output word depends on, beside the words cross-attention reads; where the two "
    "match, attention shows why that word came out."
)
ABOUT = """
Attention says where a layer *reads*; attribution measures what the output
*depends on*. For the chosen output token, the gradient of its log-probability with respect to each source
token's embedding, times the embedding (*input × gradient*), and *integrated gradients* (Sundararajan et
al. 2017, "Axiomatic Attribution for Deep Networks": the same product averaged along the path from a zero
embedding, so the attributions add up to the change in log-probability, shown in the corner), beside each
layer's cross-attention averaged over heads. Below: Spearman's rank correlation between |integrated
gradients| and attention at every step, the test of Jain & Wallace 2019 ("Attention is not Explanation").

*What agreement means.* Where attention and attribution rank the source tokens alike (ρ near 1), the tokens
a layer reads are the ones the prediction hinges on, and its attention is a fair picture of why this token
came out. Where they disagree (ρ near 0 or below), attention is not an explanation of this step: the
information may have been moved between positions by the encoder before cross-attention read it (every
encoder state mixes the whole sentence), other layers or the residual stream may carry it, or a head may park
weight on [EOS] as a no-op. Neither measure is the ground truth; agreement across methods is evidence,
disagreement a warning.
"""

RUN, READING = "attribution-run", "attribution-facts"  # the button, and the text that opens on what its result means
WAITING = (
    "Press *Attribute this translation* once per translation: one batched forward and backward "
    "pass per output token; the step slider then moves through the steps with no model call."
)


def attribution_view(trace: TranslationTrace, attribution: Attribution, step: float | None) -> PlotData:
    """IG and input x gradient at the step beside each layer's mean cross-attention; rho at every step."""
    t = step_index(trace, step)
    correlation = rank_correlation(attribution.integrated_gradients, trace.cross_attention)  # (L, T)
    gap = attribution.log_prob[t] - attribution.baseline_log_prob[t]
    figure = attribution_figure(
        trace.source_tokens,
        attribution.integrated_gradients[t],
        attribution.input_x_gradient[t],
        trace.cross_attention[:, :, t].mean(1),
        correlation,
        step=t,
        output_tokens=trace.output_tokens,
        completeness=(float(attribution.integrated_gradients[t].sum()), float(gap)),
        title=f"Why “{trace.output_tokens[t]}” at step {t + 1}: attribution vs attention",
    )
    return plot(figure, f"attribution-step-{t + 1}")


def attribution_facts(trace: TranslationTrace, attribution: Attribution, step: float | None) -> str:
    """Markdown under the figure: at this step, the source token each measure ranks first, and rho per layer."""
    t = step_index(trace, step)
    rho = rank_correlation(attribution.integrated_gradients, trace.cross_attention)[:, t]  # (L,)

    def strongest(values: np.ndarray) -> str:
        s = int(np.argmax(np.abs(values)))
        return f"{code(trace.source_tokens[s])} ({values[s]:+.4f})"

    attention = trace.cross_attention[:, :, t].mean(1)  # (L, h, T, S) -> (L, S)
    read = int(np.argmax(attention[-1]))
    correlations = ", ".join(
        f"layer {l + 1} {value:+.2f}" if np.isfinite(value) else f"layer {l + 1} n/a" for l, value in enumerate(rho)
    )
    depends = int(np.argmax(np.abs(attribution.integrated_gradients[t])))
    meaning = (
        "the same token, so here attention shows what the output rests on"
        if depends == read
        else "different tokens, so here attention alone does not show what the output rests on"
    )
    return (
        f"Step {t + 1}, “{markdown_text(trace.output_tokens[t])}”: it depends most on "
        f"{code(trace.source_tokens[depends])}, and the last layer's cross-attention reads most "
        f"{code(trace.source_tokens[read])}: {meaning}. In detail: integrated gradients point most to "
        f"{strongest(attribution.integrated_gradients[t])}, input × gradient to "
        f"{strongest(attribution.input_x_gradient[t])}; the last layer reads {code(trace.source_tokens[read])} "
        f"with {attention[-1, read]:.2f}; Spearman ρ between |IG| and attention (1: they rank the source tokens "
        f"alike): {correlations}."
    )


def build(page: Page, opener: HeadOpener, tab: gr.Tab) -> list[TabView]:
    """Sub-tab "Attribution vs attention" -> its views (the kept attribution, drawn at every step)."""
    checkpoint: Checkpoint = page.checkpoint
    run = gr.Button("Attribute this translation (every step)", variant="primary", elem_id=RUN)
    facts = gr.Markdown(WAITING, elem_id=READING)
    figure = gr.Plot(elem_id="attribution-plot", show_label=False)
    kept = gr.State(None)  # this user's attribution: {"source_ids", "output_ids", "result" (Attribution)}
    show_result(run, figure)

    def on_run(trace, progress=gr.Progress()):  # kept: a new `kept` redraws the view
        require(checkpoint, trace)
        steps = len(trace.output_ids)  # one gradient per output token, each over IG_STEPS + 2 scaled inputs
        progress(
            (0, steps), desc=f"Attributing {steps} output tokens ({IG_STEPS} integration steps each)", unit="tokens"
        )
        result = jobs.corpus_attribution(
            page.runner, list(trace.source_ids), list(trace.output_ids), IG_STEPS, direction=trace.direction
        )
        progress((steps, steps), desc="Drawing", unit="tokens")
        return {kept: kept_for(trace, result=result)}

    page.listen(run.click, on_run, [page.trace], [kept], show_progress_on=[figure], **MODEL_RUN)

    def draw(trace, step, values) -> dict:
        value = values[kept]
        if not sentence_matches(trace, value):
            return {figure: None, facts: WAITING}
        return {
            figure: attribution_view(trace, value["result"], step),
            facts: attribution_facts(trace, value["result"], step),
        }

    return [cleared_view({kept: None}), view([figure, facts], draw, controls=[kept], follows_step=True)]


PANEL = Panel(
    place=140,
    id="attribution",
    title="Attribution vs attention",
    lead=LEAD,
    about=ABOUT,
    build=build,
    reading=READING,
    run=RUN,
)
