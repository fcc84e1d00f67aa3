"""The one Translate action: (text, direction, model) -> what the page, the API and the MCP tools show.

Every way a sentence reaches a model goes through `Translator.translate`: the page's Translate button, an example,
the direction switch, a share link, Compare's second sentence and the blog post's pair, `/translate` and
`/translation_trace`. It checks the input once (`refusal` and `Translator.refusal_of_model`: any JSON value an API
client sends, a refused value echoed short and no server path in the words), answers the built-in examples from memory
(serving/example_cache.py), runs greedy decoding otherwise (Figure 1 of "Attention Is All You Need", through the
model's runner) and says what shaped the result (`notices`): the same words on the page and in the API's answer.

A refused input is an answer, not an exception: `Translated.refused` holds the one message and no trace, so the
page keeps what it showed and says why; the API raises that message as its error, titled "Input not accepted", or
"No model loaded" where the server lacks the model asked for, in the API's own words where the page's speak of its
controls (`API_WORDS`: an empty text is the empty `text` parameter, not the text box).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import gradio as gr

from model import TranslationTrace
from model.checkpoints.catalogue import MODELS, OWN
from model.text import limits
from model.text.language import GuardRail, guard_rails
from model.text.special_tokens import END_TOKENS

from .example_cache import ExampleCache
from .runner import BAD_INPUT_TITLE, NO_MODEL_TITLE, Runner, shown_value, without_paths

RAILS_KEPT = 256  # translated inputs whose guard rails are kept (tripped_rails)

DIRECTIONS = {"de-en": "German → English", "en-de": "English → German"}  # code -> label, the page's order


def other_direction(direction: str) -> str:
    """The opposite direction of a code ('de-en' <-> 'en-de')."""
    source, target = direction.split("-")
    return f"{target}-{source}"


def parse_direction(value: object) -> str | None:
    """'de-en', 'en-de', their labels or spellings such as 'de->en' -> the code; None for anything else."""
    text = str(value or "").strip().lower().replace("->", "→")
    for code, label in DIRECTIONS.items():
        if text in (code, label.lower(), code.replace("-", "→"), code.replace("-", "_")):
            return code
    return None


def unknown_direction(value: object) -> str:
    """The one message for a direction that is neither code nor label (the value echoed short: `shown_value`)."""
    choices = ", ".join(f"{code!r} / {label!r}" for code, label in DIRECTIONS.items())
    if value is not None and not isinstance(value, str):  # API clients can send any JSON value
        return f"The direction must be a string, not {json_type(value)}: use one of {choices}."
    return f"Unknown direction {shown_value(value)}: use one of {choices}."


def json_type(value: object) -> str:
    """What a client sent, in JSON's words (a list is an array, a dict an object)."""
    names = {bool: "a boolean", int: "a number", float: "a number", list: "an array", dict: "an object"}
    return names.get(type(value), f"a {type(value).__name__}")


def input_limits() -> str:
    """The input limits in words, as the page, the API's descriptions and the refusals say them."""
    return (
        f"at most {limits.MAX_INPUT_CHARS:,} characters, cut to {limits.MAX_SOURCE_TOKENS} subword tokens; "
        f"the output stops after {limits.MAX_TARGET_TOKENS} tokens"
    )


EMPTY_TEXT = "The text box is empty: type a sentence to translate."  # the page's words
# a refusal as the API says it, where the page's words name the page's controls (an API client has no text box)
API_WORDS = {EMPTY_TEXT: 'The "text" parameter is empty: send the German or English sentence to translate.'}


def refusal(text: object, direction: object) -> str:
    """Why this input cannot be translated ('' when it can): the one check before any model runs."""
    if parse_direction(direction) is None:
        return unknown_direction(direction)
    if text is not None and not isinstance(text, str):  # API clients can send any JSON value
        return f"The text must be a string, not {json_type(text)}."
    if not text or not text.strip():
        return EMPTY_TEXT
    if len(text) > limits.MAX_INPUT_CHARS:
        return (
            f"The text is {len(text):,} characters long; the limit is {limits.MAX_INPUT_CHARS:,} characters. "
            "Shorten it and try again."
        )
    return ""


def end_token(trace: TranslationTrace) -> str:
    """The end-of-sentence token as the model that wrote `trace` spells it ("[EOS]", OPUS-MT's "</s>")."""
    return END_TOKENS.get(trace.model, END_TOKENS[OWN.key])


def guard_rail_notes(trace: TranslationTrace) -> tuple[GuardRail, ...]:
    """The guard rails (model/text/language.py) that this trace's input trips: computed once per input and output
    (a Translate's notices and the header's direction switch read the same checks)."""
    return tripped_rails(
        trace.source_text, tuple(trace.source_tokens), trace.direction, trace.model == OWN.key, trace.translation
    )


@functools.lru_cache(maxsize=RAILS_KEPT)
def tripped_rails(
    text: str, source_tokens: tuple[str, ...], direction: str, own_model: bool, translation: str
) -> tuple[GuardRail, ...]:
    """`guard_rails` of one translated input, kept for the RAILS_KEPT latest (the language detector is the
    costly part)."""
    return tuple(guard_rails(text, source_tokens, direction, own_model=own_model, translation=translation))


