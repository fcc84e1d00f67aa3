"""The session: the checkpoint, the page's header (introduction, examples, sentence, translation, direction,
notices) and its Translate actions.

Every way the header translates (the Translate button, Enter, an example, the direction switch, a direction picked
with a translation on screen) is one action of the page (ui/redraw.py) that calls the one Translate function
(`serving.translation.Translator`, Figure 1 of "Attention Is All You Need") and keeps the whole `TranslationTrace`
in the user's `gr.State`; the same answer draws every view from it. Picking the other direction swaps, as
translators do: the translation goes into the sentence box and is translated back at once, while the box holds the
sentence it translates; otherwise (no translation, an empty or edited box) the pick only sets the direction. A
refused input changes nothing but the notice: the previous translation, figure and step stay. The download and the
tokens are placed below the figure (ui/app.py).
"""

from __future__ import annotations

import functools
import html
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import gradio as gr

from model import Checkpoint, CheckpointError, TranslationTrace, load_checkpoint
from serving.translation import Translated, Translator, other_direction, switch_direction

from .common import Page, chips, markdown_text, set_initial
from .page_script import SHOW_VIEW_JS
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


# --------------------------------------------------------------------------- what the header shows
def write_trace_json(trace: TranslationTrace) -> str:
    """The lean trace JSON (serving/wire.py) in a fresh file for the download button."""
    return write_trace_file(trace)


def notice_markdown(notices) -> str:
    """Notices as the page shows them, one paragraph each, their words as written ('' when there are none)."""
    return "\n\n".join(f"⚠️ {markdown_text(notice)}" for notice in notices)


def tokens_html(trace: TranslationTrace | None) -> str:
    if trace is None:
        return ""
    return (
        f'<div class="token-row"><span class="label">Source ({len(trace.source_tokens)})</span>'
        f"{chips(trace.source_tokens)}</div>"
        f'<div class="token-row"><span class="label">Output ({trace.num_steps})</span>'
        f"{chips(trace.output_tokens)}</div>"
    )


# --------------------------------------------------------------------------- the header
@dataclass(frozen=True)
class Header:
    """The header's components: the sentence, the result and the notices."""

    trace: gr.State  # this user's TranslationTrace (None before the first translation)
    source: gr.Textbox
    direction: gr.Radio
    translation: gr.Textbox
    download: gr.DownloadButton
    tokens: gr.HTML
    notice: gr.Markdown
    switch: gr.Button  # "translate as the other direction": shown when the language looks wrong
    button: gr.Button  # Translate
    examples: gr.Dropdown

    def shown(self, trace: TranslationTrace | None) -> dict:
        """What the header shows of a trace (None: nothing): the translation, its tokens, its download, the switch."""
        if trace is None:
            return {
                self.translation: "",
                self.download: gr.update(value=None, interactive=False),
                self.tokens: "",
                self.switch: gr.update(visible=False),
            }
        switch_to = switch_direction(trace)
        label = f"Translate as {DIRECTION_LABELS[switch_to]} instead" if switch_to else "Switch direction"
        return {
            self.translation: trace.translation,
            self.download: gr.update(value=write_trace_json(trace), interactive=True),
            self.tokens: tokens_html(trace),
            self.switch: gr.update(value=label, visible=switch_to is not None),
        }

    def prefill(self, trace: TranslationTrace, path: str, view) -> None:
        """The page arrives showing `trace` (its JSON file at `path`): ui/share.py's first view. Not the sentence:
        the page's load event fills it (a value in the config would show before the visitor's own typing)."""
        set_initial(self.trace, trace)
        set_initial(self.direction, trace.direction)
        set_initial(self.translation, trace.translation)
        set_initial(self.download, path, interactive=True)
        set_initial(self.tokens, tokens_html(trace))


def answer(header: Header, step: gr.Slider, translated: Translated) -> dict:
    """What one Translate answer changes: the trace, the step (its last: a row per output token) and the notices;
    a refused input only says why, and everything else stays as it was."""
    if translated.refused:
        return {header.notice: f"⚠️ {markdown_text(translated.refused)}"}
    return {
        header.trace: translated.trace,
        step: translated.step,
        header.notice: notice_markdown(translated.notices),
    }


