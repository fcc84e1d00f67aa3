"""The paper's Figures 3-5 on this model: which encoder self-attention head matches each figure.

"Attention Is All You Need", Appendix "Attention Visualizations": Figure 3 shows encoder
self-attention in layer 5 of 6 following the long-distance dependency of "making" to complete
the phrase "making ... more difficult"; Figures 4 and 5 show heads of the same layer 5 that resolve
the anaphora "its" (to "Law" and "application") and follow sentence structure.

Here the same English sentences go through this model's encoder (English -> German), and every
(layer, head) is scored by the attention mass its query word's subwords put on the target words'
subwords (mean over the query subwords of the summed weights). The chance baseline is the mass a
uniform head would give: (number of target subwords) / S, so a view can say honestly how far
above chance this small model's best head is, and in which of its layers, beside the paper's 5 of 6.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from model.text import limits
from model.analysis.readouts import is_special, word_numbers
from model.decoding.greedy import translate
from model.text.language import translation_warnings
from model.text.tokenizer import WORD_BOUNDARY

PAPER_LAYER = 5  # the figures' layer, 1-based, in the paper's base model ...
PAPER_LAYERS = 6  # ... of 6 encoder layers
DIRECTION = "en-de"  # the paper's sentences are English: the encoder reads them translating into German
BYTE_TOKEN = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")
EDGE_PUNCTUATION = "\"'.,;:!?()[]{}«»„“”‘’-–—"


@dataclass(frozen=True)
class PaperFigure:
    """One of the paper's attention figures: a sentence and the pattern its heads show."""

    name: str  # "figure-3"
    figures: tuple[int, ...]  # the paper's figure numbers this pattern stands for
    sentence: str
    query: str  # the word whose attention the figure shows (one or more words)
    targets: tuple[str, ...]  # the words that word attends to in the paper
    description: str


PAPER_FIGURES = (
    PaperFigure(
        "figure-3",
        (3,),
        "It is in this spirit that a majority of American governments have passed new laws since 2009 "
        "making the registration or voting process more difficult.",
        "making",
        ("more difficult",),
        "Long-distance dependency: heads attend from the verb 'making' to complete the phrase "
        "'making ... more difficult'.",
    ),
    PaperFigure(
        "figures-4-5",
        (4, 5),
        "The Law will never be perfect, but its application should be just - this is what we are missing, "
        "in my opinion.",
        "its",
        ("Law", "application"),
        "Anaphora resolution: heads attend from 'its' to what it refers to ('Law') and to its noun "
        "('application'); the same layer's heads follow the sentence's structure.",
    ),
)


@dataclass(frozen=True)
class Word:
    text: str  # the word as written ("difficult." keeps its punctuation)
    key: str  # lower case, outer punctuation removed: what phrases are matched against
    tokens: tuple[int, ...]  # indices into the token list


def _token_text(token: str) -> bytes:
    match = BYTE_TOKEN.match(token)
    return bytes([int(match.group(1), 16)]) if match else token.replace(WORD_BOUNDARY, " ").encode("utf-8")


def _key(text: str) -> str:
    return text.strip().strip(EDGE_PUNCTUATION).casefold()


def words(tokens: Sequence[str]) -> list[Word]:
    """Whitespace words of a subword token list; special tokens ([EOS], <2de>) belong to no word.

    A word starts at every token beginning with the word-boundary mark ▁ (model/text/tokenizer.py);
    byte-fallback tokens (<0xC3><0xA4>) are joined back into their characters.
    """
    real = [index for index, token in enumerate(tokens) if not is_special(token)]
    grouped: dict[int, list[int]] = {}
    for index, number in zip(real, word_numbers([tokens[index] for index in real])):
        grouped.setdefault(number, []).append(index)
    result = []
    for indices in grouped.values():
        text = b"".join(_token_text(tokens[index]) for index in indices).decode("utf-8", errors="replace").strip()
        if text:  # a lone ▁ before punctuation ("▁", "-") has no text of its own
            result.append(Word(text, _key(text), tuple(indices)))
    return result


def phrase_tokens(tokens: Sequence[str], phrase: str, occurrence: int = 0) -> list[int]:
    """Token indices of the words of `phrase` where they occur consecutively in `tokens`.

    Matching ignores case and outer punctuation ("difficult." matches "difficult").
    occurrence: 0 = first match. ValueError, naming the words found, when the phrase is absent.
    """
    wanted = [_key(part) for part in phrase.split()]
    if not wanted or not all(wanted):
        raise ValueError(f"phrase {phrase!r} has no words to look for")
    found = words(tokens)
    keys = [word.key for word in found]
    matches = [start for start in range(len(keys) - len(wanted) + 1) if keys[start : start + len(wanted)] == wanted]
    if len(matches) <= occurrence:
        raise ValueError(
            f"{phrase!r} (occurrence {occurrence + 1}) is not among the words {' '.join(word.text for word in found)!r}"
        )
    start = matches[occurrence]
    return [index for word in found[start : start + len(wanted)] for index in word.tokens]


