"""Beam search with a length penalty, as used for the paper's translations (section 6.1).

"We used beam search with a beam size of 4 and length penalty alpha = 0.6" (section 6.1), citing
GNMT (Wu et al., 2016): a hypothesis Y is ranked by score = log P(Y) / lp(Y) with
lp(Y) = ((5 + |Y|) / 6) ** alpha, where |Y| counts the generated tokens, [EOS] included.

The search runs over a whole batch at once: every sentence keeps `beam_size` live beams, stored
flat as rows b * K + k of one (B * K, ...) tensor, and each step feeds only the newest token to
the decoder with the KV cache of model/core/layers.py (fused attention: no weights are kept). When
beams are reselected, the cached self-attention keys/values are reordered by beam index; the
cross-attention keys/values are computed once per sentence and expanded to its K beams
(reselection never leaves a sentence, so they never need reordering). A sentence stops once it has K finished hypotheses (the
"early stopping" of GNMT-style implementations; with K = 1 this is exactly greedy decoding),
and finished sentences leave the batch so later steps cost less.

The decoding rules of the config apply as in greedy decoding: ids `never_generated` (Marian's <pad>, its start
token) are never chosen, and with `force_eos_at_limit` (Marian's forced_eos_token_id) every beam still live at a
sentence's last step ends with [EOS] there. Its log P stays the model's own log P([EOS]), so every score is
log P(ids | source) of the model; `transformers` instead counts a forced token as log P = 0 and divides by
length ** length_penalty rather than GNMT's lp (docs/opus-mt.md, "Beam search").
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from model.decoding.greedy import default_max_new_tokens, never_generated
from model.core.layers import DecoderCache
from model.core.masks import padding_mask
from model.core.transformer import Transformer


@dataclass
class Hypothesis:
    ids: list[int]  # generated ids, no [BOS]; ends with [EOS] when finished
    log_prob: float  # log P(ids | source), natural log, summed over the tokens
    score: float  # log_prob / lp(len(ids))
    finished: bool  # False when the search ran out of steps before [EOS]


@dataclass
class BeamResult:
    hypotheses: list[Hypothesis]  # best first (highest score); at most beam_size

    @property
    def best(self) -> Hypothesis:
        return self.hypotheses[0]


def length_penalty_factor(length: int, alpha: float) -> float:
    """GNMT length penalty lp(Y) = ((5 + |Y|) / 6) ** alpha; alpha = 0 gives plain log P."""
    return ((5.0 + length) / 6.0) ** alpha


def _hypothesis(ids: list[int], log_prob: float, alpha: float, finished: bool) -> Hypothesis:
    return Hypothesis(ids, log_prob, log_prob / length_penalty_factor(len(ids), alpha), finished)


@dataclass
class _Beams:
    """The live beams of the sentences still searching: A sentences x K beams, flat as rows a * K + k."""

    active: list[int]  # original batch index of each sentence still searching
    memory: torch.Tensor  # (A * K, S, d_model) encoder output, each sentence's repeated for its K beams
    src_mask: torch.Tensor  # (A * K, 1, 1, S)
    cache: DecoderCache  # self keys/values per beam, cross keys/values per sentence expanded to its beams
    log_probs: torch.Tensor  # (A * K,) log P of each beam so far
    tokens: torch.Tensor  # (A * K,) the newest token of each beam
    history: torch.Tensor  # (A * K, t) generated ids so far

    def keep(self, rows: torch.Tensor) -> None:
        """Keep only these flat rows (sentences that finished leave the batch)."""
        self.memory, self.src_mask = self.memory[rows], self.src_mask[rows]  # (A' * K, S, d), (A' * K, 1, 1, S)
        self.log_probs, self.tokens, self.history = self.log_probs[rows], self.tokens[rows], self.history[rows]
        self.cache.select(rows)


def _budgets(src: torch.Tensor, config, max_new_tokens: int | None) -> list[int]:
    """Step budget per sentence, so a sentence's result does not depend on its batch-mates."""
    if max_new_tokens is None:
        source_lengths = (src != config.pad_id).sum(dim=1).tolist()
        budgets = [default_max_new_tokens(length) for length in source_lengths]
    else:
        budgets = [max_new_tokens] * src.size(0)
    return [max(1, min(b, config.max_positions - 1)) for b in budgets]


