"""The session: the checkpoint, the Translate action and its trace file, and the page's header.

Translate runs the model once (`model.decoding.greedy.translate`, Figure 1 of "Attention Is All You Need")
and keeps the whole `TranslationTrace` in the user's `gr.State`; every tab then draws from that
trace. `build` lays out the header (a one-line introduction, the examples menu, sentence, translation,
direction; the download and the tokens are placed below the figure)
and wires Translate (the public API of the same action is ui/api.py).
"""

from __future__ import annotations

import functools
import html
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import gradio as gr

from model import Checkpoint, CheckpointError, TranslationTrace, load_checkpoint
from model.checkpoints.catalogue import OWN
from model.text import limits
from model.text.language import GuardRail, guard_rails
from model.text.special_tokens import END_TOKENS

from .common import PRIVATE, chips, set_initial
from serving import ExampleCache, Runner

from .runner import model_event, write_trace_file
from .text import DIRECTION_LABELS, EXAMPLES, INTRO, example_label

NO_MODEL_HINT = (
    "Train one, or point the app at one with --checkpoint DIR, --hub REPO_ID, "
    "$ATTENTION_EXPLORER_CHECKPOINT or $ATTENTION_EXPLORER_HUB."
)


# --------------------------------------------------------------------------- the model and files
@functools.lru_cache(maxsize=4)
def load_model(source: str, hub: bool = False, device: str = "cpu") -> Checkpoint:
    """Load a checkpoint once per process (on `device`); it is shared read-only by every user (eval mode, no grad)."""
    return load_checkpoint(source, hub=hub, device=device)


def open_checkpoint(source: str | Path, hub: bool = False, device: str = "cpu") -> tuple[Checkpoint | None, str]:
    """(checkpoint, '') or (None, what went wrong): a missing or broken checkpoint does not stop the app."""
    try:
        return load_model(str(source), hub, device), ""
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
    """The lean trace JSON (serving/wire.py) in a fresh file for the download button and the API."""
    return write_trace_file(trace)


def check_input(runner: Runner | None, text: str | None, direction: str, load_error: str = "") -> str:
    """Validate the Translate inputs without running the model -> the direction code; gr.Error if bad."""
    if runner is None:
        raise gr.Error(f"No model is loaded: {load_error}")
    code = parse_direction(direction)
    if text is not None and not isinstance(text, str):  # API clients can send any JSON value
        raise gr.Error(f"The text must be a string, not {type(text).__name__}.")
    if not text or not text.strip():
        raise gr.Error("The text box is empty: type a sentence to translate.")
    if len(text) > limits.MAX_INPUT_CHARS:
        raise gr.Error(
            f"The text is {len(text):,} characters long; the limit is "
            f"{limits.MAX_INPUT_CHARS:,} characters (MAX_INPUT_CHARS). Shorten it and try again."
        )
    return code


EXAMPLE_TRACES = ExampleCache(EXAMPLES)  # the examples menu's sentences: computed once per model, never on a GPU


def translate_trace(runner: Runner | None, text: str | None, direction: str, load_error: str = "") -> TranslationTrace:
    """Validate, then translate through the page's runner (None: no model loaded); a built-in example comes from
    memory (serving/example_cache.py). Bad input raises gr.Error with a message for the page and API clients."""
    code = check_input(runner, text, direction, load_error)
    return EXAMPLE_TRACES.translate(runner, text, code)  # bad input: a gr.Error with the model's message


def translate_text(
    runner: Runner | None, text: str | None, direction: str, load_error: str = ""
) -> tuple[TranslationTrace, str, str]:
    """The Translate action (also share links and the start-up example): validate, run the model once through
    the page's runner (None: no model loaded), -> (trace, translation, trace JSON path). A built-in example is
    answered from memory (serving/example_cache.py).

    Bad input raises gr.Error with a message for the page (a notice) and for API clients.
    """
    return translate_checked(runner, text, check_input(runner, text, direction, load_error))


