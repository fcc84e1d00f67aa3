"""Decoding provenance (3.2.3): the KV cache and forced prefixes are what they claim.

- KV-cached decoding equals recomputing the whole prefix, at every step and every layer, also when
  a forced prefix (branching) is fed in one chunk and needs the causal mask inside it.
- Forced-prefix decoding through `translate` and `greedy_steps` agree with and without the cache,
  and with the independent reference forward pass (tests/support/provenance_fixtures.py).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

import provenance_fixtures as ref
from model.decoding.greedy import greedy_steps, translate
from model.core.layers import DecoderCache

SENTENCE = "Zwei Hunde spielen im Schnee und ein Kind isst einen Apfel."
ATOL = 1e-4


@pytest.fixture(scope="module")
def model(tiny_config):
    config = dataclasses.replace(tiny_config, n_encoder_layers=2, n_decoder_layers=3)
    return ref.perturbed_model(config, seed=5)


@pytest.fixture(scope="module")
def source(tiny_tokenizer) -> list[int]:
    return tiny_tokenizer.encode_source(SENTENCE, "en")


def encode(model, source: list[int]):
    src = torch.tensor([source])  # (1, S)
    src_mask = torch.ones(1, 1, 1, len(source), dtype=torch.bool)  # no padding
    return model.encode(src, src_mask, output_attentions=True).memory, src_mask


# --------------------------------------------------------------------------- KV cache
@pytest.mark.parametrize("first_chunk", [1, 4], ids=["bos_alone", "forced_prefix_chunk"])
@torch.no_grad()
def test_cached_steps_equal_full_recomputation_at_every_layer(model, source, tiny_tokenizer, first_chunk):
    target = [model.config.bos_id, *tiny_tokenizer.encode("Two dogs play in the snow")]  # (T,) decoder inputs
    expected = ref.forward(model, source, target)
    memory, src_mask = encode(model, source)
    cache = DecoderCache.empty(len(model.decoder_layers))
    start = 0
    for end in [first_chunk, *range(first_chunk + 1, len(target) + 1)]:
        chunk = torch.tensor([target[start:end]])  # (1, T_new)
        n = end - start
        chunk_mask = torch.ones(n, n, dtype=torch.bool).tril()[None, None] if start == 0 else None
        out = model.decode(chunk, memory, src_mask, chunk_mask, cache=cache, output_attentions=True)
        for layer in range(len(model.decoder_layers)):
            np.testing.assert_allclose(
                out.layer_hiddens[layer][0].numpy(),
                expected.layer_hiddens[layer][start:end].numpy(),
                atol=ATOL,
                err_msg=f"positions {start}..{end - 1}, layer {layer}",
            )
            np.testing.assert_allclose(
                out.self_attentions[layer].weights[0].numpy(),
                expected.decoder_self[layer].weights[:, start:end, :end].numpy(),
                atol=ATOL,
            )
            np.testing.assert_allclose(
                out.cross_attentions[layer].weights[0].numpy(),
                expected.cross[layer].weights[:, start:end].numpy(),
                atol=ATOL,
            )
        start = end


# --------------------------------------------------------------------------- forced prefix (branching)
@pytest.mark.parametrize("forced_text", ["A", "A woman reads"])
@torch.no_grad()
def test_forced_prefix_decoding_with_cache_equals_without_and_the_reference(model, source, tiny_tokenizer, forced_text):
    forced = tiny_tokenizer.encode(forced_text)
    memory, src_mask = encode(model, source)
    prefix = torch.tensor([forced])  # (1, P)
    cached = list(greedy_steps(model, memory, src_mask, 6, use_cache=True, prefix=prefix))
    uncached = list(greedy_steps(model, memory, src_mask, 6, use_cache=False, prefix=prefix))
    assert len(cached) == len(uncached) == 6
    chosen = []
    for with_cache, without in zip(cached, uncached):
        assert torch.equal(with_cache.tokens, without.tokens)
        np.testing.assert_allclose(with_cache.logits.numpy(), without.logits.numpy(), atol=ATOL)
        expected = ref.forward(model, source, [model.config.bos_id, *forced, *chosen]).logits[-1]
        np.testing.assert_allclose(with_cache.logits[0].numpy(), expected.numpy(), atol=ATOL)
        chosen.append(int(with_cache.tokens[0]))

    trace = translate(model, tiny_tokenizer, SENTENCE, "de-en", max_new_tokens=len(forced) + 6, forced_prefix=forced)
    assert trace.output_ids == forced + chosen and trace.forced_steps == len(forced)
    free = translate(model, tiny_tokenizer, SENTENCE, "de-en", max_new_tokens=len(forced) + 6)
    assert free.output_ids[: len(forced)] != forced  # the prefix really is forced, not what greedy picks
    reference = ref.forward(model, source, [model.config.bos_id, *trace.output_ids[:-1]])
    probs = torch.softmax(reference.logits, dim=-1)
    np.testing.assert_allclose(trace.chosen_probs, probs[range(trace.num_steps), trace.output_ids].numpy(), atol=1e-5)
    np.testing.assert_allclose(
        trace.decoder_self_attention, torch.stack([a.weights for a in reference.decoder_self]).numpy(), atol=2e-5
    )
