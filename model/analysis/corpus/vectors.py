"""Each head's queries and keys (sections 3.2.1-3.2.2: head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)).

`Transformer.encode` / `decode` return the attention weights but not the vectors whose dot products
made them. `attention_inputs` runs the same layers (their own `forward`s, with the written-out attention
the trace uses; nothing re-implemented: the decoder's first Add & Norm is called on its own because
cross-attention's queries are its output) and returns what each attention read: the query-side and
key-side hidden states per kind and layer. `queries_and_keys` projects them through the layer's
q_proj / k_proj and splits the heads.
A test checks softmax(q k^T / sqrt(d_k) + mask) against the weights `encode` / `decode` return.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from model.core.masks import decoder_mask, padding_mask
from model.core.transformer import Transformer


class AttentionInputs(NamedTuple):
    """What one attention sub-layer read: query side (B, Tq, d_model), key side (B, Tk, d_model), mask."""

    query_input: torch.Tensor
    key_input: torch.Tensor
    mask: torch.Tensor  # broadcastable to (B, h, Tq, Tk), True = may attend


@torch.no_grad()
def attention_inputs(model: Transformer, src: torch.Tensor, tgt_in: torch.Tensor) -> dict[str, list[AttentionInputs]]:
    """{"encoder" | "decoder_self" | "cross": one AttentionInputs per layer} of a teacher-forced pass.

    src (B, S), tgt_in (B, T) right-padded ids (the decoder input starts with [BOS]).
    """
    pad = model.config.pad_id
    src_mask = padding_mask(src, pad)  # (B, 1, 1, S)
    tgt_mask = decoder_mask(tgt_in, pad)  # (B, 1, T, T)
    found: dict[str, list[AttentionInputs]] = {"encoder": [], "decoder_self": [], "cross": []}
    x = model.embed(src)  # (B, S, d_model)
    for layer in model.encoder_layers:
        found["encoder"].append(AttentionInputs(x, x, src_mask))
        x = layer(x, src_mask, output_attentions=True).hidden
    memory = x
    y = model.embed(tgt_in)  # (B, T, d_model)
    for layer in model.decoder_layers:
        found["decoder_self"].append(AttentionInputs(y, y, tgt_mask))
        attended = layer.self_attention(y, y, tgt_mask, output_attentions=True).output
        after_self = layer.norm1(y, attended)  # the first Add & Norm (3.1): cross-attention's queries
        found["cross"].append(AttentionInputs(after_self, memory, src_mask))
        y = layer(y, memory, src_mask, tgt_mask, output_attentions=True).hidden
    return found


def attention_module(model: Transformer, kind: str, layer: int):
    """The MultiHeadAttention of one kind and layer (0-based)."""
    if kind == "encoder":
        return model.encoder_layers[layer].self_attention
    if kind == "decoder_self":
        return model.decoder_layers[layer].self_attention
    if kind == "cross":
        return model.decoder_layers[layer].cross_attention
    raise ValueError(f"unknown attention kind {kind!r}")


@torch.no_grad()
def queries_and_keys(
    model: Transformer, kind: str, layer: int, inputs: AttentionInputs
) -> tuple[torch.Tensor, torch.Tensor]:
    """Every head's queries (B, h, Tq, d_k) and keys (B, h, Tk, d_k) of one attention sub-layer."""
    attention = attention_module(model, kind, layer)
    query = attention.split_heads(attention.q_proj(inputs.query_input))  # (B, h, Tq, d_k)
    key = attention.split_heads(attention.k_proj(inputs.key_input))  # (B, h, Tk, d_k)
    return query, key
