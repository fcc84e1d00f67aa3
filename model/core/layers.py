"""Encoder and decoder layers, sections 3.1 and 3.3, post-LN exactly as in the paper.

Each sub-layer is wrapped as LayerNorm(x + Dropout(Sublayer(x))) ("post-LN", section 3.1; residual
dropout, 5.4), Figure 1's "Add & Norm" box, written once in `AddAndNorm`: the normalisation comes after
the residual addition, not before the sub-layer (pre-LN).

Each layer has one `forward`: with output_attentions=True its attention sub-layers run written out and
return their weights and scores (for the trace), otherwise PyTorch's fused kernel (for training and
decoding). The layer output type is the same either way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from model.core.attention import AttentionOutput, KeyValueCache, MultiHeadAttention
from model.core.config import TransformerConfig


ACTIVATIONS = {"relu": F.relu, "swish": F.silu}  # max(0, x) (3.3); x * sigmoid(x) in Marian's models


class PositionwiseFeedForward(nn.Module):
    """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2, section 3.3 (the activation is the config's)."""

    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.linear1 = nn.Linear(config.d_model, config.d_ff)
        self.linear2 = nn.Linear(config.d_ff, config.d_model)
        self.dropout = nn.Dropout(config.dropout)
        self.activation = ACTIVATIONS[config.ffn_activation]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear2(self.dropout(self.activation(self.linear1(x))))  # (B, T, d_ff) -> (B, T, d_model)


class AddAndNorm(nn.LayerNorm):
    """Add & Norm (Figure 1), post-LN: LayerNorm(x + Dropout(Sublayer(x))), sections 3.1 and 5.4.

    A LayerNorm over d_model that adds the residual first, so its parameters keep a LayerNorm's
    names (`norm1.weight`, `norm1.bias`) in checkpoints.
    """

    def __init__(self, config: TransformerConfig):
        super().__init__(config.d_model, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x: torch.Tensor, sublayer_output: torch.Tensor) -> torch.Tensor:
        """x (B, T, d_model): the sub-layer's input; sublayer_output (B, T, d_model): Sublayer(x)."""
        return super().forward(x + self.dropout(sublayer_output))


class EncoderLayerOutput(NamedTuple):
    hidden: torch.Tensor  # (B, S, d_model)
    self_attention: AttentionOutput


class EncoderLayer(nn.Module):
    """Self-attention then feed-forward, each followed by Add & Norm (3.1, encoder)."""

    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.self_attention = MultiHeadAttention(config)
        self.feed_forward = PositionwiseFeedForward(config)
        self.norm1 = AddAndNorm(config)
        self.norm2 = AddAndNorm(config)

    def forward(
        self,
        x: torch.Tensor,
        src_mask: torch.Tensor,
        head_mask: torch.Tensor | None = None,
        *,
        output_attentions: bool = False,
    ) -> EncoderLayerOutput:
        """x (B, S, d_model), src_mask (B, 1, 1, S), head_mask (h,) 1 keep / 0 off -> hidden + attention.

        output_attentions=True: the attention's weights and scores come back (written-out kernel).
        """
        attention = self.self_attention(x, x, src_mask, head_mask, output_attentions=output_attentions)
        x = self.norm1(x, attention.output)
        return EncoderLayerOutput(self.norm2(x, self.feed_forward(x)), attention)


@dataclass
class LayerCache:
    """Keys and values one decoder layer keeps between decoding steps, one KeyValueCache per attention.

    Masked self-attention's grow by one row per step; encoder-decoder attention's are computed once
    from the encoder memory and reused at every step.
    """

    self_attention: KeyValueCache = field(default_factory=lambda: KeyValueCache(grows=True))
    cross_attention: KeyValueCache = field(default_factory=lambda: KeyValueCache(grows=False))


@dataclass
class DecoderCache:
    """One LayerCache per decoder layer, plus how many target positions are already cached."""

    layers: list[LayerCache] = field(default_factory=list)
    length: int = 0

    @classmethod
    def empty(cls, n_layers: int) -> "DecoderCache":
        return cls([LayerCache() for _ in range(n_layers)], 0)

    def select(self, rows: torch.Tensor) -> None:
        """Keep only these batch rows, in this order, in every layer's caches (beam search)."""
        for layer in self.layers:
            layer.self_attention.select(rows)
            layer.cross_attention.select(rows)


class DecoderLayerOutput(NamedTuple):
    hidden: torch.Tensor  # (B, T, d_model)
    self_attention: AttentionOutput  # masked self-attention, weights (B, h, T, T_cached + T)
    cross_attention: AttentionOutput  # encoder-decoder attention, weights (B, h, T, S)


class DecoderLayer(nn.Module):
    """Masked self-attention, encoder-decoder attention, feed-forward, each followed by Add & Norm (3.1, decoder)."""

    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.self_attention = MultiHeadAttention(config)
        self.cross_attention = MultiHeadAttention(config)
        self.feed_forward = PositionwiseFeedForward(config)
        self.norm1 = AddAndNorm(config)
        self.norm2 = AddAndNorm(config)
        self.norm3 = AddAndNorm(config)

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor,
        src_mask: torch.Tensor,
        tgt_mask: torch.Tensor | None,
        cache: LayerCache | None = None,
        self_head_mask: torch.Tensor | None = None,
        cross_head_mask: torch.Tensor | None = None,
        *,
        output_attentions: bool = False,
    ) -> DecoderLayerOutput:
        """x (B, T, d_model): the new target positions; memory (B, S, d_model).

        Without a cache, x is the whole target prefix. With one, x holds only the positions not
        yet cached, and keys/values of earlier positions come from the cache (which is updated).
        Head masks (h,): 1 keeps a head, 0 switches its output off. output_attentions=True: both
        attentions' weights and scores come back (written-out kernel).
        """
        self_cache, cross_cache = (cache.self_attention, cache.cross_attention) if cache else (None, None)
        self_attention = self.self_attention(
            x, x, tgt_mask, self_head_mask, self_cache, output_attentions=output_attentions
        )
        x = self.norm1(x, self_attention.output)
        cross_attention = self.cross_attention(
            x, memory, src_mask, cross_head_mask, cross_cache, output_attentions=output_attentions
        )
        x = self.norm2(x, cross_attention.output)
        return DecoderLayerOutput(self.norm3(x, self.feed_forward(x)), self_attention, cross_attention)
