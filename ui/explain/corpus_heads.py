"""Explain panels of issue 25: what every head does across a whole corpus, and attribution vs attention.

"Heads across the corpus" reads the corpus file that `python3 -m scripts.corpus_heads` writes beside the
checkpoint once (model/corpus/store.py): head roles (Voita et al. 2019), importance and pruning curves
(Michel et al. 2019) and every head's query-key map (AttentionViz, Yeh et al. 2023). Per-sentence parts
run live on the user's translation: re-decoding with the k least important heads off, the sentence's own
queries and keys on the map, and "Attribution vs attention" (integrated gradients, Sundararajan et al.
2017; input x gradient; against cross-attention, Jain & Wallace 2019).

The module is in two halves. The top half is pure: (trace, corpus data, controls) -> figure / markdown
values, testable without Gradio events. The bottom half, under "WIRING", builds the components and
connects them to the page: the only part that knows the redraw and the runner (ui/redraw.py, ui/runner.py).
"""

from __future__ import annotations

import html
import threading
from pathlib import Path

import gradio as gr
import numpy as np
from gradio.components.plot import PlotData

from model import Checkpoint, TranslationTrace
from model.decoding.ablation import Ablation
from model.analysis.corpus.attribution import Attribution, rank_correlation
from model.analysis.corpus.importance import KINDS, ablation_of
from model.analysis.corpus.qk_map import project
from model.analysis.corpus.roles import ROLE_TEXT, STATS
from model.analysis.corpus.store import CorpusHeads, corpus_path, corpus_status
from model.decoding.trace import ATTENTION_KINDS
from visualizer.corpus import attribution_figure, head_role_grid, pruning_curves_figure, qk_scatter

from ..attention import TAB_ID as ATTENTION_TAB
from ..common import PRIVATE, Page, clamp, plot, step_index

COMMAND = "python3 -m scripts.corpus_heads --checkpoint {checkpoint}"
IG_STEPS = 32  # integration steps live (completeness error is shown on the figure)

ABOUT_CORPUS = """
**What every head does across a corpus.** Every other view explains one sentence; these read Multi30k val
(both directions), computed once per checkpoint.

- **Roles** (Voita et al. 2019, "Analyzing Multi-Head Self-Attention: Specialized Heads Do the Heavy Lifting,
  the Rest Can Be Pruned"): for every head, the share of queries whose strongest key is the previous, same or
  next token (*positional* heads; for cross-attention the source position in proportion to the target
  position), or the rarest token in reach (*rare-token* heads); the weight on [EOS] and on punctuation; and
  *confidence*, the mean maximum weight. A head takes a role when a majority of its queries (or of its weight)
  does so; Voita et al. call a head positional at 90 %, and the hover gives the shares to read it that way.
- **Importance** (Michel et al. 2019, "Are Sixteen Heads Really Better than One?"): each head's output is
  multiplied by a gate ξ = 1; importance is the mean |∂ loss / ∂ξ| over the sentences (teacher-forced),
  normalised per layer. Dots are sized by it. The **pruning curves** switch heads off least important first
  against a random order, and score val BLEU and loss at each point; below, switch off the *k* least
  important heads and re-decode your sentence.
- **Query-key map** (AttentionViz, Yeh et al. 2023): one head's query and key vectors of a few hundred
  sentences in one plane (PCA), after shifting the keys onto the queries' centre and balancing their norms,
  which changes no softmax. AttentionViz drew self-attention; here cross-attention works too: its queries are
  target-language states and its keys source-language ones.
"""

ABOUT_ATTRIBUTION = """
**Attribution vs attention.** Attention says where a layer *reads*; attribution measures what the output
*depends on*. For the chosen output token, the gradient of its log-probability with respect to each source
token's embedding, times the embedding (**input × gradient**), and **integrated gradients** (Sundararajan et
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


# --------------------------------------------------------------------------- loading, shared per checkpoint
def missing_message(checkpoint_dir: str | Path, problem: str) -> str:
    """HTML: the corpus file is missing, stale or unreadable, and the command that makes it."""
    path = html.escape(str(corpus_path(checkpoint_dir)))
    reason = {"missing": f"there is no <code>{path}</code>",
              "stale": f"<code>{path}</code> was computed for other weights (the checkpoint changed)"}.get(
        problem, f"<code>{path}</code> cannot be used ({html.escape(problem)})")
    command = html.escape(COMMAND.format(checkpoint=checkpoint_dir))
    return (f'<div style="overflow-wrap: anywhere"><p><b>The corpus figures are not available</b>: {reason}. '
            "They are computed once per checkpoint (a few minutes on a CPU; fewer sentences with "
            "<code>--sentences 200 --prune-sentences 30</code>):</p>"
            f'<pre style="white-space: pre-wrap"><code>{command}</code></pre>'
            "<p>then reload the page. The attribution view below works without it.</p></div>")


class CorpusData:
    """The checkpoint's corpus file, read and checked against the weights once (shared, read-only)."""

    def __init__(self, checkpoint: Checkpoint):
        self.checkpoint, self.lock, self.loaded = checkpoint, threading.Lock(), None

    def get(self) -> tuple[CorpusHeads | None, str]:
        """(data, "") or (None, HTML saying why there is none and how to make it)."""
        with self.lock:
            if self.loaded is None:
                data, problem = corpus_status(corpus_path(self.checkpoint.path), self.checkpoint.model)
                self.loaded = (data, "" if data is not None else missing_message(self.checkpoint.path, problem))
        return self.loaded


