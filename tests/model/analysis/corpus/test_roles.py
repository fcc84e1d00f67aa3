"""model/analysis/corpus/roles.py and the roles collected over a corpus (Voita et al. 2019): positional,
rare-token and sink heads, and cross-attention's aligned and monotone heads, on hand-made weights, and against the
tiny model's own attention weights."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.stats import spearmanr

import provenance_fixtures as ref

from model.analysis.corpus.batches import corpus_examples
from model.analysis.corpus.collect import head_roles, token_counts
from model.analysis.corpus.importance import KINDS
from model.analysis.corpus.roles import (
    KIND_STATS,
    MONOTONE_RHO,
    STATS,
    RoleSums,
    add_cross_sentence,
    add_sentence,
    rank_correlation,
    rarest_keys,
    relative_targets,
    role_labels,
)
from model.core.masks import padding_mask
from model.text.tokenizer import SPECIAL_TOKENS


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


# --------------------------------------------------------------------------- cross-attention: aligned and monotone
SOURCE = ["<2en>", *(f"▁w{i}" for i in range(1, 11)), "[EOS]"]  # S = 12: ten words between the tag and [EOS]
OUTPUT = ["▁A", "▁B", "▁C", "▁D", "▁E", "[EOS]"]  # T = 6; row t is the query that chose OUTPUT[t]
LINKS = [5, 2, 9, 1, 7]  # the source word each output word is built to translate: out of order (not monotone)


def one_hot_rows(positions: list[int], n_keys: int = len(SOURCE)) -> np.ndarray:
    """(T, S): row t puts all its weight on key positions[t]."""
    rows = np.zeros((len(positions), n_keys))
    rows[np.arange(len(positions)), positions] = 1.0
    return rows


def built_cross_attention() -> np.ndarray:
    """(2, 5, T, S): layer 2's five heads all follow LINKS (they make the model's alignment: heads and layers
    averaged, LINKS gets 6 of every 10 heads' weight); layer 1's heads are built aligned, monotone, positional,
    backwards and a sink. The proportional diagonal of T = 6 over S = 12 is [0, 2, 4, 7, 9, 11]."""
    eos = len(SOURCE) - 1
    aligned = one_hot_rows([*LINKS, eos])  # the row that chose [EOS] rests on [EOS]
    monotone = one_hot_rows([3, 5, 6, 9, 11, 11])  # rises with t, never on LINKS nor on the diagonal
    positional = one_hot_rows(list(relative_targets(len(OUTPUT), len(SOURCE), "cross")["same"]))
    backwards = one_hot_rows([10, 8, 6, 3, 0, 0])  # falls as t rises: rho -1
    sink = one_hot_rows([eos] * len(OUTPUT))
    return np.stack([np.stack([aligned, monotone, positional, backwards, sink]), np.stack([aligned] * 5)])


def test_cross_heads_built_aligned_monotone_and_positional_are_classified_as_built():
    sums = RoleSums()
    weights = built_cross_attention()
    add_sentence(sums, weights, SOURCE, np.ones(len(SOURCE)), np.ones(weights.shape[2:], bool), "cross")
    add_cross_sentence(sums, weights, SOURCE, OUTPUT)
    stats = sums.means()
    assert set(KIND_STATS["cross"]) == set(stats)
    # aligned: 5 linked queries (the [EOS] output has no link); the built heads' shares
    np.testing.assert_allclose(stats["aligned"][0], [1.0, 0.0, 1 / 5, 0.0, 0.0])
    np.testing.assert_allclose(stats["aligned"][1], 1.0)
    # monotone: Spearman's rho over the linked queries, against scipy
    np.testing.assert_allclose(stats["monotone"][0, 1:4], [1.0, 1.0, -1.0])
    np.testing.assert_allclose(stats["monotone"][0, 0], spearmanr(np.arange(5), LINKS).statistic)
    assert stats["monotone"][0, 4] == 0.0  # a sink never moves: no order
    assert role_labels(stats)[0].tolist() == ["aligned", "monotone", "same", "mixed", "eos"]
    assert role_labels(stats)[1].tolist() == ["aligned"] * 5


def test_rank_correlation_is_spearmans_rho_with_ties():
    rng = np.random.default_rng(0)
    values = rng.integers(0, 4, size=(3, 9))  # many ties
    expected = [spearmanr(np.arange(9), row).statistic for row in values]
    np.testing.assert_allclose(rank_correlation(np.arange(9), values), expected)
    assert rank_correlation(np.arange(4), np.full(4, 2)) == 0.0  # all equal: no order


def test_a_sentence_too_short_for_an_order_adds_no_monotone_value():
    sums = RoleSums()
    weights = one_hot_rows([1, 2, 3], n_keys=5)[None, None]  # two linked queries, then [EOS]
    add_cross_sentence(sums, weights, ["<2en>", "▁a", "▁b", "▁c", "[EOS]"], ["▁A", "▁B", "[EOS]"])
    assert sums.counts["monotone"] == 0 and sums.counts["aligned"] == 2


def test_a_file_without_the_cross_stats_is_labelled_from_the_stats_it_has():
    stats = {name: np.zeros((1, 2)) for name in STATS}
    stats["confidence"] = np.array([[0.9, 0.1]])
    assert role_labels(stats).tolist() == [["mixed", "broad"]]
    assert role_labels({**stats, "monotone": np.array([[MONOTONE_RHO, 0.9]])}).tolist() == [["monotone", "monotone"]]


@pytest.mark.filterwarnings("ignore:An input array is constant")  # a head that never moves: rho 0, as the code says
def test_corpus_cross_roles_equal_an_independent_reading_of_the_models_attention(tiny_model, tiny_tokenizer, pairs):
    """aligned and monotone of the tiny model over the test pairs against the reference forward pass's own
    cross-attention (tests/support/provenance_fixtures.py, float64): the alignment written out here (heads and
    layers averaged, argmax over real source tokens), scipy's Spearman."""
    examples, _ = corpus_examples(pairs, tiny_tokenizer)
    stats = head_roles(tiny_model, tiny_tokenizer, examples, token_counts(examples, tiny_tokenizer.vocab_size))
    model = tiny_model.double()
    hits, linked, rhos = 0.0, 0, []
    for example in examples:
        reference = ref.forward(model, list(example.source), list(example.target[:-1]))
        cross = torch.stack([a.weights for a in reference.cross]).numpy()  # (L, h, T, S)
        special = np.array([token in SPECIAL_TOKENS for token in tiny_tokenizer.tokens(example.source)])
        links = np.where(special, -np.inf, cross.mean(axis=(0, 1))).argmax(-1)  # (T,)
        real = np.array([token not in SPECIAL_TOKENS for token in tiny_tokenizer.tokens(example.target[1:])])
        strongest = cross.argmax(-1)[..., real]  # (L, h, linked)
        hits, linked = hits + (strongest == links[real]).sum(-1), linked + real.sum()
        if real.sum() >= 3:
            rhos.append(
                [
                    [np.nan_to_num(spearmanr(np.arange(real.sum()), row).statistic) for row in layer]
                    for layer in strongest
                ]
            )
    np.testing.assert_allclose(stats["cross"]["aligned"], hits / linked, atol=1e-6)
    np.testing.assert_allclose(stats["cross"]["monotone"], np.mean(rhos, axis=0), atol=1e-6)
    assert "aligned" not in stats["encoder"] and "monotone" not in stats["decoder_self"]
