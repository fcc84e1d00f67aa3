"""Compare's second sentence (ui/compare.py): translated in the first's direction, what stands in the way of a
comparison (said in the sentences' own language), the source token both share, and where the tab opens on a pair
(`model.analysis.compare`, sections 3.2.2 and 3.2.3)."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from model import TranslationTrace
from model.analysis.compare import Comparison, compare_token, shared_source_tokens
from model.text.language import written_in
from model.text.tokenizer import LANGUAGES
from serving.translation import Translator

from .compare_views import token_step
from .redraw import trace_key
from .text import BLOG_PAIR, BLOG_REFERENTS, DIRECTION_LABELS

PREFERRED_TOKEN = "▁it"  # picked first where both sentences have it (the blog post's token)


@dataclass(frozen=True, eq=False)
class Second:
    """The second sentence's trace, or why there is none (note). eq=False: a gr.State sees a new one by
    identity; its repr names it by value for the redraw's keys (a trace's own repr is every array)."""

    trace: TranslationTrace | None = None
    note: str = ""

    def __repr__(self) -> str:
        return f"Second({trace_key(self.trace)!r}, {self.note!r})"


def compare_with(translator: Translator, first: TranslationTrace | None, text: str | None) -> Second:
    """The second sentence translated in the first's direction by the first's model (the one Translate action),
    or the one message that says why not."""
    if first is None:
        return Second(note="⚠️ Translate a first sentence above, then compare a second one with it.")
    if not str(text or "").strip():
        return Second(note="⚠️ The second sentence is empty: type a sentence to compare with the first.")
    translated = translator.translate(text, first.direction, first.model)
    return Second(note=f"⚠️ {translated.refused}") if translated.refused else Second(translated.trace)


def source_language(trace: TranslationTrace) -> str:
    """The language a trace translates from ('de' or 'en')."""
    return trace.direction.split("-")[0]


def problem(first: TranslationTrace | None, second: Second | None) -> str:
    """'' when the two sentences can be compared, else the one message the tab shows. Where the second was translated
    in another direction, the advice follows the language it is written in (`written_in`): translate it in the
    first's direction when it is in the first's language, else type a sentence in that language."""
    if first is None:
        return "Translate a first sentence above (or open the blog post's pair), then compare a second one with it."
    wanted = LANGUAGES[source_language(first)]
    if second is None or (second.trace is None and not second.note):
        return (
            f"To compare your sentence with another, type a second sentence in {wanted} and press **Compare**, or open "
            "the blog post's pair."
        )
    if second.trace is None:
        return second.note
    if second.trace.direction != first.direction:
        now, then = DIRECTION_LABELS[first.direction], DIRECTION_LABELS[second.trace.direction]
        written = written_in(second.trace.source_text, source_language(second.trace))
        said = f"⚠️ The first sentence is translated {now} and the second {then}: "
        if written == source_language(first):
            return said + f"press **Compare** to translate the second {now} too."
        return (
            said
            + f"the second is written in {LANGUAGES[written]}; type a second sentence in {wanted} and press **Compare**."
        )
    return ""


def pick_token(first: TranslationTrace, second: TranslationTrace, chosen: str | None) -> str | None:
    """The token compared: the chosen one while both sentences have it, else "▁it", else their first shared one."""
    shared = shared_source_tokens(first, second)
    if chosen in shared:
        return chosen
    return PREFERRED_TOKEN if PREFERRED_TOKEN in shared else next(iter(shared), None)


def token_update(first: TranslationTrace | None, second: Second | None, chosen: str | None) -> dict:
    """The token picker: the source tokens the two sentences share (none while they cannot be compared)."""
    if problem(first, second):
        return gr.update(choices=[], value=None)
    return gr.update(choices=shared_source_tokens(first, second.trace), value=pick_token(first, second.trace, chosen))


def comparison(first: TranslationTrace, second: TranslationTrace, chosen: str | None) -> Comparison | None:
    """The comparison of the picked token (None: the sentences share no source token)."""
    token = pick_token(first, second, chosen)
    return None if token is None else compare_token(first, second, token)


def pair_referents(first: TranslationTrace, second: TranslationTrace) -> tuple[str, ...] | None:
    """The words the token may refer to where the two are the blog post's pair (the summary says where it looks);
    None for any other pair."""
    return BLOG_REFERENTS if (first.source_text, second.source_text) == BLOG_PAIR[:2] else None


@dataclass(frozen=True)
class Opening:
    """Where a new comparison opens: the head that differs most (kind, 1-based layer, head "h") at the step that
    translates the token in the first sentence (1-based)."""

    kind: str
    layer: int
    head: str
    step: int


def opening(first: TranslationTrace | None, second: Second | None, chosen: str | None) -> Opening | None:
    """The top-ranked head and the token's step of this comparison (None when there is nothing to compare)."""
    if problem(first, second):
        return None
    result = comparison(first, second.trace, chosen)
    if result is None:
        return None
    top = result.ranking[0]
    return Opening(top.kind, top.layer + 1, str(top.head + 1), token_step(result))
