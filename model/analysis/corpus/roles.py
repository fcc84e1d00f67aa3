"""Head roles over a corpus, after Voita et al. 2019, "Analyzing Multi-Head Self-Attention:
Specialized Heads Do the Heavy Lifting, the Rest Can Be Pruned" (an encoder-decoder translation
Transformer, like this one).

For every head (3.2.2) of every kind (encoder self, decoder self, cross; 3.2.3), over the queries
of many sentences:
- previous / same / next: the share of queries whose strongest key (argmax weight) is the token
  just before / at / just after the query's position (Voita's *positional* heads). For
  cross-attention, "the query's position" is the source position in proportion to the target
  position (as `model.analysis.head_diagnostics`' diagonal). A share counts only the queries for
  which that key exists and may be attended (decoder self-attention never sees the next token).
- rare: the share of queries whose strongest key is the rarest real token the query may see, rarity
  from the corpus's own token counts (Voita's *rare-token* heads).
- eos: the mean weight on the sentence's boundary token ([EOS]; for decoder self-attention, whose
  keys have no [EOS], its [BOS]), a common "no-op" sink.
- punctuation: the mean weight on punctuation-bearing tokens (`model.analysis.is_punctuation`).
- confidence: the mean maximum weight (Voita's head *confidence*).
- entropy: the mean entropy of a query's weights, in bits.

Cross-attention heads are known for two more (`add_cross_sentence`): attention read as a soft alignment
(Bahdanau et al. 2015), whose clearest heads sit in the upper decoder layers (Garg et al. 2019,
"Jointly Learning to Align and Translate with Transformer Models"):
- aligned: the share of queries whose strongest source key is the source token the model's own word
  alignment links the output to (`model.analysis.readouts.word_alignment`: every cross-attention head
  and layer averaged, real source tokens only, as the Word alignment panel draws it). A query whose
  output is a special token ([EOS]) has no link and does not count.
- monotone: the mean over sentences of Spearman's rank correlation rho between the target position
  and the head's strongest source position (queries with a link; sentences with at least
  MONOTONE_MIN_QUERIES of them; a head whose strongest position never moves has rho 0): +1 when the
  head moves through the source in the order the translation does.

`role_labels` names each head by the largest share that reaches ROLE_SHARE (aligned is a share like
the positional ones), else "monotone" when rho reaches MONOTONE_RHO, else "broad" or "mixed".
How the thresholds were chosen:
- ROLE_SHARE = 0.5, a majority of the queries (or of the weight), for every share; Voita et al. call a
  head positional at 90%: the shares are kept, so a stricter reading is possible. Measured over
  Multi30k val with checkpoints/de-en-small (docs/views.md), the cross heads' aligned shares run from
  0.02 (decoder layer 1, where a head that picks a source token at random would score about 0.06) to
  0.78 (layer 3); no gap in them suggests another cut than the majority.
- MONOTONE_RHO = ALIGNMENT_RHO / 2: half way from a head that ignores the target position (rho 0) to
  the model's own word alignment, whose rho over the same sentences is ALIGNMENT_RHO (the references
  mostly keep the source's word order). The heads' rho runs from -0.05 to 0.96 with no gap either.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from model.analysis.readouts import is_punctuation, word_alignment
from model.text.tokenizer import BOS, EOS, SPECIAL_TOKENS

SHARES = ("previous", "same", "next", "rare")  # argmax shares
WEIGHTS = ("eos", "punctuation", "confidence", "entropy")  # mean weights (entropy in bits)
STATS = SHARES + WEIGHTS
CROSS_STATS = ("aligned", "monotone")  # cross-attention only (`add_cross_sentence`)
KIND_STATS = {"encoder": STATS, "decoder_self": STATS, "cross": STATS + CROSS_STATS}  # what each kind is measured on
ROLE_SHARE = 0.5  # a head takes a share's role when a majority of its queries (or of its weight) behaves so
ALIGNMENT_RHO = 0.91  # mean rho of `word_alignment`'s links, de-en-small over Multi30k val (module docstring)
MONOTONE_RHO = ALIGNMENT_RHO / 2  # a head is monotone half as much as the alignment or more
MONOTONE_MIN_QUERIES = 3  # a sentence with fewer linked queries has no order to speak of
BROAD_CONFIDENCE = 0.3  # below this mean max weight an unlabelled head is "broad" (spreads its attention)
SHARE_ROLES = ("previous", "same", "next", "rare", "eos", "punctuation", "aligned")  # named by a share >= ROLE_SHARE
ROLES = (*SHARE_ROLES, "monotone", "broad", "mixed")
ROLE_TEXT = {
    "previous": "positional: previous token",
    "same": "positional: same token",
    "next": "positional: next token",
    "rare": "rarest token",
    "eos": "[EOS] (sink)",
    "punctuation": "punctuation",
    "aligned": "aligned: word being translated",
    "monotone": "monotone: in source order",
    "broad": "broad (low confidence)",
    "mixed": "no single role",
}


def relative_targets(n_queries: int, n_keys: int, kind: str) -> dict[str, np.ndarray]:
    """{"previous" | "same" | "next": (Tq,) key index of that relation, -1 where there is none}.

    Self-attention: the query's own position q -> q-1, q, q+1. Cross-attention: the source position
    round(q (S-1) / (T-1)) in proportion to the target position, and its neighbours.
    """
    q = np.arange(n_queries)
    if kind == "cross":
        centre = np.rint(q * ((n_keys - 1) / (n_queries - 1) if n_queries > 1 else 0.0)).astype(np.int64)
    else:
        centre = q
    targets = {}
    for name, offset in (("previous", -1), ("same", 0), ("next", 1)):
        index = centre + offset
        targets[name] = np.where((index >= 0) & (index < n_keys), index, -1)
    return targets


def rarest_keys(key_counts: np.ndarray, special: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """(Tq,) per query, the index of the least frequent real key it may attend to (-1: none).

    key_counts: (Tk,) corpus count of each key's token; special: (Tk,) special tokens (never rare);
    allowed: (Tq, Tk) mask, True = may attend. Ties go to the earlier key.
    """
    counts = np.where(allowed & ~special[None, :], key_counts[None, :].astype(np.float64), np.inf)  # (Tq, Tk)
    index = counts.argmin(axis=1)
    return np.where(np.isfinite(counts.min(axis=1)), index, -1)


@dataclass
class RoleSums:
    """Running sums over sentences: per stat, (L, h) sums of the per-query values and the query count."""

    sums: dict[str, np.ndarray] = field(default_factory=dict)
    counts: dict[str, float] = field(default_factory=dict)

    def add(self, name: str, per_query: np.ndarray, valid: np.ndarray) -> None:
        """per_query (L, h, Tq) values, valid (Tq,) which queries count for this stat."""
        total = per_query[..., valid].sum(-1)  # (L, h)
        self.sums[name] = self.sums.get(name, 0.0) + total
        self.counts[name] = self.counts.get(name, 0.0) + float(valid.sum())

    def means(self) -> dict[str, np.ndarray]:
        """{stat: (L, h) float32 mean}; a stat no query could have (e.g. decoder "next") is 0."""
        return {
            name: (self.sums[name] / self.counts[name] if self.counts[name] else self.sums[name] * 0.0).astype(
                np.float32
            )
            for name in self.sums
        }


def add_sentence(
    sums: RoleSums,
    weights: np.ndarray,
    key_tokens: Sequence[str],
    key_counts: np.ndarray,
    allowed: np.ndarray,
    kind: str,
) -> None:
    """Add one sentence's attention of one kind to `sums`.

    weights: (L, h, Tq, Tk) rows summing to 1 over the allowed keys (padding already removed);
    key_tokens: Tk tokens; key_counts: (Tk,) corpus count of each key's token; allowed: (Tq, Tk).
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 4:
        raise ValueError(f"weights must be (L, h, Tq, Tk), got shape {w.shape}")
    n_queries, n_keys = w.shape[2:]
    if len(key_tokens) != n_keys or allowed.shape != (n_queries, n_keys) or key_counts.shape != (n_keys,):
        raise ValueError(
            f"weights are {n_queries} x {n_keys}, but got {len(key_tokens)} key tokens, "
            f"allowed {allowed.shape} and counts {key_counts.shape}"
        )
    strongest = w.argmax(-1)  # (L, h, Tq)
    everyone = np.ones(n_queries, dtype=bool)
    for name, target in relative_targets(n_queries, n_keys, kind).items():
        valid = (target >= 0) & allowed[np.arange(n_queries), np.maximum(target, 0)]
        sums.add(name, (strongest == target[None, None, :]).astype(np.float64), valid)
    special = np.array([token in SPECIAL_TOKENS for token in key_tokens])
    rare = rarest_keys(key_counts, special, allowed)
    sums.add("rare", (strongest == rare[None, None, :]).astype(np.float64), rare >= 0)
    boundary = np.array([token == (BOS if kind == "decoder_self" else EOS) for token in key_tokens])
    punctuation = np.array([is_punctuation(token) for token in key_tokens])
    sums.add("eos", w[..., boundary].sum(-1), everyone)
    sums.add("punctuation", w[..., punctuation].sum(-1), everyone)
    sums.add("confidence", w.max(-1), everyone)
    sums.add("entropy", -(w * np.log2(np.clip(w, 1e-12, None))).sum(-1), everyone)


