"""Invariants the paper's design guarantees, checked on a random tiny model (sections 3.2-3.5).

- KV-cached greedy decoding is the same computation as recomputing the prefix (3.2.3: the causal
  mask means earlier positions never change), and `translate`'s trace reports exactly the
  probabilities greedy decoding saw.
- Padding is invisible: extra [PAD] keys change nothing at real positions (3.2.3, padding mask).
- The decoder is causal: a later target token never changes earlier outputs.
- Attention weights are distributions: rows sum to 1, masked keys get 0, nothing is NaN, not even
  a row whose keys are all masked.
- The positional encoding is the closed-form sin/cos of section 3.5.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from model.core.attention import scaled_dot_product_attention
from model.decoding.greedy import greedy_steps, translate
from model.text.inputs import pad_batch
from model.core.masks import decoder_mask, padding_mask
from model.core.positional import sinusoidal_positional_encoding

TOLERANCE = 1e-5
SENTENCES = ["Ein Mann fährt Fahrrad.", "Zwei Hunde spielen im Schnee und ein Kind isst einen Apfel."]


@pytest.fixture
def source_batch(tiny_tokenizer, tiny_config) -> torch.Tensor:
    """Two German sources of different lengths, right-padded. -> (2, S_max)."""
    ids = [tiny_tokenizer.encode_source(text, "en") for text in SENTENCES]
    assert len(ids[0]) < len(ids[1])
    return pad_batch(ids, tiny_config.pad_id)


def run_greedy(model, src: torch.Tensor, use_cache: bool, max_new_tokens: int = 12):
    src_mask = padding_mask(src, model.config.pad_id)
    memory = model.encode(src, src_mask).memory
    return list(greedy_steps(model, memory, src_mask, max_new_tokens, use_cache=use_cache))


# --------------------------------------------------------------------------- KV cache
def force_eos(model, monkeypatch, eos_at: dict[int, int]) -> None:
    """Make row r choose [EOS] at step eos_at[r] (a random model almost never does by itself).

    Wraps `model.project`, which greedy decoding calls once per step with the newest states (B, d);
    the step counter restarts whenever a new decoding begins (one query position again).
    """
    project, step = model.project, {"index": -1}

    def project_with_eos(hidden):
        logits = project(hidden)
        if hidden.dim() == 2:  # (B, d): one greedy step
            step["index"] += 1
            for row, at in eos_at.items():
                if step["index"] == at:
                    logits[row, model.config.eos_id] = logits[row].max() + 10.0
        return logits

    def reset(*args, **kwargs):
        step["index"] = -1
        return encode(*args, **kwargs)

    encode = model.encode
    monkeypatch.setattr(model, "project", project_with_eos)
    monkeypatch.setattr(model, "encode", reset)


@pytest.mark.parametrize("eos_at", [{}, {0: 3}, {0: 3, 1: 6}], ids=["no_eos", "short_row_ends", "both_end"])
@torch.no_grad()
def test_cached_greedy_decoding_equals_uncached(tiny_model, source_batch, monkeypatch, eos_at):
    force_eos(tiny_model, monkeypatch, eos_at)
    cached = run_greedy(tiny_model, source_batch, use_cache=True)
    uncached = run_greedy(tiny_model, source_batch, use_cache=False)
    assert len(cached) == len(uncached) == (max(eos_at.values()) + 1 if len(eos_at) == 2 else 12)
    active = torch.ones(source_batch.size(0), dtype=torch.bool)  # rows not yet past [EOS]
    for with_cache, without in zip(cached, uncached):
        assert torch.equal(with_cache.tokens, without.tokens)
        assert torch.equal(with_cache.finished, without.finished)
        assert (with_cache.tokens[~active] == tiny_model.config.pad_id).all()
        # After [EOS] a row's logits are never used (its tokens are forced to [PAD]); compare the rest.
        assert (with_cache.logits - without.logits)[active].abs().max() <= TOLERANCE
        active = ~with_cache.finished
    assert cached[-1].finished.tolist() == [row in eos_at for row in range(2)]


@torch.no_grad()
def test_trace_probabilities_are_the_cached_steps_softmax(tiny_model, tiny_tokenizer):
    trace = translate(tiny_model, tiny_tokenizer, SENTENCES[0], "de-en", max_new_tokens=10)
    src = torch.tensor([trace.source_ids])
    steps = run_greedy(tiny_model, src, use_cache=True, max_new_tokens=10)
    assert trace.output_ids == [int(step.tokens[0]) for step in steps]
    probs = torch.softmax(torch.stack([step.logits[0] for step in steps]), dim=-1)  # (T, V)
    k = trace.candidate_ids.shape[1]
    top_probs, top_ids = probs.topk(k, dim=-1)
    np.testing.assert_array_equal(trace.candidate_ids, top_ids.numpy())
    np.testing.assert_allclose(trace.candidate_probs, top_probs.numpy(), atol=TOLERANCE, rtol=0)
    chosen = probs[torch.arange(len(steps)), torch.tensor(trace.output_ids)]
    np.testing.assert_allclose(trace.chosen_probs, chosen.numpy(), atol=TOLERANCE, rtol=0)


# --------------------------------------------------------------------------- padding and causality
@pytest.mark.parametrize("n_pad", [1, 5])
@torch.no_grad()
def test_source_padding_changes_nothing_at_real_positions(tiny_model, tiny_tokenizer, n_pad):
    pad_id = tiny_model.config.pad_id
    src = torch.tensor([tiny_tokenizer.encode_source(SENTENCES[0], "en")])  # (1, S)
    padded = torch.cat([src, torch.full((1, n_pad), pad_id)], dim=1)  # (1, S + n_pad)
    tgt = torch.tensor([[tiny_model.config.bos_id, *tiny_tokenizer.encode("A man rides")]])  # (1, T)

    def memory_and_logits(source):
        src_mask = padding_mask(source, pad_id)
        memory = tiny_model.encode(source, src_mask, output_attentions=True).memory
        hidden = tiny_model.decode(tgt, memory, src_mask, decoder_mask(tgt, pad_id), output_attentions=True).hidden
        return memory, tiny_model.project(hidden)

    memory, logits = memory_and_logits(src)
    padded_memory, padded_logits = memory_and_logits(padded)
    assert (padded_memory[:, : src.size(1)] - memory).abs().max() <= TOLERANCE
    assert (padded_logits - logits).abs().max() <= TOLERANCE


@torch.no_grad()
def test_later_target_tokens_never_change_earlier_outputs(tiny_model, tiny_tokenizer):
    config = tiny_model.config
    src = torch.tensor([tiny_tokenizer.encode_source(SENTENCES[1], "en")])
    src_mask = padding_mask(src, config.pad_id)
    memory = tiny_model.encode(src, src_mask, output_attentions=True).memory
    generator = torch.Generator().manual_seed(0)
    tgt = torch.randint(6, config.vocab_size, (1, 8), generator=generator)
    tgt[0, 0] = config.bos_id
    changed_at = 5
    altered = tgt.clone()
    altered[0, changed_at:] = (tgt[0, changed_at:] + 1 - 6) % (config.vocab_size - 6) + 6  # other real tokens
    padded = torch.cat([tgt, torch.full((1, 3), config.pad_id)], dim=1)  # appended target padding

    def logits(target):
        hidden = tiny_model.decode(
            target, memory, src_mask, decoder_mask(target, config.pad_id), output_attentions=True
        ).hidden
        return tiny_model.project(hidden)  # (1, T, V)

    original = logits(tgt)
    assert (logits(altered)[:, :changed_at] - original[:, :changed_at]).abs().max() <= TOLERANCE
    assert (logits(altered)[:, changed_at] - original[:, changed_at]).abs().max() > 1e-3  # it does see them
    assert (logits(padded)[:, : tgt.size(1)] - original).abs().max() <= TOLERANCE


# --------------------------------------------------------------------------- attention weights
@pytest.fixture
def trace(tiny_model, tiny_tokenizer):
    return translate(tiny_model, tiny_tokenizer, SENTENCES[1], "de-en", max_new_tokens=9)


@pytest.mark.parametrize("name", ["encoder_attention", "decoder_self_attention", "cross_attention"])
def test_trace_attention_rows_sum_to_one(trace, name):
    weights = getattr(trace, name)  # (L, h, T_q, T_k)
    assert weights.ndim == 4
    assert np.isfinite(weights).all() and (weights >= 0).all()
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=TOLERANCE)


def test_trace_has_no_nan_and_decoder_cannot_look_ahead(trace):
    for name, value in vars(trace).items():
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            assert np.isfinite(value).all(), name
    future = ~trace.causal_mask  # (T, T) strictly above the diagonal
    assert future.any()
    assert (trace.decoder_self_attention[..., future] == 0).all()
    np.testing.assert_array_equal(trace.decoder_mask, np.tril(np.ones_like(trace.decoder_mask)))


@torch.no_grad()
def test_padded_keys_get_zero_weight_in_a_padded_batch(tiny_model, source_batch):
    pad_id = tiny_model.config.pad_id
    src_mask = padding_mask(source_batch, pad_id)  # (2, 1, 1, S)
    is_pad = source_batch == pad_id  # (2, S)
    assert is_pad[0].any() and not is_pad[1].any()
    encoded = tiny_model.encode(source_batch, src_mask, output_attentions=True)
    tgt = torch.full((2, 4), tiny_model.config.bos_id)
    decoded = tiny_model.decode(tgt, encoded.memory, src_mask, decoder_mask(tgt, pad_id), output_attentions=True)
    for attention in [*encoded.self_attentions, *decoded.cross_attentions]:
        weights = attention.weights  # (2, h, T_q, S)
        assert torch.isfinite(weights).all()
        assert (weights[0][..., is_pad[0]] == 0).all()
        assert torch.allclose(weights.sum(-1), torch.ones(()), atol=TOLERANCE)


def test_fully_masked_row_is_not_nan():
    generator = torch.Generator().manual_seed(0)
    query, key, value = (torch.randn(1, 2, 3, 4, generator=generator) for _ in range(3))  # (B, h, T, d_k)
    mask = torch.ones(1, 1, 3, 3, dtype=torch.bool)
    mask[..., 1, :] = False  # query 1 may attend to nothing
    output, weights, scores = scaled_dot_product_attention(query, key, value, mask)
    assert torch.isfinite(output).all() and torch.isfinite(weights).all() and torch.isfinite(scores).all()
    assert torch.allclose(weights.sum(-1), torch.ones(()), atol=TOLERANCE)
    # the other rows are untouched by the fully masked one
    unmasked = scaled_dot_product_attention(query, key, value, None)[1]
    assert torch.allclose(weights[..., [0, 2], :], unmasked[..., [0, 2], :])


# --------------------------------------------------------------------------- positional encoding
@pytest.mark.parametrize("d_model", [32, 512])
def test_positional_encoding_is_the_closed_form(d_model):
    table = sinusoidal_positional_encoding(256, d_model)
    assert table.shape == (256, d_model)
    for position in [0, 1, 7, 100, 255]:
        for i in [0, 1, d_model // 4, d_model // 2 - 1]:  # dims 2i (sin) and 2i + 1 (cos)
            angle = position / 10000 ** (2 * i / d_model)
            # float32 angles of up to 255 radians carry ~1e-5 absolute error
            assert table[position, 2 * i].item() == pytest.approx(math.sin(angle), abs=1e-4)
            assert table[position, 2 * i + 1].item() == pytest.approx(math.cos(angle), abs=1e-4)


def test_the_model_adds_the_sinusoidal_table(tiny_model):
    config = tiny_model.config
    expected = sinusoidal_positional_encoding(config.max_positions, config.d_model)
    assert torch.equal(tiny_model.positional_encoding, expected)


def test_decoder_mask_is_causal_and_hides_padded_keys():
    """Section 3.2.3: the decoder's self-attention mask is the look-ahead mask AND the target padding mask
    (as the Masks tab draws it for a padded batch). With right padding only a padded query sees the
    difference, so nothing downstream of the loss can tell; the mask itself must."""
    tgt = torch.tensor([[5, 6, 7], [5, 6, 0]])
    mask = decoder_mask(tgt, pad_id=0)
    assert mask.shape == (2, 1, 3, 3)
    causal = torch.tensor([[1, 0, 0], [1, 1, 0], [1, 1, 1]], dtype=torch.bool)
    assert torch.equal(mask[0, 0], causal)
    assert torch.equal(mask[1, 0], causal & torch.tensor([1, 1, 0], dtype=torch.bool))  # key 3 is [PAD]