@dataclass(frozen=True)
class HeadScore:
    layer: int  # 0-based
    head: int  # 0-based
    score: float  # attention mass from the query subwords to the target subwords, in [0, 1]


@dataclass
class HeadSearch:
    """Every head of a self-attention stack scored against one pattern, best first."""

    scores: np.ndarray  # (L, h) attention mass from query subwords to target subwords
    ranking: list[HeadScore]  # all heads, highest score first (ties: lower layer, then head)
    query_tokens: list[int]  # token indices of the query word(s)
    target_tokens: list[int]  # token indices of the target words
    chance: float  # len(target_tokens) / S: what a uniform head would score
    paper_layer: int = PAPER_LAYER
    paper_layers: int = PAPER_LAYERS

    @property
    def best(self) -> HeadScore:
        return self.ranking[0]

    @property
    def best_depth(self) -> float:
        """The best head's layer as a fraction of this stack's depth (the paper's is 5/6)."""
        return (self.best.layer + 1) / self.scores.shape[0]

    @property
    def best_over_chance(self) -> float:
        """How many times the chance mass the best head puts on the targets."""
        return self.best.score / self.chance


def head_search(attention: np.ndarray, query_tokens: Sequence[int], target_tokens: Sequence[int]) -> HeadSearch:
    """Score every (layer, head) by mean over query tokens of the summed weight on the target tokens.

    attention: (L, h, S, S) self-attention weights (trace.encoder_attention), rows summing to 1.
    query_tokens, target_tokens: token indices (from `phrase_tokens`), non-empty.
    """
    weights = np.asarray(attention, dtype=np.float64)
    if weights.ndim != 4 or weights.shape[2] != weights.shape[3]:
        raise ValueError(f"attention must be self-attention (L, h, S, S), got shape {weights.shape}")
    n_tokens = weights.shape[-1]
    query, target = sorted(set(map(int, query_tokens))), sorted(set(map(int, target_tokens)))
    if not query or not target:
        raise ValueError("query_tokens and target_tokens must not be empty")
    if not all(0 <= index < n_tokens for index in query + target):
        raise ValueError(f"token indices must lie in 0..{n_tokens - 1}, got query {query}, target {target}")
    scores = weights[:, :, query][..., target].sum(-1).mean(-1)  # (L, h, |q|, |t|) -> (L, h)
    order = sorted(np.ndindex(*scores.shape), key=lambda lh: (-scores[lh], lh))
    ranking = [HeadScore(int(layer), int(head), float(scores[layer, head])) for layer, head in order]
    return HeadSearch(scores.astype(np.float32), ranking, query, target, len(target) / n_tokens)


def figure_head_search(figure: PaperFigure, encoder_attention: np.ndarray, source_tokens: Sequence[str]) -> HeadSearch:
    """`head_search` for one paper figure, finding its words among the source tokens."""
    query = phrase_tokens(source_tokens, figure.query)
    target = [index for phrase in figure.targets for index in phrase_tokens(source_tokens, phrase)]
    return head_search(encoder_attention, query, target)


@dataclass
class FigureResult:
    figure: PaperFigure
    source_tokens: list[str]  # S tokens as the encoder read them
    encoder_attention: np.ndarray  # (L, h, S, S)
    translation: str  # the model's German, for the record
    search: HeadSearch
    translation_warnings: list[str]  # why that German may be poor (model/text/language.py), empty if none


def run_paper_figures(
    model, tokenizer, figures: Sequence[PaperFigure] = PAPER_FIGURES, own_model: bool = True
) -> list[FigureResult]:
    """Run each figure's sentence through the model (English -> German) and search its encoder heads.
    own_model: the project's own model, whose training data the translation's caveats name (model/text/language.py);
    False for a model trained elsewhere (OPUS-MT)."""
    results = []
    for figure in figures:
        trace = translate(model, tokenizer, figure.sentence, DIRECTION)
        try:
            search = figure_head_search(figure, trace.encoder_attention, trace.source_tokens)
        except ValueError as error:
            if not trace.source_truncated:
                raise
            raise ValueError(
                f"{figure.name}: this tokenizer splits the sentence into more than "
                f"{limits.MAX_SOURCE_TOKENS} subwords and the cut lost a word of the figure "
                f"({error})"
            ) from None
        finished = trace.stopped_by == "eos"
        results.append(
            FigureResult(
                figure,
                list(trace.source_tokens),
                trace.encoder_attention,
                trace.translation,
                search,
                translation_warnings(trace.source_tokens, trace.translation, finished, own_model),
            )
        )
    return results
