"""Explain panel "Heads across the corpus": what every head does across a whole corpus.

It reads the corpus file that `python3 -m scripts.corpus_heads` writes beside the checkpoint once
(model/analysis/corpus/store.py): head roles (Voita et al. 2019), importance and pruning curves (Michel et al. 2019)
and every head's query-key map (AttentionViz, Yeh et al. 2023). Per-sentence parts run live on the user's
translation: re-decoding with the k least important heads off, and the sentence's own queries and keys on the map.
Its sibling panel "Attribution vs attention" is ui/explain/attribution.py.

The panel is in two halves. The pure half, ui/explain/corpus_figures.py: the corpus file loaded once, and
(trace, corpus data, controls) -> figure / HTML values, testable without Gradio events. This module, the wiring:
it builds the components and registers their views with the page's one redraw (ui/redraw.py); its model calls
are model jobs (serving/jobs.py) run through the page's runner.
"""

from __future__ import annotations

import dataclasses
import html

import gradio as gr

from model import Checkpoint
from model.analysis.corpus.roles import ALIGNMENT_RHO, BROAD_CONFIDENCE, MONOTONE_RHO, ROLE_SHARE
from model.analysis.corpus.store import CorpusHeads
from serving import jobs

from ..attention import TAB_ID as ATTENTION_TAB, HeadOpener
from ..common import KIND_CHOICES, PRIVATE, Page, TabView, clamp
from .corpus_figures import (
    WAITING_PRUNED,
    CorpusData,
    head_choices,
    parse_head,
    placed_sentence,
    pruned_ablation,
    pruning_view,
    qk_view,
    roles_summary,
    roles_view,
)
from .panel import (
    MODEL_RUN,
    Panel,
    cleared_view,
    intervene,
    intervention_views,
    kept_for,
    require,
    sentence_matches,
    show_result,
    view,
)

LEAD = (
    "every head over many sentences, coloured by its role and sized by its "
    "importance, what switching the least important off costs, and one head's queries and keys."
)
ABOUT = f"""
Every other view explains one sentence; these read Multi30k val (both directions), computed once per checkpoint.

- *Roles* (Voita et al. 2019, "Analyzing Multi-Head Self-Attention: Specialized Heads Do the Heavy Lifting,
  the Rest Can Be Pruned"): for every head, the share of queries whose strongest key is the previous, same or
  next token (*positional* heads; for cross-attention the source position in proportion to the target
  position), or the rarest token in reach (*rare-token* heads); the weight on [EOS] and on punctuation; and
  *confidence*, the mean maximum weight. Cross-attention heads are also measured for what they are known for,
  following the source word being translated: *aligned*, the share of queries whose strongest source token is
  the one the model's word alignment (the *Word alignment* panel: all heads and layers averaged) links the
  output to, and *monotone*, the rank correlation ρ between the target position and the head's strongest
  source position (+1: it moves through the source in the translation's order). A head takes a share's role
  when a majority ({ROLE_SHARE:.0%}) of its queries (or of its weight) does so, the largest share winning, else
  *monotone* at ρ ≥ {MONOTONE_RHO:.3f} (half the ρ of {ALIGNMENT_RHO:.2f} the shipped model's own alignment
  reaches on these sentences), else *broad* below a confidence of {BROAD_CONFIDENCE:.0%}; the rest have no
  single role. These lines were chosen from the measured values, not to make a count come out: the shares and
  ρ of the shipped model's heads spread evenly (no gap to cut at), so a share takes the plain majority and ρ
  the half-way mark to the alignment itself. Voita et al. call a head positional at 90 %, and the hover gives
  every head's shares and ρ to read them another way.
- *Importance* (Michel et al. 2019, "Are Sixteen Heads Really Better than One?"): each head's output is
  multiplied by a gate ξ = 1; importance is the mean |∂ loss / ∂ξ| over the sentences (teacher-forced),
  normalised per layer. Dots are sized by it. The *pruning curves* switch heads off least important first
  against a random order, and score val BLEU and loss at each point; below, switch off the *k* least
  important heads and re-decode your sentence.
- *Query-key map* (AttentionViz, Yeh et al. 2023): one head's query and key vectors of a few hundred
  sentences in one plane (PCA), after shifting the keys onto the queries' centre and balancing their norms,
  which changes no softmax. AttentionViz drew self-attention; here cross-attention works too: its queries are
  target-language states and its keys source-language ones.
"""


READING = "corpus-roles-summary"  # what the roles say about this model, first under the lead