# --------------------------------------------------------------------------- pure views
def head_details(data: CorpusHeads, kind: str) -> np.ndarray:
    """(L, h) hover text: every statistic of each head."""
    stats = data.stats[kind]
    n_layers, n_heads = stats["confidence"].shape
    shares = ("previous", "same", "next", "rare", "eos", "punctuation", "confidence")
    return np.array([["\n".join([" · ".join(f"{name} {100 * stats[name][l, h]:.0f}%" for name in shares[:4]),
                                 " · ".join(f"{name} {100 * stats[name][l, h]:.0f}%" for name in shares[4:]),
                                 f"entropy {stats['entropy'][l, h]:.2f} bits"])
                      for h in range(n_heads)] for l in range(n_layers)], dtype=object)


def roles_view(data: CorpusHeads, selected: tuple[str, int, int] | None = None) -> PlotData:
    """Every head coloured by role, sized by normalised importance."""
    figure = head_role_grid(data.roles, data.importance_normalized,
                            kind_labels={kind: spec.label for kind, spec in ATTENTION_KINDS.items()},
                            role_text=ROLE_TEXT, details={kind: head_details(data, kind) for kind in KINDS},
                            selected=selected,
                            title=f"Every head over {data.settings['examples']['roles']} val sentences: role and importance")
    return plot(figure, "corpus-head-roles")


def head_choices(data: CorpusHeads) -> list[tuple[str, str]]:
    """Dropdown choices "kind:layer:head" (1-based) with each head's role and importance, by kind."""
    return [(f"{ATTENTION_KINDS[kind].label} · layer {l + 1} · head {h + 1} · {ROLE_TEXT.get(role, role)} · "
             f"importance {data.importance_normalized[kind][l, h]:.2f}", f"{kind}:{l + 1}:{h + 1}")
            for kind in KINDS for (l, h), role in np.ndenumerate(data.roles[kind])]


def parse_head(value: str) -> tuple[str, int, int]:
    """"cross:2:3" -> ("cross", 2, 3) (1-based layer and head)."""
    parts = str(value).split(":")
    if len(parts) != 3 or parts[0] not in KINDS or not parts[1].isdigit() or not parts[2].isdigit():
        raise gr.Error(f"Not a head: {value!r}")
    return parts[0], int(parts[1]), int(parts[2])


def pruning_view(data: CorpusHeads, k: int | None = None) -> PlotData:
    curves = data.pruning
    figure = pruning_curves_figure(curves.pruned, curves.bleu_importance, curves.loss_importance, curves.bleu_random,
                                   curves.loss_random, total_heads=len(curves.order), current=k,
                                   title=f"Pruning heads ({data.settings['examples']['pruning']} val sentences, greedy)")
    return plot(figure, "corpus-pruning")


def pruned_ablation(data: CorpusHeads, k: float | None) -> Ablation:
    """The Ablation switching off the k least important heads (Michel et al.'s order)."""
    count = int(np.clip(int(k or 0), 0, len(data.pruning.order)))
    return ablation_of(data.pruning.order[:count])


QK_SIDES = {"encoder": ("source query", "source key"), "decoder_self": ("target query", "target key"),
            "cross": ("target query", "source key")}


