"""Attention Explorer: look inside the 2017 Transformer ("Attention Is All You Need") as it translates.

One Gradio app over one checkpoint. Translate runs the model once (`model.decoding.translate`)
and keeps the whole `TranslationTrace` in the user's `gr.State`; stepping through greedy decoding,
switching attention kind, layer or head, and opening a tab only re-draw from that trace with
`visualizer.*`, never calling the model again. Hidden tabs are drawn when they are opened.

    python3 app.py                                  # checkpoints/de-en-small on 127.0.0.1:7860
    python3 app.py --checkpoint /tmp/dev-checkpoint --port 7861
    python3 app.py --hub owner/name --host 0.0.0.0  # a checkpoint from the Hugging Face Hub

Environment: ATTENTION_EXPLORER_CHECKPOINT (a local checkpoint directory),
ATTENTION_EXPLORER_HOST (0.0.0.0 listens on all interfaces, as on Spaces), GRADIO_SERVER_PORT.
"""

from __future__ import annotations

import argparse
import functools
import html
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import gradio as gr
import numpy as np
import torch
from gradio.components.plot import PlotData

import explain_tab
import visualizer
from app_common import plot, step_index
from visualizer.tokens import token_chips
from model import Checkpoint, CheckpointError, TranslationTrace, load_checkpoint
from model.decoding import translate
from model import limits
from model.paths import DEFAULT_CHECKPOINT
from model.trace import ATTENTION_KINDS

CHECKPOINT_ENV = "ATTENTION_EXPLORER_CHECKPOINT"
HOST_ENV = "ATTENTION_EXPLORER_HOST"
THREADS_ENV = "ATTENTION_EXPLORER_THREADS"
TRAINING_LOG_FILE = "training_log.json"
DIRECTION_LABELS = {"de-en": "German → English", "en-de": "English → German"}
KINDS = {name: kind.label for name, kind in ATTENTION_KINDS.items()}
TABS = ("next", "attention", "positions", "masks", "model")
PLAY_SECONDS = 1.0  # one decoding step per tick while playing
TRACE_FILES_MAX_AGE_S = 3600  # trace JSON files older than this are removed when a new one is written

EXAMPLES = [
    ["Ein Mann fährt mit dem Fahrrad die Straße entlang.", "de-en"],
    ["Zwei Hunde spielen im Schnee.", "de-en"],
    ["Eine Frau in einem roten Kleid singt auf einer Bühne.", "de-en"],
    ["Wie spät ist es?", "de-en"],
    ["Ich habe heute keine Zeit.", "de-en"],
    ["A little girl is climbing into a wooden playhouse.", "en-de"],
    ["Two men are playing soccer in the park.", "en-de"],
    ["I would like a cup of coffee.", "en-de"],
    ["Where is the train station?", "en-de"],
]

INTRO = f"""
# Attention Explorer
A from-scratch **Transformer** ("Attention Is All You Need", Vaswani et al., 2017) trained to translate
German ↔ English. Type a sentence, translate it, then step through greedy decoding and open the model:
the next-token probabilities, every attention head, the positional encodings and the masks.
The model is **post-LN, like the paper**: every sub-layer is `LayerNorm(x + Sublayer(x))` (section 3.1).

Limits: at most **{limits.MAX_INPUT_CHARS:,} characters** of input; the source is cut to
**{limits.MAX_SOURCE_TOKENS} subword tokens** and the output stops after **{limits.MAX_TARGET_TOKENS} tokens**.
"""

ABOUT_NEXT = """
**Greedy decoding.** The decoder is auto-regressive (section 3): at step *t* it reads the tokens
chosen so far and outputs a probability for every token of the shared vocabulary (section 3.4).
Greedy decoding takes the most probable one (highlighted); the paper used beam search of size 4
(section 6.1). The entropy (in bits) says how unsure the model is: 0 bits = certain.
"""

ABOUT_ATTENTION = {
    "encoder": "**Encoder self-attention** (sections 3.2.2 and 3.2.3): every source token (row, query) "
               "attends to every source token (column, key). It runs once for the sentence, so it does "
               "not change as you step.",
    "decoder_self": "**Masked decoder self-attention** (section 3.2.3): each target position attends only to "
               "itself and earlier positions, so the triangle grows by one row and column per step. "
               "The highlighted row is the query being decoded now.",
    "cross": "**Cross-attention / encoder-decoder attention** (section 3.2.3): queries come from the "
             "decoder, keys and values from the encoder's output, so each target row shows which source "
             "tokens the decoder reads. Rows appear as you step; the highlighted row is being decoded now.",
}

