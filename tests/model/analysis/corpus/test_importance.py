"""model/analysis/corpus/importance.py: head-mask importance (Michel et al. 2019) against a finite difference,
the pruning order and its ablation, the loss with heads switched off against the model's own teacher forcing."""

from __future__ import annotations


import numpy as np
import pytest
import torch

from model.analysis.corpus.batches import batches, corpus_examples
from model.analysis.corpus.importance import (
    HeadGates,
    ablation_of,
    corpus_loss,
    head_importance,
    pruning_order,
    summed_loss,
)
from model.decoding.ablation import Ablation


def test_head_mask_gradient_equals_a_finite_difference(double_model, tiny_tokenizer, pairs):
    examples, _ = corpus_examples(pairs[:2], tiny_tokenizer)
    batch = next(batches(examples, len(examples), 0))
    gates = HeadGates.ones(double_model, requires_grad=True)
    loss, tokens = summed_loss(double_model, batch, gates)
    grads = torch.autograd.grad(loss / tokens, list(gates))
    eps = 1e-5
    for k, (layer, head) in ((0, (1, 2)), (1, (0, 3)), (2, (1, 0))):
        values = []
        for sign in (1, -1):
            shifted = [g.detach().clone() for g in HeadGates.ones(double_model)]
            shifted[k][layer, head] += sign * eps
            with torch.no_grad():
                value, _ = summed_loss(double_model, batch, HeadGates(*shifted))
            values.append(float(value) / tokens)
        finite = (values[0] - values[1]) / (2 * eps)
        assert float(grads[k][layer, head]) == pytest.approx(finite, rel=1e-5, abs=1e-9)


def test_importance_is_the_mean_absolute_per_sentence_gradient(double_model, tiny_tokenizer, pairs):
    examples, _ = corpus_examples(pairs[:1], tiny_tokenizer)  # two examples, one per direction
    expected = np.zeros((2, 4))
    for batch in batches(examples, 1, 0):
        gates = HeadGates.ones(double_model, requires_grad=True)
        loss, tokens = summed_loss(double_model, batch, gates)
        expected += np.abs(torch.autograd.grad(loss / tokens, [gates.cross])[0].numpy()) / 2
    np.testing.assert_allclose(head_importance(double_model, examples, batch_size=1)["cross"], expected, rtol=1e-9)


def test_pruning_order_and_its_ablation():
    scores = {
        "encoder": np.array([[0.5, 0.1]]),
        "decoder_self": np.array([[0.3, 0.9]]),
        "cross": np.array([[0.2, 0.0]]),
    }
    order = pruning_order(scores)
    np.testing.assert_array_equal(order[:3], [[2, 0, 1], [0, 0, 1], [2, 0, 0]])
    ablation = ablation_of(order[:3])
    assert ablation.cross_heads == {(0, 0), (0, 1)} and ablation.encoder_heads == {(0, 1)}
    assert not ablation.decoder_self_heads


def test_loss_without_heads_matches_the_models_own_teacher_forcing(tiny_model, tiny_tokenizer, pairs):
    examples, _ = corpus_examples(pairs[:3], tiny_tokenizer)
    src, tgt_in, labels, _ = next(batches(examples, 100, 0))
    logits = tiny_model(src, tgt_in).detach()
    expected = torch.nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=0)
    assert corpus_loss(tiny_model, examples, Ablation(), batch_size=2) == pytest.approx(float(expected), rel=1e-5)
    assert corpus_loss(tiny_model, examples, Ablation(cross_heads={(0, 0), (1, 1)})) != pytest.approx(float(expected))
