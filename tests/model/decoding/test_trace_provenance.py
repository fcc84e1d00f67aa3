"""Provenance of the trace (sections 3.1-3.5): every number `translate` returns is the model's own.

For every attention kind, layer and head, the trace's weights and scores equal an independent
float64 forward pass written from the paper's formulas and the module's parameters
(tests/support/provenance_fixtures.py); weights = softmax(scores masked where the paper says); the
candidates, chosen probabilities, entropy and logit lens equal a direct softmax of the reference
logits. The model has random biases and norms, and the test first proves that its heads and
layers differ, so storing layers or heads in another order cannot pass.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
import torch

import provenance_fixtures as ref
from model.decoding.greedy import translate
from model.decoding.trace import ATTENTION_KINDS

SENTENCE = "Zwei Hunde spielen im Schnee und ein Kind isst einen Apfel."
STEPS = 9
ATOL = 2e-5  # float32 model against the float64 reference


@pytest.fixture(scope="module")
def model(tiny_config):
    config = dataclasses.replace(tiny_config, n_encoder_layers=2, n_decoder_layers=3)
    return ref.perturbed_model(config, seed=11)


@pytest.fixture(scope="module")
def trace(model, tiny_tokenizer):
    return translate(model, tiny_tokenizer, SENTENCE, "de-en", max_new_tokens=STEPS)


@pytest.fixture(scope="module")
def reference(model, trace):
    target = [model.config.bos_id, *trace.output_ids[:-1]]
    return ref.forward(model, trace.source_ids, target)


def stacked(reference, kind: str, part: str) -> np.ndarray:
    """Reference (L, h, Tq, Tk) of one kind: 'weights' or 'scores'."""
    return torch.stack([getattr(a, part) for a in getattr(reference, kind)]).numpy()


def test_tokens_and_ids_are_the_sentence(trace, tiny_tokenizer, model):
    assert trace.source_ids == [
        tiny_tokenizer.language_tag_id("en"),
        *tiny_tokenizer.encode(SENTENCE),
        model.config.eos_id,
    ]
    assert len(trace.source_ids) >= 12  # long enough that a reversed axis is a different picture
    assert trace.source_tokens == tiny_tokenizer.tokens(trace.source_ids)
    assert trace.num_steps == STEPS
    assert trace.output_tokens == tiny_tokenizer.tokens(trace.output_ids)
    assert trace.target_tokens == tiny_tokenizer.tokens([model.config.bos_id, *trace.output_ids[:-1]])


@pytest.mark.parametrize("kind", list(ATTENTION_KINDS))
def test_heads_and_layers_differ_so_a_swap_is_visible(reference, kind):
    """Differences far above ATOL (500x): a reversed or shifted axis cannot pass the equality tests."""
    weights = stacked(reference, kind, "weights")  # (L, h, Tq, Tk)
    n_layers, n_heads = weights.shape[:2]
    for layer, (a, b) in itertools.product(range(n_layers), itertools.combinations(range(n_heads), 2)):
        assert np.abs(weights[layer, a] - weights[layer, b]).max() > 0.01, (layer, a, b)
    for head, (a, b) in itertools.product(range(n_heads), itertools.combinations(range(n_layers), 2)):
        assert np.abs(weights[a, head] - weights[b, head]).max() > 0.01, (head, a, b)
    assert np.abs(weights - weights[..., ::-1, :]).max() > 0.01  # rows (queries) tell apart too
    assert np.abs(weights - weights[..., ::-1]).max() > 0.01  # and columns (keys)


@pytest.mark.parametrize("kind", list(ATTENTION_KINDS))
def test_trace_attention_equals_an_independent_forward_pass(trace, reference, kind):
    spec = ATTENTION_KINDS[kind]
    for part, field in (("weights", spec.weights_field), ("scores", spec.scores_field)):
        ours, expected = getattr(trace, field), stacked(reference, kind, part)
        assert ours.shape == expected.shape
        np.testing.assert_allclose(
            ours, expected, atol=ATOL if part == "weights" else 1e-4, rtol=1e-5, err_msg=f"{kind} {part}"
        )


def expected_mask(trace, kind: str) -> np.ndarray:
    """(Tq, Tk) True = may attend, from the token lists alone (3.2.3)."""
    S, T = len(trace.source_tokens), len(trace.target_tokens)
    real_source = np.array([token != "[PAD]" for token in trace.source_tokens])
    if kind == "decoder_self":
        return np.tril(np.ones((T, T), dtype=bool))
    return np.broadcast_to(real_source, (S if kind == "encoder" else T, S))


@pytest.mark.parametrize("kind", list(ATTENTION_KINDS))
def test_weights_are_the_softmax_of_the_masked_scores(trace, kind):
    spec = ATTENTION_KINDS[kind]
    scores = getattr(trace, spec.scores_field).astype(np.float64)
    allowed = expected_mask(trace, kind)
    masked = np.where(allowed, scores, -np.inf)
    softmax = np.exp(masked - masked.max(-1, keepdims=True))
    softmax /= softmax.sum(-1, keepdims=True)
    np.testing.assert_allclose(getattr(trace, spec.weights_field), softmax, atol=ATOL, rtol=0)
    assert np.array_equal(trace.attention(kind).mask, allowed)


def test_mask_fields_are_the_papers_masks(trace):
    T = len(trace.target_tokens)
    causal = np.tril(np.ones((T, T), dtype=bool))
    assert np.array_equal(trace.causal_mask, causal)
    assert np.array_equal(trace.decoder_mask, causal)  # one sentence: no target padding
    assert np.array_equal(trace.cross_mask, expected_mask(trace, "cross"))
    assert np.array_equal(trace.source_mask, expected_mask(trace, "encoder")[0])


@pytest.mark.parametrize("step", [0, STEPS // 2, STEPS - 1])
@pytest.mark.parametrize("kind", list(ATTENTION_KINDS))
def test_attention_at_a_step_is_the_reference_slice(trace, reference, kind, step):
    view = trace.attention(kind, step)
    expected = stacked(reference, kind, "weights")
    rows = len(trace.source_tokens) if kind == "encoder" else step + 1
    cols = step + 1 if kind == "decoder_self" else len(trace.source_tokens)
    np.testing.assert_allclose(view.weights, expected[:, :, :rows, :cols], atol=ATOL, rtol=0)
    assert view.queries == (trace.source_tokens if kind == "encoder" else trace.target_tokens[:rows])
    assert view.keys == (trace.target_tokens[:cols] if kind == "decoder_self" else trace.source_tokens)


def test_outputs_candidates_and_entropy_are_the_reference_softmax(trace, reference):
    probs = torch.softmax(reference.logits, dim=-1).numpy()  # (T, V)
    assert trace.output_ids == probs.argmax(-1).tolist()  # greedy: every chosen token is the argmax
    k = trace.candidate_ids.shape[1]
    order = np.argsort(-probs, axis=-1, kind="stable")[:, :k]
    np.testing.assert_array_equal(trace.candidate_ids, order)
    np.testing.assert_allclose(trace.candidate_probs, np.take_along_axis(probs, order, -1), atol=1e-6)
    np.testing.assert_allclose(trace.chosen_probs, probs[np.arange(STEPS), trace.output_ids], atol=1e-6)
    entropy = -(probs * np.log2(probs)).sum(-1)
    np.testing.assert_allclose(trace.entropy, entropy, atol=1e-5)
    assert np.ptp(trace.chosen_probs) > 1e-3  # steps differ, so a shifted row would be seen


@torch.no_grad()
def test_padded_batch_masks_padding_keys_only(model, tiny_tokenizer):
    """A padded batch through encode/decode: real rows equal each sentence alone, padded keys get 0."""
    config = model.config
    sources = [tiny_tokenizer.encode_source(text, "en") for text in (SENTENCE, "Ein Mann fährt Fahrrad.")]
    targets = [[config.bos_id, *tiny_tokenizer.encode("Two dogs play in the")], [config.bos_id, 7, 8]]
    S, T = max(map(len, sources)), max(map(len, targets))
    src = torch.tensor([s + [config.pad_id] * (S - len(s)) for s in sources])  # (2, S)
    tgt = torch.tensor([t + [config.pad_id] * (T - len(t)) for t in targets])  # (2, T)
    src_mask = torch.tensor([[i < len(s) for i in range(S)] for s in sources])[:, None, None, :]  # (2, 1, 1, S)
    tgt_real = torch.tensor([[i < len(t) for i in range(T)] for t in targets])  # (2, T)
    tgt_mask = tgt_real[:, None, None, :] & torch.ones(T, T, dtype=torch.bool).tril()  # (2, 1, T, T)
    encoded = model.encode(src, src_mask, output_attentions=True)
    decoded = model.decode(tgt, encoded.memory, src_mask, tgt_mask, output_attentions=True)
    logits = model.project(decoded.hidden)  # (2, T, V)
    for row, (source, target) in enumerate(zip(sources, targets)):
        s, t = len(source), len(target)
        expected = ref.forward(model, source, target)
        pairs = [
            (encoded.self_attentions, expected.encoder, s, s),
            (decoded.self_attentions, expected.decoder_self, t, t),
            (decoded.cross_attentions, expected.cross, t, s),
        ]
        for ours, theirs, rows, cols in pairs:
            for layer, (a, b) in enumerate(zip(ours, theirs)):
                np.testing.assert_allclose(a.weights[row, :, :rows, :cols].numpy(), b.weights.numpy(), atol=ATOL)
                assert (a.weights[row, :, :rows, cols:] == 0).all()  # padded keys are never attended
        np.testing.assert_allclose(logits[row, :t].numpy(), expected.logits.numpy(), atol=1e-4, rtol=1e-5)
