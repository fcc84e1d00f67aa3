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
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from model.decoding.greedy import default_max_new_tokens
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
    config = model.config
    device = model.embedding.weight.device
    src = src.to(device)
    batch, K, vocab = src.size(0), beam_size, config.vocab_size

    # Step budget per sentence, so a sentence's result does not depend on its batch-mates.
    if max_new_tokens is None:
        source_lengths = (src != config.pad_id).sum(dim=1).tolist()
        budgets = [default_max_new_tokens(length) for length in source_lengths]
    else:
        budgets = [max_new_tokens] * batch
    budgets = [max(1, min(b, config.max_positions - 1)) for b in budgets]

    src_mask = padding_mask(src, config.pad_id)  # (B, 1, 1, S)
    memory = model.encode_fused(src, src_mask)  # (B, S, d_model)
    cache = DecoderCache.empty(len(model.decoder_layers))
    for layer, layer_cache in zip(model.decoder_layers, cache.layers):
        key, value = layer.cross_attention.project_key_value(memory)  # (B, h, S, d_head) each
        layer_cache.cross_key = key.repeat_interleave(K, dim=0)  # (B * K, h, S, d_head)
        layer_cache.cross_value = value.repeat_interleave(K, dim=0)
    memory = memory.repeat_interleave(K, dim=0)  # (B * K, S, d_model)
    src_mask = src_mask.repeat_interleave(K, dim=0)  # (B * K, 1, 1, S)

    # Live beams. At the start only beam 0 of each sentence is real; the others get -inf so the
    # first step does not pick the same continuation K times.
    beam_log_probs = torch.full((batch, K), float("-inf"), device=device)
    beam_log_probs[:, 0] = 0.0
    beam_log_probs = beam_log_probs.view(batch * K)  # (B * K,)
    tokens = torch.full((batch * K,), config.bos_id, dtype=torch.long, device=device)  # newest token
    history = torch.empty((batch * K, 0), dtype=torch.long, device=device)  # generated ids so far

    active = list(range(batch))  # original batch index of each sentence still searching
    finished: list[list[Hypothesis]] = [[] for _ in range(batch)]
    results: list[BeamResult | None] = [None] * batch
    ranks = torch.arange(2 * K, device=device)  # (2K,)

    for step in range(max(budgets)):
        n_active = len(active)
        hidden = model.decode_fused(tokens[:, None], memory, src_mask, None, cache)  # (A * K, 1, d)
        log_probs = F.log_softmax(model.project(hidden[:, -1]).float(), dim=-1)  # (A * K, V)
        candidates = (beam_log_probs[:, None] + log_probs).view(n_active, K * vocab)  # (A, K * V)
        # 2K candidates always hold K that are not [EOS]: each beam has only one [EOS] entry.
        top_log_probs, top_index = candidates.topk(min(2 * K, K * vocab), dim=-1)  # (A, 2K)
        top_beam = torch.div(top_index, vocab, rounding_mode="floor")  # (A, 2K) beam within sentence
        top_token = top_index % vocab  # (A, 2K)
        is_eos = top_token == config.eos_id

        # [EOS] among the K best candidates ends a hypothesis (lower-ranked ones are ignored, so
        # K = 1 is greedy decoding).
        ends = is_eos & (ranks[: is_eos.size(1)] < K) & torch.isfinite(top_log_probs)
        for row, rank in ends.nonzero().tolist():
            parent = row * K + int(top_beam[row, rank])
            ids = history[parent].tolist() + [config.eos_id]
            finished[active[row]].append(_hypothesis(ids, float(top_log_probs[row, rank]), length_penalty, True))

        # The K best candidates that are not [EOS] continue: stable sort puts them first.
        order = (is_eos.long() * (2 * K) + ranks[: is_eos.size(1)]).argsort(dim=-1)[:, :K]  # (A, K)
        parents = (top_beam.gather(1, order) + torch.arange(n_active, device=device)[:, None] * K).view(-1)  # (A*K,)
        beam_log_probs = top_log_probs.gather(1, order).view(-1)  # (A * K,)
        tokens = top_token.gather(1, order).view(-1)  # (A * K,)
        history = torch.cat([history[parents], tokens[:, None]], dim=1)  # (A * K, step + 1)
        for layer_cache in cache.layers:  # the reselected beams' own past keys/values
            layer_cache.self_key = layer_cache.self_key.index_select(0, parents)  # (A * K, h, t, d_head)
            layer_cache.self_value = layer_cache.self_value.index_select(0, parents)

        done: set[int] = set()  # rows (positions in `active`) whose search ends now
        for row, index in enumerate(active):
            if len(finished[index]) >= K or step + 1 >= budgets[index]:
                hypotheses = list(finished[index])
                if len(hypotheses) < K:  # out of steps: the best live beams fill the list
                    for beam in range(K):
                        log_prob = float(beam_log_probs[row * K + beam])
                        if log_prob > float("-inf"):
                            ids = history[row * K + beam].tolist()
                            hypotheses.append(_hypothesis(ids, log_prob, length_penalty, False))
                hypotheses.sort(key=lambda h: h.score, reverse=True)
                results[index] = BeamResult(hypotheses[:K])
                done.add(row)
        if len(done) == n_active:
            break
        if done:  # drop finished sentences' K rows from every per-beam tensor
            keep_rows = [row for row in range(n_active) if row not in done]
            keep = (torch.tensor(keep_rows, device=device)[:, None] * K + torch.arange(K, device=device)).view(-1)
            active = [active[row] for row in keep_rows]
            memory, src_mask = memory[keep], src_mask[keep]  # (A' * K, S, d), (A' * K, 1, 1, S)
            beam_log_probs, tokens, history = beam_log_probs[keep], tokens[keep], history[keep]
            for layer_cache in cache.layers:
                for name in ("self_key", "self_value", "cross_key", "cross_value"):
                    setattr(layer_cache, name, getattr(layer_cache, name).index_select(0, keep))
    return results  # type: ignore[return-value]  # every sentence is done after max(budgets) steps