def translate_checked(runner: Runner, text: str, code: str) -> tuple[TranslationTrace, str, str]:
    """translate_text of an input `check_input` has passed (direction `code`): the model's run alone."""
    trace = EXAMPLE_TRACES.translate(runner, text, code)  # bad input: a gr.Error with the model's message
    return trace, trace.translation, write_trace_json(trace)


# --------------------------------------------------------------------------- what the header shows
def tokens_html(trace: TranslationTrace | None) -> str:
    if trace is None:
        return ""
    return (
        f'<div class="token-row"><span class="label">Source ({len(trace.source_tokens)})</span>'
        f"{chips(trace.source_tokens)}</div>"
        f'<div class="token-row"><span class="label">Output ({trace.num_steps})</span>'
        f"{chips(trace.output_tokens)}</div>"
    )


def guard_rail_notes(trace: TranslationTrace) -> list[GuardRail]:
    own, translation = trace.model == OWN.key, trace.translation
    return guard_rails(trace.source_text, trace.source_tokens, trace.direction, own_model=own, translation=translation)


def end_token(trace: TranslationTrace) -> str:
    """The end-of-sentence token as the model that wrote `trace` spells it ("[EOS]", OPUS-MT's "</s>")."""
    return END_TOKENS.get(trace.model, END_TOKENS["own"])


def notice_markdown(trace: TranslationTrace | None) -> str:
    """Visible notices about limits and guard rails that shaped this translation ('' when there are none)."""
    if trace is None:
        return ""
    notes = [f"⚠️ {rail.message}" for rail in guard_rail_notes(trace)]
    if trace.source_truncated:
        notes.append(
            f"⚠️ The source was cut to its first **{limits.MAX_SOURCE_TOKENS} subword tokens** "
            "(MAX_SOURCE_TOKENS); only that part was translated."
        )
    budget = f"the length budget is 2 × source + 10, at most {limits.MAX_TARGET_TOKENS} = MAX_TARGET_TOKENS"
    if trace.stopped_by == "max_length":
        notes.append(
            f"⚠️ Decoding stopped after **{trace.num_steps} tokens** without producing `{end_token(trace)}` ({budget})."
        )
    if trace.stopped_by == "eos_at_limit":
        notes.append(
            f"⚠️ Decoding reached its length budget after **{trace.num_steps} tokens** ({budget}): the model chose "
            f"no end, so its decoding rule wrote `{end_token(trace)}` at the last step (forced_eos_token_id)."
        )
    return "\n\n".join(notes)


def switch_direction(trace: TranslationTrace | None) -> str | None:
    """The direction the guard rails suggest instead of the trace's (None if the language looks right)."""
    if trace is None:
        return None
    return next((rail.switch_to for rail in guard_rail_notes(trace) if rail.switch_to), None)