ABOUT_HEADS = """
Each cell is a softmax weight, `softmax(QKᵀ/√d_k)` (scaled dot-product attention, section 3.2.1):
rows are queries (top to bottom), columns are keys (left to right); each row sums to 1.
*All heads* shows every layer (rows) and head (columns) at once; *mean of heads* averages the heads of
one layer. Multi-head attention (section 3.2.2) runs the heads in parallel on d_k-sized slices.
"""

ABOUT_PIPELINE = """
**Inside one head** (section 3.2.1): the raw scores `QKᵀ/√d_k`, the same scores with the mask applied
(masked keys get −∞, i.e. the dtype's minimum), and the softmax that turns each row into weights.
"""

ABOUT_POSITIONS = """
**Positional encoding** (section 3.5): attention itself ignores word order, so a fixed sinusoid,
`PE(pos, 2i) = sin(pos / 10000^(2i/d_model))`, `PE(pos, 2i+1) = cos(…)`, is added to every embedding.
Low dimensions oscillate fast, high dimensions slowly; rows 0..S−1 are added to this source sentence.
"""

ABOUT_MASKS = """
**Masks** (section 3.2.3; True = may attend). *Padding*: a batch is padded to its longest sentence and
no query may attend a `[PAD]` key; the typed sentence is shown batched with a longer one.
*Causal (look-ahead)*: decoder position *i* sees positions ≤ *i* only. *Decoder mask*: causal AND padding.
*Cross-attention mask*: every target query may attend every real source token.
"""

ABOUT_MODEL = """
Post-LN like the paper: each encoder and decoder layer applies `LayerNorm(x + Sublayer(x))` after every
attention and feed-forward sub-layer (section 3.1); embeddings are scaled by √d_model and share one
German+English vocabulary (section 3.4); dropout as in section 5.4; BLEU as in section 6.1 (sacreBLEU on
detokenized, cased output).
"""

CSS = """
.gradio-container { max-width: 1280px !important; margin: 0 auto; }
#checkpoint-error { border: 1px solid #dc2626; border-radius: 6px; padding: 4px 12px; }
.token-row { display: flex; flex-wrap: wrap; gap: 4px; align-items: center; margin: 2px 0 8px; }
.token-row .label { font-weight: 600; margin-right: 6px; min-width: 7.5em; }
.tok { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 0.85em; padding: 1px 6px;
       border-radius: 4px; background: var(--block-background-fill); border: 1px solid var(--border-color-primary);
       white-space: pre; }
.tok.special { color: var(--body-text-color-subdued); font-style: italic; }
.tok.query { background: #fde68a; border-color: #d97706; color: #111; }
.tok.chosen { background: #bbf7d0; border-color: #16a34a; color: #111; }
.step-facts { margin-top: 4px; }
#step-controls { align-items: center; }
""" + explain_tab.CSS


# --------------------------------------------------------------------------- model and files
def checkpoint_source(checkpoint: str | Path | None = None) -> str:
    """The checkpoint to load: the argument, else $ATTENTION_EXPLORER_CHECKPOINT, else the shipped one."""
    if checkpoint is not None:
        return str(checkpoint)
    return os.environ.get(CHECKPOINT_ENV) or str(DEFAULT_CHECKPOINT)


@functools.lru_cache(maxsize=4)
def load_model(source: str, hub: bool = False) -> Checkpoint:
    """Load a checkpoint once per process; it is shared read-only by every user (eval mode, no grad)."""
    return load_checkpoint(source, hub=hub)


@functools.lru_cache(maxsize=4)
def load_training_log(directory: str) -> dict | None:
    """training_log.json beside the checkpoint, or None when absent or unreadable."""
    path = Path(directory) / TRAINING_LOG_FILE
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


