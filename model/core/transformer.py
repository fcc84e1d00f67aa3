"""The encoder-decoder Transformer of Figure 1 (sections 3.1-3.5).

`encode` runs the encoder stack, `decode` the decoder stack (optionally with a KV cache), `project`
the pre-softmax linear layer, `forward` (training) all three. One embedding matrix is shared by the
encoder input, the decoder input and the pre-softmax projection (3.4), and embeddings are multiplied
by sqrt(d_model) before the sinusoidal positional encodings (3.5) are added.

`encode` / `decode` return every layer's attention as data in EncoderOutput / DecoderOutput, as
Hugging Face's Marian does; nothing is stashed on a module. With output_attentions=True each
AttentionOutput carries its weights and scores (written-out attention, for the trace); otherwise
they are None and the layers run PyTorch's fused kernel (training, validation, decoding).
Interventions come in as plain tensors in one `Interventions` tuple, as Marian takes `head_mask`:
per-layer head masks (L, h), 1 = keep, 0 = switch the head's output off, and `use_positions=False` to
leave the positional encodings out (model/decoding/ablation.py builds them).

This module knows nothing of files or the Hub: model/checkpoints/ loads and saves it.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from model.core.attention import AttentionOutput
from model.core.config import TransformerConfig
from model.core.layers import DecoderCache, DecoderLayer, EncoderLayer
from model.core.masks import decoder_mask, padding_mask
from model.core.positional import sinusoidal_positional_encoding


class EncoderOutput(NamedTuple):
    memory: torch.Tensor  # (B, S, d_model): the encoder's final hidden states
    self_attentions: list[AttentionOutput]  # one per layer, weights (B, h, S, S) if output_attentions


class Interventions(NamedTuple):
    """Heads switched off and positions left out, as plain tensors; the default changes nothing."""

    encoder: torch.Tensor | None = None  # (L_enc, h) encoder self-attention head mask, 1 keep / 0 off
    decoder_self: torch.Tensor | None = None  # (L_dec, h) masked decoder self-attention
    cross: torch.Tensor | None = None  # (L_dec, h) encoder-decoder attention
    use_positions: bool = True  # False: embeddings only, no positional encoding (3.5)


NO_INTERVENTIONS = Interventions()


class DecoderOutput(NamedTuple):
    hidden: torch.Tensor  # (B, T, d_model): final decoder states (before the projection)
    layer_hiddens: list[torch.Tensor]  # output of each decoder layer, (B, T, d_model)
    self_attentions: list[AttentionOutput]  # one per layer, weights (B, h, T, T_total) if output_attentions
    cross_attentions: list[AttentionOutput]  # one per layer, weights (B, h, T, S) if output_attentions


class Transformer(nn.Module):
    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.config = config
        self.embedding = nn.Embedding(config.vocab_size, config.d_model, padding_idx=config.pad_id)
        self.register_buffer(
            "positional_encoding",
            sinusoidal_positional_encoding(config.max_positions, config.d_model, config.positional_layout),
            persistent=False,  # a fixed function of the config, never saved with the weights
        )
        self.embedding_dropout = nn.Dropout(config.dropout)
        self.encoder_layers = nn.ModuleList(EncoderLayer(config) for _ in range(config.n_encoder_layers))
        self.decoder_layers = nn.ModuleList(DecoderLayer(config) for _ in range(config.n_decoder_layers))
        if config.logits_bias:  # (1, V), added after the pre-softmax projection; zero until loaded
            self.register_buffer("final_logits_bias", torch.zeros(1, config.vocab_size))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Xavier-uniform matrices (as the reference implementations), N(0, d_model^-0.5) embeddings."""
        for name, parameter in self.named_parameters():
            if parameter.dim() > 1 and name != "embedding.weight":
                nn.init.xavier_uniform_(parameter)
            elif name.endswith("bias"):
                nn.init.zeros_(parameter)
        nn.init.normal_(self.embedding.weight, mean=0.0, std=self.config.d_model**-0.5)
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
            scaled = scaled + self.positional_encoding[offset : offset + length]
        return self.embedding_dropout(scaled)

    def encode(
        self,
        src: torch.Tensor,
        src_mask: torch.Tensor,
        interventions: Interventions = NO_INTERVENTIONS,
        *,
        output_attentions: bool = False,
    ) -> EncoderOutput:
        """src (B, S) token ids, src_mask (B, 1, 1, S) -> memory (B, S, d_model) + attentions.

        interventions: encoder heads switched off, positions left out (the decoder's fields are ignored);
        output_attentions=True: every layer's weights and scores come back (written-out attention).
        """
        x = self.embed(src, positions=interventions.use_positions)
        attentions = []
        for layer, head_mask in zip(self.encoder_layers, _per_layer(interventions.encoder, len(self.encoder_layers))):
            x, attention = layer(x, src_mask, head_mask, output_attentions=output_attentions)
            attentions.append(attention)
        return EncoderOutput(x, attentions)

    def decode(
        self,
        tgt: torch.Tensor,
        memory: torch.Tensor,
        src_mask: torch.Tensor,
        tgt_mask: torch.Tensor | None,
        cache: DecoderCache | None = None,
        interventions: Interventions = NO_INTERVENTIONS,
        *,
        output_attentions: bool = False,
    ) -> DecoderOutput:
        """tgt (B, T) target ids (shifted right: they start with the decoder start token).

        Without a cache tgt is the whole prefix and tgt_mask (B, 1, T, T) is the combined causal
        and padding mask. With a cache tgt holds only new positions and tgt_mask (B, 1, T, T_total)
        covers cached + new keys (None for a single new position: it may see every cached key);
        the cache is extended in place. interventions: decoder heads switched off, positions left out
        (the encoder's field is ignored). output_attentions=True: every layer's weights and scores come back.
        """
        offset = cache.length if cache is not None else 0
        x = self.embed(tgt, offset, positions=interventions.use_positions)  # (B, T, d_model)
        layer_caches = cache.layers if cache is not None else [None] * len(self.decoder_layers)
        n_layers = len(self.decoder_layers)
        self_masks = _per_layer(interventions.decoder_self, n_layers)
        cross_masks = _per_layer(interventions.cross, n_layers)
        hiddens, self_attentions, cross_attentions = [], [], []
        for layer, layer_cache, self_mask, cross_mask in zip(
            self.decoder_layers, layer_caches, self_masks, cross_masks
        ):
            x, self_attention, cross_attention = layer(
                x, memory, src_mask, tgt_mask, layer_cache, self_mask, cross_mask, output_attentions=output_attentions
            )
            hiddens.append(x)
            self_attentions.append(self_attention)
            cross_attentions.append(cross_attention)
        if cache is not None:
            cache.length += tgt.size(1)
        return DecoderOutput(x, hiddens, self_attentions, cross_attentions)

    def project(self, hidden: torch.Tensor) -> torch.Tensor:
        """Pre-softmax linear layer sharing the embedding matrix (3.4). (B, T, d_model) -> (B, T, V).

        With config.logits_bias, Marian's final_logits_bias (1, V) is added to the logits.
        """
        logits = F.linear(hidden, self.embedding.weight)
        return logits + self.final_logits_bias if self.config.logits_bias else logits

    def forward(self, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
        """Teacher-forced logits for training. src (B, S), tgt (B, T) -> logits (B, T, V)."""
        src_mask = padding_mask(src, self.config.pad_id)
        memory = self.encode(src, src_mask).memory  # (B, S, d_model)
        hidden = self.decode(tgt, memory, src_mask, decoder_mask(tgt, self.config.pad_id)).hidden  # (B, T, d_model)
        return self.project(hidden)

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())


def _per_layer(head_mask: torch.Tensor | None, n_layers: int) -> list[torch.Tensor | None]:
    """Rows of an (L, h) head mask, one per layer; None for every layer when there is no mask."""
    if head_mask is None:
        return [None] * n_layers
    if head_mask.dim() != 2 or head_mask.size(0) != n_layers:
        raise ValueError(f"head mask must be (layers={n_layers}, heads), got shape {tuple(head_mask.shape)}")
    return list(head_mask)
