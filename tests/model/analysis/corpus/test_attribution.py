"""model/analysis/corpus/attribution.py: integrated gradients' completeness (Sundararajan et al. 2017), input x
gradient, and Spearman's rank correlation against scipy and by hand."""

from __future__ import annotations


import numpy as np
import pytest
import torch

from model.analysis.corpus import attribution as attr
from model.decoding.greedy import translate


def test_integrated_gradients_are_complete(double_model, tiny_tokenizer):
    trace = translate(double_model.float(), tiny_tokenizer, "Ein Mann fährt Fahrrad.", "de-en", max_new_tokens=5)
    double_model.double()
    result = attr.attribute(double_model, trace.source_ids, trace.output_ids, steps=256)
    gap = result.log_prob - result.baseline_log_prob
    # ReLU kinks along the path slow the midpoint rule (16 steps: errors ~3e-3, 256: ~1e-3, 1024: ~1e-4)
    np.testing.assert_allclose(result.integrated_gradients.sum(-1), gap, atol=0.01 * np.abs(gap).max())
    assert (
        np.abs(result.input_x_gradient.sum(-1) - gap).max() > 0.01 * np.abs(gap).max()
    )  # x grad alone is not complete
    np.testing.assert_allclose(np.exp(result.log_prob), trace.chosen_probs, rtol=1e-4)  # f is the model's own log P


def test_input_x_gradient_is_the_embedding_times_its_gradient(double_model, tiny_tokenizer):
    source_ids = tiny_tokenizer.encode_source("Ein Hund.", "en")
    output_ids = tiny_tokenizer.encode("A dog.") + [2]
    result = attr.attribute(double_model, source_ids, output_ids, steps=2, only_steps=[1])
    embeddings = double_model.embedding.weight.detach()[torch.tensor(source_ids)].clone().requires_grad_(True)
    value = attr.log_probs_from_embeddings(double_model, embeddings[None], source_ids, output_ids)[0, 1]
    (grad,) = torch.autograd.grad(value, embeddings)
    np.testing.assert_allclose(result.input_x_gradient[1], (grad * embeddings).sum(-1).detach().numpy(), rtol=1e-9)
    assert not result.input_x_gradient[0].any()  # steps not asked for stay 0


def test_spearman_against_scipy_and_by_hand():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=12), rng.normal(size=12)
    a[3] = a[7]  # a tie
    assert attr.spearman(a, b) == pytest.approx(stats.spearmanr(a, b).statistic)
    np.testing.assert_array_equal(attr.ranks(np.array([3.0, 1.0, 3.0])), [2.5, 1.0, 2.5])
    assert np.isnan(attr.spearman(np.ones(4), np.arange(4.0)))
    cross = np.zeros((2, 3, 1, 4))
    cross[0, :, 0] = [0.1, 0.2, 0.3, 0.4]
    cross[1, :, 0] = [0.4, 0.3, 0.2, 0.1]
    np.testing.assert_allclose(attr.rank_correlation(np.array([[-1.0, 2.0, 3.0, -4.0]]), cross), [[1.0], [-1.0]])