def rank_correlation(order: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Spearman's rho of (n,) distinct positions `order` against (..., n) `values`, ties in `values` given
    their mean rank; 0 where `values` are all equal (no order to correlate)."""
    x = np.argsort(np.argsort(order)).astype(np.float64)  # (n,) ranks 0..n-1
    below = (values[..., :, None] > values[..., None, :]).sum(-1)  # (..., n)
    equal = (values[..., :, None] == values[..., None, :]).sum(-1)
    ranks = below + (equal - 1) / 2.0  # (..., n) mean rank of each value
    x, ranks = x - x.mean(), ranks - ranks.mean(-1, keepdims=True)
    spread = np.sqrt((x**2).sum() * (ranks**2).sum(-1))  # (...,)
    return np.where(spread > 0, (ranks * x).sum(-1) / np.where(spread > 0, spread, 1.0), 0.0)


def add_cross_sentence(
    sums: RoleSums, weights: np.ndarray, source_tokens: Sequence[str], output_tokens: Sequence[str]
) -> None:
    """Add one sentence's cross-attention to the cross-only stats of `sums` (CROSS_STATS).

    weights: (L, h, T, S) every decoder layer's cross-attention, row t the query that chose
    output_tokens[t] (padding removed); source_tokens: S tokens; output_tokens: T tokens.
    """
    w = np.asarray(weights, dtype=np.float64)
    linked = word_alignment(w, source_tokens, output_tokens).source_index  # (T,), -1: no link ([EOS])
    strongest = w.argmax(-1)  # (L, h, T) the head's strongest source position per query
    has_link = linked >= 0
    sums.add("aligned", (strongest == linked[None, None, :]).astype(np.float64), has_link)
    steps = np.nonzero(has_link)[0]
    rho = rank_correlation(steps, strongest[..., steps]) if len(steps) else np.zeros(w.shape[:2])  # (L, h)
    sums.add("monotone", rho[..., None], np.array([len(steps) >= MONOTONE_MIN_QUERIES]))  # one value a sentence


def role_labels(stats: dict[str, np.ndarray]) -> np.ndarray:
    """(L, h) role names (ROLES): the largest share of SHARE_ROLES the stats hold if it reaches ROLE_SHARE,
    else "monotone" if the stats hold a monotone rho of at least MONOTONE_RHO, else "broad" below
    BROAD_CONFIDENCE, else "mixed". A kind without the cross-only stats (or a file made before them)
    is labelled from the stats it has."""
    candidates = [name for name in SHARE_ROLES if name in stats]
    values = np.stack([np.asarray(stats[name], dtype=np.float64) for name in candidates])  # (roles, L, h)
    best = values.argmax(0)  # (L, h)
    labels = np.array(candidates, dtype=object)[best]
    unlabelled = values.max(0) < ROLE_SHARE
    if "monotone" in stats:
        monotone = unlabelled & (np.asarray(stats["monotone"], dtype=np.float64) >= MONOTONE_RHO)
        labels[monotone] = "monotone"
        unlabelled &= ~monotone
    confidence = np.asarray(stats["confidence"], dtype=np.float64)
    labels[unlabelled & (confidence < BROAD_CONFIDENCE)] = "broad"
    labels[unlabelled & (confidence >= BROAD_CONFIDENCE)] = "mixed"
    return labels.astype(str)


def role_counts(labels: np.ndarray) -> dict[str, int]:
    """{role: how many heads of `labels` (role names, any shape) have it}, most frequent first."""
    names, counts = np.unique(np.asarray(labels, dtype=str), return_counts=True)
    return {str(names[i]): int(counts[i]) for i in np.argsort(-counts, kind="stable")}
