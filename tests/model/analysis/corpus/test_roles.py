"""model/analysis/corpus/roles.py and the roles collected over a corpus (Voita et al. 2019): positional,
rare-token and sink heads on hand-made weights, and against the tiny model's own attention weights."""

from __future__ import annotations

import math

import numpy as np
import torch

from model.analysis.corpus.batches import corpus_examples
from model.analysis.corpus.collect import head_roles, token_counts
from model.analysis.corpus.importance import KINDS
from model.analysis.corpus.roles import RoleSums, add_sentence, rarest_keys, relative_targets, role_labels
from model.core.masks import padding_mask


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


def test_roles_do_not_depend_on_padding(tiny_model, tiny_tokenizer, pairs):
    examples, _ = corpus_examples(pairs, tiny_tokenizer)
    counts = token_counts(examples, tiny_tokenizer.vocab_size)
    one, padded = (head_roles(tiny_model, tiny_tokenizer, examples, counts, batch_size=size) for size in (1, 32))
    for kind in KINDS:
        for name in one[kind]:
            np.testing.assert_allclose(padded[kind][name], one[kind][name], atol=1e-5, err_msg=f"{kind} {name}")
