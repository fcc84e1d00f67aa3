"""model/analysis/rollout.py: attention rollout (Abnar & Zuidema 2020) on hand-made attention stacks whose
results are worked out by hand below, invariants, and the flow on a real trace of the tiny model.
"""

from __future__ import annotations

import numpy as np
import pytest

from model.decoding.greedy import translate
from model.analysis.rollout import attention_rollout, cross_rollout, residual_attention, source_flow, trace_source_flow

# Layer 1 has two heads whose mean is A1; layer 2 one head A2 (given twice, so h = 2 as well).
A1_HEADS = [[[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]], [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 1.0, 0.0]]]
# mean A1 = [[1, 0, 0], [.5, .5, 0], [0, .5, .5]]  ->  Ã1 = .5 A1 + .5 I = [[1, 0, 0], [.25, .75, 0], [0, .25, .75]]
A2 = [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
# Ã2 = [[.5, .5, 0], [0, .5, .5], [.5, 0, .5]]
STACK = np.array([A1_HEADS, [A2, A2]])  # (L=2, h=2, 3, 3)

EXPECTED_LAYER1 = [[1.0, 0.0, 0.0], [0.25, 0.75, 0.0], [0.0, 0.25, 0.75]]
# Ã2 · Ã1, row by row: .5 * Ã1[0] + .5 * Ã1[1] = [.625, .375, 0]
#                      .5 * Ã1[1] + .5 * Ã1[2] = [.125, .5, .375]
#                      .5 * Ã1[0] + .5 * Ã1[2] = [.5, .125, .375]
EXPECTED_LAYER2 = [[0.625, 0.375, 0.0], [0.125, 0.5, 0.375], [0.5, 0.125, 0.375]]


def test_rollout_of_a_hand_made_stack_matches_the_hand_computation():
    rollout = attention_rollout(STACK)
    assert rollout.shape == (2, 3, 3)
    np.testing.assert_allclose(rollout[0], EXPECTED_LAYER1, atol=1e-12)
    np.testing.assert_allclose(rollout[1], EXPECTED_LAYER2, atol=1e-12)


def test_later_layers_multiply_on_the_left():
    mixing = residual_attention(STACK)
    np.testing.assert_allclose(attention_rollout(STACK)[-1], mixing[1] @ mixing[0])
    assert not np.allclose(mixing[1] @ mixing[0], mixing[0] @ mixing[1])  # the order matters here


def test_identity_attention_rolls_out_to_the_identity():
    identity = np.broadcast_to(np.eye(5), (3, 4, 5, 5))
    np.testing.assert_allclose(attention_rollout(identity), np.broadcast_to(np.eye(5), (3, 5, 5)))


def test_rows_of_a_random_stack_sum_to_one():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(4, 3, 7, 7))
    weights = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    rollout = attention_rollout(weights)
    np.testing.assert_allclose(rollout.sum(-1), 1.0, atol=1e-12)
    assert (rollout >= 0).all()


def test_a_planted_path_flows_through_the_layers():
    """Layer 1 moves token 3 into position 1, layer 2 moves position 1 into position 0: with no
    residual, position 0 is made of token 3 alone; with the paper's 0.5 it holds 0.25 of it."""
    n = 4
    first = np.eye(n)
    first[1] = [0, 0, 0, 1]
    second = np.eye(n)
    second[0] = [0, 1, 0, 0]
    stack = np.stack([first[None], second[None]])  # (2, 1, 4, 4)
    np.testing.assert_allclose(attention_rollout(stack, residual=0.0)[-1][0], [0, 0, 0, 1])
    # Ã2[0] = [.5, .5, 0, 0]; Ã1[0] = [1, 0, 0, 0], Ã1[1] = [0, .5, 0, .5]
    np.testing.assert_allclose(attention_rollout(stack)[-1][0], [0.5, 0.25, 0.0, 0.25])