def _start(model: Transformer, src: torch.Tensor, K: int) -> _Beams:
    """Encode once; the cross keys/values once per sentence, expanded to its K beams; beam 0 of each live."""
    config, device, batch = model.config, src.device, src.size(0)
    src_mask = padding_mask(src, config.pad_id)  # (B, 1, 1, S)
    memory = model.encode(src, src_mask).memory  # (B, S, d_model)
    cache = DecoderCache.empty(len(model.decoder_layers))
    for layer, layer_cache in zip(model.decoder_layers, cache.layers):
        key, value = layer.cross_attention.project_key_value(memory)  # (B, h, S, d_head) each
        layer_cache.cross_attention.store(key.repeat_interleave(K, dim=0), value.repeat_interleave(K, dim=0))
    # At the start only beam 0 of each sentence is real; the others get -inf so the first step does not
    # pick the same continuation K times.
    log_probs = torch.full((batch, K), float("-inf"), device=device)
    log_probs[:, 0] = 0.0
    return _Beams(
        list(range(batch)),
        memory.repeat_interleave(K, dim=0),
        src_mask.repeat_interleave(K, dim=0),
        cache,
        log_probs.view(batch * K),
        torch.full((batch * K,), config.bos_id, dtype=torch.long, device=device),  # newest token
        torch.empty((batch * K, 0), dtype=torch.long, device=device),
    )


def _step(
    model: Transformer,
    beams: _Beams,
    K: int,
    length_penalty: float,
    finished: list[list[Hypothesis]],
    at_limit: torch.Tensor | None = None,
) -> None:
    """One token for every live beam: [EOS] among the K best ends a hypothesis, the K best others continue.

    at_limit (A,) bool: sentences at their last step that must end there (force_eos_at_limit): [EOS] is
    their only candidate, at its own log P, so each of their live beams finishes."""
    config, n_active, vocab = model.config, len(beams.active), model.config.vocab_size
    device = beams.tokens.device
    ranks = torch.arange(2 * K, device=device)  # (2K,)
    hidden = model.decode(
        beams.tokens[:, None], beams.memory, beams.src_mask, None, beams.cache
    ).hidden  # (A * K, 1, d)
    log_probs = F.log_softmax(model.project(hidden[:, -1]).float(), dim=-1)  # (A * K, V)
    log_probs = log_probs.index_fill(1, never_generated(config, device), float("-inf"))  # Marian's models: no pad
    if at_limit is not None:
        only_eos = torch.full_like(log_probs, float("-inf"))  # (A * K, V)
        only_eos[:, config.eos_id] = log_probs[:, config.eos_id]
        log_probs = torch.where(at_limit.repeat_interleave(K)[:, None], only_eos, log_probs)
    candidates = (beams.log_probs[:, None] + log_probs).view(n_active, K * vocab)  # (A, K * V)
    # 2K candidates always hold K that are not [EOS]: each beam has only one [EOS] entry.
    top_log_probs, top_index = candidates.topk(min(2 * K, K * vocab), dim=-1)  # (A, 2K)
    top_beam = torch.div(top_index, vocab, rounding_mode="floor")  # (A, 2K) beam within sentence
    top_token = top_index % vocab  # (A, 2K)
    is_eos = top_token == config.eos_id

    # [EOS] among the K best candidates ends a hypothesis (lower-ranked ones are ignored, so K = 1 is
    # greedy decoding).
    ends = is_eos & (ranks[: is_eos.size(1)] < K) & torch.isfinite(top_log_probs)
    for row, rank in ends.nonzero().tolist():
        parent = row * K + int(top_beam[row, rank])
        ids = beams.history[parent].tolist() + [config.eos_id]
        finished[beams.active[row]].append(_hypothesis(ids, float(top_log_probs[row, rank]), length_penalty, True))

    # The K best candidates that are not [EOS] continue: stable sort puts them first.
    order = (is_eos.long() * (2 * K) + ranks[: is_eos.size(1)]).argsort(dim=-1)[:, :K]  # (A, K)
    parents = (top_beam.gather(1, order) + torch.arange(n_active, device=device)[:, None] * K).view(-1)  # (A*K,)
    beams.log_probs = top_log_probs.gather(1, order).view(-1)  # (A * K,)
    beams.tokens = top_token.gather(1, order).view(-1)  # (A * K,)
    beams.history = torch.cat([beams.history[parents], beams.tokens[:, None]], dim=1)  # (A * K, step + 1)
    for layer_cache in beams.cache.layers:  # the reselected beams' own past keys/values, (A * K, h, t, d_head)
        layer_cache.self_attention.select(parents)