def parse_direction(value: str | None) -> str:
    """'de-en', 'en-de' or their labels (as the UI and API clients send them) -> 'de-en' / 'en-de'."""
    text = str(value or "").strip().lower().replace("->", "→")
    for code, label in DIRECTION_LABELS.items():
        if text in (code, label.lower(), code.replace("-", "→"), code.replace("-", "_")):
            return code
    choices = ", ".join(f"{code!r} / {label!r}" for code, label in DIRECTION_LABELS.items())
    raise gr.Error(f"Unknown direction {value!r}: use one of {choices}.")


def write_trace_json(trace: TranslationTrace) -> str:
    """Write the trace as JSON to a fresh temporary file (for the download button and the API)."""
    folder = Path(tempfile.gettempdir()) / "attention-explorer-traces"
    folder.mkdir(parents=True, exist_ok=True)
    now = time.time()
    try:  # keep the folder from growing without bound
        previous = list(folder.glob("*/trace-*.json"))
    except OSError:  # a concurrent request removed a folder while we listed: prune next time
        previous = []
    for old in previous:
        try:
            if now - old.stat().st_mtime > TRACE_FILES_MAX_AGE_S:
                old.unlink()
                old.parent.rmdir()
        except OSError:  # already removed by a concurrent request
            pass
    path = Path(tempfile.mkdtemp(dir=folder)) / f"trace-{trace.direction}.json"
    path.write_text(trace.to_json(), encoding="utf-8")
    return str(path)


def translate_text(checkpoint: Checkpoint | None, text: str | None, direction: str,
                   load_error: str = "") -> tuple[TranslationTrace, str, str]:
    """The Translate action: validate, run the model once, -> (trace, translation, trace JSON path).

    Bad input raises gr.Error with a message for the page (a notice) and for API clients.
    """
    if checkpoint is None:
        raise gr.Error(f"No model is loaded: {load_error}")
    code = parse_direction(direction)
    if text is not None and not isinstance(text, str):  # API clients can send any JSON value
        raise gr.Error(f"The text must be a string, not {type(text).__name__}.")
    if not text or not text.strip():
        raise gr.Error("The text box is empty: type a sentence to translate.")
    if len(text) > limits.MAX_INPUT_CHARS:
        raise gr.Error(f"The text is {len(text):,} characters long; the limit is "
                       f"{limits.MAX_INPUT_CHARS:,} characters (MAX_INPUT_CHARS). Shorten it and try again.")
    try:
        trace = translate(checkpoint.model, checkpoint.tokenizer, text, code)
    except ValueError as error:
        raise gr.Error(str(error)) from None
    return trace, trace.translation, write_trace_json(trace)


# --------------------------------------------------------------------------- small pure views
def clamp_step(trace: TranslationTrace | None, step: float | None) -> int:
    """A requested 1-based step, kept within 1..num_steps (1 when there is no trace)."""
    return 1 if trace is None else step_index(trace, step) + 1


STEP_MOVES = {  # 1-based step -> requested step; move_step clamps the result
    "first": lambda trace, step: 1,
    "prev": lambda trace, step: int(step or 1) - 1,
    "next": lambda trace, step: int(step or 1) + 1,
    "last": lambda trace, step: trace.num_steps if trace is not None else 1,
    "stay": lambda trace, step: step,
}


def move_step(trace: TranslationTrace | None, step: float | None, move: str) -> int:
    """The step after pressing first / prev / next / last (or moving the slider), within 1..num_steps."""
    return clamp_step(trace, STEP_MOVES[move](trace, step))


def tokens_html(trace: TranslationTrace | None) -> str:
    if trace is None:
        return ""
    return (f'<div class="token-row"><span class="label">Source ({len(trace.source_tokens)})</span>'
            f'{token_chips(trace.source_tokens)}</div>'
            f'<div class="token-row"><span class="label">Output ({trace.num_steps})</span>'
            f'{token_chips(trace.output_tokens)}</div>')


def notice_markdown(trace: TranslationTrace | None) -> str:
    """Visible notices about limits that shaped this translation ('' when there are none)."""
    if trace is None:
        return ""
    notes = []
    if trace.source_truncated:
        notes.append(f"⚠️ The source was cut to its first **{limits.MAX_SOURCE_TOKENS} subword tokens** "
                     "(MAX_SOURCE_TOKENS); only that part was translated.")
    if trace.stopped_by == "max_length":
        notes.append(f"⚠️ Decoding stopped after **{trace.num_steps} tokens** without producing `[EOS]` "
                     f"(the length budget is 2 × source + 10, at most {limits.MAX_TARGET_TOKENS} = "
                     "MAX_TARGET_TOKENS).")
    return "\n\n".join(notes)