# =========================================================================== WIRING
# Everything below connects the pure views to the page. Drawing: each view is a `TabView` of the page's one
# redraw (ui/redraw.py) via `panel.view`; the controls (kind, layer, head, colour, k, the head to open) and the
# results the buttons keep in gr.State are the views' controls, so no listener here draws. Model calls: the
# model job `jobs.corpus_sentence_vectors` (serving/jobs.py) and, for the pruned re-decode, the Explain
# tab's intervention path (`panel.intervene`: the translate and token_probabilities jobs).
@dataclasses.dataclass
class Controls:
    """The sub-tab's components and this user's kept results, which the views and listeners key their dicts by."""

    opened: gr.State  # this page opened the sub-tab: from then on its figures are drawn
    open_head: gr.Dropdown  # "kind:layer:head", 1-based (`head_choices`)
    roles_plot: gr.Plot
    pruning_plot: gr.Plot
    k: gr.Slider  # how many of the least important heads to switch off
    run: gr.Button
    pruned_result: gr.HTML
    pruned_plot: gr.Plot
    kind: gr.Radio  # the query-key map's head: kind, layer and head (1-based)
    color_by: gr.Radio
    layer: gr.Radio
    head: gr.Radio
    place: gr.Button
    qk_plot: gr.Plot
    placed: gr.State  # this user's sentence vectors: {"source_ids", "output_ids", "head", "queries", "keys"}
    pruned: gr.State  # this user's re-decode: {"source_ids", "output_ids", "k", "result" (Intervention)}


def layout(data: CorpusHeads, summary: str, n_layers: int, n_heads: int) -> Controls:
    """The sub-tab's components, top to bottom: open a head, the roles' `summary` and figure, pruning and its
    re-decode, the query-key map."""
    opened = gr.State(False)
    open_head = gr.Dropdown(
        head_choices(data),
        value=None,
        label="Open a head in the Attention tab",
        info="outlined in the grid; with a translation, the Attention tab opens on it",
        elem_id="corpus-open-head",
    )
    gr.Markdown(summary, elem_id=READING)
    roles_plot = gr.Plot(elem_id="corpus-roles", show_label=False)
    pruning_plot = gr.Plot(elem_id="corpus-pruning", show_label=False)
    with gr.Row():
        k = gr.Slider(
            1,
            len(data.pruning.order),
            value=min(10, len(data.pruning.order)),
            step=1,
            label="Switch off the k least important heads",
            elem_id="corpus-prune-k",
        )
        run = gr.Button(
            "Re-decode my sentence without them", variant="primary", elem_id="corpus-prune-run", scale=0, min_width=300
        )
    pruned_result = gr.HTML(elem_id="corpus-prune-result")
    pruned_plot = gr.Plot(elem_id="corpus-prune-plot", show_label=False)
    with gr.Row():
        kind = gr.Radio(KIND_CHOICES, value="cross", label="Query-key map of", elem_id="corpus-qk-kind")
        color_by = gr.Radio(
            [("query / key", "side"), ("position", "position")], value="side", label="Colour", elem_id="corpus-qk-color"
        )
    with gr.Row():
        layer = gr.Radio(list(range(1, n_layers + 1)), value=1, label="Layer", elem_id="corpus-qk-layer")
        head = gr.Radio(list(range(1, n_heads + 1)), value=1, label="Head", elem_id="corpus-qk-head")
    place = gr.Button("Place my sentence on this head's map", elem_id="corpus-qk-place")
    qk_plot = gr.Plot(elem_id="corpus-qk", show_label=False)
    return Controls(
        opened,
        open_head,
        roles_plot,
        pruning_plot,
        k,
        run,
        pruned_result,
        pruned_plot,
        kind,
        color_by,
        layer,
        head,
        place,
        qk_plot,
        placed=gr.State(None),
        pruned=gr.State(None),
    )


def map_head(data: CorpusHeads, kind: str, layer: float | None, head: float | None) -> tuple[str, int, int]:
    """(kind, 0-based layer, 0-based head) of the map's controls (1-based layer and head)."""
    n_layers, n_heads = data.maps[kind].coords.shape[:2]
    return kind, clamp(layer, n_layers), clamp(head, n_heads)


