"""Two sentences side by side: where one source token looks in each, per layer and head of encoder
self-attention (3.2.2) and of cross-attention at the step that translates it (3.2.3), which heads tell
the two sentences apart, and what the decoder chose at that step (the blog-post pair "The animal didn't
cross the street because it was too tired / wide": "it" looks at "animal" or at "street").

Pure numpy on two TranslationTrace objects: no model is run here.

Keys are matched across the sentences by token string and occurrence: the k-th "▁the" of the first
sentence is the k-th "▁the" of the second; a token of one sentence without a counterpart in the other
(such as "▁tired" / "▁wide") is its own key. A head's distance between the sentences is the total
variation between the token's two attention rows over these matched keys:

    d = 1/2 * sum over matched keys |a_k - b_k|  +  1/2 * (weight on unmatched keys of each sentence)

0 when the token spreads its attention the same way over the same words, 1 when the two rows share no
weight. Rankings are by this distance, largest first (ties: layer, then head).

What the Compare tab says in words is computed here too, from both sentences: whether the token became the same
output token in both (`Comparison.same_output`), which words the top head's two rows differ on most, each word's
weight (its subword pieces' summed) in both sentences (`word_differences`), and the encoder head that sends the token
most to a candidate referent, with that head's weight in both sentences (`referent_link`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from model.analysis.readouts import is_special, word_alignment
from model.decoding.trace import TranslationTrace
from model.text.tokenizer import WORD_BOUNDARY

TOP_KEYS = 5  # keys listed per head
TOP_CANDIDATES = 5  # candidates listed at the translating step


def token_positions(tokens: Sequence[str], token: str) -> list[int]:
    """Positions of ``token`` in ``tokens``: exact matches, or where there are none, matches ignoring the
    word marker "▁" (so "it" finds "▁it")."""
    exact = [i for i, t in enumerate(tokens) if t == token]
    if exact:
        return exact
    bare = token.replace(WORD_BOUNDARY, "")
    return [i for i, t in enumerate(tokens) if t.replace(WORD_BOUNDARY, "") == bare and bare]


def shared_source_tokens(first: TranslationTrace, second: TranslationTrace) -> list[str]:
    """The source tokens (special ones aside) present in both sentences, in the first sentence's order."""
    theirs = set(second.source_tokens)
    return list(dict.fromkeys(t for t in first.source_tokens if t in theirs and not is_special(t)))


def key_names(tokens: Sequence[str]) -> list[tuple[str, int]]:
    """(token, occurrence) per position: the name under which a key is matched across sentences."""
    seen: dict[str, int] = {}
    names = []
    for token in tokens:
        names.append((token, seen.get(token, 0)))
        seen[token] = seen.get(token, 0) + 1
    return names


def row_distances(
    first_rows: np.ndarray, first_keys: Sequence[str], second_rows: np.ndarray, second_keys: Sequence[str]
) -> np.ndarray:
    """Total variation between attention rows over keys matched by (token, occurrence) (module docstring).

    Args:
        first_rows: (..., S1) attention rows over ``first_keys``; second_rows: (..., S2) over ``second_keys``,
            the same leading shape (e.g. layers x heads).

    Returns:
        (...) distances in [0, 1].
    """
    a, b = np.asarray(first_rows, dtype=np.float64), np.asarray(second_rows, dtype=np.float64)
    if a.shape[:-1] != b.shape[:-1] or a.shape[-1] != len(first_keys) or b.shape[-1] != len(second_keys):
        raise ValueError(f"rows {a.shape} and {b.shape} do not match {len(first_keys)} and {len(second_keys)} keys")
    names = list(dict.fromkeys([*key_names(first_keys), *key_names(second_keys)]))  # the union of keys
    index = {name: i for i, name in enumerate(names)}
    on_first = np.zeros((*a.shape[:-1], len(names)))  # (..., K): each row moved onto the union of keys
    on_second = np.zeros((*b.shape[:-1], len(names)))
    on_first[..., [index[n] for n in key_names(first_keys)]] = a
    on_second[..., [index[n] for n in key_names(second_keys)]] = b
    return 0.5 * np.abs(on_first - on_second).sum(-1)