def step_html(trace: TranslationTrace | None, step: float | None) -> str:
    """The target prefix at this step, the query being decoded, the chosen token, its probability, entropy."""
    if trace is None:
        return "<p>Translate a sentence to step through greedy decoding.</p>"
    t = step_index(trace, step)
    prefix = token_chips(trace.target_tokens[: t + 1], {t: "query"})
    chosen = token_chips([trace.output_tokens[t]], {0: "chosen"})
    return (f'<div class="token-row"><span class="label">Step {t + 1} of {trace.num_steps}</span>'
            f'decoder input so far (the highlighted token is the query):</div>'
            f'<div class="token-row">{prefix}</div>'
            f'<div class="token-row step-facts"><span class="label">Chosen next</span>{chosen}'
            f'&nbsp;p = {float(trace.chosen_probs[t]):.3f} &nbsp;·&nbsp; entropy = '
            f'{float(trace.entropy[t]):.2f} bits</div>')


def candidates_view(trace: TranslationTrace, step: float | None) -> PlotData:
    t = step_index(trace, step)
    ids = trace.candidate_ids[t].tolist()
    chosen = ids.index(trace.output_ids[t]) if trace.output_ids[t] in ids else None
    figure = visualizer.candidates_chart(
        trace.candidate_tokens[t], trace.candidate_probs[t], chosen, entropy_bits=float(trace.entropy[t]),
        title=f"Step {t + 1}: the {len(ids)} most probable next tokens",
    )
    return plot(figure, f"candidates-step-{t + 1}")


def attention_arrays(trace: TranslationTrace, step: float | None, kind: str):
    """(weights, scores, mask, queries, keys) of one attention kind as far as it exists at this step."""
    try:
        return trace.attention(kind, step_index(trace, step))[1:]
    except ValueError as error:
        raise gr.Error(str(error)) from None


def layer_index(weights: np.ndarray, layer: float | None) -> int:
    """1-based layer from the UI -> 0-based index, clamped to the layers of this attention kind."""
    return int(np.clip(int(layer or 1), 1, weights.shape[0])) - 1


def attention_view(trace: TranslationTrace, step: float | None, kind: str, layer: float | None,
                   head: str) -> PlotData:
    weights, _, _, queries, keys = attention_arrays(trace, step, kind)
    highlight = None if kind == "encoder" else len(queries) - 1
    name = KINDS[kind]
    if head == "all":
        figure = visualizer.attention_grid(weights, queries, keys, highlight_query=highlight,
                                           title=f"{name}: every layer (rows) and head (columns)")
        return plot(figure, f"{kind}-attention-all-heads")
    l = layer_index(weights, layer)
    if head == "mean":
        figure = visualizer.attention_heatmap(weights[l].mean(axis=0), queries, keys, highlight_query=highlight,
                                              title=f"{name}, layer {l + 1}, mean of {weights.shape[1]} heads")
        return plot(figure, f"{kind}-attention-layer{l + 1}-mean")
    h = head_index(weights, head)
    figure = visualizer.attention_heatmap(weights[l, h], queries, keys, highlight_query=highlight,
                                          title=f"{name}, layer {l + 1}, head {h + 1}")
    return plot(figure, f"{kind}-attention-layer{l + 1}-head{h + 1}")


def head_index(weights: np.ndarray, head: str) -> int:
    """'3' -> 2; 'all' and 'mean' -> head 1 (index 0); clamped to the heads there are."""
    number = int(head) if str(head).isdigit() else 1
    return int(np.clip(number, 1, weights.shape[1])) - 1


def pipeline_view(trace: TranslationTrace, step: float | None, kind: str, layer: float | None,
                  head: str) -> PlotData:
    weights, scores, mask, queries, keys = attention_arrays(trace, step, kind)
    l, h = layer_index(weights, layer), head_index(weights, head)
    stand_in = " (head 1 stands in for all heads)" if not str(head).isdigit() else ""
    figure = visualizer.attention_pipeline(
        scores[l, h], np.asarray(mask), weights[l, h], queries, keys,
        title=f"{KINDS[kind]}, layer {l + 1}, head {h + 1}{stand_in}: scores → + mask → softmax",
    )
    return plot(figure, f"{kind}-pipeline-layer{l + 1}-head{h + 1}")


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