def corpus_views(data: CorpusHeads, c: Controls) -> list[TabView]:
    """The sub-tab's views of the one redraw: the corpus figures once opened (each on its own controls, not
    following the trace), and the pruned re-decode of this trace."""

    def draw_roles(trace, step, values) -> dict:
        if not values[c.opened]:
            return {}
        chosen = parse_head(values[c.open_head]) if values[c.open_head] else None
        return {c.roles_plot: roles_view(data, None if chosen is None else (chosen[0], chosen[1] - 1, chosen[2] - 1))}

    def draw_pruning(trace, step, values) -> dict:
        return {c.pruning_plot: pruning_view(data, int(values[c.k]))} if values[c.opened] else {}

    def draw_map(trace, step, values) -> dict:
        if not values[c.opened]:
            return {}
        kind, l, h = map_head(data, values[c.kind], values[c.layer], values[c.head])
        sentence = placed_sentence(trace, values[c.placed], kind, l, h)
        return {c.qk_plot: qk_view(data, kind, l + 1, h + 1, values[c.color_by], sentence)}

    def draw_pruned(trace, step, values) -> dict:
        kept = values[c.pruned]
        if not sentence_matches(trace, kept):
            return {c.pruned_result: WAITING_PRUNED, c.pruned_plot: None}
        doing = f"With the {kept['k']} least important heads switched off"
        heading = f"{kept['k']} least important heads off"  # the heads are listed under the comparison, not in
        html_value, change = intervention_views(
            trace, dataclasses.replace(kept["result"], label=heading), heading, "corpus-pruned", doing
        )  # the figure's title (a phone could not fit them)
        listed = f'<p class="facts">Switched off: {html.escape(kept["result"].label)}.</p>'
        return {c.pruned_result: html_value + listed, c.pruned_plot: change}

    return [
        cleared_view({c.placed: None, c.pruned: None}),
        view([c.roles_plot], draw_roles, controls=[c.opened, c.open_head], follows_trace=False),
        view([c.pruning_plot], draw_pruning, controls=[c.opened, c.k], follows_trace=False),
        view(
            [c.qk_plot],
            draw_map,
            controls=[c.opened, c.kind, c.layer, c.head, c.color_by, c.placed],
            follows_trace=False,
        ),
        view([c.pruned_result, c.pruned_plot], draw_pruned, controls=[c.pruned]),
    ]


def wire(page: Page, opener: HeadOpener, data: CorpusHeads, c: Controls) -> None:
    """The buttons keep their results in gr.State and opening a head sets controls; the redraw draws them."""
    checkpoint: Checkpoint = page.checkpoint

    def on_place(trace, kind_value, layer_value, head_value):  # kept: a new `placed` redraws the map
        require(checkpoint, trace)
        kind, l, h = map_head(data, kind_value, layer_value, head_value)
        queries, keys = jobs.corpus_sentence_vectors(
            page.runner, list(trace.source_ids), list(trace.output_ids), kind, l, h, direction=trace.direction
        )
        return {c.placed: kept_for(trace, head=(kind, l, h), queries=queries, keys=keys)}

    page.listen(c.place.click, on_place, [page.trace, c.kind, c.layer, c.head], [c.placed], **MODEL_RUN)

    def on_prune(trace, k_value):  # the existing intervention path; a new `pruned` redraws the comparison
        require(checkpoint, trace)
        ablation = pruned_ablation(data, k_value)
        if ablation.is_empty:
            raise gr.Error("Choose at least one head (k ≥ 1).")
        return {c.pruned: kept_for(trace, k=int(k_value), result=intervene(page.runner, trace, ablation))}

    page.listen(c.run.click, on_prune, [page.trace, c.k], [c.pruned], **MODEL_RUN)

    def on_open_head(trace, value):  # sets the map's and the Attention tab's controls; the redraw draws them
        if not value:
            return gr.skip()
        kind_value, layer_value, head_value = parse_head(value)
        shown = {c.kind: kind_value, c.layer: layer_value, c.head: head_value}
        if trace is None:  # nothing to open on: the head's query-key map is what there is to see
            gr.Info("Translate a sentence to open this head on it in the Attention tab; its query-key map is below.")
            return shown
        return {
            **shown,
            page.tabs: gr.Tabs(selected=ATTENTION_TAB),
            page.tab: ATTENTION_TAB,
            **opener.show(kind_value, layer_value, str(head_value)),
        }

    page.listen(
        c.open_head.input,
        on_open_head,
        [page.trace, c.open_head],
        [c.kind, c.layer, c.head, page.tabs, page.tab, *opener.outputs],
        **PRIVATE,
    )


def build(page: Page, opener: HeadOpener, tab: gr.Tab) -> list[TabView]:
    """Sub-tab "Heads across the corpus" -> its views, drawn once the sub-tab has been opened (the corpus figures
    do not depend on the trace: they show before a translation too)."""
    config = page.checkpoint.config
    data, message = CorpusData(page.checkpoint).get()
    if data is None:
        gr.HTML(message, elem_id="corpus-missing")
        return []
    summary = roles_summary(data, page.checkpoint.path)
    controls = layout(data, summary, max(config.n_encoder_layers, config.n_decoder_layers), config.n_heads)
    show_result(controls.run, controls.pruned_plot)
    show_result(controls.place, controls.qk_plot)
    page.listen(tab.select, lambda: {controls.opened: True}, None, [controls.opened], **PRIVATE)
    wire(page, opener, data, controls)
    return corpus_views(data, controls)


PANEL = Panel(
    place=130,
    id="corpus-heads",
    title="Heads across the corpus",
    lead=LEAD,
    about=ABOUT,
    build=build,
    own_model_only=(
        "{model} has no corpus file here: these figures are computed once for this project's own model; open that "
        "model's page to see them (Attribution vs attention works on this one)."
    ),
    reading=READING,
)