def notices(trace: TranslationTrace) -> tuple[str, ...]:
    """What shaped this translation, one plain sentence each (none for a short sentence the model ended itself)."""
    said = [rail.message for rail in guard_rail_notes(trace)]
    if trace.source_truncated:
        said.append(
            f"The source was cut to its first {limits.MAX_SOURCE_TOKENS} subword tokens; only that part was translated."
        )
    budget = f"the length budget is 2 × source + 10 tokens, at most {limits.MAX_TARGET_TOKENS}"
    if trace.stopped_by == "max_length":
        said.append(
            f"Decoding stopped after {trace.num_steps} tokens without the model writing {end_token(trace)} ({budget})."
        )
    if trace.stopped_by == "eos_at_limit":
        said.append(
            f"Decoding reached its length budget after {trace.num_steps} tokens ({budget}): the model chose no end, "
            f"so its decoding rule wrote {end_token(trace)} at the last step (forced_eos_token_id)."
        )
    return tuple(said)


def switch_direction(trace: TranslationTrace | None) -> str | None:
    """The direction the guard rails suggest instead of the trace's (None if the language looks right)."""
    if trace is None:
        return None
    return next((rail.switch_to for rail in guard_rail_notes(trace) if rail.switch_to), None)


@dataclass(frozen=True, eq=False)
class Translated:
    """One Translate action's answer: the trace, the step the page shows (its last: every output row), and the
    notices; or, for a refused input, `refused` (the one message) and no trace."""

    trace: TranslationTrace | None = None
    notices: tuple[str, ...] = ()
    refused: str = ""
    title: str = BAD_INPUT_TITLE  # the refusal's title: bad input, or NO_MODEL_TITLE (the server has none to run)

    @property
    def step(self) -> int:
        """The 1-based step the page lands on: the last, where the figure has a row per output token."""
        return self.trace.num_steps if self.trace is not None else 1

    @property
    def translation(self) -> str:
        return self.trace.translation if self.trace is not None else ""

    def checked(self) -> "Translated":
        """This result, or its refusal raised as the API's error (gr.Error): its one message, in the API's words
        (`API_WORDS`)."""
        if self.refused:
            raise gr.Error(API_WORDS.get(self.refused, self.refused), title=self.title, print_exception=False)
        return self

    def answer(self) -> dict:
        """The API's structured answer {"translation", "notices"}; a refused input raises its message (`checked`)."""
        self.checked()
        return {"translation": self.translation, "notices": list(self.notices)}


class Translator:
    """The one Translate action over the app's models (`runners`, by model key; `default`: the page's model).

    examples: the built-in (text, direction) pairs answered from memory after their first run.
    load_error: why no model is loaded (said instead of translating), '' when one is.
    """

    def __init__(
        self,
        runners: Mapping[str, Runner],
        default: str,
        examples: Iterable[tuple[str, str]] = (),
        load_error: str = "",
    ) -> None:
        self.runners, self.default, self.load_error = dict(runners), default, load_error
        self.cache = ExampleCache(examples)

    def runner_of(self, model: str | None) -> Runner | None:
        """The runner of `model` (None: the default's); None when that model is not loaded."""
        return self.runners.get(model or self.default)

    def refusal_of_model(self, model: object) -> str:
        """Why `model` (any value an API client sends; None: the default) cannot translate here ('' when it can)."""
        choices = ", ".join(map(repr, MODELS))
        if model is not None and not isinstance(model, str):
            return f"The model must be a string, not {json_type(model)}: use one of {choices}."
        key = model or self.default
        if key not in MODELS:
            return f"Unknown model {shown_value(key)}: use one of {choices}."
        if key in self.runners:
            return ""
        if not self.runners:
            return f"No model is loaded: {without_paths(self.load_error)}"
        return f"{MODELS[key].label} is not loaded on this server."

    def is_missing(self, model: object) -> bool:
        """Whether `model` names one of the app's models that this server has not loaded (not bad input)."""
        if model is not None and not isinstance(model, str):
            return False
        key = model or self.default
        return key in MODELS and key not in self.runners

    def translate(self, text: object, direction: object, model: object = None) -> Translated:
        """Check the input once (any JSON value an API client sends for any of the three), then translate it (a
        built-in example from memory) -> the trace and its notices, or the one message that says why not. A model
        that fails raises its gr.Error (serving/runner.py)."""
        said = self.refusal_of_model(model) or refusal(text, direction)
        if said:  # a model this server lacks is said first, under its own title
            return Translated(refused=said, title=NO_MODEL_TITLE if self.is_missing(model) else BAD_INPUT_TITLE)
        try:
            trace = self.cache.translate(self.runner_of(model), str(text), parse_direction(direction))
        except gr.Error as error:
            if error.title != BAD_INPUT_TITLE:  # the model's own refusal (e.g. a lone surrogate) is an answer
                raise
            return Translated(refused=error.message)
        return Translated(trace, notices(trace))
