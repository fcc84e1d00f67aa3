"""model/corpus: each computation on hand-made cases and against an independent
computation of the tiny model: head roles (Voita et al. 2019), head-mask importance (Michel et al.
2019) against a finite difference, integrated gradients' completeness (Sundararajan et al. 2017),
the query-key map's PCA (AttentionViz), and the corpus file's round trip and staleness.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch

from model.analysis.corpus import attribution as attr
from model.analysis.corpus.batches import batches, corpus_examples
from model.analysis.corpus.collect import CorpusSettings, compute_corpus_heads, head_roles, token_counts
from model.analysis.corpus.importance import (
    HeadGates,
    KINDS,
    ablation_of,
    corpus_loss,
    head_importance,
    pruning_order,
    summed_loss,
)
from model.analysis.corpus.live import sentence_vectors
from model.analysis.corpus.qk_map import fit_projection, pca_2d, project
from model.analysis.corpus.roles import RoleSums, add_sentence, rarest_keys, relative_targets, role_labels
from model.analysis.corpus.store import CORPUS_FILE, corpus_status, save_corpus, weights_hash
from model.analysis.corpus.vectors import attention_inputs, queries_and_keys
from model.decoding.ablation import Ablation
from model.decoding.greedy import translate
from model.core.masks import decoder_mask, padding_mask


@pytest.fixture
def double_model(tiny_model):
    return tiny_model.double()


# --------------------------------------------------------------------------- roles
def previous_token_weights(n: int) -> np.ndarray:
    """(1, 2, n, n): head 1 puts all weight on the previous token (query 0 on itself), head 2 is uniform."""
    copy = np.zeros((n, n))
    copy[0, 0] = 1.0
    copy[np.arange(1, n), np.arange(n - 1)] = 1.0
    return np.stack([copy, np.full((n, n), 1.0 / n)])[None]


def test_a_head_that_copies_the_previous_token_is_a_previous_positional_head():
    tokens = ["<2en>", "▁Ein", "▁Mann", "▁fährt", "▁Fahrrad.", "[EOS]"]
    sums = RoleSums()
    add_sentence(
        sums, previous_token_weights(6), tokens, np.array([9, 5, 4, 3, 1, 9]), np.ones((6, 6), bool), "encoder"
    )
    stats = sums.means()
    assert stats["previous"][0, 0] == 1.0  # 5 of the 5 queries that have a previous token
    np.testing.assert_allclose(stats["same"][0, 0], 1 / 6)  # query 0, which has none, looks at itself
    assert stats["confidence"][0, 0] == 1.0 and stats["entropy"][0, 0] == 0.0
    np.testing.assert_allclose(stats["confidence"][0, 1], 1 / 6)
    np.testing.assert_allclose(stats["entropy"][0, 1], math.log2(6), rtol=1e-6)
    np.testing.assert_allclose(stats["eos"][0, 1], 1 / 6)  # uniform: one key of six is [EOS]
    np.testing.assert_allclose(stats["punctuation"][0, 1], 1 / 6)  # "▁Fahrrad." ends in punctuation
    assert list(role_labels(stats)[0]) == ["previous", "broad"]


def test_rare_head_and_sink_head_are_labelled():
    n = 5
    tokens = ["<2de>", "▁a", "▁zebra", "▁b", "[EOS]"]
    counts = np.array([100, 50, 1, 40, 100])  # "▁zebra" is the rarest real token
    rare, sink = np.zeros((n, n)), np.zeros((n, n))
    rare[:, 2], sink[:, 4] = 1.0, 1.0
    sums = RoleSums()
    add_sentence(sums, np.stack([rare, sink])[None], tokens, counts, np.ones((n, n), bool), "encoder")
    stats = sums.means()
    assert stats["rare"][0, 0] == 1.0 and stats["eos"][0, 1] == 1.0
    assert list(role_labels(stats)[0]) == ["rare", "eos"]


def test_relative_targets_and_rarest_visible_key():
    np.testing.assert_array_equal(relative_targets(3, 3, "encoder")["previous"], [-1, 0, 1])
    np.testing.assert_array_equal(relative_targets(3, 3, "decoder_self")["next"], [1, 2, -1])
    np.testing.assert_array_equal(relative_targets(3, 5, "cross")["same"], [0, 2, 4])  # proportional diagonal
    causal = np.tril(np.ones((3, 3), bool))
    special = np.array([True, False, False])
    np.testing.assert_array_equal(rarest_keys(np.array([1, 7, 3]), special, causal), [-1, 1, 2])


def test_decoder_self_attention_never_counts_the_next_token():
    sums = RoleSums()
    causal = np.tril(np.ones((4, 4), bool))
    weights = np.tril(np.ones((4, 4)))
    weights /= weights.sum(-1, keepdims=True)
    add_sentence(sums, weights[None, None], ["[BOS]", "▁a", "▁b", "▁c"], np.ones(4), causal, "decoder_self")
    assert sums.counts["next"] == 0 and sums.means()["next"][0, 0] == 0.0
    np.testing.assert_allclose(sums.means()["eos"][0, 0], np.mean([1, 1 / 2, 1 / 3, 1 / 4]))  # [BOS] is its boundary


def test_corpus_roles_of_one_sentence_equal_the_models_own_weights(tiny_model, tiny_tokenizer, pairs):
    examples, _ = corpus_examples(pairs[:1], tiny_tokenizer)
    stats = head_roles(tiny_model, tiny_tokenizer, examples[:1], token_counts(examples, tiny_tokenizer.vocab_size))
    src = torch.tensor([examples[0].source])
    weights = torch.stack(
        [a.weights[0] for a in tiny_model.encode(src, padding_mask(src, 0), output_attentions=True).self_attentions]
    )
    np.testing.assert_allclose(
        stats["encoder"]["confidence"], weights.max(-1).values.mean(-1).detach().numpy(), rtol=1e-5
    )
    assert set(stats) == set(KINDS)


# --------------------------------------------------------------------------- importance
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


# --------------------------------------------------------------------------- queries and keys
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


# --------------------------------------------------------------------------- attribution
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


# --------------------------------------------------------------------------- the corpus file
SMALL = CorpusSettings(importance_sentences=3, prune_sentences=3, map_sentences=3, prune_points=3, batch_size=4)


@pytest.fixture(scope="module")
def corpus(tiny_checkpoint, pairs):
    from model import load_checkpoint

    checkpoint = load_checkpoint(tiny_checkpoint)
    return checkpoint, compute_corpus_heads(checkpoint.model, checkpoint.tokenizer, pairs, SMALL, log=lambda *_: None)


def test_corpus_figures_have_every_head(corpus):
    checkpoint, data = corpus
    config = checkpoint.config
    assert data.stats["encoder"]["previous"].shape == (config.n_encoder_layers, config.n_heads)
    assert data.roles["cross"].shape == (config.n_decoder_layers, config.n_heads)
    assert len(data.pruning.order) == 3 * 2 * 4 and data.pruning.pruned[[0, -1]].tolist() == [0, 24]
    assert data.pruning.bleu_random.shape == (1, len(data.pruning.pruned))
    head_map = data.maps["cross"]
    assert head_map.coords.shape[:3] == (2, 4, head_map.n_queries + len(head_map.key_tokens))
    assert set(head_map.query_tokens) >= {"[BOS]"} and "[EOS]" in set(head_map.key_tokens)


def test_the_sentence_is_placed_where_the_corpus_map_put_it(corpus, pairs):
    """The first map sentence's own points, projected live, land on its stored points."""
    checkpoint, data = corpus
    head_map = data.maps["cross"]
    example = int(head_map.query_sentences[0])
    chosen, _ = corpus_examples(pairs, checkpoint.tokenizer, SMALL.map_sentences)
    source, target = chosen[example].source, chosen[example].target
    queries, keys = sentence_vectors(checkpoint.model, source, target[1:], "cross", 1, 2)
    live = project(queries, head_map.projection(1, 2), "query")
    stored = head_map.coords[1, 2, : head_map.n_queries][head_map.query_sentences == example]
    np.testing.assert_allclose(live, stored, atol=2e-2 * max(1.0, np.abs(stored).max()))
    assert len(stored) == len(chosen[example].target) - 1  # [BOS] y1 .. y_{T-1}: no padding, no final [EOS]


