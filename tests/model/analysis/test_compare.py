"""Two sentences compared (model/analysis/compare.py) on the tiny checkpoint's real translations of the blog
post's pair: the token's rows equal an independent float64 forward pass of each sentence, the distances and
the ranking equal a direct recomputation, and the translating step is the one its cross-attention aligns."""

from __future__ import annotations

import numpy as np
import provenance_fixtures as ref
import pytest

from model.analysis.compare import (
    compare_token,
    row_distances,
    shared_source_tokens,
    token_positions,
)
from model.decoding.greedy import translate
from model.text.tokenizer import SPECIAL_TOKENS

TIRED = "The animal didn't cross the street because it was too tired."
WIDE = "The animal didn't cross the street because it was too wide."


@pytest.fixture(scope="module")
def pair(checkpoint):
    return (
        translate(checkpoint.model, checkpoint.tokenizer, TIRED, "en-de"),
        translate(checkpoint.model, checkpoint.tokenizer, WIDE, "en-de"),
    )


@pytest.fixture(scope="module")
def token(pair):
    shared = shared_source_tokens(*pair)
    return "▁it" if "▁it" in shared else shared[len(shared) // 2]


def direct_distance(a: np.ndarray, a_tokens, b: np.ndarray, b_tokens) -> float:
    """Total variation over keys named (token, how many times it came before), written out with dicts."""

    def named(row, tokens):
        weights, counts = {}, {}
        for weight, token in zip(row, tokens):
            weights[token, counts.get(token, 0)] = float(weight)
            counts[token] = counts.get(token, 0) + 1
        return weights

    first, second = named(a, a_tokens), named(b, b_tokens)
    return 0.5 * sum(abs(first.get(key, 0.0) - second.get(key, 0.0)) for key in {*first, *second})


def test_the_tokens_rows_equal_an_independent_forward_pass_of_each_sentence(checkpoint, pair, token):
    comparison = compare_token(*pair, token)
    for looks, trace in ((comparison.first, pair[0]), (comparison.second, pair[1])):
        assert trace.source_tokens[looks.position] == token
        target = [checkpoint.model.config.bos_id, *trace.output_ids[:-1]]
        reference = ref.forward(checkpoint.model, list(trace.source_ids), target)
        encoder = np.stack([layer.weights.numpy() for layer in reference.encoder])  # (L, h, S, S)
        cross = np.stack([layer.weights.numpy() for layer in reference.cross])  # (L, h, T, S)
        np.testing.assert_allclose(looks.encoder_rows, encoder[:, :, looks.position], atol=2e-5)
        np.testing.assert_allclose(looks.cross_rows, cross[:, :, looks.translating.step], atol=2e-5)


def test_distances_and_ranking_equal_a_direct_recomputation(pair, token):
    first, second = pair
    comparison = compare_token(first, second, token)
    i, j = comparison.first.position, comparison.second.position
    step_a, step_b = comparison.first.translating.step, comparison.second.translating.step
    expected = []
    for kind, a_all, b_all in (
        ("encoder", first.encoder_attention[:, :, i], second.encoder_attention[:, :, j]),
        ("cross", first.cross_attention[:, :, step_a], second.cross_attention[:, :, step_b]),
    ):
        for layer in range(a_all.shape[0]):
            for head in range(a_all.shape[1]):
                d = direct_distance(a_all[layer, head], first.source_tokens, b_all[layer, head], second.source_tokens)
                assert getattr(comparison, f"{kind}_distance")[layer, head] == pytest.approx(d, abs=1e-12)
                expected.append((-d, ("encoder", "cross").index(kind), layer, head))
    ranked = [(h.kind, h.layer, h.head) for h in comparison.ranking]
    assert ranked == [(("encoder", "cross")[k], layer, head) for _, k, layer, head in sorted(expected)]
    distances = [h.distance for h in comparison.ranking]
    assert distances == sorted(distances, reverse=True) and 0 <= distances[-1] and distances[0] <= 1


def test_the_translating_step_is_where_averaged_cross_attention_links_the_token(pair, token):
    comparison = compare_token(*pair, token)
    for trace, looks in zip(pair, (comparison.first, comparison.second)):
        mean = trace.cross_attention.mean(axis=(0, 1))  # (T, S)
        real = [k for k, t in enumerate(trace.source_tokens) if t not in SPECIAL_TOKENS]
        linked = [
            t
            for t, out in enumerate(trace.output_tokens)
            if out not in SPECIAL_TOKENS and real[int(np.argmax(mean[t, real]))] == looks.position
        ]
        if linked:
            step = max(linked, key=lambda t: mean[t, looks.position])
            assert (looks.translating.step, looks.translating.found_by) == (step, "alignment")
        else:
            assert looks.translating.step == int(np.argmax(mean[:, looks.position]))
            assert looks.translating.found_by == "attention"
        step = looks.translating.step
        assert looks.translating.output_token == trace.output_tokens[step]
        assert looks.translating.candidates == trace.candidate_tokens[step][:5]
        np.testing.assert_array_equal(looks.translating.probabilities, trace.candidate_probs[step][:5])
        top = looks.top_keys("encoder", 1, 2, k=3)
        row = trace.encoder_attention[1, 2, looks.position]
        assert [key.weight for key in top] == sorted(row.tolist(), reverse=True)[:3]
        assert all(trace.source_tokens[key.position] == key.token for key in top)


def test_of_several_steps_aligned_to_the_token_the_strongest_translates_it(pair):
    import dataclasses

    trace = pair[0]
    n_steps, n_source = trace.cross_attention.shape[2:]
    position, steps = 1, [0, 1]  # the first real source token; two steps linked to it, the second more strongly
    assert n_steps >= 3 and all(trace.output_tokens[t] not in SPECIAL_TOKENS for t in steps)
    rows = np.full((n_steps, n_source), 1 / n_source)
    rows[:, position] = 0.0
    rows[steps[0], position], rows[steps[1], position] = 0.5, 0.8
    rows /= rows.sum(-1, keepdims=True)
    cross = np.broadcast_to(rows, trace.cross_attention.shape).astype(np.float32)
    looks = compare_token(
        dataclasses.replace(trace, cross_attention=cross),
        pair[1],
        trace.source_tokens[position],
        occurrences=(token_positions(trace.source_tokens, trace.source_tokens[position]).index(position), 0),
    )
    assert (looks.first.translating.step, looks.first.translating.found_by) == (steps[1], "alignment")


def test_distance_is_total_variation_over_keys_matched_by_token_and_occurrence():
    tokens_a, tokens_b = ["▁the", "▁animal", "▁the", "▁tired"], ["▁the", "▁animal", "▁the", "▁wide", "."]
    a = np.array([0.1, 0.5, 0.2, 0.2])
    b = np.array([0.1, 0.1, 0.6, 0.1, 0.1])
    # matched: the#0 0, animal 0.4, the#1 0.4; unmatched: tired 0.2, wide 0.1, "." 0.1
    assert row_distances(a, tokens_a, b, tokens_b) == pytest.approx(0.5 * (0.4 + 0.4 + 0.2 + 0.1 + 0.1))
    assert row_distances(a, tokens_a, a, tokens_a) == 0
    assert row_distances(np.array([1.0, 0]), ["x", "y"], np.array([0, 1.0]), ["x", "y"]) == 1


def test_tokens_are_found_by_spelling_and_occurrence(pair):
    assert token_positions(["<2de>", "▁it", "▁was", "▁it"], "it") == [1, 3]
    assert token_positions(["▁it", "it"], "it") == [1]  # an exact spelling wins
    first, second = pair
    repeated = [t for t in shared_source_tokens(first, second) if first.source_tokens.count(t) > 1]
    if repeated:
        later = compare_token(first, second, repeated[0], occurrences=(1, 1))
        assert later.first.position == token_positions(first.source_tokens, repeated[0])[1]
    with pytest.raises(ValueError, match="occurs 0 times"):
        compare_token(first, second, "▁zebra")
    with pytest.raises(ValueError, match="different directions"):
        compare_token(first, translate_like(second, "de-en"), "▁it")


def translate_like(trace, direction: str):
    import dataclasses

    return dataclasses.replace(trace, direction=direction)