@dataclass
class KeyWeight:
    position: int  # in the sentence's source tokens
    token: str
    weight: float


def top_keys(row: np.ndarray, tokens: Sequence[str], k: int = TOP_KEYS) -> list[KeyWeight]:
    """The k keys of one attention row (S,) with the largest weights, largest first (ties: position)."""
    order = np.argsort(-np.asarray(row), kind="stable")[:k]
    return [KeyWeight(int(i), tokens[i], float(row[i])) for i in order]


@dataclass
class TranslatingStep:
    """The decoding step that translates a source token, and what the decoder chose there."""

    step: int  # 0-based decoding step
    found_by: str  # "alignment": the step whose word alignment links to the token; "attention": the step
    #  whose head- and layer-averaged cross-attention on the token is highest (no output aligned to it)
    output_token: str  # the token chosen at that step
    candidates: list[str]  # its top candidates, most probable first
    probabilities: np.ndarray  # (k,) their probabilities
    attention: float  # the averaged cross-attention on the source token at that step


def translating_step(trace: TranslationTrace, position: int, k: int = TOP_CANDIDATES) -> TranslatingStep:
    """The step whose output word alignment (model.analysis.readouts.word_alignment) links to source
    ``position`` (the most strongly linked one when several do), else the step attending to it most."""
    alignment = word_alignment(trace.cross_attention, trace.source_tokens, trace.output_tokens)
    linked = np.nonzero(alignment.source_index == position)[0]
    if linked.size:
        step, found_by = int(linked[np.argmax(alignment.strength[linked])]), "alignment"
    else:
        step, found_by = int(np.argmax(alignment.weights[:, position])), "attention"
    return TranslatingStep(
        step,
        found_by,
        trace.output_tokens[step],
        list(trace.candidate_tokens[step][:k]),
        np.asarray(trace.candidate_probs[step][:k]),
        float(alignment.weights[step, position]),
    )


@dataclass
class TokenLooks:
    """Where one source token looks in one sentence."""

    position: int  # the token's position in the sentence's source tokens
    encoder_rows: np.ndarray  # (L_enc, h, S): its row of encoder self-attention in every layer and head
    translating: TranslatingStep
    cross_rows: np.ndarray  # (L_dec, h, S): cross-attention of the translating step's query over the source
    source_tokens: list[str]

    def top_keys(self, kind: str, layer: int, head: int, k: int = TOP_KEYS) -> list[KeyWeight]:
        """The keys this token's row looks at most in one head (0-based layer and head)."""
        rows = self.encoder_rows if kind == "encoder" else self.cross_rows
        return top_keys(rows[layer, head], self.source_tokens, k)


def token_looks(trace: TranslationTrace, position: int) -> TokenLooks:
    translating = translating_step(trace, position)
    return TokenLooks(
        position,
        trace.encoder_attention[:, :, position, :],
        translating,
        trace.cross_attention[:, :, translating.step, :],
        list(trace.source_tokens),
    )


@dataclass
class HeadDifference:
    kind: str  # "encoder" or "cross"
    layer: int  # 0-based
    head: int  # 0-based
    distance: float  # total variation between the two sentences' rows (module docstring)


