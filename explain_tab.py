"""The "Explain" tab of Attention Explorer: what other attention viewers do not show.

Seven panels over the translation in the user's `gr.State` ("Attention Is All You Need"):
switch heads off and re-decode (3.2.2), branch at a step with another candidate (3, greedy
decoding), the logit lens through the shared projection (3.1, 3.4), beam search vs greedy
(6.1), word alignment from encoder-decoder attention (3.2.3), per-head diagnostics (3.2.2) and
translation without positional encodings (3.5).

Pure callbacks first (tested in tests/test_explain_views.py), then `ExplainTab`: `layout()` is
called inside the app's `gr.Tabs`, `wire()` once the app's components exist. Panels that need
the model (ablation, branching, beam search, no positions) run it on a button press; the others
only re-draw from the trace, and only while this tab is open.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass

import gradio as gr
import numpy as np
from gradio.components.plot import PlotData

from app_common import plot, step_index
from model import Checkpoint, TranslationTrace
from model.decoding import translate
from model import analysis
from model.ablation import ATTENTION_KINDS, Ablation
from visualizer import explain as figures
from visualizer.tokens import token_chips

TAB_ID = "explain"
KIND_NAMES = {"encoder": "Encoder self-attention", "decoder_self": "Masked decoder self-attention",
              "cross": "Cross-attention"}
DIAGNOSTIC_KINDS = {"encoder": "Encoder self-attention", "decoder_self": "Masked decoder self-attention",
                    "cross": "Cross-attention"}  # the app's attention kinds, so a head opens in its view
DIAGNOSTIC_TITLES = {"entropy": "entropy (bits)", "diagonal": "diagonal (%)", "special": "to [EOS]/specials (%)",
                     "punctuation": "to punctuation (%)"}

CSS = """
.tok.forced { background: #fed7aa; border-color: #ea580c; color: #111; font-weight: 600; }
.tok.changed { background: #fecaca; border-color: #dc2626; color: #111; }
.tok.after { background: #fef2f2; border-color: #fca5a5; }
.explain-compare { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; }
.explain-compare > div { border: 1px solid var(--border-color-primary); border-radius: 8px; padding: 8px 12px; }
.explain-compare h4 { margin: 0 0 6px; }
.explain-compare .text { margin: 6px 0; font-size: 1.05em; }
.explain-compare .facts, .beam-table .facts { color: var(--body-text-color-subdued); font-size: 0.9em; }
.beam-table { border-collapse: collapse; width: 100%; }
.beam-table th, .beam-table td { text-align: left; padding: 6px 8px; border-bottom: 1px solid var(--border-color-primary);
                                 vertical-align: top; }
.beam-table td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.head-grid .wrap { gap: 2px 4px !important; }
.head-grid label { padding: 2px 6px !important; font-size: 0.85em; }
.head-grid .block { padding: 4px 8px !important; }
"""

ABOUT = """
**Interventions and read-outs.** The panels below change the model on purpose (switch heads off, force a
token, remove the positional encodings) and re-run it on *your* sentence, or read more out of the trace
(the logit lens, word alignment, per-head statistics). Model runs happen when you press a button.
"""

ABOUT_ABLATION = """
**Head ablation** (section 3.2.2). Tick heads to switch them off: a head's output (its slice of
`Concat(head₁, …, head_h)`, before `W^O`) is set to zero, as in Michel et al. (2019). The sentence is
decoded again greedily, and the *original* output is teacher-forced through the ablated model, so each step
compares the probability of the same token with and without the heads.
"""

ABOUT_BRANCH = """
**Branching.** Pick another candidate for the current decoding step (the step slider above): it is forced
at that step (the steps before it keep the original tokens) and greedy decoding continues from there.
Greedy decoding never revisits a choice; this shows what one different choice does to the rest.
"""

ABOUT_LENS = """
**Logit lens.** Each decoder layer's output at the current step, read through the final projection (the
shared embedding matrix, section 3.4) and a softmax. The model is **post-LN** (section 3.1): every layer ends
in `LayerNorm(x + Sublayer(x))`, so each layer output is already normalised like the last one and no extra
normalisation is applied. The last row is the model's real next-token distribution; the outlined cell is the
token greedy decoding chose.
"""

ABOUT_BEAM = """
**Beam search vs greedy** (section 6.1: "beam search with a beam size of 4 and length penalty α = 0.6").
Hypotheses are ranked by `log P(Y) / lp(Y)` with `lp(Y) = ((5 + |Y|) / 6)^α` (|Y| counts [EOS]); greedy is
scored the same way. The highlighted token is where a hypothesis first leaves the greedy output.
"""

ABOUT_ALIGNMENT = """
**Word alignment from cross-attention** (section 3.2.3). For each output token, the encoder-decoder
attention of the step that *chose* it is averaged over all heads and the chosen layers, and the source
token with the most weight is linked to it. Weight on the language tag and `[EOS]` (a frequent "nowhere"
sink) does not count, and the output `[EOS]` gets no link.

**Pharaoh format** `i-j`: *i* = source position, *j* = target position, both 0-based and counting real
tokens only: the language tag `<2xx>` and `[EOS]` are not counted, so the first source word is 0.
*Subwords* counts tokens as shown; *words* counts whitespace-separated words (a subword without `▁` joins
the word before it), the convention of word-level aligners such as fast_align.
"""

ABOUT_DIAGNOSTICS = """
**Head diagnostics over this sentence** (section 3.2.2). Per layer (rows) and head (columns), averaged over
the sentence's queries: the **entropy** of the attention in bits (low = focused), how **diagonal** it is
(weight within one position of the query's own position; for cross-attention, of the proportional source
position), and how much goes to **special tokens** (`[EOS]`, `[BOS]`, the language tag) and to
**punctuation**: heads often park attention there when they have nothing to do. Choose a head to open it
in the Attention tab.
"""

ABOUT_POSITIONS = """
**Without positional encodings** (section 3.5). Attention itself ignores order: without the sinusoids
added to the embeddings, the encoder sees a bag of tokens (the same token gets the same attention row
wherever it stands) and the decoder does not know how far it has got. The sentence is decoded again with
the encodings removed from encoder and decoder, and the original output is teacher-forced to compare
per-step probabilities; below, one encoder head with and without them.
"""


# --------------------------------------------------------------------------- pure callbacks
def require(checkpoint: Checkpoint | None, trace: TranslationTrace | None) -> None:
    if checkpoint is None:
        raise gr.Error("No model is loaded.")
    if trace is None:
        raise gr.Error("Translate a sentence first.")


def ablation_from_choices(choices: list[list[int] | None], n_encoder: int, n_decoder: int) -> Ablation:
    """Per-layer checkbox values (1-based heads) in the order encoder layers, decoder-self layers,
    cross layers -> an Ablation of 0-based (layer, head) pairs."""
    counts = {"encoder": n_encoder, "decoder_self": n_decoder, "cross": n_decoder}
    if len(choices) != sum(counts.values()):
        raise ValueError(f"expected {sum(counts.values())} head lists, got {len(choices)}")
    heads, start = {}, 0
    for kind in ATTENTION_KINDS:
        layers = choices[start:start + counts[kind]]
        heads[f"{kind}_heads"] = {(layer, int(head) - 1) for layer, ticked in enumerate(layers) for head in ticked or []}
        start += counts[kind]
    return Ablation(**heads)


def describe_ablation(ablation: Ablation) -> str:
    if not ablation.positional_encoding:
        return "no positional encodings"
    parts = []
    for kind in ATTENTION_KINDS:
        heads = sorted(getattr(ablation, f"{kind}_heads"))
        if heads:
            parts.append(f"{KIND_NAMES[kind]} " + ", ".join(f"L{l + 1} H{h + 1}" for l, h in heads))
    return "; ".join(parts) or "nothing switched off"


@dataclass
class Intervention:
    """An intervened re-run of the user's sentence, and the original output scored under it."""

    trace: TranslationTrace  # greedy decoding under the intervention
    original_probs: np.ndarray  # (T,) the original trace's chosen_probs
    changed_probs: np.ndarray  # (T,) the same original tokens, teacher-forced under the intervention
    label: str  # what was done, for titles


def intervene(checkpoint: Checkpoint, trace: TranslationTrace, ablation: Ablation) -> Intervention:
    """Decode the same sentence again under `ablation` and score the original output under it."""
    changed = translate(checkpoint.model, checkpoint.tokenizer, trace.source_text, trace.direction,
                        ablation=ablation)
    probs = analysis.token_probabilities(checkpoint.model, trace.source_ids, trace.output_ids, ablation)
    return Intervention(changed, trace.chosen_probs, probs, describe_ablation(ablation))


def output_card(heading: str, trace: TranslationTrace, classes: dict[int, str], facts: str) -> str:
    tips = [f"step {t + 1}: p = {p:.3f}" for t, p in enumerate(trace.chosen_probs)]
    return (f'<div><h4>{html.escape(heading)}</h4><div class="text">{html.escape(trace.translation) or "∅"}</div>'
            f'<div class="token-row">{token_chips(trace.output_tokens, classes, tips)}</div>'
            f'<div class="facts">{facts}</div></div>')


def comparison_html(original: TranslationTrace, changed: TranslationTrace, heading: str,
                    forced_step: int | None = None) -> str:
    """The original and the changed output side by side; changed tokens (and a forced one) marked."""
    differs = analysis.first_difference(original.output_ids, changed.output_ids)
    marks = {} if differs is None else {t: "after" for t in range(differs + 1, len(changed.output_ids))}
    if differs is not None and differs < len(changed.output_ids):
        marks[differs] = "changed"
    if forced_step is not None:
        marks[forced_step] = "forced"
    verdict = ("same output" if differs is None else f"outputs part at step {differs + 1}")

    def facts(trace: TranslationTrace) -> str:
        return (f"{trace.num_steps} tokens · log P = {analysis.sequence_log_prob(trace.chosen_probs):.2f} · "
                f"mean p = {float(trace.chosen_probs.mean()):.2f} · {verdict}")

    return (f'<div class="explain-compare">{output_card("Original (greedy)", original, {}, facts(original))}'
            f'{output_card(heading, changed, marks, facts(changed))}</div>')


def intervention_views(original: TranslationTrace, result: Intervention, heading: str, name: str) -> list:
    """[comparison HTML, per-step probability-change plot] for an Intervention."""
    figure = figures.probability_change_figure(
        original.output_tokens, result.original_probs, result.changed_probs, changed_name=heading,
        title=f"Probability of each original token: {result.label} vs the intact model")
    return [comparison_html(original, result.trace, heading), plot(figure, name)]


def branch_choices(trace: TranslationTrace | None, step: float | None) -> gr.Dropdown:
    """The step's candidates as a dropdown (label "token · p"), the best unchosen one selected."""
    if trace is None:
        return gr.Dropdown(choices=[], value=None, label="Candidate to force")
    t = step_index(trace, step)
    ids = [int(i) for i in trace.candidate_ids[t]]
    choices = [(f"{token}  ·  {100 * float(p):.1f}%" + ("  (chosen)" if i == trace.output_ids[t] else ""), i)
               for token, p, i in zip(trace.candidate_tokens[t], trace.candidate_probs[t], ids)]
    value = next((i for i in ids if i != trace.output_ids[t]), ids[0])
    return gr.Dropdown(choices=choices, value=value, label=f"Candidate to force at step {t + 1}")


def branch(checkpoint: Checkpoint, trace: TranslationTrace, step: float | None, candidate: int | None
           ) -> tuple[TranslationTrace, int]:
    """Force `candidate` at the step (the original tokens before it), continue greedily -> (branch, step)."""
    if candidate is None:
        raise gr.Error("Choose a candidate to force.")
    t = step_index(trace, step)
    forced = [*trace.output_ids[:t], int(candidate)]
    return translate(checkpoint.model, checkpoint.tokenizer, trace.source_text, trace.direction,
                     forced_prefix=forced), t


def lens_view(trace: TranslationTrace, step: float | None) -> PlotData:
    t = step_index(trace, step)
    figure = figures.logit_lens_figure(trace.logit_lens_tokens[t], trace.logit_lens_probs[t],
                                       trace.output_tokens[t],
                                       title=f"Step {t + 1}: top tokens read from each decoder layer")
    return plot(figure, f"logit-lens-step-{t + 1}")


def beam_html(comparison: analysis.BeamComparison) -> str:
    """A table: greedy, then the beam hypotheses best first, each with log P, score and where it parts."""
    def row(name: str, output: analysis.RankedOutput) -> str:
        marks = {} if output.diverges_at is None else {output.diverges_at: "forced"}
        where = "—" if output.diverges_at is None else f"step {output.diverges_at + 1}"
        if name != "greedy" and output.diverges_at is None:
            where = "same as greedy"
        return (f"<tr><td>{name}</td><td><div>{html.escape(output.text) or '∅'}</div>"
                f'<div class="token-row">{token_chips(output.tokens, marks)}</div></td>'
                f'<td class="num">{output.log_prob:.2f}</td><td class="num">{output.score:.3f}</td>'
                f'<td class="num">{where}</td></tr>')

    best = comparison.beams[0]
    verdict = ("Beam search keeps the greedy translation." if best.diverges_at is None else
               f"Beam search prefers another translation (score {best.score:.3f} vs greedy "
               f"{comparison.greedy.score:.3f}); it leaves greedy at step {best.diverges_at + 1}.")
    rows = [row("greedy", comparison.greedy)]
    rows += [row(f"beam {rank}", beam) for rank, beam in enumerate(comparison.beams, start=1)]
    return (f"<p><b>{html.escape(verdict)}</b></p>"
            f'<table class="beam-table"><tr><th></th><th>hypothesis</th><th>log P</th>'
            f"<th>score (α = {comparison.length_penalty})</th><th>leaves greedy</th></tr>{''.join(rows)}</table>"
            f'<p class="facts">beam size {comparison.beam_size}; log P in nats; unfinished hypotheses (no [EOS]) '
            f"appear only when the step budget ran out.</p>")


def alignment_views(trace: TranslationTrace, layers: list[int] | None, level: str) -> list:
    """[links plot, Pharaoh text] for 1-based decoder `layers` (none ticked: all) at 'subword'/'word' level."""
    n_layers = trace.cross_attention.shape[0]
    chosen = sorted({int(layer) - 1 for layer in layers or [] if 1 <= int(layer) <= n_layers}) or list(range(n_layers))
    alignment = analysis.word_alignment(trace.cross_attention, trace.source_tokens, trace.output_tokens, chosen)
    strengths = [float(alignment.strength[t]) for _, t in alignment.links]
    names = ", ".join(str(layer + 1) for layer in chosen)
    figure = figures.alignment_figure(trace.source_tokens, trace.output_tokens, alignment.links, strengths,
                                      title=f"Cross-attention alignment, heads averaged, decoder layer(s) {names}")
    return [plot(figure, "alignment"), alignment.pharaoh(words=level == "word")]


def diagnostics_views(trace: TranslationTrace, kind: str) -> list:
    """[layers x heads heatmaps, dropdown of heads to open] for one attention kind."""
    stats = analysis.trace_head_diagnostics(trace, kind)
    figure = figures.head_diagnostics_figure(stats, DIAGNOSTIC_TITLES,
                                             title=f"{DIAGNOSTIC_KINDS[kind]}: every head over this sentence")
    n_layers, n_heads = stats["entropy"].shape
    choices = [(f"layer {l + 1}, head {h + 1}  ·  {stats['entropy'][l, h]:.1f} bits · diagonal "
                f"{100 * stats['diagonal'][l, h]:.0f}% · specials {100 * stats['special'][l, h]:.0f}%", f"{l + 1}-{h + 1}")
               for l in range(n_layers) for h in range(n_heads)]
    return [plot(figure, f"{kind}-head-diagnostics"), gr.Dropdown(choices=choices, value=None)]


def parse_head(value: str | None) -> tuple[int, int]:
    """'2-3' (layer 2, head 3, 1-based) -> (2, 3)."""
    try:
        layer, head = (int(part) for part in str(value).split("-"))
    except ValueError:
        raise gr.Error(f"Not a head: {value!r}") from None
    return layer, head


def positions_views(trace: TranslationTrace, result: Intervention | None, layer: float | None,
                    head: float | None) -> PlotData | None:
    """Encoder self-attention of one head with and without positional encodings."""
    if result is None:
        return None
    weights = trace.encoder_attention
    l = int(np.clip(int(layer or 1), 1, weights.shape[0])) - 1
    h = int(np.clip(int(head or 1), 1, weights.shape[1])) - 1
    figure = figures.attention_comparison(
        weights[l, h], result.trace.encoder_attention[l, h], trace.source_tokens, trace.source_tokens,
        names=("with positional encodings", "without"), title=f"Encoder self-attention, layer {l + 1}, head {h + 1}")
    return plot(figure, f"encoder-layer{l + 1}-head{h + 1}-with-without-pe")


# --------------------------------------------------------------------------- the tab
@dataclass
class AppParts:
    """What the tab needs from the app around it."""

    trace: gr.State  # the user's TranslationTrace
    step: gr.Slider  # 1-based decoding step
    tab: gr.State  # id of the open top-level tab
    tabs: gr.Tabs  # the top-level tabs (to open the Attention tab)
    translate_event: object  # the Translate event (its .success resets this tab)
    attention_outputs: list  # components show_head updates
    show_head: Callable  # (trace, step, kind, layer, head) -> updates for attention_outputs


class ExplainTab:
    def __init__(self, checkpoint: Checkpoint | None):
        self.checkpoint = checkpoint

    def layout(self) -> None:
        """The tab and its panels (call inside the app's gr.Tabs)."""
        with gr.Tab("Explain", id=TAB_ID, elem_id="explain-tab") as self.tab:
            gr.Markdown(ABOUT)
            if self.checkpoint is None:
                gr.Markdown("No model is loaded, so there is nothing to explain.")
                return
            config = self.checkpoint.config
            n_heads = config.n_heads
            layers = {"encoder": config.n_encoder_layers, "decoder_self": config.n_decoder_layers,
                      "cross": config.n_decoder_layers}
            self.positions_state = gr.State(None)  # this user's Intervention without positional encodings
            with gr.Tabs(elem_id="explain-panels"):
                with gr.Tab("Switch heads off", id="ablate"):
                    gr.Markdown(ABOUT_ABLATION)
                    self.head_boxes = []
                    with gr.Row(equal_height=False):
                        for kind in ATTENTION_KINDS:
                            with gr.Column(min_width=240, elem_classes="head-grid"):
                                gr.Markdown(f"**{KIND_NAMES[kind]}**")
                                for layer in range(1, layers[kind] + 1):
                                    self.head_boxes.append(gr.CheckboxGroup(
                                        [(f"H{h}", h) for h in range(1, n_heads + 1)], label=f"layer {layer}",
                                        elem_id=f"ablate-{kind}-{layer}", container=True))
                    with gr.Row():
                        self.ablate_button = gr.Button("Re-decode without these heads", variant="primary",
                                                       elem_id="ablate-run", scale=0, min_width=340)
                        self.clear_button = gr.Button("Clear", elem_id="ablate-clear", scale=0, min_width=100)
                    self.ablate_result = gr.HTML(elem_id="ablate-result")
                    self.ablate_plot = gr.Plot(elem_id="ablate-plot", show_label=False)
                with gr.Tab("Branch", id="branch"):
                    gr.Markdown(ABOUT_BRANCH)
                    with gr.Row(equal_height=True):
                        self.candidate = gr.Dropdown([], label="Candidate to force", elem_id="branch-candidate",
                                                     scale=3)
                        self.branch_button = gr.Button("Force it and continue", variant="primary",
                                                       elem_id="branch-run", scale=1)
                    self.branch_result = gr.HTML(elem_id="branch-result")
                with gr.Tab("Logit lens", id="lens"):
                    gr.Markdown(ABOUT_LENS)
                    self.lens_plot = gr.Plot(elem_id="lens-plot", show_label=False)
                with gr.Tab("Beam vs greedy", id="beam"):
                    gr.Markdown(ABOUT_BEAM)
                    with gr.Row():
                        self.beam_button = gr.Button("Run beam search (beam 4, α = 0.6)", variant="primary",
                                                     elem_id="beam-run", scale=0, min_width=320)
                    self.beam_result = gr.HTML(elem_id="beam-result")
                with gr.Tab("Word alignment", id="align"):
                    gr.Markdown(ABOUT_ALIGNMENT)
                    with gr.Row():
                        self.align_layers = gr.CheckboxGroup(
                            [(str(l), l) for l in range(1, layers["cross"] + 1)], value=list(range(1, layers["cross"] + 1)),
                            label="Decoder layers to average", elem_id="align-layers")
                        self.align_level = gr.Radio([("subwords", "subword"), ("words", "word")], value="subword",
                                                    label="Pharaoh indices count", elem_id="align-level")
                    self.align_plot = gr.Plot(elem_id="align-plot", show_label=False)
                    self.pharaoh = gr.Textbox(label="Pharaoh alignment (source-target, 0-based)", interactive=False,
                                              buttons=["copy"], elem_id="align-pharaoh")
                with gr.Tab("Head diagnostics", id="diagnostics"):
                    gr.Markdown(ABOUT_DIAGNOSTICS)
                    with gr.Row():
                        self.diag_kind = gr.Radio([(name, kind) for kind, name in DIAGNOSTIC_KINDS.items()],
                                                  value="encoder", label="Attention", elem_id="diag-kind")
                        self.diag_head = gr.Dropdown([], label="Open a head in the Attention tab",
                                                     info="choose a layer and head: the Attention tab opens on it",
                                                     elem_id="diag-head")
                    self.diag_plot = gr.Plot(elem_id="diag-plot", show_label=False)
                with gr.Tab("Without positions", id="positions"):
                    gr.Markdown(ABOUT_POSITIONS)
                    with gr.Row():
                        self.positions_button = gr.Button("Translate without positional encodings",
                                                          variant="primary", elem_id="nope-run", scale=0, min_width=340)
                    self.positions_result = gr.HTML(elem_id="nope-result")
                    self.positions_plot = gr.Plot(elem_id="nope-plot", show_label=False)
                    with gr.Row():
                        self.positions_layer = gr.Radio(list(range(1, layers["encoder"] + 1)), value=1,
                                                        label="Encoder layer", elem_id="nope-layer")
                        self.positions_head = gr.Radio(list(range(1, n_heads + 1)), value=1, label="Head",
                                                       elem_id="nope-head")
                    self.positions_attention = gr.Plot(elem_id="nope-attention", show_label=False)

    def wire(self, app: AppParts) -> None:
        """Events: model runs on buttons; trace views on opening the tab, a new trace or a new step."""
        if self.checkpoint is None:
            return
        checkpoint, private = self.checkpoint, dict(api_visibility="private")
        # The four model runs share one pool of workers (the queue's default limit), so a crowd pressing
        # them cannot start 4x as many model calls as there are workers.
        model_run = dict(api_visibility="private", concurrency_id="explain-model-runs")
        config = checkpoint.config

        def trace_views(trace, step, align_layers, level, kind):
            """[lens, alignment plot, Pharaoh, diagnostics plot, head dropdown, candidates]."""
            if trace is None:
                return [None, None, "", None, gr.Dropdown(choices=[], value=None), branch_choices(None, 1)]
            return [lens_view(trace, step), *alignment_views(trace, align_layers, level),
                    *diagnostics_views(trace, kind), branch_choices(trace, step)]

        views = [self.lens_plot, self.align_plot, self.pharaoh, self.diag_plot, self.diag_head, self.candidate]
        view_inputs = [app.trace, app.step, self.align_layers, self.align_level, self.diag_kind]

        def on_open(*values):
            return [TAB_ID, *trace_views(*values)]

        self.tab.select(on_open, view_inputs, [app.tab, *views], **private)

        results = [self.ablate_result, self.ablate_plot, self.branch_result, self.beam_result,
                   self.positions_result, self.positions_plot, self.positions_attention, self.positions_state]

        def on_new_trace(tab, *values):
            cleared = ["", None, "", "", "", None, None, None]
            return [*cleared, *(trace_views(*values) if tab == TAB_ID else [gr.skip()] * len(views))]

        app.translate_event.success(on_new_trace, [app.tab, *view_inputs], [*results, *views], **private)

        def on_step(tab, trace, step):
            if tab != TAB_ID or trace is None:
                return [gr.skip(), gr.skip()]
            return [lens_view(trace, step), branch_choices(trace, step)]

        app.step.change(on_step, [app.tab, app.trace, app.step], [self.lens_plot, self.candidate],
                        trigger_mode="always_last", show_progress="hidden", **private)

        def on_ablate(trace, *choices):
            require(checkpoint, trace)
            ablation = ablation_from_choices(list(choices), config.n_encoder_layers, config.n_decoder_layers)
            if ablation.is_empty:
                raise gr.Error("Tick at least one head to switch off.")
            return intervention_views(trace, intervene(checkpoint, trace, ablation), "Heads switched off",
                                      "ablation-probabilities")

        self.ablate_button.click(on_ablate, [app.trace, *self.head_boxes], [self.ablate_result, self.ablate_plot],
                                 **model_run)
        self.clear_button.click(lambda: [[]] * len(self.head_boxes) + ["", None], None,
                                [*self.head_boxes, self.ablate_result, self.ablate_plot], **private)

        def on_branch(trace, step, candidate):
            require(checkpoint, trace)
            branched, t = branch(checkpoint, trace, step, candidate)
            heading = f"Branch: “{branched.output_tokens[t]}” forced at step {t + 1}"
            return comparison_html(trace, branched, heading, forced_step=t)

        self.branch_button.click(on_branch, [app.trace, app.step, self.candidate], self.branch_result, **model_run)

        def on_beam(trace):
            require(checkpoint, trace)
            return beam_html(analysis.beam_versus_greedy(checkpoint.model, checkpoint.tokenizer, trace))

        self.beam_button.click(on_beam, app.trace, self.beam_result, **model_run)

        def on_alignment(trace, align_layers, level):
            return [gr.skip(), gr.skip()] if trace is None else alignment_views(trace, align_layers, level)

        for control in (self.align_layers, self.align_level):
            control.input(on_alignment, [app.trace, self.align_layers, self.align_level],
                          [self.align_plot, self.pharaoh], trigger_mode="always_last", **private)

        def on_diag_kind(trace, kind):
            return [gr.skip(), gr.skip()] if trace is None else diagnostics_views(trace, kind)

        self.diag_kind.input(on_diag_kind, [app.trace, self.diag_kind], [self.diag_plot, self.diag_head], **private)

        def on_open_head(trace, step, kind, value):
            if trace is None or not value:
                return [gr.skip()] * (2 + len(app.attention_outputs))
            layer, head = parse_head(value)
            return [gr.Tabs(selected="attention"), "attention", *app.show_head(trace, step, kind, layer, str(head))]

        self.diag_head.input(on_open_head, [app.trace, app.step, self.diag_kind, self.diag_head],
                             [app.tabs, app.tab, *app.attention_outputs], **private)

        def on_positions(trace, layer, head):
            require(checkpoint, trace)
            result = intervene(checkpoint, trace, Ablation(positional_encoding=False))
            return [result, *intervention_views(trace, result, "Without positional encodings", "no-pe-probabilities"),
                    positions_views(trace, result, layer, head)]

        positions_controls = [self.positions_layer, self.positions_head]
        self.positions_button.click(on_positions, [app.trace, *positions_controls],
                                    [self.positions_state, self.positions_result, self.positions_plot,
                                     self.positions_attention], **model_run)

        def on_positions_head(trace, result, layer, head):
            return gr.skip() if trace is None or result is None else positions_views(trace, result, layer, head)

        for control in positions_controls:
            control.input(on_positions_head, [app.trace, self.positions_state, *positions_controls],
                          self.positions_attention, trigger_mode="always_last", **private)
