"""Equivalence with PyTorch's own Transformer (sections 3.1-3.2): our written-out maths is the paper's.

With the same weights copied across,
- our `MultiHeadAttention` equals `nn.MultiheadAttention` (outputs and per-head weights), with and
  without masks, once our True = "may attend" masks are turned into torch's True = "may NOT attend";
- our encoder-decoder, through either attention kernel, equals `nn.Transformer(norm_first=False, batch_first=True, dropout=0)` fed our
  embeddings + positional encodings (3.4, 3.5) and followed by our tied projection.
Both run in float64 so that the 1e-5 tolerance measures the algorithm, not float32 rounding.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from helpers import copy_attention, reference_transformer
from model.core.attention import MultiHeadAttention
from model.core.config import TransformerConfig
from model.core.masks import causal_mask, decoder_mask, padding_mask
from model.core.transformer import Transformer

TOLERANCE = 1e-5
PAD = 0
CONFIG = TransformerConfig(
    vocab_size=50,
    d_model=32,
    n_heads=4,
    n_encoder_layers=2,
    n_decoder_layers=3,
    d_ff=48,
    dropout=0.0,
    attention_dropout=0.0,
    max_positions=64,
)


def random_ids(lengths: list[int], generator: torch.Generator) -> torch.Tensor:
    """Right-padded random non-special ids, one row per length. -> (B, max(lengths))."""
    ids = torch.randint(4, CONFIG.vocab_size, (len(lengths), max(lengths)), generator=generator)
    for row, length in enumerate(lengths):
        ids[row, length:] = PAD
    return ids


def randomize_layer_norms(model: nn.Module) -> None:
    """Non-trivial LayerNorm gains and biases: with the default (1, 0) a stray extra LayerNorm on an
    already normalised output would change nothing, and the test could not see it."""
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.LayerNorm):
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.5, 0.5)


@pytest.mark.parametrize("output_attentions", [True, False], ids=["written_out", "fused"])
def test_encoder_decoder_equals_torch_transformer(output_attentions):
    torch.manual_seed(0)
    model = Transformer(CONFIG).double().eval()
    randomize_layer_norms(model)
    reference = reference_transformer(model)
    generator = torch.Generator().manual_seed(1)
    src = random_ids([9, 6, 3], generator)  # (3, 9): padded sources
    tgt = random_ids([7, 7, 4], generator)  # (3, 7): padded targets
    tgt[:, 0] = CONFIG.bos_id

    with torch.no_grad():
        src_mask = padding_mask(src, PAD)
        memory = model.encode(src, src_mask, output_attentions=output_attentions).memory
        hidden = model.decode(tgt, memory, src_mask, decoder_mask(tgt, PAD), output_attentions=output_attentions).hidden
        ours = model.project(hidden)  # (B, T, V)

        theirs_hidden = reference(
            model.embed(src),
            model.embed(tgt),
            tgt_mask=~causal_mask(tgt.size(1))[0, 0],  # torch: True = may NOT attend
            src_key_padding_mask=src == PAD,
            tgt_key_padding_mask=tgt == PAD,
            memory_key_padding_mask=src == PAD,
        )
        theirs = model.project(theirs_hidden)
        theirs_memory = reference.encoder(model.embed(src), src_key_padding_mask=src == PAD)

    real_src, real_tgt = src != PAD, tgt != PAD  # outputs at padded positions are nobody's business
    assert torch.isfinite(ours).all()
    assert (ours - theirs)[real_tgt].abs().max() <= TOLERANCE
    assert (memory - theirs_memory)[real_src].abs().max() <= TOLERANCE
    assert ours.shape == (3, 7, CONFIG.vocab_size)


def attention_mask(name: str, batch: int, t_query: int, t_key: int, generator: torch.Generator):
    """Our mask (True = may attend), broadcastable to (B, h, T_q, T_k); key 0 is always real."""
    lengths = torch.randint(1, t_key + 1, (batch,), generator=generator)
    lengths[0] = t_key
    keys = (torch.arange(t_key)[None, :] < lengths[:, None])[:, None, None, :]  # (B, 1, 1, T_k)
    masks = {
        "none": lambda: None,
        "padding": lambda: keys,
        "causal": lambda: causal_mask(t_query),  # (1, 1, T, T)
        "causal_and_padding": lambda: keys & causal_mask(t_query),  # (B, 1, T, T)
    }
    return masks[name]()


@pytest.mark.parametrize(
    "mask_name,t_query,t_key",
    [
        ("none", 5, 5),
        ("padding", 5, 5),
        ("causal", 5, 5),
        ("causal_and_padding", 5, 5),  # self-attention
        ("none", 3, 8),
        ("padding", 3, 8),  # cross-attention: T_q != T_k
    ],
)
def test_multi_head_attention_equals_torch(mask_name, t_query, t_key):
    torch.manual_seed(0)
    batch, config = 3, CONFIG
    ours = MultiHeadAttention(config).double().eval()
    theirs = nn.MultiheadAttention(config.d_model, config.n_heads, dropout=0.0, batch_first=True).double().eval()
    copy_attention(ours, theirs)
    generator = torch.Generator().manual_seed(2)
    query = torch.randn(batch, t_query, config.d_model, generator=generator, dtype=torch.float64)
    memory = torch.randn(batch, t_key, config.d_model, generator=generator, dtype=torch.float64)
    mask = attention_mask(mask_name, batch, t_query, t_key, generator)

    torch_mask = None
    if mask is not None:
        # ours (B|1, 1, T_q, T_k) True = may attend -> torch (B * h, T_q, T_k) True = may NOT attend
        full = mask.expand(batch, config.n_heads, t_query, t_key)
        torch_mask = ~full.reshape(batch * config.n_heads, t_query, t_key)
    with torch.no_grad():
        output, weights, _ = ours(query, memory, mask, output_attentions=True)
        expected, expected_weights = theirs(
            query, memory, memory, attn_mask=torch_mask, need_weights=True, average_attn_weights=False
        )
    assert weights.shape == expected_weights.shape == (batch, config.n_heads, t_query, t_key)
    assert (output - expected).abs().max() <= TOLERANCE
    assert (weights - expected_weights).abs().max() <= TOLERANCE