def _result(beams: _Beams, row: int, hypotheses: list[Hypothesis], K: int, length_penalty: float) -> BeamResult:
    """A sentence's K best hypotheses; out of steps, its best live beams fill the list."""
    hypotheses = list(hypotheses)
    if len(hypotheses) < K:
        for beam in range(K):
            log_prob = float(beams.log_probs[row * K + beam])
            if log_prob > float("-inf"):
                ids = beams.history[row * K + beam].tolist()
                hypotheses.append(_hypothesis(ids, log_prob, length_penalty, False))
    hypotheses.sort(key=lambda h: h.score, reverse=True)
    return BeamResult(hypotheses[:K])


@torch.no_grad()
def beam_search(
    model: Transformer,
    src: torch.Tensor,
    beam_size: int = 4,
    length_penalty: float = 0.6,
    max_new_tokens: int | None = None,
) -> list[BeamResult]:
    """Beam search for a batch of padded sources.

    Args:
        model: the Transformer (call `model.eval()` first: dropout would make the search random).
        src: (B, S) source ids, right-padded with pad_id.
        beam_size: K, live beams per sentence (section 6.1: 4).
        length_penalty: alpha of the GNMT length penalty (section 6.1: 0.6).
        max_new_tokens: most generated tokens per sentence, [EOS] included; by default
            `default_max_new_tokens` of each sentence's own (unpadded) source length.

    Returns:
        One BeamResult per batch row, its hypotheses sorted best first. Unfinished hypotheses
        appear only when fewer than beam_size finished before the step limit.
    """
    if beam_size < 1:
        raise ValueError(f"beam_size must be at least 1, got {beam_size}")
    if src.dim() != 2 or src.size(0) == 0:
        raise ValueError(f"src must be a non-empty (B, S) tensor of ids, got shape {tuple(src.shape)}")
    src = src.to(model.embedding.weight.device)
    K, budgets = beam_size, _budgets(src, model.config, max_new_tokens)
    beams = _start(model, src, K)
    finished: list[list[Hypothesis]] = [[] for _ in range(src.size(0))]
    results: list[BeamResult | None] = [None] * src.size(0)
    for step in range(max(budgets)):
        at_limit = (
            torch.tensor([step + 1 >= budgets[index] for index in beams.active], device=src.device)
            if model.config.force_eos_at_limit
            else None
        )  # (A,)
        _step(model, beams, K, length_penalty, finished, at_limit)
        done = [
            row
            for row, index in enumerate(beams.active)  # rows (positions in `active`) that end now
            if len(finished[index]) >= K or step + 1 >= budgets[index]
        ]
        for row in done:
            results[beams.active[row]] = _result(beams, row, finished[beams.active[row]], K, length_penalty)
        if len(done) == len(beams.active):
            break
        if done:  # drop finished sentences' K rows from every per-beam tensor
            keep_rows = [row for row in range(len(beams.active)) if row not in done]
            keep = (torch.tensor(keep_rows, device=src.device)[:, None] * K + torch.arange(K, device=src.device)).view(
                -1
            )
            beams.active = [beams.active[row] for row in keep_rows]
            beams.keep(keep)
    return results  # type: ignore[return-value]  # every sentence is done after max(budgets) steps
