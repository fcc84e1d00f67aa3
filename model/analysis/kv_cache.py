"""The decoder's key/value cache while stepping, recorded from a real cached decoding loop.

Auto-regressive decoding (3.1) feeds one new token per step. Thanks to the look-ahead mask
(3.2.3) the keys and values of earlier target positions never change, so each decoder layer keeps
them (model/core/layers.py `LayerCache`): masked self-attention keys/values grow by one row per step,
and encoder-decoder keys/values are projected once from the encoder memory and reused at every
step. What a step *reads* is its query's attention weights over the cached keys.

`record_cache` runs the same loop as greedy decoding (model.decode with a `DecoderCache`, one
token per step), feeding the given target tokens, and keeps what the cache holds and what each
step reads. Given the trace's own tokens ([BOS] + its output), it replays the greedy run exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from model.core.layers import DecoderCache
from model.core.masks import padding_mask
from model.decoding.trace import TranslationTrace
from model.core.transformer import Transformer


@dataclass
class CacheStep:
    """The cache at one step and what that step reads from it. L = decoder layers, h = heads."""

    step: int  # 0-based; the cache then holds step + 1 target positions
    self_keys: np.ndarray  # (L, h, step + 1, d_head) masked self-attention keys, one row per position
    self_values: np.ndarray  # (L, h, step + 1, d_head)
    cross_keys: np.ndarray  # (L, h, S, d_head) encoder-decoder keys, the same at every step
    cross_values: np.ndarray  # (L, h, S, d_head)
    self_read: np.ndarray  # (L, h, step + 1) the step's self-attention weights over the cached keys
    cross_read: np.ndarray  # (L, h, S) the step's cross-attention weights over the source keys

    @property
    def self_output(self) -> np.ndarray:
        """(L, h, d_head) what each head takes from the cached values: weights · values (3.2.1)."""
        return np.einsum("lhk,lhkd->lhd", self.self_read, self.self_values)

    @property
    def cross_output(self) -> np.ndarray:
        """(L, h, d_head) weights · cached cross values."""
        return np.einsum("lhk,lhkd->lhd", self.cross_read, self.cross_values)


@dataclass
class CacheRecording:
    """A whole cached run. `at(step)` gives the cache as it stood at that step."""

    target_ids: list[int]  # T ids fed to the decoder, [BOS] first
    self_keys: np.ndarray  # (L, h, T, d_head) row t: the key position t wrote into the cache at step t
    self_values: np.ndarray  # (L, h, T, d_head)
    cross_keys: np.ndarray  # (L, h, S, d_head) computed once, at step 0
    cross_values: np.ndarray  # (L, h, S, d_head)
    self_read: np.ndarray  # (L, h, T, T) step t's weights in [:, :, t, :t + 1], zero beyond (causal)
    cross_read: np.ndarray  # (L, h, T, S) step t's weights in [:, :, t]
    cache_lengths: list[int]  # positions cached after each step: 1, 2, ..., T
    cross_reused: bool  # True: every step read the very cross tensors computed at step 0
    rows_unchanged: bool  # True: the cache after the last step still holds each row as written

    @property
    def num_steps(self) -> int:
        return len(self.target_ids)

    def at(self, step: int) -> CacheStep:
        """The cache as it stood at `step` (rows 0..step, written at steps 0..step) and that step's reads."""
        if not 0 <= step < self.num_steps:
            raise ValueError(f"step must be in 0..{self.num_steps - 1}, got {step}")
        rows = step + 1
        return CacheStep(
            step,
            self.self_keys[:, :, :rows],
            self.self_values[:, :, :rows],
            self.cross_keys,
            self.cross_values,
            self.self_read[:, :, step, :rows],
            self.cross_read[:, :, step],
        )


def _numpy(tensor: torch.Tensor) -> np.ndarray:
    return tensor.float().cpu().numpy()


@torch.inference_mode()
def record_cache(model: Transformer, source_ids: Sequence[int], target_ids: Sequence[int]) -> CacheRecording:
    """Feed target_ids one by one through the cached decoder and record the cache and its reads.

    Args:
        model: the Transformer (put in eval mode here).
        source_ids: S encoder ids, language tag first, [EOS] last.
        target_ids: T decoder input ids, [BOS] first (a trace's [BOS] + output_ids[:-1]).
    """
    if not len(source_ids) or not len(target_ids):
        raise ValueError("source_ids and target_ids must not be empty")
    model.eval()
    config = model.config
    device = model.embedding.weight.device
    src = torch.tensor([list(source_ids)], dtype=torch.long, device=device)  # (1, S)
    src_mask = padding_mask(src, config.pad_id)  # (1, 1, 1, S)
    memory = model.encode(src, src_mask, output_attentions=True).memory  # (1, S, d_model), as the trace computes it
    tgt = torch.tensor([list(target_ids)], dtype=torch.long, device=device)  # (1, T)
    n_layers, n_target = len(model.decoder_layers), tgt.size(1)
    cache = DecoderCache.empty(n_layers)
    self_read = np.zeros((n_layers, config.n_heads, n_target, n_target), dtype=np.float32)
    key_rows, value_rows, cross_rows, lengths, first_cross, reused = [], [], [], [], None, True
    for step in range(n_target):
        # one new position, no mask: it may attend to every cached key (all earlier, itself last)
        decoded = model.decode(tgt[:, step : step + 1], memory, src_mask, None, cache, output_attentions=True)
        self_read[:, :, step, : step + 1] = np.stack([_numpy(a.weights[0, :, 0]) for a in decoded.self_attentions])
        cross_rows.append(np.stack([_numpy(a.weights[0, :, 0]) for a in decoded.cross_attentions]))  # (L, h, S)
        kept = [layer.self_attention for layer in cache.layers]  # each layer's self-attention cache
        key_rows.append(np.stack([_numpy(c.key[0, :, step]) for c in kept]))  # (L, h, d_head)
        value_rows.append(np.stack([_numpy(c.value[0, :, step]) for c in kept]))
        cross_now = [layer.cross_attention.key for layer in cache.layers]
        first_cross = cross_now if first_cross is None else first_cross
        reused = reused and all(a is b for a, b in zip(first_cross, cross_now))
        lengths.append(cache.length)

    def final(attention: str, part: str, rows: int) -> np.ndarray:
        """What the cache holds at the end: each layer's `attention` cache's `part` ("key", "value")."""
        kept = [getattr(getattr(layer, attention), part) for layer in cache.layers]
        return np.stack([_numpy(tensor[0, :, :rows]) for tensor in kept])  # (L, h, rows, d_head)

    self_keys, self_values = np.stack(key_rows, axis=2), np.stack(value_rows, axis=2)  # (L, h, T, d_head)
    unchanged = np.array_equal(final("self_attention", "key", n_target), self_keys) and np.array_equal(
        final("self_attention", "value", n_target), self_values
    )
    n_source = memory.size(1)
    return CacheRecording(
        [int(i) for i in target_ids],
        self_keys,
        self_values,
        final("cross_attention", "key", n_source),
        final("cross_attention", "value", n_source),
        self_read,
        np.stack(cross_rows, axis=2),
        lengths,
        reused,
        unchanged,
    )


def record_trace_cache(model: Transformer, trace: TranslationTrace) -> CacheRecording:
    """`record_cache` over a trace's own decoding: [BOS] + output_ids[:-1], as greedy fed them."""
    return record_cache(model, trace.source_ids, [model.config.bos_id, *trace.output_ids[:-1]])
