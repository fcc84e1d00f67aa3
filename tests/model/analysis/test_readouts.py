"""model/analysis/readouts.py on the tiny model: teacher-forced probabilities under interventions, beam vs
greedy, word alignment from cross-attention, per-head diagnostics. CPU, deterministic, no network.
"""

from __future__ import annotations

import functools
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model.decoding.greedy import translate
from model.decoding.ablation import Ablation
from model.analysis.readouts import (
    DIAGNOSTICS,
    aligned_edits,
    beam_versus_greedy,
    first_difference,
    head_diagnostics,
    is_punctuation,
    token_probabilities,
    trace_head_diagnostics,
    word_alignment,
    word_numbers,
)
from model.text.inputs import prepare_source

GERMAN = "Ein Mann fährt Fahrrad."


@pytest.fixture
def trace(tiny_model, tiny_tokenizer):
    return translate(tiny_model, tiny_tokenizer, GERMAN, "de-en", max_new_tokens=8)


# --------------------------------------------------------------------------- probabilities
def test_teacher_forced_probabilities_equal_the_traces_chosen_probs(tiny_model, trace):
    probs = token_probabilities(tiny_model, trace.source_ids, trace.output_ids)
    assert probs.shape == (trace.num_steps,)
    np.testing.assert_allclose(probs, trace.chosen_probs, atol=1e-5)
    np.testing.assert_allclose(
        token_probabilities(tiny_model, trace.source_ids, trace.output_ids, Ablation()), probs, atol=1e-6
    )


def test_switching_heads_off_changes_the_probabilities(tiny_model, trace):
    ablated = token_probabilities(
        tiny_model, trace.source_ids, trace.output_ids, Ablation(encoder_heads={(0, 0), (1, 2)}, cross_heads={(1, 1)})
    )
    assert ablated.shape == trace.chosen_probs.shape
    assert np.all((ablated >= 0) & (ablated <= 1))
    assert not np.allclose(ablated, trace.chosen_probs, atol=1e-4)


def test_without_cross_attention_the_source_no_longer_matters(tiny_model, tiny_tokenizer, trace):
    every_cross_head = Ablation(cross_heads={(layer, head) for layer in range(2) for head in range(4)})
    other_source, _ = prepare_source(tiny_tokenizer, "Zwei Hunde spielen im Schnee.", "de-en")
    a = token_probabilities(tiny_model, trace.source_ids, trace.output_ids, every_cross_head)
    b = token_probabilities(tiny_model, other_source, trace.output_ids, every_cross_head)
    np.testing.assert_allclose(a, b, atol=1e-6)


def test_without_positional_encodings_the_source_is_a_bag_of_tokens(tiny_model, trace):
    """Section 3.5: attention alone ignores order; only the positional encodings tell positions apart."""
    source = trace.source_ids
    shuffled = [source[0], *reversed(source[1:-1]), source[-1]]
    assert shuffled != source
    no_pe = Ablation(positional_encoding=False)
    np.testing.assert_allclose(
        token_probabilities(tiny_model, source, trace.output_ids, no_pe),
        token_probabilities(tiny_model, shuffled, trace.output_ids, no_pe),
        atol=1e-5,
    )
    assert not np.allclose(
        token_probabilities(tiny_model, source, trace.output_ids),
        token_probabilities(tiny_model, shuffled, trace.output_ids),
        atol=1e-5,
    )


def test_token_probabilities_reject_empty_input(tiny_model, trace):
    with pytest.raises(ValueError, match="empty"):
        token_probabilities(tiny_model, trace.source_ids, [])


# --------------------------------------------------------------------------- beam vs greedy
@pytest.mark.parametrize(
    "a, b, expected",
    [
        ([1, 2, 3], [1, 2, 3], None),
        ([1, 2, 3], [1, 5, 3], 1),
        ([4], [5], 0),
        ([1, 2], [1, 2, 3], 2),
        ([], [], None),
    ],
)
def test_first_difference(a, b, expected):
    assert first_difference(a, b) == expected
    assert first_difference(b, a) == expected


# --------------------------------------------------------------------------- what one output changed of another
def edits_of(a, b, start=0):
    return [(edit.kind, list(edit.original), list(edit.changed)) for edit in aligned_edits(a, b, start)]


@pytest.mark.parametrize(
    "a, b, expected",
    [
        ([1, 2, 3, 4], [1, 2, 3, 4], []),
        ([1, 2, 3, 4], [1, 9, 2, 3, 4], [("inserted", [], [1])]),  # a shift by one: only the new token
        ([1, 2, 3, 4], [1, 3, 4], [("removed", [1], [])]),
        ([1, 2, 3, 4], [1, 9, 3, 4], [("replaced", [1], [1])]),
        ([1, 2, 3, 4, 5], [1, 7, 8, 2, 3, 5], [("inserted", [], [1, 2]), ("removed", [3], [])]),
        ([5, 6, 7], [8], [("replaced", [0, 1, 2], [0])]),
        ([], [4], [("inserted", [], [0])]),
    ],
)
def test_an_alignment_marks_only_what_differs(a, b, expected):
    assert edits_of(a, b) == expected


