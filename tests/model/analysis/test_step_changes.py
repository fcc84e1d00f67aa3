"""model/analysis/step_changes.py: the new attention rows and candidate changes between decoding steps, on
hand-built arrays with the expected numbers written out, and on a real trace of the tiny model.
"""

from __future__ import annotations

import numpy as np
import pytest

from model.decoding.greedy import translate
from model.analysis.step_changes import STEP_KINDS, candidate_change, row_change, step_change

# Decoder self-attention of one layer and one head over T = 3 steps (causal rows).
SELF = np.array([[[[1.0, 0.0, 0.0], [0.6, 0.4, 0.0], [0.2, 0.3, 0.5]]]])  # (1, 1, 3, 3)
# Cross-attention of one layer and two heads, T = 3 steps over S = 2 source keys.
CROSS = np.array([[[[0.9, 0.1], [0.5, 0.5], [0.5, 0.5]], [[0.0, 1.0], [1.0, 0.0], [0.25, 0.75]]]])  # (1, 2, 3, 2)


def test_decoder_self_row_gains_a_key():
    change = row_change(SELF, ["[BOS]", "▁A", "▁man"], "decoder_self", 2)
    assert change.keys == ["[BOS]", "▁A", "▁man"]
    np.testing.assert_allclose(change.new_row, [[[0.2, 0.3, 0.5]]])
    np.testing.assert_allclose(change.previous_row, [[[0.6, 0.4]]])
    np.testing.assert_allclose(change.difference, [[[-0.4, -0.1]]])
    np.testing.assert_allclose(change.new_key_weight, [[0.5]])
    np.testing.assert_allclose(change.moved, [[0.5 * (0.4 + 0.1 + 0.5)]])


def test_cross_row_keeps_its_keys():
    change = row_change(CROSS, ["▁Ein", "[EOS]"], "cross", 1)
    assert change.keys == ["▁Ein", "[EOS]"] and change.new_key_weight is None
    np.testing.assert_allclose(change.difference, [[[-0.4, 0.4], [1.0, -1.0]]])
    np.testing.assert_allclose(change.moved, [[0.4, 1.0]])  # head 2 moved all its weight
    unchanged = row_change(CROSS, ["▁Ein", "[EOS]"], "cross", 2)
    np.testing.assert_allclose(unchanged.moved[0, 0], 0.0)


def test_the_first_step_has_nothing_to_compare_with():
    change = row_change(SELF, ["[BOS]", "▁A", "▁man"], "decoder_self", 0)
    assert change.previous_row is None and change.difference is None and change.moved is None
    assert change.keys == ["[BOS]"] and change.new_row.shape == (1, 1, 1)
    np.testing.assert_allclose(change.new_key_weight, [[1.0]])


def test_bad_row_change_input_gets_a_clear_message():
    with pytest.raises(ValueError, match="does not change between steps"):
        row_change(SELF, ["a", "b", "c"], "encoder", 1)
    with pytest.raises(ValueError, match="step must be in 0..2"):
        row_change(SELF, ["a", "b", "c"], "decoder_self", 3)
    with pytest.raises(ValueError, match="K = 2 keys"):
        row_change(SELF, ["a", "b"], "decoder_self", 1)
    with pytest.raises(ValueError, match="unknown attention kind"):
        row_change(SELF, ["a", "b", "c"], "self", 1)


IDS = np.array([[10, 11, 12], [11, 13, 10]])
TOKENS = [["▁A", "▁The", "▁Two"], ["▁The", "▁man", "▁A"]]
PROBS = np.array([[0.5, 0.3, 0.1], [0.6, 0.2, 0.1]])


def test_candidates_that_entered_left_and_moved():
    change = candidate_change(IDS, TOKENS, PROBS, 1)
    assert [(m.token, m.rank_before, m.rank_after) for m in change.entered] == [("▁man", None, 1)]
    assert [(m.token, m.rank_before, m.rank_after) for m in change.left] == [("▁Two", 2, None)]
    assert change.left[0].prob_before == pytest.approx(0.1) and change.left[0].prob_after is None
    assert [(m.token, m.rank_before, m.rank_after) for m in change.stayed] == [("▁The", 1, 0), ("▁A", 0, 2)]
    the = change.stayed[0]
    assert the.prob_before == pytest.approx(0.3) and the.prob_after == pytest.approx(0.6)
    assert change.entered[0].prob_before is None  # below the kept top-k: unknown, not 0


def test_at_the_first_step_every_candidate_entered():
    change = candidate_change(IDS, TOKENS, PROBS, 0)
    assert [m.token for m in change.entered] == TOKENS[0] and not change.left and not change.stayed


def test_step_change_of_a_real_trace_slices_the_trace(tiny_model, tiny_tokenizer):
    trace = translate(tiny_model, tiny_tokenizer, "Ein Mann fährt Fahrrad.", "de-en", max_new_tokens=6)
    assert trace.num_steps >= 3
    for step in range(trace.num_steps):
        change = step_change(trace, step)
        assert set(change.rows) == set(STEP_KINDS)
        assert change.query_token == trace.target_tokens[step] and change.chosen_token == trace.output_tokens[step]
        self_row, cross_row = change.rows["decoder_self"], change.rows["cross"]
        np.testing.assert_array_equal(self_row.new_row, trace.decoder_self_attention[:, :, step, : step + 1])
        np.testing.assert_array_equal(cross_row.new_row, trace.cross_attention[:, :, step])
        if step:
            np.testing.assert_allclose(
                cross_row.difference, trace.cross_attention[:, :, step] - trace.cross_attention[:, :, step - 1]
            )
            np.testing.assert_allclose(
                self_row.difference,
                trace.decoder_self_attention[:, :, step, :step] - trace.decoder_self_attention[:, :, step - 1, :step],
            )
            assert ((self_row.moved >= 0) & (self_row.moved <= 1 + 1e-6)).all()
        before = set(trace.candidate_ids[step - 1].tolist()) if step else set()
        after = set(trace.candidate_ids[step].tolist())
        assert {m.token_id for m in change.candidates.entered} == after - before
        assert {m.token_id for m in change.candidates.left} == before - after
    with pytest.raises(ValueError, match="step must be in"):
        step_change(trace, trace.num_steps)