@dataclass
class Comparison:
    token: str
    first: TokenLooks
    second: TokenLooks
    encoder_distance: np.ndarray  # (L_enc, h)
    cross_distance: np.ndarray  # (L_dec, h)
    ranking: list[HeadDifference]  # every head of both kinds, the largest distance first

    @property
    def same_output(self) -> bool:
        """Whether the decoder chose the same token at the step that translates the token in both sentences: then
        the model's output does not tell the two occurrences apart, whatever its heads do."""
        return self.first.translating.output_token == self.second.translating.output_token

    def rows(self, head: HeadDifference) -> tuple[np.ndarray, np.ndarray]:
        """The token's two attention rows, (S1,) and (S2,), in one head (the query of `TokenLooks`)."""
        kind = "encoder_rows" if head.kind == "encoder" else "cross_rows"
        return getattr(self.first, kind)[head.layer, head.head], getattr(self.second, kind)[head.layer, head.head]


def rank_heads(distances: dict[str, np.ndarray]) -> list[HeadDifference]:
    """Every (kind, layer, head) of {kind: (L, h) distances}, the largest distance first (ties: the order of
    the kinds given, then layer, then head)."""
    heads = [
        HeadDifference(kind, layer, head, float(d[layer, head]))
        for kind, d in distances.items()
        for layer in range(d.shape[0])
        for head in range(d.shape[1])
    ]
    return sorted(heads, key=lambda h: -h.distance)  # sorted() is stable: ties keep their order


def compare_token(
    first: TranslationTrace, second: TranslationTrace, token: str, occurrences: tuple[int, int] = (0, 0)
) -> Comparison:
    """Where ``token`` looks in two translations of the same direction, and which heads differ most.

    Args:
        first, second: the two sentences' traces.
        token: a source token as the tokenizer spells it ("▁it"; "it" also finds "▁it").
        occurrences: which occurrence of the token (0-based) in each sentence, where it appears more than once.

    Raises:
        ValueError: the directions differ, or the token (or that occurrence) is missing from a sentence.
    """
    if first.direction != second.direction:
        raise ValueError(f"the sentences are translated in different directions: {first.direction}, {second.direction}")
    positions = []
    for name, trace, occurrence in (("first", first, occurrences[0]), ("second", second, occurrences[1])):
        found = token_positions(trace.source_tokens, token)
        if not 0 <= occurrence < len(found):
            raise ValueError(
                f"{token!r} occurs {len(found)} times in the {name} sentence; occurrence {occurrence} does not exist"
            )
        positions.append(found[occurrence])
    looks_first, looks_second = token_looks(first, positions[0]), token_looks(second, positions[1])
    encoder = row_distances(
        looks_first.encoder_rows, first.source_tokens, looks_second.encoder_rows, second.source_tokens
    )
    cross = row_distances(looks_first.cross_rows, first.source_tokens, looks_second.cross_rows, second.source_tokens)
    return Comparison(
        token, looks_first, looks_second, encoder, cross, rank_heads({"encoder": encoder, "cross": cross})
    )


# ---- what the Compare tab says, from both sentences ------------------------------------------------------------


@dataclass(frozen=True)
class WordDifference:
    """One word's weight in the token's row of the same head in both sentences: its subword pieces' weights summed
    (None: that sentence has no such word, matched by (word, occurrence) as `row_distances` matches keys), with the
    positions of its pieces in each sentence."""

    word: str  # its pieces joined, without the word marker ("▁w" + "ide." -> "wide.")
    first: float | None
    second: float | None
    pieces: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())  # its pieces' positions in sentence 1, sentence 2

    @property
    def gap(self) -> float:
        return abs((self.first or 0.0) - (self.second or 0.0))


def word_differences(
    first_row: np.ndarray, first_tokens: Sequence[str], second_row: np.ndarray, second_tokens: Sequence[str]
) -> list[WordDifference]:
    """Every word (`source_words`, a special token its own word) of two attention rows (S1,) and (S2,) with its weight
    in each, the largest gap first (ties: the first sentence's words in order, then the second's own)."""
    found: dict[tuple[str, int], list] = {}
    for side, (row, tokens) in enumerate(((first_row, first_tokens), (second_row, second_tokens))):
        row, words = np.asarray(row, dtype=np.float64), source_words(tokens, keep_special=True)
        for name, (_, positions) in zip(key_names([text for text, _ in words]), words):
            entry = found.setdefault(name, [None, None, (), ()])
            entry[side], entry[2 + side] = float(row[positions].sum()), tuple(positions)
    words = [WordDifference(name[0], a, b, (p, q)) for name, (a, b, p, q) in found.items()]
    return sorted(words, key=lambda word: -word.gap)  # stable: ties keep the sentences' order