def render_views(tab: str, trace: TranslationTrace | None, step: float | None, kind: str, layer: float | None,
                 head: str) -> list:
    """Figures for [candidates, attention, pipeline, positions, masks]: only the open tab's are drawn.

    The others are left as they are (gr.skip()) and drawn when their tab opens.
    """
    views = [gr.skip()] * 5
    if trace is None:
        return views
    if tab == "next":
        views[0] = candidates_view(trace, step)
    elif tab == "attention":
        views[1] = attention_view(trace, step, kind, layer, head)
        views[2] = pipeline_view(trace, step, kind, layer, head)
    elif tab == "positions":
        views[3] = positions_view(trace)
    elif tab == "masks":
        views[4] = masks_view(trace, step)
    return views


def config_markdown(checkpoint: Checkpoint) -> str:
    """The hyper-parameters beside the paper's base model (Table 3), and the parameter count."""
    config = checkpoint.config
    rows = [
        ("layers (encoder / decoder)", "N", f"{config.n_encoder_layers} / {config.n_decoder_layers}", "6 / 6"),
        ("model width", "d_model", config.d_model, 512),
        ("attention heads", "h", config.n_heads, 8),
        ("width per head", "d_k = d_v", config.d_head, 64),
        ("feed-forward width", "d_ff", config.d_ff, 2048),
        ("dropout", "P_drop", config.dropout, 0.1),
        ("shared vocabulary", "", f"{config.vocab_size:,}", "≈37,000 BPE"),
        ("longest sequence", "", config.max_positions, ""),
        ("parameters", "", f"{checkpoint.model.num_parameters():,}", "≈65 million"),
    ]
    table = "\n".join(f"| {name} | {f'`{symbol}`' if symbol else ''} | {value} | {base} |"
                      for name, symbol, value, base in rows)
    return (f"**This model: {checkpoint.model.num_parameters():,} parameters**, post-LN, checkpoint "
            f"`{checkpoint.path}`\n\n| | paper | this model | base model (Table 3) |\n| --- | --- | ---: | ---: |\n"
            + table)


def training_view(checkpoint: Checkpoint | None) -> PlotData | None:
    log = None if checkpoint is None else load_training_log(str(checkpoint.path))
    return None if log is None else plot(visualizer.training_curves_figure(log), "training-curves")