PLACEHOLDERS = {"de-en": "Type a German sentence…", "en-de": "Type an English sentence…"}
SWAP_INFO = "Picking the other one swaps the sentence and its translation."  # what a pick does (`swaps`)


def swaps(trace: TranslationTrace | None, text: str | None, direction: str) -> bool:
    """Whether picking `direction` swaps the sentence and its translation: a translation is on screen, of the other
    direction, and the box still holds the sentence it translates (an empty or edited box keeps what it holds)."""
    return (
        trace is not None
        and bool(trace.translation.strip())
        and trace.direction != direction
        and (text or "").strip() == trace.source_text.strip()
    )


def placeholder_for(direction: str | None) -> str:
    """What the empty sentence box asks for: a sentence in the source language of `direction`."""
    return PLACEHOLDERS.get(direction or "", PLACEHOLDERS["de-en"])


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
            placeholder=placeholder_for("de-en"),
        )
        translation = gr.Textbox(
            label="Translation (greedy)", interactive=False, elem_id="translation", scale=4, min_width=300, max_lines=2
        )  # a long one scrolls in its box
        direction = gr.Radio(
            [(label, code) for code, label in DIRECTION_LABELS.items()],
            value="de-en",
            label="Direction",
            info=SWAP_INFO,
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


def build(load_error: str, model_choice: Callable[[], gr.Dropdown] | None = None) -> Header:
    """The header's components (wired by `wire` once the page exists). The download button and the token chips
    are made unrendered: the page places them below the figure (ui/app.py renders them).
    model_choice: builds the model choice, placed beside the examples menu (ui/models.py)."""
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
    notice = gr.Markdown(label="Notices", elem_id="notice")
    switch = gr.Button("Switch direction", visible=False, elem_id="switch-direction", size="sm", variant="secondary")
    return Header(gr.State(None), source, direction, translation, download, tokens, notice, switch, button, examples)


def wire(page: Page, header: Header, translator: Translator) -> None:
    """The header's actions, each one listener that translates once and draws the page from the answer: Translate
    (the button, Enter), an example (it sets the sentence and its direction), the direction switch, and a direction
    picked (a swap where `swaps`, else the direction alone)."""

    def translate(text: str, direction: str) -> dict:
        return answer(header, page.step, translator.translate(text, direction))

    def example(choice: str | None) -> dict:
        if choice in (None, "") or not str(choice).isdigit() or int(choice) >= len(EXAMPLES):
            return gr.skip()  # dismissed without a choice: nothing changes
        text, direction = EXAMPLES[int(choice)]
        return {header.source: text, header.direction: direction, **translate(text, direction)}

    def switch(text: str, direction: str) -> dict:
        flipped = other_direction(direction)
        translated = translator.translate(text, flipped)
        changed = {} if translated.refused else {header.direction: flipped}  # refused: nothing but the notice
        return {**changed, **answer(header, page.step, translated)}

    def pick_direction(text: str, direction: str, trace: TranslationTrace | None) -> dict:
        if not swaps(trace, text, direction):
            return {}  # the direction alone: Translate uses it, the box asks for its language (the follower below)
        back = translate(trace.translation, direction)
        return back if header.trace not in back else {header.source: trace.translation, **back}  # refused: notice

    outputs = [header.trace, page.step, header.notice]
    # then the view is placed under the player bar (ui/js/scroll.js)
    run = model_event(show_progress="minimal", show_progress_on=[header.translation], then_js=SHOW_VIEW_JS)
    page.listen(
        [header.button.click, header.source.submit], translate, [header.source, header.direction], outputs, **run
    )
    page.listen(header.examples.input, example, [header.examples], [header.source, header.direction, *outputs], **run)
    page.listen(header.switch.click, switch, [header.source, header.direction], [header.direction, *outputs], **run)
    page.follow([header.trace], list(header.shown(None)), lambda values: header.shown(values[header.trace]))
    stay = {name: option for name, option in run.items() if name != "then_js"}  # a pick: the page stays where it is
    picked = [header.source, header.direction, header.trace]
    page.listen(header.direction.input, pick_direction, picked, [header.source, *outputs], **stay)
    page.follow(  # the sentence box speaks the direction on screen
        [header.direction],
        [header.source],
        lambda values: {header.source: gr.update(placeholder=placeholder_for(values[header.direction]))},
    )
