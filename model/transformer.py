"""The encoder-decoder Transformer of Figure 1 (sections 3.1-3.5).

`encode` runs the encoder stack, `decode` the decoder stack (optionally with a KV cache),
`project` the pre-softmax linear layer. One embedding matrix is shared by the encoder input,
the decoder input and the pre-softmax projection (3.4), and embeddings are multiplied by
sqrt(d_model) before the sinusoidal positional encodings (3.5) are added.

Every attention weight matrix is returned as data in EncoderOutput / DecoderOutput;
nothing is stashed on a module.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from .ablation import Ablation
from .attention import AttentionOutput
from .config import TransformerConfig
from .layers import DecoderCache, DecoderLayer, EncoderLayer
from .masks import decoder_mask, padding_mask
from .positional import sinusoidal_positional_encoding


class EncoderOutput(NamedTuple):
    memory: torch.Tensor  # (B, S, d_model): the encoder's final hidden states
    self_attentions: list[AttentionOutput]  # one per layer, weights (B, h, S, S)


class DecoderOutput(NamedTuple):
    hidden: torch.Tensor  # (B, T, d_model): final decoder states (before the projection)
    layer_hiddens: list[torch.Tensor]  # output of each decoder layer, (B, T, d_model)
    self_attentions: list[AttentionOutput]  # one per layer, weights (B, h, T, T_total)
    cross_attentions: list[AttentionOutput]  # one per layer, weights (B, h, T, S)


class Transformer(nn.Module):
    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.config = config
        self.embedding = nn.Embedding(config.vocab_size, config.d_model, padding_idx=config.pad_id)
        self.register_buffer(
            "positional_encoding",
            sinusoidal_positional_encoding(config.max_positions, config.d_model),
            persistent=False,  # a fixed function of the config, never saved with the weights
        )
        self.embedding_dropout = nn.Dropout(config.dropout)
        self.encoder_layers = nn.ModuleList(EncoderLayer(config) for _ in range(config.n_encoder_layers))
        self.decoder_layers = nn.ModuleList(DecoderLayer(config) for _ in range(config.n_decoder_layers))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Xavier-uniform matrices (as the reference implementations), N(0, d_model^-0.5) embeddings."""
        for name, parameter in self.named_parameters():
            if parameter.dim() > 1 and name != "embedding.weight":
                nn.init.xavier_uniform_(parameter)
            elif name.endswith("bias"):
                nn.init.zeros_(parameter)
        nn.init.normal_(self.embedding.weight, mean=0.0, std=self.config.d_model ** -0.5)
        with torch.no_grad():
            self.embedding.weight[self.config.pad_id].zero_()

    def embed(self, ids: torch.Tensor, offset: int = 0, positions: bool = True) -> torch.Tensor:
        """Token embedding * sqrt(d_model) + PE (3.4, 3.5). ids (B, T) -> (B, T, d_model).

        `offset` is the position of ids[:, 0]: a cached decoder step embeds position t alone.
        positions=False leaves the PE out (the positional-encoding ablation).
        """
        length = ids.size(1)
        if offset + length > self.config.max_positions:
            raise ValueError(
                f"sequence of {offset + length} positions exceeds max_positions={self.config.max_positions}"
            )
        scaled = self.embedding(ids) * math.sqrt(self.config.d_model)
        if positions:
            scaled = scaled + self.positional_encoding[offset:offset + length]
        return self.embedding_dropout(scaled)

    def _head_masks(self, ablation: Ablation | None, kind: str, n_layers: int) -> list:
        """Per-layer (h,) head masks of an ablation, or None for every layer."""
        mask = ablation.head_mask(kind, n_layers, self.config.n_heads, self.embedding.weight.device) if ablation else None
        return [None] * n_layers if mask is None else list(mask)

    def encode(self, src: torch.Tensor, src_mask: torch.Tensor, ablation: Ablation | None = None) -> EncoderOutput:
        """src (B, S) token ids, src_mask (B, 1, 1, S) -> memory (B, S, d_model) + attentions."""
        x = self.embed(src, positions=ablation is None or ablation.positional_encoding)
        attentions = []
        head_masks = self._head_masks(ablation, "encoder", len(self.encoder_layers))
        for layer, head_mask in zip(self.encoder_layers, head_masks):
            x, attention = layer(x, src_mask, head_mask)
            attentions.append(attention)
        return EncoderOutput(x, attentions)

    def decode(
        self,
        tgt: torch.Tensor,
        memory: torch.Tensor,
        src_mask: torch.Tensor,
        tgt_mask: torch.Tensor,
        cache: DecoderCache | None = None,
        ablation: Ablation | None = None,
    ) -> DecoderOutput:
        """tgt (B, T) target ids (shifted right: they start with [BOS]).

        Without a cache tgt is the whole prefix and tgt_mask (B, 1, T, T) is the combined causal
        and padding mask. With a cache tgt holds only new positions and tgt_mask (B, 1, T, T_total)
        covers cached + new keys; the cache is extended in place.
        """
        offset = cache.length if cache is not None else 0
        x = self.embed(tgt, offset, positions=ablation is None or ablation.positional_encoding)
        hiddens, self_attentions, cross_attentions = [], [], []
        n_layers = len(self.decoder_layers)
        self_masks = self._head_masks(ablation, "decoder_self", n_layers)
        cross_masks = self._head_masks(ablation, "cross", n_layers)
        for index, layer in enumerate(self.decoder_layers):
            layer_cache = cache.layers[index] if cache is not None else None
            x, self_attention, cross_attention = layer(
                x, memory, src_mask, tgt_mask, layer_cache, self_masks[index], cross_masks[index])
            hiddens.append(x)
            self_attentions.append(self_attention)
            cross_attentions.append(cross_attention)
        if cache is not None:
            cache.length += tgt.size(1)
        return DecoderOutput(x, hiddens, self_attentions, cross_attentions)

    def project(self, hidden: torch.Tensor) -> torch.Tensor:
        """Pre-softmax linear layer sharing the embedding matrix (3.4). (B, T, d_model) -> (B, T, V)."""
        return F.linear(hidden, self.embedding.weight)

    def forward(self, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
        """Teacher-forced logits for training. src (B, S), tgt (B, T) -> logits (B, T, V)."""
        src_mask = padding_mask(src, self.config.pad_id)
        memory = self.encode(src, src_mask).memory
        hidden = self.decode(tgt, memory, src_mask, decoder_mask(tgt, self.config.pad_id)).hidden
        return self.project(hidden)

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())