# --------------------------------------------------------------------------- the page
def build_demo(checkpoint: str | Path | None = None, hub: bool = False) -> gr.Blocks:
    """The whole app over one checkpoint (a local directory, or a Hub repo id with hub=True).

    A checkpoint that is missing or broken does not stop the app: the page says what is wrong.
    """
    source = checkpoint_source(checkpoint)
    try:
        loaded, load_error = load_model(source, hub), ""
    except CheckpointError as error:
        loaded, load_error = None, f"{error}. Train one, or point the app at one with --checkpoint DIR, " \
                                   f"--hub REPO_ID or ${CHECKPOINT_ENV}."
    n_layers = {name: kind.num_layers(loaded.config) if loaded else 1 for name, kind in ATTENTION_KINDS.items()}
    n_heads = loaded.config.n_heads if loaded else 1

    def layer_choices(kind: str) -> list[tuple[str, int]]:
        return [(str(number), number) for number in range(1, n_layers[kind] + 1)]

    # analytics off: no telemetry or version checks from an offline demo
    with gr.Blocks(title="Attention Explorer", delete_cache=(3600, 3600), analytics_enabled=False) as demo:
        trace_state = gr.State(None)  # this user's TranslationTrace
        tab_state = gr.State("next")  # the open tab: only its views are drawn
        playing_state = gr.State(False)

        gr.Markdown(INTRO)
        gr.Markdown(f"⚠️ **No model loaded.** {html.escape(load_error)}", elem_id="checkpoint-error",
                    visible=bool(load_error))

        with gr.Row(equal_height=False):
            with gr.Column(scale=3):
                source_box = gr.Textbox(
                    label="Sentence", lines=2, max_lines=8, elem_id="source",
                    placeholder="Ein Mann fährt mit dem Fahrrad die Straße entlang.",
                    info=f"Up to {limits.MAX_INPUT_CHARS:,} characters; longer sources are cut to "
                         f"{limits.MAX_SOURCE_TOKENS} subword tokens.",
                )
            with gr.Column(scale=1, min_width=220):
                direction = gr.Radio([(label, code) for code, label in DIRECTION_LABELS.items()], value="de-en",
                                     label="Direction", elem_id="direction")
                translate_button = gr.Button("Translate", variant="primary", elem_id="translate")
        with gr.Row():
            for code, label in DIRECTION_LABELS.items():
                sentences = [[text] for text, example_direction in EXAMPLES if example_direction == code]
                with gr.Column(min_width=300):
                    examples = gr.Examples(sentences, inputs=[source_box], examples_per_page=len(sentences),
                                           label=f"{label} examples (click one, then Translate)")
                # an example also sets its direction
                examples.load_input_event.then(functools.partial(str, code), None, direction, queue=False,
                                               api_visibility="private", show_progress="hidden")

        with gr.Row(equal_height=False):
            translation_box = gr.Textbox(label="Translation (greedy)", interactive=False, elem_id="translation",
                                         scale=4)
            download = gr.DownloadButton("Download trace (JSON)", interactive=False, elem_id="download-trace",
                                         scale=1, min_width=180)
        tokens = gr.HTML(elem_id="tokens")
        notice = gr.Markdown(elem_id="notice")

        gr.Markdown("### Step through greedy decoding")
        with gr.Row(elem_id="step-controls", equal_height=False):
            first_button = gr.Button("« First", elem_id="step-first", size="sm", min_width=80, scale=0)
            prev_button = gr.Button("‹ Back", elem_id="step-prev", size="sm", min_width=80, scale=0)
            next_button = gr.Button("Next ›", elem_id="step-next", size="sm", min_width=80, scale=0)
            last_button = gr.Button("Last »", elem_id="step-last", size="sm", min_width=80, scale=0)
            play_button = gr.Button("▶ Play", elem_id="play", size="sm", min_width=90, scale=0, variant="primary")
            step_slider = gr.Slider(1, 2, value=1, step=1, label="Decoding step", elem_id="step", scale=1,
                                    interactive=False)
        timer = gr.Timer(PLAY_SECONDS, active=False)
        step_info = gr.HTML(step_html(None, 1), elem_id="step-info")

        with gr.Tabs(elem_id="views") as views_tabs:
            with gr.Tab("Next token", id="next") as next_tab:
                gr.Markdown(ABOUT_NEXT)
                candidates_plot = gr.Plot(elem_id="candidates-plot", show_label=False)
            with gr.Tab("Attention", id="attention") as attention_tab:
                with gr.Row():
                    kind = gr.Radio([(label, code) for code, label in KINDS.items()], value="cross",
                                    label="Attention", elem_id="attention-kind", scale=3)
                    layer = gr.Radio(layer_choices("cross"), value=1, label="Layer", elem_id="layer", scale=1,
                                     info="not used by all heads")
                head = gr.Radio([("all heads", "all"), ("mean of heads", "mean")]
                                + [(f"head {h}", str(h)) for h in range(1, n_heads + 1)],
                                value="1", label="Head", elem_id="head")
                about_kind = gr.Markdown(ABOUT_ATTENTION["cross"])
                gr.Markdown(ABOUT_HEADS)
                attention_plot = gr.Plot(elem_id="attention-plot", show_label=False)
                gr.Markdown(ABOUT_PIPELINE)
                pipeline_plot = gr.Plot(elem_id="pipeline-plot", show_label=False)
            with gr.Tab("Positional encoding", id="positions") as positions_tab:
                gr.Markdown(ABOUT_POSITIONS)
                pe_plot = gr.Plot(elem_id="pe-plot", show_label=False)
            with gr.Tab("Masks", id="masks") as masks_tab:
                gr.Markdown(ABOUT_MASKS)
                mask_plot = gr.Plot(elem_id="mask-plot", show_label=False)
            with gr.Tab("Model", id="model") as model_tab:
                gr.Markdown(ABOUT_MODEL)
                if loaded is None:
                    gr.Markdown("No model is loaded, so there is nothing to show here.")
                else:
                    with gr.Row(equal_height=False):
                        gr.Markdown(config_markdown(loaded), elem_id="model-config")
                        gr.Markdown("**BLEU and chrF (metrics.json)**\n\n"
                                    + visualizer.metrics_table_markdown(loaded.metrics), elem_id="metrics")
                curves_plot = gr.Plot(elem_id="curves-plot", show_label=False)
                curves_note = gr.Markdown()
            explain = explain_tab.ExplainTab(loaded)
            explain.layout()

        # ------------------------------------------------------------------- wiring
        views = [candidates_plot, attention_plot, pipeline_plot, pe_plot, mask_plot]
        controls = [kind, layer, head]

        def stopped() -> list:  # updates for [playing_state, timer, play_button] that stop playback
            return [False, gr.Timer(active=False), gr.Button("▶ Play")]

        def on_translate(text, direction_value):
            return translate_text(loaded, text, direction_value, load_error)

        def show_trace(trace):
            # a slider needs minimum < maximum: a one-step trace gets a disabled 1..2 slider (steps clamp)
            slider = gr.Slider(minimum=1, maximum=max(trace.num_steps, 2), value=1, interactive=trace.num_steps > 1)
            return [slider, tokens_html(trace), notice_markdown(trace), *stopped()]

        # preprocess=False: API clients may send "de-en" as well as the label; translate_text checks both.
        translate_event = gr.on(
            [translate_button.click, source_box.submit], on_translate, [source_box, direction],
            [trace_state, translation_box, download], api_name="translate", preprocess=False,
        )
        translate_event.success(lambda: gr.DownloadButton(interactive=True), None, download,
                                api_visibility="private", queue=False)
        translate_event.success(show_trace, [trace_state], [step_slider, tokens, notice, playing_state, timer,
                                                             play_button], api_visibility="private")

        # Every view is drawn by ONE listener, fired by whatever changes what is shown: a new trace, the
        # step, the open tab, kind, layer or head. trigger_mode="always_last" runs it once at a time per
        # page and, after a burst of clicks, once more with the latest values, so the figures always
        # match the step and controls on screen (separate listeners raced and could leave a stale plot).
        def redraw(trace, step, kind_value, layer_value, head_value, tab):
            return [step_html(trace, step), *render_views(tab, trace, step, kind_value, layer_value, head_value)]

        gr.on([trace_state.change, step_slider.change, tab_state.change, kind.change, layer.change, head.change],
              redraw, [trace_state, step_slider, *controls, tab_state], [step_info, *views],
              trigger_mode="always_last", show_progress="hidden", api_visibility="private")

        def go_to(move):
            def handler(trace, step):
                return move_step(trace, step, move)
            return handler

        buttons = {"first": first_button, "prev": prev_button, "next": next_button, "last": last_button}
        for move, button in buttons.items():
            button.click(go_to(move), [trace_state, step_slider], step_slider, api_visibility="private",
                         trigger_mode="always_last", show_progress="hidden")

        def toggle_play(trace, step, playing):
            if trace is None or playing:
                return [*stopped(), gr.skip()]
            restart = clamp_step(trace, step) >= trace.num_steps  # at the end: play again from the start
            return [True, gr.Timer(active=True), gr.Button("⏸ Pause"), 1 if restart else clamp_step(trace, step)]

        def tick(trace, step, playing):
            if trace is None or not playing:
                return [*stopped(), gr.skip()]
            new_step = move_step(trace, step, "next")
            state = stopped() if new_step >= trace.num_steps else [gr.skip()] * 3
            return [*state, new_step]

        play_inputs = [trace_state, step_slider, playing_state]
        play_outputs = [playing_state, timer, play_button, step_slider]
        play_button.click(toggle_play, play_inputs, play_outputs, api_visibility="private")
        timer.tick(tick, play_inputs, play_outputs, api_visibility="private", trigger_mode="always_last")

        def on_kind(kind_value, layer_value):
            choices = layer_choices(kind_value)
            layer_value = min(int(layer_value or 1), len(choices))
            return [gr.Radio(choices=choices, value=layer_value), ABOUT_ATTENTION[kind_value]]

        kind.input(on_kind, [kind, layer], [layer, about_kind], api_visibility="private", trigger_mode="always_last")

        for tab_id, tab in zip(TABS[:-1], (next_tab, attention_tab, positions_tab, masks_tab)):
            tab.select(functools.partial(str, tab_id), None, tab_state, api_visibility="private")

        def open_model_tab():
            figure = training_view(loaded)
            note = "" if figure is not None or loaded is None else \
                f"No `{TRAINING_LOG_FILE}` beside this checkpoint, so there are no training curves to show."
            return ["model", figure, note]

        model_tab.select(open_model_tab, None, [tab_state, curves_plot, curves_note], api_visibility="private")

        def show_head(trace, step, kind_value, layer_value, head_value):
            """Updates for [kind, layer, head, about, attention plot, pipeline plot] showing one head."""
            return [kind_value, gr.Radio(choices=layer_choices(kind_value), value=layer_value), head_value,
                    ABOUT_ATTENTION[kind_value],
                    *render_views("attention", trace, step, kind_value, layer_value, head_value)[1:3]]

        explain.wire(explain_tab.AppParts(
            trace=trace_state, step=step_slider, tab=tab_state, tabs=views_tabs, translate_event=translate_event,
            attention_outputs=[kind, layer, head, about_kind, attention_plot, pipeline_plot], show_head=show_head))
    return demo


