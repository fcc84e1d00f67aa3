"""Scaled dot-product attention (3.2.1) and multi-head attention (3.2.2), one forward path.

`MultiHeadAttention.forward` chooses the kernel inside, as Hugging Face's Marian does:
- asked for the weights (`output_attentions=True`, the trace in model/decoding/teacher_forced.py):
  `scaled_dot_product_attention` written out step by step (scores, mask, softmax, weighted sum), so
  the attention weights and the scores before the softmax come back as data;
- otherwise (training, validation, greedy and beam search: they need only the output):
  `torch.nn.functional.scaled_dot_product_attention`, which never materialises the weights (a flash /
  memory-efficient kernel on a GPU, a fused loop on a CPU); weights and scores come back as None.
tests/model/core/test_attention_kernels.py checks the two kernels agree.

Nothing is stored on the module between calls: keys and values kept across decoding steps live in a
`KeyValueCache` that the caller owns, passed in as Marian passes its `past_key_value`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from model.core.config import TransformerConfig
from model.core.masks import masked_fill_value


class AttentionOutput(NamedTuple):
    output: torch.Tensor  # (B, T_q, d_model)
    weights: torch.Tensor | None  # (B, h, T_q, T_k): softmax(QK^T / sqrt(d_k) + mask), rows sum to 1; None unless asked
    scores: torch.Tensor | None  # (B, h, T_q, T_k): QK^T / sqrt(d_k), before the mask; None unless asked


def scaled_dot_product_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    mask: torch.Tensor | None = None,
    dropout: nn.Module | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Attention(Q, K, V) = softmax(QK^T / sqrt(d_k)) V, section 3.2.1.

    query (B, h, T_q, d_k), key (B, h, T_k, d_k), value (B, h, T_k, d_v);
    mask broadcastable to (B, h, T_q, T_k), True = may attend.
    Returns output (B, h, T_q, d_v), weights (B, h, T_q, T_k), scores (B, h, T_q, T_k).
    """
    d_k = query.size(-1)
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)  # (B, h, T_q, T_k)
    masked = scores if mask is None else scores.masked_fill(~mask, masked_fill_value(scores.dtype))
    weights = F.softmax(masked, dim=-1)
    attended = weights if dropout is None else dropout(weights)
    return attended @ value, weights, scores


@dataclass
class KeyValueCache:
    """The keys and values one attention keeps between decoding steps, each (B, h, T, d_head).

    grows=True (masked self-attention): every call appends the new positions' keys and values; earlier rows
    never change (the look-ahead mask, 3.2.3). grows=False (encoder-decoder attention): the memory's keys and
    values are computed by the first call and reused by every later one.
    """

    grows: bool
    key: torch.Tensor | None = None
    value: torch.Tensor | None = None

    @property
    def is_filled(self) -> bool:
        return self.key is not None

    def store(self, key: torch.Tensor, value: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Keep the new keys and values (after the cached ones when the cache grows); return all of them."""
        if self.grows and self.is_filled:
            key = torch.cat([self.key, key], dim=2)  # (B, h, T_cached + T, d_head)
            value = torch.cat([self.value, value], dim=2)
        self.key, self.value = key, value
        return key, value

    def select(self, rows: torch.Tensor) -> None:
        """Keep only these batch rows, in this order (beam search reorders and drops beams)."""
        if self.is_filled:
            self.key, self.value = self.key.index_select(0, rows), self.value.index_select(0, rows)


class MultiHeadAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1..head_h) W^O, head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V).

    The h per-head projections are kept as one d_model x d_model matrix each (q_proj, k_proj,
    v_proj) and split into heads by reshaping, which is the same computation.
    """

    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.n_heads = config.n_heads
        self.d_head = config.d_head
        self.q_proj = nn.Linear(config.d_model, config.d_model)
        self.k_proj = nn.Linear(config.d_model, config.d_model)
        self.v_proj = nn.Linear(config.d_model, config.d_model)
        self.out_proj = nn.Linear(config.d_model, config.d_model)
        self.attention_dropout = nn.Dropout(config.attention_dropout)

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, d_model) -> (B, h, T, d_head)."""
        batch, length, _ = x.shape
        return x.view(batch, length, self.n_heads, self.d_head).transpose(1, 2)

    def merge_heads(self, heads: torch.Tensor, head_mask: torch.Tensor | None) -> torch.Tensor:
        """Concat(head_1..head_h) W^O with switched-off heads zeroed. (B, h, T_q, d_head) -> (B, T_q, d_model).

        head_mask (h,): 1 keeps a head, 0 zeroes its output (as Hugging Face's `head_mask`).
        """
        if head_mask is not None:
            heads = heads * head_mask.to(heads.dtype)[None, :, None, None]  # (B, h, T_q, d_head)
        batch, _, length, _ = heads.shape
        concat = heads.transpose(1, 2).reshape(batch, length, self.n_heads * self.d_head)  # (B, T_q, d_model)
        return self.out_proj(concat)

    def project_key_value(self, source: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """K W^K and V W^V of a sequence, split into heads: (B, T, d_model) -> 2 x (B, h, T, d_head)."""
        return self.split_heads(self.k_proj(source)), self.split_heads(self.v_proj(source))

    def keys_values(self, source: torch.Tensor, cache: KeyValueCache | None) -> tuple[torch.Tensor, torch.Tensor]:
        """The keys and values attended to: of `source`, after the cached ones; 2 x (B, h, T_k, d_head)."""
        if cache is None:
            return self.project_key_value(source)
        if not cache.grows and cache.is_filled:
            return cache.key, cache.value  # encoder-decoder attention: the memory's, computed once
        return cache.store(*self.project_key_value(source))

    def forward(
        self,
        query: torch.Tensor,
        key_value: torch.Tensor,
        mask: torch.Tensor | None = None,
        head_mask: torch.Tensor | None = None,
        cache: KeyValueCache | None = None,
        *,
        output_attentions: bool = False,
    ) -> AttentionOutput:
        """MultiHead(Q, K, V): query (B, T_q, d_model) gives Q; key_value (B, T_k, d_model) gives K and V.

        Self-attention passes the same sequence twice, encoder-decoder attention the memory as key_value
        (3.2.3). With a cache, key_value holds only the positions not cached yet (or anything, once an
        encoder-decoder cache is filled) and the cache is updated in place.
        mask broadcastable to (B, h, T_q, T_k), True = may attend; head_mask (h,), 1 keep / 0 off.
        output_attentions=True runs the written-out attention and returns its weights and scores;
        otherwise the fused kernel (dropout on the weights through `dropout_p`, in training mode only,
        as nn.Dropout) and None for both.
        """
        key, value = self.keys_values(key_value, cache)  # (B, h, T_k, d_head) each
        q = self.split_heads(self.q_proj(query))  # (B, h, T_q, d_head)
        if output_attentions:
            heads, weights, scores = scaled_dot_product_attention(q, key, value, mask, self.attention_dropout)
        else:
            dropout_p = self.attention_dropout.p if self.training else 0.0
            heads = F.scaled_dot_product_attention(q, key, value, mask, dropout_p=dropout_p)  # (B, h, T_q, d_head)
            weights = scores = None
        return AttentionOutput(self.merge_heads(heads, head_mask), weights, scores)
