"""model/analysis/kv_cache.py: the recorded cache against keys/values projected independently from an
uncached pass over each prefix, and the reads against the trace's attention rows. Tiny CPU model.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from model.decoding.greedy import translate
from model.analysis.kv_cache import record_cache, record_trace_cache
from model.core.masks import decoder_mask, padding_mask


@pytest.fixture
def trace(tiny_model, tiny_tokenizer):
    return translate(tiny_model, tiny_tokenizer, "Ein Mann fährt Fahrrad.", "de-en", max_new_tokens=6)


@pytest.fixture
def recording(tiny_model, trace):
    return record_trace_cache(tiny_model, trace)


@torch.no_grad()
def uncached_keys_values(model, source_ids, target_ids):
    """Per layer, project_key_value of the layer's input over the whole prefix (no cache), and the
    cross keys/values of the encoder memory: 4 arrays (L, h, T or S, d_head)."""
    src = torch.tensor([source_ids])
    src_mask = padding_mask(src, model.config.pad_id)
    memory = model.encode(src, src_mask, output_attentions=True).memory
    tgt = torch.tensor([target_ids])
    decoded = model.decode(tgt, memory, src_mask, decoder_mask(tgt, model.config.pad_id), None, output_attentions=True)
    inputs = [model.embed(tgt), *decoded.layer_hiddens[:-1]]  # what each decoder layer reads
    parts = [[], [], [], []]
    for layer, x in zip(model.decoder_layers, inputs):
        for index, tensor in enumerate(
            (*layer.self_attention.project_key_value(x), *layer.cross_attention.project_key_value(memory))
        ):
            parts[index].append(tensor[0].numpy())
    return [np.stack(part) for part in parts]


def test_shapes_are_as_documented(tiny_config, trace, recording):
    n_layers, n_heads, d_head = tiny_config.n_decoder_layers, tiny_config.n_heads, tiny_config.d_head
    n_source, n_target = len(trace.source_ids), trace.num_steps
    assert recording.num_steps == n_target and recording.cache_lengths == list(range(1, n_target + 1))
    for step in range(n_target):
        cache = recording.at(step)
        assert cache.self_keys.shape == cache.self_values.shape == (n_layers, n_heads, step + 1, d_head)
        assert cache.cross_keys.shape == cache.cross_values.shape == (n_layers, n_heads, n_source, d_head)
        assert cache.self_read.shape == (n_layers, n_heads, step + 1)
        assert cache.cross_read.shape == (n_layers, n_heads, n_source)
        assert cache.self_output.shape == cache.cross_output.shape == (n_layers, n_heads, d_head)
    with pytest.raises(ValueError, match="step must be in"):
        recording.at(n_target)


def test_cached_keys_at_step_t_equal_the_keys_of_an_uncached_pass_over_the_prefix(tiny_model, trace, recording):
    target_ids = recording.target_ids
    for step in range(recording.num_steps):
        keys, values, cross_keys, cross_values = uncached_keys_values(
            tiny_model, trace.source_ids, target_ids[: step + 1]
        )  # the prefix alone: t + 1 positions
        cache = recording.at(step)
        np.testing.assert_allclose(cache.self_keys, keys, atol=1e-5)
        np.testing.assert_allclose(cache.self_values, values, atol=1e-5)
        np.testing.assert_allclose(cache.cross_keys, cross_keys, atol=1e-5)
        np.testing.assert_allclose(cache.cross_values, cross_values, atol=1e-5)


def test_cross_keys_are_computed_once_and_self_rows_never_change(recording):
    assert recording.cross_reused and recording.rows_unchanged
    first = recording.at(0)
    for step in range(1, recording.num_steps):
        cache = recording.at(step)
        np.testing.assert_array_equal(cache.cross_keys, first.cross_keys)
        np.testing.assert_array_equal(cache.self_keys[:, :, :step], recording.at(step - 1).self_keys)


def test_each_step_reads_what_the_trace_shows(trace, recording):
    np.testing.assert_allclose(recording.self_read, trace.decoder_self_attention, atol=1e-5)
    np.testing.assert_allclose(recording.cross_read, trace.cross_attention, atol=1e-5)
    for step in range(recording.num_steps):
        cache = recording.at(step)
        np.testing.assert_allclose(cache.self_read, trace.decoder_self_attention[:, :, step, : step + 1], atol=1e-5)
        np.testing.assert_allclose(cache.cross_read, trace.cross_attention[:, :, step], atol=1e-5)
        np.testing.assert_allclose(cache.self_read.sum(-1), 1.0, atol=1e-5)
        # what a head takes from the cache: an explicit loop over the cached rows
        layer, head = 1, 2
        expected = sum(cache.self_read[layer, head, k] * cache.self_values[layer, head, k] for k in range(step + 1))
        np.testing.assert_allclose(cache.self_output[layer, head], expected, atol=1e-5)


def test_empty_input_gets_a_clear_message(tiny_model):
    with pytest.raises(ValueError, match="must not be empty"):
        record_cache(tiny_model, [4, 2], [])