demo = build_demo()


# Many users at once. Gradio gives every event listener its own pool of workers (concurrency_id defaults
# to the function), so stepping and drawing never wait behind another user's translation. Translate is the
# only event that runs the model; CONCURRENCY_LIMIT of them run at once in threads (PyTorch releases the
# GIL). Measured on 2 busy cores with 6 translations at the limits (100 source / 120 output tokens) already
# running, a short sentence took 22 s with 1 slot, 11.5 s with 4 and 1.4 s with 8: with 8 slots one long
# request does not stall everyone, and 8 traces at the limits (~7 MB each) keep peak memory small.
# At most QUEUE_MAX_SIZE events wait (each holds only its <= 5,000-character input; then "queue is full").
# The server keeps the gr.State of at most STATE_SESSIONS sessions, oldest dropped first: <= 1.5 GB even if
# every trace is at the limits (~0.4 MB for a typical sentence). Nothing here accepts uploads, so Gradio's
# upload route is capped at MAX_UPLOAD. api_open=False: API calls go through the same queue and limits.
CONCURRENCY_LIMIT = 8
QUEUE_MAX_SIZE = 256
STATE_SESSIONS = 200
MAX_UPLOAD = "1mb"


def server_host(cli_host: str | None = None) -> str:
    """--host, else $ATTENTION_EXPLORER_HOST, else $GRADIO_SERVER_NAME (set by Spaces), else 127.0.0.1 only."""
    return cli_host or os.environ.get(HOST_ENV) or os.environ.get("GRADIO_SERVER_NAME") or "127.0.0.1"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Attention Explorer: look inside a Transformer translator.")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--checkpoint", help=f"local checkpoint directory (default: ${CHECKPOINT_ENV} or "
                                            f"{DEFAULT_CHECKPOINT})")
    where.add_argument("--hub", metavar="REPO_ID", help="load the checkpoint from this Hugging Face Hub repo")
    parser.add_argument("--host", help=f"interface to listen on (default: ${HOST_ENV}, $GRADIO_SERVER_NAME "
                                       "or 127.0.0.1; 0.0.0.0 = all interfaces)")
    parser.add_argument("--port", type=int, help="port (default: $GRADIO_SERVER_PORT or the first free from 7860)")
    parser.add_argument("--threads", type=int, default=int(os.environ.get(THREADS_ENV, "1")),
                        help=f"PyTorch CPU threads per request (default: ${THREADS_ENV} or 1: several requests "
                             "run at once, and on a small CPU one thread each is fastest)")
    args = parser.parse_args(argv)
    torch.set_num_threads(max(1, args.threads))
    app = demo
    if args.hub:
        app = build_demo(args.hub, hub=True)
    elif args.checkpoint:
        app = build_demo(args.checkpoint)
    app.queue(default_concurrency_limit=CONCURRENCY_LIMIT, max_size=QUEUE_MAX_SIZE, api_open=False)
    app.launch(server_name=server_host(args.host), server_port=args.port, css=CSS, ssr_mode=False,
               state_session_capacity=STATE_SESSIONS, max_file_size=MAX_UPLOAD)


if __name__ == "__main__":
    main()
