"""Honest guard rails: is the input what this model was trained on? (plain Python, no Gradio)

The model of "Attention Is All You Need" translates what it was trained on (section 5.1: the training
data); ours saw short German and English sentences (Multi30k captions and Tatoeba). Four checks:

- **Wrong source language.** The language tag `<2en>`/`<2de>` only names the *target*; typed English under
  German → English comes back in English-ish German. We ask py3langid (langid.py's model, BSD-3-Clause,
  its naive Bayes model ships inside the 4.6 MB wheel, runs offline in ~1 ms per sentence), restricted
  to German and English. The model's own signal would need a trained model to mean anything, and
  the test fixtures are untrained; an independent classifier is checkable.
- **Mostly byte-fallback tokens** (`<0xF0>`: emoji, Chinese): the vocabulary has no pieces for them. A
  tokenizer without byte fallback (OPUS-MT's) writes such characters as its unknown token `<unk>`, flagged alike.
- **Markup or mostly symbols** (`<b>Hallo</b>`, `#$%&*`): captions and Tatoeba hold no HTML tags, and a text
  whose characters are mostly not letters is not a sentence; the model answers either with fluent nonsense.
- **Much longer than the training data** (the own model's: `own_model`): 99.9 % of the 364,640 training
  sentences (both sides of
  Multi30k train + the large Tatoeba set's training part) have at most LONG_SOURCE_SUBWORDS = 37 subword
  tokens (99th percentile 26, median 8), measured with the shipped tokenizer (`python3 -m
  scripts.sentence_lengths --tokenizer checkpoints/de-en-small/tokenizer.json --data ../shared/data/multi30k/train
  data/tatoeba/train.tsv`).
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from model.text import marian_tokenizer, tokenizer
from model.text.special_tokens import SPECIAL_TOKENS
from model.text.tokenizer import LANGUAGES

LONG_SOURCE_SUBWORDS = 37  # the 99.9th percentile of training sentence length in subwords: longer is flagged
BYTE_FALLBACK_SHARE = 0.5  # at least this share of the subwords are raw bytes: flag it
LANGUAGE_CONFIDENCE = 0.95  # P(other language) under py3langid restricted to {de, en}
MIN_LETTERS = 8  # fewer letters than this ("Hallo", "OK") is too little evidence to say anything
BYTE_TOKEN = re.compile(r"^<0x[0-9A-Fa-f]{2}>$")
UNKNOWN_TOKENS = frozenset({tokenizer.UNK, marian_tokenizer.UNK})  # a piece the vocabulary does not have
MARKUP = re.compile(r"<\s*/?\s*[A-Za-z][A-Za-z0-9-]*(\s[^<>]*)?/?\s*>|&[A-Za-z]+;|&#x?[0-9A-Fa-f]+;")  # a tag or entity
MIN_SYMBOLS = 3  # a text of more symbols (neither letters, digits nor spaces) than letters, and at least this
#  many, is mostly symbols ("#$%&*"; not "1234567890" or "Hallo?!")
_LOCK = threading.Lock()


@dataclass(frozen=True)
class GuardRail:
    """One warning about the input: `kind` in {"language", "bytes", "markup", "symbols", "long"}; `message` in plain
    words (no Markdown: the page and an API answer show it as it is); `switch_to` names the direction
    ("de-en"/"en-de") that would fit the detected language, else None."""

    kind: str
    message: str
    switch_to: str | None = None


@functools.lru_cache(maxsize=1)
def _identifier():
    """py3langid's identifier limited to our two languages (loaded once: ~1.5 s), or None if not installed."""
    try:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier
    except ImportError:
        return None
    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    identifier.set_languages(list(LANGUAGES))
    return identifier


def detect_language(text: str) -> tuple[str, float] | None:
    """('de' or 'en', probability between the two) or None (no detector, or too few letters to judge)."""
    if sum(ch.isalpha() for ch in text) < MIN_LETTERS:
        return None
    with _LOCK:  # the identifier keeps no per-call state, but its first load must happen once
        identifier = _identifier()
    if identifier is None:
        return None
    language, probability = identifier.classify(text)
    return str(language), float(probability)


def written_in(text: str, fallback: str) -> str:
    """The language `text` is written in ('de' or 'en'): py3langid's guess where it is sure (LANGUAGE_CONFIDENCE),
    else `fallback` (the language it was translated from)."""
    guess = detect_language(text)
    return guess[0] if guess is not None and guess[1] >= LANGUAGE_CONFIDENCE else fallback


def subwords(source_tokens: Sequence[str]) -> list[str]:
    """The source tokens without the language tag and the end token (an unknown token is one of its pieces)."""
    return [token for token in source_tokens if token not in SPECIAL_TOKENS or token in UNKNOWN_TOKENS]


def longer_than_training(source_tokens: Sequence[str]) -> int:
    """The source's subword count when it is over LONG_SOURCE_SUBWORDS (much longer than training), else 0."""
    length = len(subwords(source_tokens))
    return length if length > LONG_SOURCE_SUBWORDS else 0


def byte_share(source_tokens: Sequence[str]) -> float:
    """Share of the subwords that are byte-fallback tokens such as `<0xF0>`, or unknown tokens where the tokenizer
    has no byte fallback (0 for an empty source)."""
    pieces = subwords(source_tokens)
    unknown = sum(bool(BYTE_TOKEN.match(token)) or token in UNKNOWN_TOKENS for token in pieces)
    return unknown / len(pieces) if pieces else 0.0


