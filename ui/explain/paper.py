"""Explain panel "Paper's figures": the sentences of "Attention Is All You Need" Figures 3-5 (Appendix,
attention visualizations) through this model's encoder, the head that best matches each figure's pattern drawn
in the paper's style beside its heatmap, and an honest comparison (mass vs chance, layer vs the paper's 5 of 6).

`run_paper_figures` is 2 model calls (the runner's job "paper_figures") and does not depend on the user's
sentence, so it runs once per checkpoint (on the first press of the button) and every user then reads the
same results. The figures are a view of the page's one redraw: the button and the Figure choice only set the
controls (the best head of the figure), which redraw.
"""

from __future__ import annotations

import threading

import gradio as gr

from model.analysis.paper_figures import PAPER_FIGURES, FigureResult
from serving import Runner, jobs
from visualizer.attention import attention_heatmap
from visualizer.explain import head_diagnostics_figure
from visualizer.fluid import fluid
from visualizer.paper import paper_lines_figure

from ..attention import HeadOpener
from ..common import PRIVATE, Page, TabView, clamp, plot
from ..common import markdown_text
from .panel import MODEL_RUN, Panel, show_result, view

LEAD = (
    "runs the sentences of the paper's Figures 3–5 through this model's encoder and draws the "
    "head that best matches each figure; darker lines = more attention."
)
ABOUT = """
The paper's appendix shows encoder self-attention heads in layer 5
of 6 on two English sentences: in Figure 3 heads attend from "making" to "more difficult" (a long-distance
dependency); in Figures 4–5 heads resolve the anaphora "its" (to "Law" and "application"). The same sentences go
through this model's encoder (English → German). Every head is scored by the attention mass the figure's word
puts on its targets (grid); the best one is chosen and drawn as in the paper: the sentence twice, a line from
each query (left) to each key (right), its opacity the attention weight. A uniform head would score
*targets / tokens* (chance).
"""
FIGURES = PAPER_FIGURES  # the sentences run (tests swap in shorter ones)
RUN, READING = "paper-run", "paper-verdict"  # the button, and the text that opens on what the search found


class PaperResults:
    """run_paper_figures for one checkpoint (through the page's runner), computed once on first use (shared,
    read-only afterwards)."""

    def __init__(self, runner: Runner):
        self.runner, self.results, self.error, self.lock = runner, None, None, threading.Lock()

    def get(self) -> list[FigureResult]:
        with self.lock:
            if self.results is None and self.error is None:
                try:
                    self.results = jobs.paper_figures(self.runner, FIGURES)
                except ValueError as error:  # a tokenizer that cuts the sentence before the figure's words
                    self.error = str(error)
        if self.error:
            raise gr.Error(f"The paper's sentences cannot be searched with this model: {self.error}")
        return self.results


def verdict(result: FigureResult, layer: int, head: int) -> str:
    """Markdown: one plain sentence of how far this model has a head like the figure's (computed from the search),
    then the figure's description, the numbers against chance and the paper's layer, and the model's German."""
    search, figure = result.search, result.figure
    best = search.best
    n_layers = search.scores.shape[0]
    chosen = float(search.scores[layer, head])
    name = f"Figure{'s' if len(figure.figures) > 1 else ''} {'–'.join(map(str, figure.figures))}"
    query, targets = markdown_text(figure.query), markdown_text(" / ".join(figure.targets))
    return (
        f"The head of this model most like the paper's {name} (layer {best.layer + 1}, head {best.head + 1}) sends "
        f"{best.score:.0%} of the attention of “{query}” to “{targets}”, {search.best_over_chance:.1f} times what a "
        f"head spreading its attention evenly would.  \n{name}: {markdown_text(figure.description)}  \nIn detail: "
        f"the best head is layer {best.layer + 1} of {n_layers}, head {best.head + 1}, at "
        f"{search.best_over_chance:.1f}× chance ({search.chance:.0%}, a uniform head). The paper's heads sit in "
        f"layer {search.paper_layer} of {search.paper_layers} (depth {search.paper_layer / search.paper_layers:.2f}); "
        f"this one at depth {search.best_depth:.2f}. Shown: layer {layer + 1}, head {head + 1} ({chosen:.0%}).  \n"
        f"This model's German: “{markdown_text(result.translation)}”" + translation_caveat(result)
    )