# --------------------------------------------------------------------------- the header
@dataclass(frozen=True)
class Header:
    """The header's components: the sentence, the result, the notices, and the Translate event."""

    trace: gr.State  # this user's TranslationTrace (None before the first translation and after an error)
    source: gr.Textbox
    direction: gr.Radio
    translation: gr.Textbox
    download: gr.DownloadButton
    tokens: gr.HTML
    notice: gr.Markdown
    switch: gr.Button  # "translate as the other direction": shown when the language looks wrong
    go: gr.State  # a counter: every change translates the sentence in the box (examples, the switch)
    button: gr.Button  # Translate
    event: object  # the Translate event; its .success follows every new trace

    def result(self, trace: TranslationTrace, path: str | None) -> dict:
        """Updates that show a trace (path: its JSON file for the download button)."""
        switch_to = switch_direction(trace)
        label = f"Translate as {DIRECTION_LABELS[switch_to]} instead" if switch_to else "Switch direction"
        return {
            self.trace: trace,
            self.translation: trace.translation,
            self.download: gr.DownloadButton(value=path, interactive=path is not None),
            self.tokens: tokens_html(trace),
            self.notice: notice_markdown(trace),
            self.switch: gr.Button(label, visible=switch_to is not None),
        }

    def after_translate(self, trace: TranslationTrace) -> dict:
        """After /translate succeeded (it showed the notices): the tokens and switch of the new trace, its
        download enabled."""
        shown = self.result(trace, None)
        return {
            self.download: gr.DownloadButton(interactive=True),
            **{component: shown[component] for component in (self.tokens, self.switch)},
        }

    def prefill(self, trace: TranslationTrace, path: str, view) -> None:
        """The page arrives showing `trace` (its JSON file at `path`): ui/share.py's first view. Not the sentence:
        an input of the /translate endpoint with a value in the page's config would be optional for API clients
        (with the example as its default); the page's load event fills it."""
        set_initial(self.trace, trace)
        set_initial(self.direction, trace.direction)
        set_initial(self.translation, trace.translation)
        set_initial(self.download, path, interactive=True)
        set_initial(self.tokens, tokens_html(trace))

    def cleared(self, notice: str = "") -> dict:
        """Updates that remove every trace of the previous result (before a run, after an error)."""
        return {
            self.trace: None,
            self.translation: "",
            self.download: gr.DownloadButton(value=None, interactive=False),
            self.tokens: "",
            self.notice: notice,
            self.switch: gr.Button(visible=False),
        }


def input_row() -> tuple[gr.Textbox, gr.Radio, gr.Button, gr.Textbox]:
    """One row: the sentence box, the translation, the direction and the Translate button (on a phone they
    stack, the translation hidden: the player bar says it there)."""
    with gr.Row(equal_height=False, elem_id="input-row"):
        # lines=1: Enter translates (Gradio submits on Enter only for one-line boxes); Shift+Enter breaks a line
        source = gr.Textbox(
            label="Sentence",
            lines=1,
            max_lines=8,
            elem_id="source",
            scale=4,
            min_width=300,
            placeholder="Type a German sentence…",
        )
        translation = gr.Textbox(
            label="Translation (greedy)", interactive=False, elem_id="translation", scale=4, min_width=300, max_lines=2
        )  # a long one scrolls in its box
        direction = gr.Radio(
            [(label, code) for code, label in DIRECTION_LABELS.items()],
            value="de-en",
            label="Direction",
            elem_id="direction",
            scale=0,
            min_width=360,
        )
        button = gr.Button("Translate", variant="primary", elem_id="translate", scale=0, min_width=130)
    return source, direction, button, translation


def examples_menu() -> gr.Dropdown:
    """The examples as one menu (its value: an index into EXAMPLES); picking one translates it."""
    choices = [(example_label(text, code), str(index)) for index, (text, code) in enumerate(EXAMPLES)]
    return gr.Dropdown(
        [("Try an example…", "")] + choices,
        value="",
        label="Examples",
        show_label=False,
        container=False,
        elem_id="examples",
        scale=2,
        min_width=260,
        filterable=False,
    )


