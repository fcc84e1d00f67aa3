"""The session: the checkpoint, the Translate action and its trace file, and the page's header.

Translate runs the model once (`model.decoding.translate`, Figure 1 of "Attention Is All You Need")
and keeps the whole `TranslationTrace` in the user's `gr.State`; every tab then draws from that
trace. `build` lays out the header (sentence, direction, examples, translation, download, tokens)
and wires the one public endpoint, api_name="translate".
"""

from __future__ import annotations

import functools
import html
from pathlib import Path

import gradio as gr

from model import Checkpoint, CheckpointError, TranslationTrace, limits, load_checkpoint

from .common import PRIVATE, chips
from .runner import Runner, write_trace_file
from .text import DIRECTION_LABELS, EXAMPLES, INTRO

NO_MODEL_HINT = "Train one, or point the app at one with --checkpoint DIR, --hub REPO_ID, " \
                "$ATTENTION_EXPLORER_CHECKPOINT or $ATTENTION_EXPLORER_HUB."


# --------------------------------------------------------------------------- the model and files
@functools.lru_cache(maxsize=4)
def load_model(source: str, hub: bool = False) -> Checkpoint:
    """Load a checkpoint once per process; it is shared read-only by every user (eval mode, no grad)."""
    return load_checkpoint(source, hub=hub)


def open_checkpoint(source: str | Path, hub: bool = False) -> tuple[Checkpoint | None, str]:
    """(checkpoint, '') or (None, what went wrong): a missing or broken checkpoint does not stop the app."""
    try:
        return load_model(str(source), hub), ""
    except CheckpointError as error:
        return None, f"{error}. {NO_MODEL_HINT}"


def parse_direction(value: str | None) -> str:
    """'de-en', 'en-de' or their labels (as the UI and API clients send them) -> 'de-en' / 'en-de'."""
    text = str(value or "").strip().lower().replace("->", "→")
    for code, label in DIRECTION_LABELS.items():
        if text in (code, label.lower(), code.replace("-", "→"), code.replace("-", "_")):
            return code
    choices = ", ".join(f"{code!r} / {label!r}" for code, label in DIRECTION_LABELS.items())
    raise gr.Error(f"Unknown direction {value!r}: use one of {choices}.")


def write_trace_json(trace: TranslationTrace) -> str:
    """The lean trace JSON (serving/wire.py) in a fresh file for the download button and the API (ui/runner.py)."""
    return write_trace_file(trace)


def translate_text(checkpoint: Checkpoint | None, text: str | None, direction: str,
                   load_error: str = "", runner: Runner | None = None) -> tuple[TranslationTrace, str, str]:
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
        trace = (runner or Runner(checkpoint)).translate(text, code)
    except ValueError as error:
        raise gr.Error(str(error)) from None
    return trace, trace.translation, write_trace_json(trace)


# --------------------------------------------------------------------------- what the header shows
def tokens_html(trace: TranslationTrace | None) -> str:
    if trace is None:
        return ""
    return (f'<div class="token-row"><span class="label">Source ({len(trace.source_tokens)})</span>'
            f'{chips(trace.source_tokens)}</div>'
            f'<div class="token-row"><span class="label">Output ({trace.num_steps})</span>'
            f'{chips(trace.output_tokens)}</div>')


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


# --------------------------------------------------------------------------- the header
def input_row() -> tuple[gr.Textbox, gr.Radio, gr.Button]:
    """The sentence box, the direction and the Translate button, then the examples of each direction."""
    with gr.Row(equal_height=False):
        with gr.Column(scale=3):
            source = gr.Textbox(
                label="Sentence", lines=2, max_lines=8, elem_id="source",
                placeholder="Ein Mann fährt mit dem Fahrrad die Straße entlang.",
                info=f"Up to {limits.MAX_INPUT_CHARS:,} characters; longer sources are cut to "
                     f"{limits.MAX_SOURCE_TOKENS} subword tokens.",
            )
        with gr.Column(scale=1, min_width=220):
            direction = gr.Radio([(label, code) for code, label in DIRECTION_LABELS.items()], value="de-en",
                                 label="Direction", elem_id="direction")
            button = gr.Button("Translate", variant="primary", elem_id="translate")
    with gr.Row():
        for code, label in DIRECTION_LABELS.items():
            sentences = [[text] for text, example_direction in EXAMPLES if example_direction == code]
            with gr.Column(min_width=300):
                examples = gr.Examples(sentences, inputs=[source], examples_per_page=len(sentences),
                                       label=f"{label} examples (click one, then Translate)")
            # an example also sets its direction
            examples.load_input_event.then(functools.partial(str, code), None, direction, queue=False,
                                           show_progress="hidden", **PRIVATE)
    return source, direction, button


def build(checkpoint: Checkpoint | None, load_error: str, runner: Runner | None = None) -> tuple[gr.State, object]:
    """The header and the Translate action -> (the trace state, the Translate event)."""
    trace = gr.State(None)  # this user's TranslationTrace
    gr.Markdown(INTRO)
    gr.Markdown(f"⚠️ **No model loaded.** {html.escape(load_error)}", elem_id="checkpoint-error",
                visible=bool(load_error))
    source, direction, button = input_row()
    with gr.Row(equal_height=False):
        translation = gr.Textbox(label="Translation (greedy)", interactive=False, elem_id="translation", scale=4)
        download = gr.DownloadButton("Download trace (JSON)", interactive=False, elem_id="download-trace",
                                     scale=1, min_width=180)
    tokens = gr.HTML(elem_id="tokens")
    notice = gr.Markdown(elem_id="notice")

    def on_translate(text, direction_value):
        return translate_text(checkpoint, text, direction_value, load_error, runner)

    # preprocess=False: API clients may send "de-en" as well as the label; translate_text checks both.
    event = gr.on([button.click, source.submit], on_translate, [source, direction], [trace, translation, download],
                  api_name="translate", preprocess=False)
    event.success(lambda: gr.DownloadButton(interactive=True), None, download, queue=False, **PRIVATE)
    event.success(lambda new: {tokens: tokens_html(new), notice: notice_markdown(new)}, trace, [tokens, notice],
                  **PRIVATE)
    return trace, event