def qk_view(data: CorpusHeads, kind: str, layer: float | None, head: float | None, color_by: str = "side",
            sentence: dict | None = None) -> PlotData:
    """One head's corpus map; `sentence` = {"queries", "keys" (vectors), "query_tokens", "key_tokens"} overlays
    the user's sentence, projected with the head's stored basis."""
    head_map = data.maps[kind]
    l, h = clamp(layer, head_map.coords.shape[0]), clamp(head, head_map.coords.shape[1])
    n_q = head_map.n_queries
    tokens = np.concatenate([head_map.query_tokens, head_map.key_tokens])
    positions = np.concatenate([head_map.query_positions, head_map.key_positions])
    is_key = np.arange(len(tokens)) >= n_q
    query_name, key_name = QK_SIDES[kind]
    overlay = {}
    if sentence is not None:
        projection = head_map.projection(l, h)
        points = np.concatenate([project(sentence["queries"], projection, "query"),
                                 project(sentence["keys"], projection, "key")])
        overlay = dict(current=points, current_is_key=np.arange(len(points)) >= len(sentence["queries"]),
                       current_tokens=[*sentence["query_tokens"], *sentence["key_tokens"]],
                       current_positions=np.concatenate([np.arange(len(sentence["queries"])),
                                                         np.arange(len(sentence["keys"]))]))
    explained = head_map.explained[l, h].sum()
    figure = qk_scatter(head_map.coords[l, h], is_key, tokens, positions, color_by=color_by, query_name=query_name,
                        key_name=key_name, **overlay,
                        title=f"{ATTENTION_KINDS[kind].label}, layer {l + 1}, head {h + 1}: queries and keys "
                              f"({100 * explained:.0f}% of the variance in view)")
    return plot(figure, f"qk-{kind}-L{l + 1}-H{h + 1}")


def sentence_tokens(trace: TranslationTrace, kind: str) -> tuple[list[str], list[str]]:
    """(query tokens, key tokens) of the user's sentence for one kind."""
    spec = ATTENTION_KINDS[kind]
    return list(getattr(trace, spec.queries_field)), list(getattr(trace, spec.keys_field))


def attribution_view(trace: TranslationTrace, attribution: Attribution, step: float | None) -> PlotData:
    """IG and input x gradient at the step beside each layer's mean cross-attention; rho at every step."""
    t = step_index(trace, step)
    correlation = rank_correlation(attribution.integrated_gradients, trace.cross_attention)  # (L, T)
    gap = attribution.log_prob[t] - attribution.baseline_log_prob[t]
    figure = attribution_figure(trace.source_tokens, attribution.integrated_gradients[t],
                                attribution.input_x_gradient[t], trace.cross_attention[:, :, t].mean(1), correlation,
                                step=t, output_tokens=trace.output_tokens,
                                completeness=(float(attribution.integrated_gradients[t].sum()), float(gap)),
                                title=f"Why “{trace.output_tokens[t]}” at step {t + 1}: attribution vs attention")
    return plot(figure, f"attribution-step-{t + 1}")


def attribution_matches(trace: TranslationTrace | None, kept: dict | None) -> bool:
    """Whether a kept attribution was computed for this trace (same source and output ids)."""
    return (trace is not None and kept is not None and kept["source_ids"] == list(trace.source_ids)
            and kept["output_ids"] == list(trace.output_ids))


# =========================================================================== WIRING
# Everything below connects the pure views to the page. After the redraw/runner rewrite, reconnect here:
# - model calls: `page.runner.run("corpus_attribution" | "corpus_sentence_vectors", ...)` (jobs registered in
#   serving/jobs.py) and `panel.intervene(page.runner, ...)` for the pruned re-decode;
# - drawing: the two `Panel`s returned below (tab open / new trace; the attribution one follows the step).
from .panel import MODEL_RUN, Panel, intervene, intervention_views, require  # noqa: E402


