"""Equivalence: the two kernels inside one forward path agree.

Every core module has one `forward` (and the Transformer one `encode` / `decode`); with
output_attentions=True attention runs written out and returns its weights (section 3.2.1, the trace),
otherwise through F.scaled_dot_product_attention (training, validation, greedy and beam search).
Both must give the same outputs, with padding masks (3.2.3), the causal mask, head masks, a KV cache,
and in train mode with dropout 0. float64, so the 1e-5 tolerance measures the algorithm.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from model.decoding.ablation import Ablation
from model.core.config import TransformerConfig
from model.core.layers import DecoderCache
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
ABLATION = Ablation(encoder_heads={(0, 1)}, decoder_self_heads={(2, 3), (0, 0)}, cross_heads={(1, 2)})


@pytest.fixture
def model() -> Transformer:
    torch.manual_seed(0)
    return Transformer(CONFIG).double().eval()


@pytest.fixture
def batch() -> tuple[torch.Tensor, torch.Tensor]:
    """src (3, 9) and tgt (3, 7) with right padding of different lengths in each row."""
    generator = torch.Generator().manual_seed(1)
    src = torch.randint(6, CONFIG.vocab_size, (3, 9), generator=generator)
    tgt = torch.randint(6, CONFIG.vocab_size, (3, 7), generator=generator)
    src[1, 6:], src[2, 3:] = PAD, PAD
    tgt[0, 5:], tgt[2, 2:] = PAD, PAD
    tgt[:, 0] = CONFIG.bos_id
    return src, tgt


def close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and torch.allclose(a, b, atol=TOLERANCE, rtol=0)


@pytest.mark.parametrize("kind", ["encoder", "decoder_self", "cross"])
@pytest.mark.parametrize("head_off", [None, 2])
def test_fused_attention_equals_written_out_for_each_kind(model, batch, kind, head_off):
    src, tgt = batch
    x_src = model.embed(src)  # (B, S, d)
    x_tgt = model.embed(tgt)  # (B, T, d)
    attention, query, keys, mask = {
        "encoder": (model.encoder_layers[0].self_attention, x_src, x_src, padding_mask(src, PAD)),
        "decoder_self": (model.decoder_layers[0].self_attention, x_tgt, x_tgt, decoder_mask(tgt, PAD)),
        "cross": (model.decoder_layers[0].cross_attention, x_tgt, x_src, padding_mask(src, PAD)),
    }[kind]
    head_mask = (
        None
        if head_off is None
        else torch.ones(CONFIG.n_heads, dtype=torch.float64).index_fill_(0, torch.tensor([head_off]), 0.0)
    )
    written = attention(query, keys, mask, head_mask, output_attentions=True).output
    assert close(attention(query, keys, mask, head_mask).output, written)


def test_weights_come_back_only_when_asked(model, batch):
    """One return type: the fused kernel leaves weights and scores None, the written-out one fills them."""
    src, _ = batch
    x = model.embed(src)  # (B, S, d)
    attention = model.encoder_layers[0].self_attention
    fused = attention(x, x, padding_mask(src, PAD))
    written = attention(x, x, padding_mask(src, PAD), output_attentions=True)
    assert fused.weights is None and fused.scores is None
    assert written.weights.shape == written.scores.shape == (3, CONFIG.n_heads, 9, 9)
    assert torch.allclose(written.weights.sum(-1), torch.ones(3, CONFIG.n_heads, 9, dtype=torch.float64))


def test_fused_attention_with_only_a_causal_mask_and_with_none(model, batch):
    _, tgt = batch
    attention = model.decoder_layers[1].self_attention
    x = model.embed(tgt)
    for mask in (causal_mask(tgt.size(1)), None):
        assert close(attention(x, x, mask).output, attention(x, x, mask, output_attentions=True).output)


@pytest.mark.parametrize("ablation", [None, ABLATION, Ablation(positional_encoding=False)])
def test_encoder_and_decoder_stacks_agree(model, batch, ablation):
    src, tgt = batch
    masks = (ablation or Ablation()).tensors(CONFIG)  # float32 masks: merge_heads casts them
    src_mask, tgt_mask = padding_mask(src, PAD), decoder_mask(tgt, PAD)
    encoded = model.encode(src, src_mask, masks, output_attentions=True)
    memory = model.encode(src, src_mask, masks).memory
    assert close(memory, encoded.memory)
    written = model.decode(tgt, memory, src_mask, tgt_mask, None, masks, output_attentions=True)
    fused = model.decode(tgt, memory, src_mask, tgt_mask, None, masks)
    assert close(fused.hidden, written.hidden)
    assert all(close(a, b) for a, b in zip(fused.layer_hiddens, written.layer_hiddens))


def test_head_masks_change_the_output_on_both_paths(model, batch):
    """The head masks above are not silently ignored: switching heads off changes the hidden states."""
    src, _ = batch
    src_mask = padding_mask(src, PAD)
    heads_off = ABLATION.tensors(CONFIG)
    for written in (False, True):
        masked = model.encode(src, src_mask, heads_off, output_attentions=written).memory
        assert not close(masked, model.encode(src, src_mask, output_attentions=written).memory)


def test_cached_fused_decoding_equals_written_out_whole_prefix(model, batch):
    src, tgt = batch
    src_mask = padding_mask(src, PAD)
    memory = model.encode(src, src_mask).memory
    cache = DecoderCache.empty(CONFIG.n_decoder_layers)
    steps = [model.decode(tgt[:, :1], memory, src_mask, decoder_mask(tgt[:, :1], PAD), cache).hidden]
    for t in range(1, tgt.size(1)):
        steps.append(model.decode(tgt[:, t : t + 1], memory, src_mask, None, cache).hidden)
    causal_only = causal_mask(tgt.size(1))  # the cached steps see every earlier key, padded or not
    whole = model.decode(tgt, memory, src_mask, causal_only, output_attentions=True).hidden
    assert close(torch.cat(steps, dim=1), whole)


def traced_logits(model: Transformer, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
    """Teacher-forced logits through the written-out path: the reference for Transformer.forward."""
    src_mask = padding_mask(src, PAD)
    memory = model.encode(src, src_mask, output_attentions=True).memory
    return model.project(model.decode(tgt, memory, src_mask, decoder_mask(tgt, PAD), output_attentions=True).hidden)


def test_forward_logits_equal_the_written_out_path(model, batch):
    src, tgt = batch
    assert close(model(src, tgt), traced_logits(model, src, tgt))


def test_train_mode_with_dropout_zero_gives_the_same_logits_and_gradients(model, batch):
    src, tgt = batch
    model.train()
    fused = model(src, tgt)
    fused.sum().backward()
    fused_grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    traced_logits(model, src, tgt).sum().backward()
    assert close(fused, traced_logits(model, src, tgt))
    assert all(close(a, p.grad) for a, p in zip(fused_grads, model.parameters()))


def test_attention_dropout_applies_in_training_only(batch):
    torch.manual_seed(0)
    model = Transformer(dataclasses.replace(CONFIG, attention_dropout=0.5)).double()
    src, tgt = batch
    model.eval()
    assert close(model(src, tgt), traced_logits(model, src, tgt))  # eval: dropout_p = 0
    model.train()
    torch.manual_seed(1)
    first = model(src, tgt)
    torch.manual_seed(2)
    assert not close(first, model(src, tgt))  # train: the fused kernel drops attention weights
