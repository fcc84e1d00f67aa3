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

`role_labels` names each head by its strongest behaviour (ROLE_SHARE of the queries or the weight);
Voita et al. call a head positional at 90%: the shares are kept, so a stricter reading is possible.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from model.analysis.readouts import is_punctuation
from model.text.tokenizer import BOS, EOS, SPECIAL_TOKENS

SHARES = ("previous", "same", "next", "rare")  # argmax shares
WEIGHTS = ("eos", "punctuation", "confidence", "entropy")  # mean weights (entropy in bits)
STATS = SHARES + WEIGHTS
ROLE_SHARE = 0.5  # a head takes a role when a majority of its queries (or of its weight) behaves so
BROAD_CONFIDENCE = 0.3  # below this mean max weight an unlabelled head is "broad" (spreads its attention)
ROLES = ("previous", "same", "next", "rare", "eos", "punctuation", "broad", "mixed")
ROLE_TEXT = {
    "previous": "positional: previous token",
    "same": "positional: same token",
    "next": "positional: next token",
    "rare": "rarest token",
    "eos": "[EOS] (sink)",
    "punctuation": "punctuation",
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


def role_labels(stats: dict[str, np.ndarray]) -> np.ndarray:
    """(L, h) role names (ROLES): the largest of previous/same/next/rare/eos/punctuation if it reaches
    ROLE_SHARE, else "broad" below BROAD_CONFIDENCE, else "mixed"."""
    candidates = ("previous", "same", "next", "rare", "eos", "punctuation")
    values = np.stack([np.asarray(stats[name], dtype=np.float64) for name in candidates])  # (6, L, h)
    best = values.argmax(0)  # (L, h)
    labels = np.array(candidates, dtype=object)[best]
    unlabelled = values.max(0) < ROLE_SHARE
    confidence = np.asarray(stats["confidence"], dtype=np.float64)
    labels[unlabelled & (confidence < BROAD_CONFIDENCE)] = "broad"
    labels[unlabelled & (confidence >= BROAD_CONFIDENCE)] = "mixed"
    return labels.astype(str)