def test_corpus_file_round_trips_and_detects_stale_weights(corpus, tmp_path):
    checkpoint, data = corpus
    path = save_corpus(tmp_path / CORPUS_FILE, data)
    assert path.stat().st_size < 5_000_000
    loaded, problem = corpus_status(path, checkpoint.model)
    assert problem == "" and loaded.weights_hash == weights_hash(checkpoint.model)
    for kind in KINDS:
        np.testing.assert_array_equal(loaded.roles[kind], data.roles[kind])
        np.testing.assert_allclose(loaded.importance[kind], data.importance[kind])
        for name, values in data.stats[kind].items():
            np.testing.assert_allclose(loaded.stats[kind][name], values)
        np.testing.assert_allclose(loaded.maps[kind].coords, data.maps[kind].coords, rtol=1e-3, atol=1e-3)
        np.testing.assert_array_equal(loaded.maps[kind].key_tokens, data.maps[kind].key_tokens)
    np.testing.assert_allclose(loaded.pruning.bleu_importance, data.pruning.bleu_importance)
    assert loaded.settings["examples"] == data.settings["examples"]
    assert corpus_status(tmp_path / "none.npz", checkpoint.model) == (None, "missing")
    changed = dataclasses.replace(checkpoint).model
    with torch.no_grad():
        changed.decoder_layers[0].feed_forward.linear1.weight[0, 0] += 1e-3
    try:
        assert corpus_status(path, changed) == (None, "stale")
    finally:
        with torch.no_grad():
            changed.decoder_layers[0].feed_forward.linear1.weight[0, 0] -= 1e-3
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    assert corpus_status(tmp_path / "bad.npz", checkpoint.model)[1].startswith("unreadable")


def test_roles_do_not_depend_on_padding(tiny_model, tiny_tokenizer, pairs):
    examples, _ = corpus_examples(pairs, tiny_tokenizer)
    counts = token_counts(examples, tiny_tokenizer.vocab_size)
    one, padded = (head_roles(tiny_model, tiny_tokenizer, examples, counts, batch_size=size) for size in (1, 32))
    for kind in KINDS:
        for name in one[kind]:
            np.testing.assert_allclose(padded[kind][name], one[kind][name], atol=1e-5, err_msg=f"{kind} {name}")