def test_cross_rollout_carries_cross_attention_down_the_encoder():
    encoder_rollout = np.array([[1.0, 0.0], [0.5, 0.5]])
    cross = np.array([[[[0.0, 1.0], [1.0, 0.0]], [[0.0, 1.0], [0.0, 1.0]]]])  # (1, 2 heads, T=2, S=2)
    # mean of heads = [[0, 1], [.5, .5]]; times R_enc: [[.5, .5], [.75, .25]]
    np.testing.assert_allclose(cross_rollout(cross, encoder_rollout)[0], [[0.5, 0.5], [0.75, 0.25]])


def test_source_flow_of_a_hand_made_model():
    """One encoder layer, one decoder layer, S = T = 2, each step worked out in the comments."""
    encoder = np.array([[[[1.0, 0.0], [1.0, 0.0]]]])  # Ã = [[1, 0], [.5, .5]] = R_enc
    decoder_self = np.array([[[[1.0, 0.0], [0.5, 0.5]]]])  # Ã = [[1, 0], [.25, .75]]
    cross = np.array([[[[0.0, 1.0], [1.0, 0.0]]]])  # C · R_enc = [[.5, .5], [1, 0]]
    # start [0 0 | I]; self: [[0 0 | 1 0], [0 0 | .25 .75]]
    # cross: .5 X + .5 [C R_enc | 0] = [[.25 .25 | .5 0], [.5 0 | .125 .375]]
    flow = source_flow(encoder, decoder_self, cross)
    np.testing.assert_allclose(flow.to_source, [[0.25, 0.25], [0.5, 0.0]])
    np.testing.assert_allclose(flow.to_target, [[0.5, 0.0], [0.125, 0.375]])
    np.testing.assert_allclose(flow.source_distribution, [[0.5, 0.5], [1.0, 0.0]])


def test_flow_of_a_real_trace_is_a_distribution_and_causal(tiny_model, tiny_tokenizer):
    trace = translate(tiny_model, tiny_tokenizer, "Ein Mann fährt Fahrrad.", "de-en", max_new_tokens=6)
    flow = trace_source_flow(trace)
    n_target, n_source = trace.cross_attention.shape[2:]
    assert flow.to_source.shape == (n_target, n_source) and flow.to_target.shape == (n_target, n_target)
    np.testing.assert_allclose(flow.to_source.sum(-1) + flow.to_target.sum(-1), 1.0, atol=1e-9)
    np.testing.assert_allclose(flow.source_distribution.sum(-1), 1.0, atol=1e-9)
    assert np.allclose(np.triu(flow.to_target, 1), 0)  # no flow from target tokens not yet read
    # the method fixes the source/target split: residual ** L_dec stays on the target side
    n_layers = trace.cross_attention.shape[0]
    np.testing.assert_allclose(flow.to_target.sum(-1), 0.5**n_layers, atol=1e-9)
    # the per-layer view equals an independent einsum of its definition
    expected = np.einsum("lts,sk->ltk", trace.cross_attention.mean(1), attention_rollout(trace.encoder_attention)[-1])
    np.testing.assert_allclose(flow.cross_rollout, expected, atol=1e-5)


@pytest.mark.parametrize(
    "bad, message",
    [
        (np.ones((2, 3, 3)), "must be \\(L, h, Tq, Tk\\)"),
        (np.ones((1, 1, 2, 3)), "square"),
        (-np.ones((1, 1, 2, 2)), "non-negative"),
    ],
)
def test_bad_stacks_get_a_clear_message(bad, message):
    with pytest.raises(ValueError, match=message):
        attention_rollout(bad)


def test_mismatched_shapes_get_a_clear_message():
    with pytest.raises(ValueError, match="shapes disagree"):
        source_flow(np.ones((1, 1, 3, 3)) / 3, np.ones((1, 1, 2, 2)) / 2, np.ones((1, 1, 2, 4)) / 4)
    with pytest.raises(ValueError, match="residual"):
        attention_rollout(STACK, residual=1.5)