def mostly_symbols(text: str) -> bool:
    """More symbols (characters neither letters, digits nor spaces) than letters, and at least MIN_SYMBOLS."""
    symbols = sum(not (c.isalnum() or c.isspace()) for c in text)
    return symbols >= MIN_SYMBOLS and symbols > sum(c.isalpha() for c in text)


def what_came_out(translation: str, direction: str) -> str:
    """What the model made of an input in the wrong language, read from its output's language (an input in the
    wrong language is in the direction's target language: there are two)."""
    source, target = direction.split("-")
    guess = detect_language(translation)
    written = guess[0] if guess is not None and guess[1] >= LANGUAGE_CONFIDENCE else None
    if written == source:
        return (
            f"The model wrote {LANGUAGES[source]}: it translated the other way round, following the input's "
            "language rather than the direction."
        )
    if written == target:
        return (
            f"The model wrote {LANGUAGES[target]}, the input's own language: it copied or reworded the input "
            "rather than translating it."
        )
    return f"Its output is not clearly {LANGUAGES[source]} or {LANGUAGES[target]}."


def guard_rails(
    text: str, source_tokens: Sequence[str], direction: str, own_model: bool = True, translation: str | None = None
) -> list[GuardRail]:
    """Warnings about a translated input: mostly bytes, markup or mostly symbols, else the wrong language (with
    `translation`, what the model made of it: `what_came_out`); much longer than training.

    own_model: the input went to this project's own model, whose training data LONG_SOURCE_SUBWORDS measures and
    whose source starts with the target's tag; False for a model trained elsewhere (OPUS-MT: no length rail)."""
    source, target = direction.split("-")
    rails = []
    share = byte_share(source_tokens)
    if share >= BYTE_FALLBACK_SHARE:
        bytes_ = any(BYTE_TOKEN.match(token) for token in source_tokens)
        pieces = "are raw byte tokens like <0xF0>" if bytes_ else f"are the unknown token {marian_tokenizer.UNK}"
        rails.append(
            GuardRail(
                "bytes",
                f"Most of this input ({share:.0%} of its subwords) {pieces}: the vocabulary has no pieces for "
                "these characters (emoji, Chinese, …). The model never learned them; expect fluent nonsense.",
            )
        )
    elif MARKUP.search(text):
        rails.append(
            GuardRail(
                "markup",
                "This input holds markup (an HTML tag or entity such as <b> or &amp;): "
                + ("the training sentences have none, so " if own_model else "")
                + "the model reads it as odd words. Expect fluent nonsense; type plain text.",
            )
        )
    elif mostly_symbols(text):
        rails.append(
            GuardRail(
                "symbols",
                "This input is mostly symbols, not words: the model learned sentences. Expect fluent nonsense.",
            )
        )
    else:
        guess = detect_language(text)
        if guess is not None and guess[0] != source and guess[1] >= LANGUAGE_CONFIDENCE:
            rails.append(
                GuardRail(
                    "language",
                    f"This looks like {LANGUAGES[guess[0]]} "
                    f"(p = {guess[1]:.2f}, py3langid), but the direction expects "
                    f"{LANGUAGES[source]}. "
                    + (
                        what_came_out(translation, direction)
                        if translation is not None
                        else "The model only reads the target tag and may echo the input."
                        if own_model
                        else f"This model translates {LANGUAGES[source]} into {LANGUAGES[target]} only and may "
                        "echo the input."
                    ),
                    switch_to=f"{guess[0]}-{source}",
                )
            )
    length = longer_than_training(source_tokens) if own_model else 0
    if length:
        rails.append(
            GuardRail(
                "long",
                f"This input has {length} subword tokens; 99.9 % of the training "
                f"sentences have at most {LONG_SOURCE_SUBWORDS} (Multi30k captions and Tatoeba are "
                "short). Expect repeats, omissions or a loop; translate one sentence at a time.",
            )
        )
    return rails


def repeated_phrase(text: str, words: int = 3) -> str | None:
    """The first run of `words` words that occurs twice in `text` (a decoding loop), else None."""
    tokens = re.findall(r"\w+", text.lower())
    seen: set[tuple[str, ...]] = set()
    for start in range(len(tokens) - words + 1):
        phrase = tuple(tokens[start : start + words])
        if phrase in seen:
            return " ".join(phrase)
        seen.add(phrase)
    return None


def translation_warnings(
    source_tokens: Sequence[str], translation: str, finished: bool, own_model: bool = True
) -> list[str]:
    """Plain reasons to distrust a translation: a source longer than training (own_model: as in `guard_rails`), a
    loop, no [EOS]."""
    warnings = []
    length = longer_than_training(source_tokens) if own_model else 0
    if length:
        warnings.append(
            f"the sentence has {length} subword tokens, and 99.9 % of the training sentences have at "
            f"most {LONG_SOURCE_SUBWORDS}: sentences this long are rare in the training data "
            "(Multi30k captions and Tatoeba sentences are short), so the model never learned to "
            "translate them"
        )
    loop = repeated_phrase(translation)
    if loop:
        warnings.append(f"the translation repeats itself (\u201c{loop}\u201d occurs more than once): a decoding loop")
    if not finished:
        warnings.append("decoding stopped at the length limit without [EOS]")
    return warnings