def translation_caveat(result: FigureResult) -> str:
    """Said plainly under the German when it is poor, with the reasons (model/text/language.py)."""
    if not result.translation_warnings:
        return ""
    reasons = markdown_text("; ".join(result.translation_warnings))
    return (
        f"  \n*This translation is poor, not a fair sample of the model:* {reasons}. The attention drawn "
        "above is still this model's own, computed on the paper's sentence."
    )


def paper_views(
    results: list[FigureResult], name: str, layer: float | None, head: float | None, all_queries: bool
) -> tuple:
    """(verdict, lines plot, heatmap plot, scores plot) for one figure and head (1-based; None = best)."""
    result = next((r for r in results if r.figure.name == name), results[0])
    search, weights = result.search, result.encoder_attention  # (L, h, S, S)
    l = search.best.layer if layer is None else clamp(layer, weights.shape[0])
    h = search.best.head if head is None else clamp(head, weights.shape[1])
    tokens, tag = result.source_tokens, f"{result.figure.name}-L{l + 1}-H{h + 1}"
    lines = paper_lines_figure(
        weights[l, h],
        tokens,
        query_tokens=search.query_tokens,
        target_tokens=search.target_tokens,
        only_queries=not all_queries,
        title=f"Layer {l + 1}, head {h + 1}, in the paper's style",
    )
    # its own width (~50 subwords need room): it fills a wider box and scrolls in a narrower one
    heatmap = attention_heatmap(
        weights[l, h], tokens, tokens, highlight_query=search.query_tokens[0], title=f"Layer {l + 1}, head {h + 1}"
    )
    scores = fluid(
        head_diagnostics_figure(
            {"mass": search.scores},
            {"mass": f"mass on the targets (chance {search.chance:.0%})"},
            selected=(l, h),
            title="Every head's score",
        )
    )
    return verdict(result, l, h), plot(lines, f"{tag}-lines"), plot(heatmap, tag), plot(scores, f"{tag}-scores")


def build(page: Page, opener: HeadOpener, tab: gr.Tab) -> list[TabView]:
    config, store = page.checkpoint.config, PaperResults(page.runner)
    with gr.Row():
        run = gr.Button("Run the paper's sentences", variant="primary", elem_id=RUN, scale=0, min_width=260)
        which = gr.Radio(
            [("Figure 3: making … more difficult", "figure-3"), ("Figures 4–5: its → Law", "figures-4-5")],
            value="figure-3",
            label="Figure",
            elem_id="paper-figure",
        )
        every = gr.Checkbox(False, label="lines of every query (Figure 5)", elem_id="paper-all")
    with gr.Row():
        layer = gr.Radio(
            list(range(1, config.n_encoder_layers + 1)), value=None, label="Encoder layer", elem_id="paper-layer"
        )
        head = gr.Radio(list(range(1, config.n_heads + 1)), value=None, label="Head", elem_id="paper-head")
    text = gr.Markdown(elem_id=READING)
    # one above the other, each the tab's full width: side by side, ~50 tokens were squeezed into 300 px
    lines = gr.Plot(elem_id="paper-lines", show_label=False)
    heatmap = gr.Plot(elem_id="paper-heatmap", show_label=False)
    scores = gr.Plot(elem_id="paper-scores", show_label=False)
    ran = gr.State(False)  # this page pressed the button (inside the Tab: see ui/explain/tab.py)
    views = [text, lines, heatmap, scores]
    show_result(run, lines)

    def best_head(name) -> dict:
        """The layer and head radios at the figure's best head (the redraw then draws it)."""
        results = store.get()
        best = next((r for r in results if r.figure.name == name), results[0]).search.best
        return {layer: best.layer + 1, head: best.head + 1}

    page.listen(run.click, lambda name: {ran: True, **best_head(name)}, which, [ran, layer, head], **MODEL_RUN)
    page.listen(
        which.input, lambda name, shown: best_head(name) if shown else gr.skip(), [which, ran], [layer, head], **PRIVATE
    )

    def draw(trace, step, values) -> dict:  # the paper's sentences, not the trace: drawn with or without one
        if not values[ran]:
            return {}
        return dict(zip(views, paper_views(store.get(), values[which], values[layer], values[head], values[every])))

    return [view(views, draw, controls=[ran, which, layer, head, every], follows_trace=False)]


PANEL = Panel(
    place=90,
    id="paper",
    title="Paper's figures",
    lead=LEAD,
    about=ABOUT,
    build=build,
    reading=READING,
    run=RUN,
)