def build(runner: Runner | None, load_error: str, model_choice: Callable[[], gr.Dropdown] | None = None) -> Header:
    """The header and the Translate action. The download button and the token chips
    are made unrendered: the page places them below the figure (ui/app.py renders them).
    model_choice: builds the model choice, placed beside the examples menu (ui/models.py)."""
    trace, go = gr.State(None), gr.State(0)
    with gr.Row(equal_height=False, elem_id="intro-row"):
        gr.Markdown(INTRO, elem_id="intro")
        if model_choice is not None:
            model_choice()
        examples = examples_menu()
    gr.Markdown(
        f"⚠️ **No model loaded.** {html.escape(load_error)}", elem_id="checkpoint-error", visible=bool(load_error)
    )
    source, direction, button, translation = input_row()
    download = gr.DownloadButton(
        "Download trace (JSON)", interactive=False, elem_id="download-trace", scale=1, min_width=180, render=False
    )
    tokens = gr.HTML(elem_id="tokens", render=False)
    notice = gr.Markdown(label="Notices", elem_id="notice")  # the label names it for API clients (not shown)
    switch = gr.Button("Switch direction", visible=False, elem_id="switch-direction", size="sm", variant="secondary")
    partial = Header(trace, source, direction, translation, download, tokens, notice, switch, go, button, None)
    header = Header(**{**partial.__dict__, "event": wire(partial, runner, load_error, button)})
    # an example sets the sentence and its direction, and translates
    examples.input(
        lambda choice, count: (
            {source: EXAMPLES[int(choice)][0], direction: EXAMPLES[int(choice)][1], go: count + 1}
            if choice not in (None, "")
            else gr.skip()  # dismissed without a choice: nothing changes
        ),
        [examples, go],
        [source, direction, go],
        show_progress="hidden",
        **PRIVATE,
    )
    switch.click(
        lambda value, count: {direction: "en-de" if parse_direction(value) == "de-en" else "de-en", go: count + 1},
        [direction, go],
        [direction, go],
        **PRIVATE,
    )
    return header


def wire(header: Header, runner: Runner | None, load_error: str, button: gr.Button):
    """Translate: clear the old result (or say why the input is refused), run the model (the public endpoint),
    then show the result. (A .then after a failed run is not run by the page, so the check comes first.)"""
    shown = [header.trace, header.translation, header.download, header.tokens, header.notice, header.switch]
    verdict = gr.State(None)  # `before`'s verdict on the click's input, read by `translate` (hidden from the API)

    def translate_page(text: str, direction: str, verdict: tuple | None = None):
        """The page's Translate: (trace, translation, trace file, notices). The public API is ui/api.py."""
        if verdict is not None and verdict[:2] == (text, direction):  # the click's input, checked by `before`
            if verdict[2] is None:  # refused: `before` has said why in the notice, the one message
                return gr.skip(), gr.skip(), gr.skip(), gr.skip()
            code = verdict[2]
        else:
            code = check_input(runner, text, direction, load_error)
        trace, translation, path = translate_checked(runner, text, code)
        return trace, translation, path, notice_markdown(trace)

    def before(text, direction):
        """The click's one input check, its verdict kept for `translate` as (text, direction, code or None). A
        refused input clears the old result and says why in the notice area, its one message. A good one
        keeps the result on screen until the new one replaces it (every view at once, one redraw);
        if the run then fails, `.failure` below clears it."""
        try:
            return {header.notice: "", verdict: (text, direction, check_input(runner, text, direction, load_error))}
        except gr.Error as error:
            return {**header.cleared(f"⚠️ {error.message}"), verdict: (text, direction, None)}

    # queued (not queue=False): only queued events report a changed gr.State, which redraws and empties the views
    cleared = gr.on(
        [button.click, header.source.submit, header.go.change],
        before,
        [header.source, header.direction],
        [*shown, verdict],
        show_progress="hidden",
        **PRIVATE,
    )
    # page plumbing: the public /translate is ui/api.py's (no gr.State outputs, no trace file unless asked)
    event = cleared.then(
        translate_page,
        [header.source, header.direction, verdict],
        [header.trace, header.translation, header.download, header.notice],
        **model_event(api_name="translate_page", preprocess=False, **PRIVATE),
    )
    # a run that fails (a worker crash, say) leaves no stale result; its message is the error toast
    event.failure(
        lambda: {k: v for k, v in header.cleared().items() if k is not header.notice},
        None,
        [header.trace, header.translation, header.download, header.tokens, header.switch],
        show_progress="hidden",
        **PRIVATE,
    )
    return event  # its one .success listener (Header.after_translate) is wired with the page (ui/app.py)