def test_an_alignment_from_a_start_leaves_the_prefix_and_counts_places_in_the_whole_sequences():
    assert edits_of([1, 2, 3, 4], [1, 9, 2, 3, 4], start=1) == [("inserted", [], [1])]
    assert edits_of([1, 2, 3], [1, 5, 2, 3]) == [("inserted", [], [1])]
    assert edits_of([1, 2, 3], [1, 5, 2, 3], start=2) == [("inserted", [], [2])]  # [3] against [2, 3]: not realigned


def lcs_length(a: tuple, b: tuple) -> int:
    """The longest common subsequence by brute force: the longest subsequence of `a` that is one of `b`."""

    @functools.cache
    def subsequences(seq: tuple, k: int) -> frozenset:
        return frozenset(combinations(seq, k))

    return max(k for k in range(min(len(a), len(b)) + 1) if subsequences(a, k) & subsequences(b, k))


@settings(max_examples=150, deadline=None, derandomize=True)
@given(a=st.lists(st.integers(0, 3), max_size=7), b=st.lists(st.integers(0, 3), max_size=7))
def test_an_alignment_keeps_a_longest_common_subsequence_and_rebuilds_the_changed_output(a, b):
    edits = aligned_edits(a, b)
    kept_a = [t for t in range(len(a)) if not any(t in edit.original for edit in edits)]
    kept_b = [t for t in range(len(b)) if not any(t in edit.changed for edit in edits)]
    assert [a[t] for t in kept_a] == [b[t] for t in kept_b]  # what is unmarked is the same tokens in order
    assert len(kept_a) == lcs_length(tuple(a), tuple(b))  # as many as two such sequences can share
    rebuilt, at, at_b = [], 0, 0
    for index, edit in enumerate(edits):  # the original with each edit applied is the changed output
        assert edit.original or edit.changed
        if index:  # two edits have a kept token between them, in both sequences
            assert edit.original.start > at and edit.changed.start > at_b
        rebuilt += a[at : edit.original.start] + [b[t] for t in edit.changed]
        at, at_b = edit.original.stop, edit.changed.stop
    assert rebuilt + a[at:] == b


def test_beam_of_one_is_greedy(tiny_model, tiny_tokenizer):
    trace = translate(tiny_model, tiny_tokenizer, GERMAN, "de-en")  # the same step budget as beam search
    comparison = beam_versus_greedy(tiny_model, tiny_tokenizer, trace, beam_size=1)
    (beam,) = comparison.beams
    assert beam.ids == trace.output_ids and beam.diverges_at is None
    assert beam.score == pytest.approx(comparison.greedy.score, abs=1e-4)


def test_beam_hypotheses_are_ranked_and_marked_where_they_leave_greedy(tiny_model, tiny_tokenizer, trace):
    comparison = beam_versus_greedy(tiny_model, tiny_tokenizer, trace)
    assert (comparison.beam_size, comparison.length_penalty) == (4, 0.6)
    greedy = comparison.greedy
    assert greedy.ids == trace.output_ids and greedy.diverges_at is None
    assert greedy.log_prob == pytest.approx(float(np.log(trace.chosen_probs).sum()), abs=1e-3)
    lp = ((5 + len(greedy.ids)) / 6) ** 0.6  # GNMT length penalty, section 6.1
    assert greedy.score == pytest.approx(greedy.log_prob / lp)
    scores = [beam.score for beam in comparison.beams]
    assert 1 <= len(scores) <= 4 and scores == sorted(scores, reverse=True)
    for beam in comparison.beams:
        assert beam.diverges_at == first_difference(beam.ids, trace.output_ids)
        assert beam.tokens == tiny_tokenizer.tokens(beam.ids) and beam.log_prob <= 0


# --------------------------------------------------------------------------- word alignment
SOURCE = ["<2en>", "▁Ein", "▁Mann", "▁fähr", "t", ".", "[EOS]"]
OUTPUT = ["▁A", "▁man", "▁rides", ".", "[EOS]"]


def alignment_weights(targets: list[int], layers: int = 2, heads: int = 2) -> np.ndarray:
    """(L, h, T, S) cross-attention putting 0.6 on [EOS] and 0.4 on targets[t] for every output t."""
    weights = np.zeros((layers, heads, len(OUTPUT), len(SOURCE)), dtype=np.float32)
    for t, s in enumerate(targets):
        weights[:, :, t, s] += 0.4
        weights[:, :, t, len(SOURCE) - 1] += 0.6
    return weights