def build_corpus(page: Page, opener) -> Panel:
    """Sub-tab "Heads across the corpus" -> its Panel (drawn when the Explain tab opens)."""
    checkpoint: Checkpoint = page.checkpoint
    data, message = CorpusData(checkpoint).get()
    config = checkpoint.config
    with gr.Tab("Heads across the corpus", id="corpus-heads"):
        gr.Markdown(ABOUT_CORPUS)
        if data is None:
            gr.HTML(message, elem_id="corpus-missing")
            return Panel()
        roles_plot = gr.Plot(elem_id="corpus-roles", show_label=False)
        open_head = gr.Dropdown(head_choices(data), value=None, label="Open a head in the Attention tab",
                                elem_id="corpus-open-head")
        pruning_plot = gr.Plot(elem_id="corpus-pruning", show_label=False)
        with gr.Row():
            k = gr.Slider(0, len(data.pruning.order), value=min(10, len(data.pruning.order)), step=1,
                          label="Switch off the k least important heads", elem_id="corpus-prune-k")
            run = gr.Button("Re-decode my sentence without them", variant="primary", elem_id="corpus-prune-run",
                            scale=0, min_width=300)
        pruned_result = gr.HTML(elem_id="corpus-prune-result")
        pruned_plot = gr.Plot(elem_id="corpus-prune-plot", show_label=False)
        with gr.Row():
            kind = gr.Radio([(spec.label, name) for name, spec in ATTENTION_KINDS.items()], value="cross",
                            label="Query-key map of", elem_id="corpus-qk-kind")
            color_by = gr.Radio([("query / key", "side"), ("position", "position")], value="side",
                                label="Colour", elem_id="corpus-qk-color")
        with gr.Row():
            layer = gr.Radio(list(range(1, max(config.n_encoder_layers, config.n_decoder_layers) + 1)), value=1,
                             label="Layer", elem_id="corpus-qk-layer")
            head = gr.Radio(list(range(1, config.n_heads + 1)), value=1, label="Head", elem_id="corpus-qk-head")
        place = gr.Button("Place my sentence on the map", elem_id="corpus-qk-place")
        qk_plot = gr.Plot(elem_id="corpus-qk", show_label=False)

    def draw_map(kind_value, layer_value, head_value, color_value, sentence=None) -> dict:
        return {qk_plot: qk_view(data, kind_value, layer_value, head_value, color_value, sentence)}

    map_controls = [kind, layer, head, color_by]
    for control in map_controls:
        control.input(draw_map, map_controls, [qk_plot], trigger_mode="always_last", show_progress="hidden", **PRIVATE)

    def on_place(trace, kind_value, layer_value, head_value, color_value) -> dict:
        require(checkpoint, trace)
        l, h = clamp(layer_value, data.maps[kind_value].coords.shape[0]), clamp(head_value, config.n_heads)
        queries, keys = page.runner.run("corpus_sentence_vectors", source_ids=list(trace.source_ids),
                                        output_ids=list(trace.output_ids), kind=kind_value, layer=l, head=h)
        query_tokens, key_tokens = sentence_tokens(trace, kind_value)
        sentence = {"queries": queries, "keys": keys, "query_tokens": query_tokens, "key_tokens": key_tokens}
        return draw_map(kind_value, layer_value, head_value, color_value, sentence)

    place.click(on_place, [page.trace, *map_controls], [qk_plot], **MODEL_RUN)

    def on_prune(trace, k_value) -> dict:
        require(checkpoint, trace)
        ablation = pruned_ablation(data, k_value)
        if ablation.is_empty:
            raise gr.Error("Choose at least one head (k ≥ 1).")
        html_value, change = intervention_views(trace, intervene(page.runner, trace, ablation),
                                                f"{int(k_value)} least important heads off", "corpus-pruned")
        return {pruned_result: html_value, pruned_plot: change, pruning_plot: pruning_view(data, int(k_value))}

    run.click(on_prune, [page.trace, k], [pruned_result, pruned_plot, pruning_plot], **MODEL_RUN)

    def on_open_head(trace, step, value):
        if trace is None or not value:
            return gr.skip()
        kind_value, layer_value, head_value = parse_head(value)
        return {page.tabs: gr.Tabs(selected=ATTENTION_TAB), page.tab: ATTENTION_TAB,
                roles_plot: roles_view(data, (kind_value, layer_value - 1, head_value - 1)),
                **opener.show(trace, step, kind_value, layer_value, str(head_value))}

    open_head.input(on_open_head, [page.trace, page.step, open_head],
                    [page.tabs, page.tab, roles_plot, *opener.outputs], **PRIVATE)

    def draw(trace, step, values) -> dict:
        return {roles_plot: roles_view(data), pruning_plot: pruning_view(data),
                **draw_map(*(values[c] for c in map_controls))}

    return Panel(cleared={pruned_result: "", pruned_plot: None}, draw=draw, inputs=map_controls,
                 outputs=[roles_plot, pruning_plot, qk_plot])


def build_attribution(page: Page) -> Panel:
    """Sub-tab "Attribution vs attention" -> its Panel (follows the step once computed)."""
    checkpoint: Checkpoint = page.checkpoint
    with gr.Tab("Attribution vs attention", id="attribution"):
        gr.Markdown(ABOUT_ATTRIBUTION)
        run = gr.Button("Attribute this translation (every step)", variant="primary", elem_id="attribution-run")
        figure = gr.Plot(elem_id="attribution-plot", show_label=False)
    kept = gr.State(None)  # this user's attribution: {"source_ids", "output_ids", "result"}

    def on_run(trace, step) -> dict:
        require(checkpoint, trace)
        result = page.runner.run("corpus_attribution", source_ids=list(trace.source_ids),
                                 output_ids=list(trace.output_ids), steps=IG_STEPS)
        value = {"source_ids": list(trace.source_ids), "output_ids": list(trace.output_ids), "result": result}
        return {kept: value, figure: attribution_view(trace, result, step)}

    run.click(on_run, [page.trace, page.step], [kept, figure], **MODEL_RUN)

    def draw(trace, step, values) -> dict:
        value = values[kept]
        return {figure: attribution_view(trace, value["result"], step) if attribution_matches(trace, value) else None}

    return Panel(cleared={kept: None, figure: None}, draw=draw, inputs=[kept], outputs=[figure], follows_step=True)
