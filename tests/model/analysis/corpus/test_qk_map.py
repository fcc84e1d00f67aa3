"""The query-key map (model/analysis/corpus/vectors.py, qk_map.py, live.py; AttentionViz): queries and keys that
reproduce the model's attention, the PCA on known vectors, a normalisation that keeps every softmax, and a
sentence placed where the corpus map put it."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from model.analysis.corpus.batches import batches, corpus_examples
from model.analysis.corpus.importance import KINDS
from model.analysis.corpus.live import sentence_vectors
from model.analysis.corpus.qk_map import fit_projection, pca_2d, project
from model.analysis.corpus.vectors import attention_inputs, queries_and_keys
from model.core.masks import decoder_mask, padding_mask


@pytest.mark.parametrize("kind", KINDS)
def test_queries_and_keys_reproduce_the_models_attention_weights(tiny_model, tiny_tokenizer, pairs, kind):
    examples, _ = corpus_examples(pairs[:3], tiny_tokenizer)
    src, tgt_in, _, _ = next(batches(examples, 100, 0))
    src_mask = padding_mask(src, 0)
    encoded = tiny_model.encode(src, src_mask, output_attentions=True)
    decoded = tiny_model.decode(tgt_in, encoded.memory, src_mask, decoder_mask(tgt_in, 0), output_attentions=True)
    expected = {
        "encoder": encoded.self_attentions,
        "decoder_self": decoded.self_attentions,
        "cross": decoded.cross_attentions,
    }[kind]
    for layer, inputs in enumerate(attention_inputs(tiny_model, src, tgt_in)[kind]):
        q, k = queries_and_keys(tiny_model, kind, layer, inputs)
        scores = (q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))).masked_fill(~inputs.mask, float("-inf"))
        torch.testing.assert_close(torch.softmax(scores, -1), expected[layer].weights, atol=1e-5, rtol=1e-4)


def test_pca_of_known_vectors():
    e1, e2 = np.eye(5)[1], np.eye(5)[3]
    a, b = (grid.ravel() for grid in np.meshgrid(np.linspace(-3, 3, 11), np.linspace(-1, 1, 5)))  # uncorrelated
    points = 7.0 + a[:, None] * e1 + b[:, None] * e2  # a plane in 5-D, most variance along e1
    mean, components, explained = pca_2d(points)
    np.testing.assert_allclose(np.abs(components), np.stack([e1, e2]), atol=1e-9)
    np.testing.assert_allclose(explained.sum(), 1.0)
    assert explained[0] > explained[1] > 0
    coordinates = (points - mean) @ components.T
    np.testing.assert_allclose(np.abs(coordinates), np.abs(np.stack([a, b], 1)), atol=1e-9)
    _, line, shares = pca_2d(np.array([[1.0, 2.0], [3.0, 2.0]]))  # two points: one axis of variance
    np.testing.assert_allclose(line[0], [1, 0])
    np.testing.assert_allclose(shares, [1, 0])


def test_query_key_normalisation_keeps_every_softmax():
    rng = np.random.default_rng(1)
    q, k = rng.normal(size=(6, 4)) * 3 + 1, rng.normal(size=(9, 4)) * 0.5 - 2
    projection = fit_projection(q, k)
    qn, kn = q * projection.scale, (k + projection.key_shift) / projection.scale
    before, after = q @ k.T, qn @ kn.T
    np.testing.assert_allclose(after - before, (after - before)[:, :1].repeat(9, 1), atol=1e-9)  # a constant per query
    np.testing.assert_allclose(qn.mean(0), kn.mean(0) * 1.0 + (qn.mean(0) - kn.mean(0)), atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(qn, axis=1).mean(), np.linalg.norm(kn, axis=1).mean())
    np.testing.assert_allclose(
        project(q, projection, "query"), (qn - projection.mean) @ projection.components.T, atol=1e-12
    )


def test_the_sentence_is_placed_where_the_corpus_map_put_it(corpus, pairs, corpus_settings):
    """The first map sentence's own points, projected live, land on its stored points."""
    checkpoint, data = corpus
    head_map = data.maps["cross"]
    example = int(head_map.query_sentences[0])
    chosen, _ = corpus_examples(pairs, checkpoint.tokenizer, corpus_settings.map_sentences)
    source, target = chosen[example].source, chosen[example].target
    queries, keys = sentence_vectors(checkpoint.model, source, target[1:], "cross", 1, 2)
    live = project(queries, head_map.projection(1, 2), "query")
    stored = head_map.coords[1, 2, : head_map.n_queries][head_map.query_sentences == example]
    np.testing.assert_allclose(live, stored, atol=2e-2 * max(1.0, np.abs(stored).max()))
    assert len(stored) == len(chosen[example].target) - 1  # [BOS] y1 .. y_{T-1}: no padding, no final [EOS]