def test_alignment_takes_the_argmax_over_real_source_tokens():
    alignment = word_alignment(alignment_weights([1, 2, 3, 5, 5]), SOURCE, OUTPUT)
    # [EOS] holds most weight everywhere but is never a link; the output [EOS] gets no link
    assert alignment.source_index.tolist() == [1, 2, 3, 5, -1]
    assert alignment.links == [(1, 0), (2, 1), (3, 2), (5, 3)]
    np.testing.assert_allclose(alignment.strength[:4], 0.4)
    assert alignment.weights.shape == (len(OUTPUT), len(SOURCE))
    # Pharaoh: source subwords counted without the language tag, targets without [EOS]
    assert alignment.pharaoh() == "0-0 1-1 2-2 4-3"
    # words: "▁fähr" + "t" + "." form one word ("fährt.")
    assert word_numbers(SOURCE[1:-1]) == [0, 1, 2, 2, 2]
    assert alignment.pharaoh(words=True) == "0-0 1-1 2-2"


def test_alignment_averages_only_the_chosen_layers():
    weights = alignment_weights([1, 2, 3, 5, 5])
    weights[1, :, 0] = 0.0
    weights[1, :, 0, 4] = 1.0  # layer 2 aligns "▁A" to "t"
    assert word_alignment(weights, SOURCE, OUTPUT, layers=[0]).source_index[0] == 1
    assert word_alignment(weights, SOURCE, OUTPUT, layers=[1]).source_index[0] == 4
    assert word_alignment(weights, SOURCE, OUTPUT, layers=[1]).layers == [1]
    with pytest.raises(ValueError, match="layers"):
        word_alignment(weights, SOURCE, OUTPUT, layers=[2])
    with pytest.raises(ValueError, match="output"):
        word_alignment(weights, SOURCE, OUTPUT[:-1])


def test_alignment_of_a_real_trace(trace):
    alignment = word_alignment(trace.cross_attention, trace.source_tokens, trace.output_tokens)
    assert len(alignment.source_index) == trace.num_steps
    pairs = [tuple(map(int, pair.split("-"))) for pair in alignment.pharaoh().split()]
    assert all(0 <= i < len(trace.source_tokens) - 2 and 0 <= j < trace.num_steps for i, j in pairs)


# --------------------------------------------------------------------------- head diagnostics
def test_diagnostics_of_known_patterns():
    tokens = ["▁Ein", "▁Mann", ",", "▁ja", "[EOS]"]
    n = len(tokens)
    weights = np.stack(
        [
            np.eye(n),  # attends to itself: diagonal, no uncertainty
            np.full((n, n), 1 / n),  # uniform
            np.tile(np.eye(n)[n - 1], (n, 1)),  # everything on [EOS]
            np.tile(np.eye(n)[2], (n, 1)),  # everything on the comma
        ]
    )[None]  # (1, 4, n, n)
    stats = head_diagnostics(weights, tokens, tokens)
    assert set(stats) == set(DIAGNOSTICS) and all(v.shape == (1, 4) for v in stats.values())
    np.testing.assert_allclose(stats["entropy"][0], [0, np.log2(n), 0, 0], atol=1e-5)
    np.testing.assert_allclose(stats["diagonal"][0, 0], 1.0)
    np.testing.assert_allclose(stats["diagonal"][0, 2], 2 / n)  # only queries 3 and 4 have [EOS] within one
    np.testing.assert_allclose(stats["special"][0], [1 / n, 1 / n, 1, 0], atol=1e-6)
    np.testing.assert_allclose(stats["punctuation"][0], [1 / n, 1 / n, 0, 1], atol=1e-6)


@pytest.mark.parametrize(
    "token, expected",
    [
        (".", True),
        ("▁,", True),
        ("?!", True),
        ("▁Mann", False),
        ("▁", False),
        ("[EOS]", False),
        ("<2en>", False),
        ("▁entlang.", True),
        ("liest.", True),
        ("▁Park,", True),
        ("▁z.B", False),
    ],
)
def test_is_punctuation(token, expected):
    assert is_punctuation(token) is expected


@pytest.mark.parametrize("kind", ["encoder", "decoder_self", "cross"])
def test_trace_head_diagnostics_have_one_value_per_layer_and_head(trace, kind):
    stats = trace_head_diagnostics(trace, kind)
    for name, values in stats.items():
        assert values.shape == (2, 4), name
        assert np.all(np.isfinite(values))
    assert np.all((stats["diagonal"] >= 0) & (stats["diagonal"] <= 1 + 1e-6))
    with pytest.raises(ValueError, match="kind"):
        trace_head_diagnostics(trace, "sideways")
