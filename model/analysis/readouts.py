"""Analyses behind the explorer's "Explain" tab: interventions and read-outs of a translation.

- `token_probabilities`: teacher-force a given output under an intervention (switched-off heads,
  3.2.2; no positional encodings, 3.5) so per-step probabilities compare with the original run.
- `beam_versus_greedy`: beam search of size 4 with length penalty 0.6 (section 6.1) beside greedy
  decoding, and the step where each hypothesis leaves the greedy output.
- `aligned_edits`: what one output changed of another, aligned by a longest common subsequence (the same
  tokens one place later are the same tokens): the tokens inserted, removed and replaced.
- `word_alignment`: encoder-decoder attention (3.2.3) averaged over heads and chosen layers, then
  the argmax source token per output token, exportable as Pharaoh "i-j" pairs.
- `head_diagnostics`: per layer and head (3.2.2), how spread out the attention is, how diagonal,
  and how much of it parks on special tokens and punctuation.

Everything here returns plain numpy arrays, lists and dataclasses, like model/decoding/trace.py.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from model.decoding.ablation import Ablation
from model.decoding.beam import beam_search, length_penalty_factor
from model.text.special_tokens import SPECIAL_TOKENS
from model.text.tokenizer import WORD_BOUNDARY, SubwordTokenizer
from model.decoding.trace import TranslationTrace
from model.decoding.teacher_forced import encode_source, teacher_force
from model.core.transformer import Transformer

DIAGONAL_BAND = 1  # a key within this many positions of the query's diagonal position counts as diagonal


# --------------------------------------------------------------------------- probabilities
@torch.no_grad()
def token_probabilities(
    model: Transformer, source_ids: Sequence[int], output_ids: Sequence[int], ablation: Ablation | None = None
) -> np.ndarray:
    """Probability of each given output token when teacher-forced under ``ablation``.

    The decoder reads [BOS] + output_ids[:-1] (3.1, shifted right) and the probability of
    output_ids[t] is read from step t's softmax, so an ablated model is scored on the original
    output even where it would have chosen differently. Without an ablation this equals the
    trace's ``chosen_probs``.

    Args:
        model: the Transformer (put in eval mode here).
        source_ids: encoder ids, language tag first and [EOS] last (``prepare_source``).
        output_ids: T target ids to score (y1 .. yT).
        ablation: heads switched off and/or positional encodings removed; None = intact model.

    Returns:
        (T,) float32 probabilities.
    """
    if not len(source_ids) or not len(output_ids):
        raise ValueError("source_ids and output_ids must not be empty")
    model.eval()
    tensors = (ablation or Ablation()).tensors(model.config, model.embedding.weight.device)
    output_ids = [int(i) for i in output_ids]
    forced = teacher_force(model, encode_source(model, list(source_ids), tensors), output_ids, tensors)
    chosen = torch.tensor(output_ids, dtype=torch.long, device=forced.log_probs.device)[:, None]  # (T, 1)
    return forced.log_probs.gather(1, chosen)[:, 0].exp().cpu().numpy()


def first_difference(a: Sequence[int], b: Sequence[int]) -> int | None:
    """0-based index of the first position where two id sequences differ; None if they are equal.

    A sequence that is a strict prefix of the other differs at its own length.
    """
    for index, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return index
    return None if len(a) == len(b) else min(len(a), len(b))


@dataclass(frozen=True)
class Edit:
    """One difference of an alignment: the original's tokens at `original` written as the changed output's at
    `changed` (positions in each sequence; an insertion has an empty `original`, a removal an empty `changed`)."""

    original: range
    changed: range

    @property
    def kind(self) -> str:
        """ "inserted", "removed" or "replaced"."""
        if not self.original:
            return "inserted"
        return "removed" if not self.changed else "replaced"


def aligned_edits(original: Sequence[int], changed: Sequence[int], start: int = 0) -> list[Edit]:
    """The differences between two id sequences from position ``start`` on (the tokens before it the same in
    both, as a branch's forced prefix is), in order.

    The two are aligned by a longest common subsequence: the tokens both keep, in order, as many as there are,
    so an inserted token shifts the rest without changing it. Between two kept tokens, what only the original
    has is removed, what only the changed output has is inserted, and what both have there is replaced.
    """
    a, b = list(original[start:]), list(changed[start:])
    # longest[i][j]: the length of a longest common subsequence of a[i:] and b[j:]
    longest = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) - 1, -1, -1):
        for j in range(len(b) - 1, -1, -1):
            longest[i][j] = longest[i + 1][j + 1] + 1 if a[i] == b[j] else max(longest[i + 1][j], longest[i][j + 1])
    edits, i, j, gap = [], 0, 0, (0, 0)  # gap: where the current run of differences began, (i, j)

    def close(i: int, j: int) -> None:
        if (i, j) != gap:
            edits.append(Edit(range(start + gap[0], start + i), range(start + gap[1], start + j)))

    while i < len(a) or j < len(b):
        if i < len(a) and j < len(b) and a[i] == b[j]:  # kept: taking an equal pair is always part of a longest
            close(i, j)
            i, j = i + 1, j + 1
            gap = (i, j)
        elif j == len(b) or (i < len(a) and longest[i + 1][j] >= longest[i][j + 1]):
            i += 1  # a[i] is not kept
        else:
            j += 1  # b[j] is not kept
    close(i, j)
    return edits


# --------------------------------------------------------------------------- beam search
@dataclass
class RankedOutput:
    ids: list[int]  # generated ids, no [BOS]; ends with [EOS] when finished
    tokens: list[str]
    text: str  # detokenized
    log_prob: float  # log P(ids | source), natural log
    score: float  # log_prob / lp(len(ids)), the GNMT score beam search ranks by (section 6.1)
    diverges_at: int | None  # 0-based step where ids first differ from greedy; None = same as greedy


@dataclass
class BeamComparison:
    greedy: RankedOutput  # greedy decoding, scored like the beams
    beams: list[RankedOutput]  # beam search hypotheses, best first
    beam_size: int
    length_penalty: float


def sequence_log_prob(probs: np.ndarray) -> float:
    """log P of a sequence from its per-token probabilities (T,)."""
    return float(np.log(np.clip(probs, 1e-30, None)).sum())


def beam_versus_greedy(
    model: Transformer,
    tokenizer: SubwordTokenizer,
    trace: TranslationTrace,
    beam_size: int = 4,
    length_penalty: float = 0.6,
) -> BeamComparison:
    """Beam search (section 6.1: beam 4, alpha 0.6) beside the greedy output kept in the trace.

    The greedy output is scored with the same length penalty, so the scores compare: beam search
    keeps a hypothesis only if its score beats the others', and may find one above greedy's.
    Greedy's log P comes from the trace's chosen_probs: only the beam search runs the model.
    """
    model.eval()
    device = model.embedding.weight.device
    src = torch.tensor([list(trace.source_ids)], dtype=torch.long, device=device)  # (1, S)
    result = beam_search(model, src, beam_size=beam_size, length_penalty=length_penalty)[0]
    greedy_ids = [int(i) for i in trace.output_ids]
    greedy_log_prob = sequence_log_prob(trace.chosen_probs)

    def ranked(ids: list[int], log_prob: float, score: float) -> RankedOutput:
        return RankedOutput(
            ids, tokenizer.tokens(ids), tokenizer.decode(ids), log_prob, score, first_difference(ids, greedy_ids)
        )

    greedy = ranked(
        greedy_ids, greedy_log_prob, greedy_log_prob / length_penalty_factor(len(greedy_ids), length_penalty)
    )
    beams = [ranked(h.ids, h.log_prob, h.score) for h in result.hypotheses]
    return BeamComparison(greedy, beams, beam_size, length_penalty)


# --------------------------------------------------------------------------- word alignment
def is_special(token: str) -> bool:
    return token in SPECIAL_TOKENS


def is_punctuation(token: str) -> bool:
    """A punctuation-bearing token: one whose text ends in punctuation, e.g. "." "▁," "?!" and also
    "▁entlang." or "liest.", since this tokenizer glues a sentence's final mark to its last word.
    Special tokens ([EOS] ends in "]") are not punctuation."""
    text = token.replace(WORD_BOUNDARY, "")
    return bool(text) and not is_special(token) and unicodedata.category(text[-1]).startswith("P")


@dataclass
class Alignment:
    """Which source token each output token attends to most (averaged cross-attention).

    Index conventions: ``source_index`` and ``links`` index the trace's token lists
    (source_tokens with the language tag at 0 and [EOS] last; output_tokens). Pharaoh pairs
    (``pharaoh``) count only real subwords: source i = position among the source subwords
    (language tag and [EOS] dropped, so source token k is i = k - 1), target j = position among
    the output subwords ([EOS] dropped) -- the "i-j" = source-target order of fast_align.
    """

    weights: np.ndarray  # (T, S) cross-attention averaged over heads and the chosen layers
    source_index: np.ndarray  # (T,) argmax source token per output token; -1 for special outputs ([EOS])
    strength: np.ndarray  # (T,) the averaged weight on that source token (0 where -1)
    layers: list[int]  # 0-based decoder layers averaged
    source_tokens: list[str]
    output_tokens: list[str]

    @property
    def links(self) -> list[tuple[int, int]]:
        """(source token index, output token index) pairs, indices into the trace's token lists."""
        return [(int(s), t) for t, s in enumerate(self.source_index) if s >= 0]

    def pharaoh(self, words: bool = False) -> str:
        """Pharaoh format "i-j i-j ...": i = source, j = target, 0-based, special tokens not counted.

        words=True counts whitespace-separated words instead of subwords (a subword that does
        not start with ▁ belongs to the word before it), the convention of word-level tools; a
        word pair appears once even when several of its subwords are linked.
        """
        source_real = [k for k, token in enumerate(self.source_tokens) if not is_special(token)]
        target_real = [t for t, token in enumerate(self.output_tokens) if not is_special(token)]
        source_number = word_numbers([self.source_tokens[k] for k in source_real]) if words else range(len(source_real))
        target_number = word_numbers([self.output_tokens[t] for t in target_real]) if words else range(len(target_real))
        source_of = dict(zip(source_real, source_number))
        target_of = dict(zip(target_real, target_number))
        pairs = sorted(
            {(source_of[s], target_of[t]) for s, t in self.links if s in source_of and t in target_of},
            key=lambda pair: (pair[1], pair[0]),
        )
        return " ".join(f"{i}-{j}" for i, j in pairs)


def word_numbers(tokens: Sequence[str]) -> list[int]:
    """0-based word number of each subword: a new word starts at every token beginning with ▁."""
    numbers, word = [], -1
    for token in tokens:
        if token.startswith(WORD_BOUNDARY) or word < 0:
            word += 1
        numbers.append(word)
    return numbers


def word_alignment(
    cross_attention: np.ndarray,
    source_tokens: Sequence[str],
    output_tokens: Sequence[str],
    layers: Sequence[int] | None = None,
) -> Alignment:
    """Align every output token to one source token through cross-attention (3.2.3).

    Row t of the decoder's cross-attention is the query that *chose* output_tokens[t] (its input is
    the token before), so row t aligns output token t. Heads are averaged, then the chosen layers;
    the argmax runs over real source subwords only: attention parked on the language tag or
    [EOS] (a common "no-op" sink) is not a translation link. Special output tokens ([EOS]) get -1.

    Args:
        cross_attention: (L, h, T, S) weights (TranslationTrace.cross_attention).
        source_tokens: S tokens; output_tokens: T tokens.
        layers: 0-based decoder layers to average; None = all.
    """
    weights = np.asarray(cross_attention, dtype=np.float32)
    if weights.ndim != 4:
        raise ValueError(f"cross_attention must be (L, h, T, S), got shape {weights.shape}")
    n_layers, _, n_target, n_source = weights.shape
    if len(source_tokens) != n_source or len(output_tokens) != n_target:
        raise ValueError(
            f"cross_attention is {n_target} x {n_source} but there are {len(output_tokens)} output "
            f"and {len(source_tokens)} source tokens"
        )
    layers = list(range(n_layers)) if layers is None else sorted({int(layer) for layer in layers})
    if not layers or not all(0 <= layer < n_layers for layer in layers):
        raise ValueError(f"layers must be a non-empty subset of 0..{n_layers - 1}, got {layers}")
    mean = weights[layers].mean(axis=(0, 1))  # (T, S)
    real_source = np.array([not is_special(token) for token in source_tokens])
    index = np.full(n_target, -1, dtype=np.int64)
    strength = np.zeros(n_target, dtype=np.float32)
    if real_source.any():
        candidates = np.where(real_source[None, :], mean, -np.inf)  # (T, S)
        argmax = candidates.argmax(axis=1)  # (T,)
        for t, token in enumerate(output_tokens):
            if not is_special(token):
                index[t], strength[t] = argmax[t], mean[t, argmax[t]]
    return Alignment(mean, index, strength, layers, list(source_tokens), list(output_tokens))


# --------------------------------------------------------------------------- head diagnostics
DIAGNOSTICS = {  # name: what the number means (all are means over the queries of the sentence)
    "entropy": "entropy of each query's attention, in bits (0 = all weight on one key)",
    "diagonal": "weight within one position of the diagonal (self, neighbours; for cross-attention "
    "the source position proportional to the target position)",
    "special": "weight on special tokens: [EOS], [BOS] and the language tag (OPUS-MT: </s>, <pad>)",
    "punctuation": "weight on punctuation-bearing tokens: tokens ending in punctuation (the tokenizer "
    "glues a final mark to its word, as in ▁entlang.)",
}


def head_diagnostics(
    weights: np.ndarray, query_tokens: Sequence[str], key_tokens: Sequence[str]
) -> dict[str, np.ndarray]:
    """Per-head statistics of one attention kind over the sentence (section 3.2.2's heads).

    Args:
        weights: (L, h, Tq, Tk) attention weights, rows summing to 1.
        query_tokens: Tq tokens (used only to check the shape); key_tokens: Tk tokens.

    Returns:
        {name: (L, h) float32} for every name in DIAGNOSTICS, each a mean over the queries.
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 4:
        raise ValueError(f"weights must be (L, h, Tq, Tk), got shape {w.shape}")
    n_queries, n_keys = w.shape[2:]
    if len(query_tokens) != n_queries or len(key_tokens) != n_keys:
        raise ValueError(
            f"weights are {n_queries} x {n_keys} but there are {len(query_tokens)} query and "
            f"{len(key_tokens)} key tokens"
        )
    entropy = -(w * np.log2(np.clip(w, 1e-12, None))).sum(-1)  # (L, h, Tq)
    centre = np.arange(n_queries) * ((n_keys - 1) / (n_queries - 1) if n_queries > 1 else 0.0)  # (Tq,)
    band = np.abs(np.arange(n_keys)[None, :] - centre[:, None]) <= DIAGONAL_BAND + 1e-9  # (Tq, Tk)
    special = np.array([is_special(token) for token in key_tokens])  # (Tk,)
    punctuation = np.array([is_punctuation(token) for token in key_tokens])
    per_query = {
        "entropy": entropy,
        "diagonal": (w * band).sum(-1),
        "special": w[..., special].sum(-1),
        "punctuation": w[..., punctuation].sum(-1),
    }
    return {name: values.mean(-1).astype(np.float32) for name, values in per_query.items()}


def trace_head_diagnostics(trace: TranslationTrace, kind: str) -> dict[str, np.ndarray]:
    """`head_diagnostics` of one attention kind of a trace (a name of model.decoding.trace.ATTENTION_KINDS)."""
    attention = trace.attention(kind)
    return head_diagnostics(attention.weights, attention.queries, attention.keys)