def source_words(tokens: Sequence[str], keep_special: bool = False) -> list[tuple[str, list[int]]]:
    """The words of a source sentence as (text, positions of its subword pieces): a new word at each "▁"; the special
    tokens left out, or with `keep_special` each a word of its own."""
    words: list[tuple[str, list[int]]] = []
    after_special = False  # a piece after a special token kept as a word starts a word of its own
    for i, token in enumerate(tokens):
        if is_special(token):
            if keep_special:
                words.append((token, [i]))
                after_special = True
            continue
        if token.startswith(WORD_BOUNDARY) or not words or after_special:
            words.append(("", []))
        after_special = False
        text, positions = words[-1]
        words[-1] = (text + token.replace(WORD_BOUNDARY, ""), [*positions, i])
    return words


def bare(text: str) -> str:
    """A word without its case and the punctuation around it ("Tired." -> "tired")."""
    return text.strip(".,;:!?\"'“”‘’()").lower()


@dataclass(frozen=True)
class ReferentLink:
    """One encoder self-attention head's weight from the token to one candidate referent (a word's subword pieces
    summed) in both sentences: the head and word where either sentence's weight is largest."""

    word: str  # as the first sentence that has it writes it
    layer: int  # 0-based
    head: int  # 0-based
    first: float | None  # None: the sentence has no such word
    second: float | None

    @property
    def strongest(self) -> float:
        return max(self.first or 0.0, self.second or 0.0)


def candidate_words(
    looks: TokenLooks, referents: Sequence[str] | None, shared: set[str]
) -> dict[str, tuple[str, list[int]]]:
    """{bare word: (the word as written, positions of its pieces)} where the token's referent may be: the
    `referents` named (the blog pair's "animal" and "street"), else the words before the token that both sentences
    have (`shared`); a word's first occurrence."""
    named = {bare(r) for r in referents} if referents else None
    found: dict[str, tuple[str, list[int]]] = {}
    for text, positions in source_words(looks.source_tokens):
        key = bare(text)
        wanted = key in named if named is not None else key in shared and positions[-1] < looks.position
        if key and key not in found and wanted:
            found[key] = (text, positions)
    return found


def referent_link(result: Comparison, referents: Sequence[str] | None = None) -> ReferentLink | None:
    """The encoder self-attention head and candidate word (`candidate_words`) with the largest weight from the token in
    either sentence (ties: the first sentence's words in order, then layer, then head), with that head's weight to
    that word in both. None where neither sentence has a candidate."""
    sentences = (result.first, result.second)
    shared = set.intersection(*({bare(text) for text, _ in source_words(s.source_tokens)} for s in sentences))
    found = [candidate_words(looks, referents, shared) for looks in sentences]
    best = None
    for key in dict.fromkeys([*found[0], *found[1]]):
        # (L, h): the word's share of the token's attention in each head of each sentence (None: it lacks the word)
        shares = [
            looks.encoder_rows[..., words[key][1]].sum(-1) if key in words else None
            for looks, words in zip(sentences, found)
        ]
        strongest = np.max([share for share in shares if share is not None], axis=0)
        layer, head = np.unravel_index(int(np.argmax(strongest)), strongest.shape)
        if best is None or strongest[layer, head] > best.strongest:
            text = (found[0].get(key) or found[1][key])[0]
            weights = (None if share is None else float(share[layer, head]) for share in shares)
            best = ReferentLink(text, int(layer), int(head), *weights)
    return best
