"""Beam search of section 6.1 against exhaustive search and an independent reference forward pass
(tests/support/provenance_fixtures.py).

- A beam as wide as the whole hypothesis space returns exactly the exhaustive ranking under the GNMT score;
  a narrower beam finds a strictly better output than greedy where greedy's locally best first token leads
  to a worse sentence.
- Greedy and beam log-probabilities equal an independent sum of log-softmax.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
import torch

import provenance_fixtures as ref
from model.analysis.readouts import beam_versus_greedy
from model.core.config import TransformerConfig
from model.decoding.beam import beam_search
from model.decoding.greedy import translate

SENTENCE = "Zwei Hunde spielen im Schnee und ein Kind isst einen Apfel."

TINY_VOCAB = TransformerConfig(
    vocab_size=6,
    d_model=16,
    n_heads=2,
    n_encoder_layers=1,
    n_decoder_layers=2,
    d_ff=32,
    dropout=0.0,
    attention_dropout=0.0,
    max_positions=16,
)
TINY_SOURCE = [4, 5, 5, 4, TINY_VOCAB.eos_id]
MAX_STEPS = 3


def every_hypothesis(config: TransformerConfig, length: int) -> list[list[int]]:
    """All outputs beam search can return with `length` steps: [EOS]-ended ones of 1..length tokens
    (no [EOS] before the end), and unfinished ones of exactly `length` tokens."""
    others = [token for token in range(config.vocab_size) if token != config.eos_id]
    finished = [[*body, config.eos_id] for n in range(length) for body in itertools.product(others, repeat=n)]
    return finished + [list(body) for body in itertools.product(others, repeat=length)]


def gnmt_score(log_prob: float, length: int, alpha: float) -> float:
    return log_prob / ((5 + length) / 6) ** alpha


@pytest.mark.parametrize("alpha", [0.0, 0.6])
def test_beam_as_wide_as_the_space_is_exhaustive_search(alpha):
    model = ref.perturbed_model(TINY_VOCAB, seed=3)
    hypotheses = every_hypothesis(TINY_VOCAB, MAX_STEPS)
    log_probs = {tuple(ids): ref.sequence_log_prob(model, TINY_SOURCE, ids) for ids in hypotheses}
    assert abs(sum(np.exp(lp) for lp in log_probs.values()) - 1.0) < 1e-6  # the space is complete
    expected = sorted(log_probs, key=lambda ids: gnmt_score(log_probs[ids], len(ids), alpha), reverse=True)

    result = beam_search(
        model, torch.tensor([TINY_SOURCE]), beam_size=len(hypotheses), length_penalty=alpha, max_new_tokens=MAX_STEPS
    )[0]
    assert sorted(tuple(h.ids) for h in result.hypotheses) == sorted(log_probs)
    assert tuple(result.best.ids) == expected[0]
    for hypothesis in result.hypotheses:
        exact = log_probs[tuple(hypothesis.ids)]
        assert hypothesis.log_prob == pytest.approx(exact, abs=1e-4)
        assert hypothesis.score == pytest.approx(gnmt_score(exact, len(hypothesis.ids), alpha), abs=1e-4)
        assert hypothesis.finished == (hypothesis.ids[-1] == TINY_VOCAB.eos_id)
    scores = [h.score for h in result.hypotheses]
    assert scores == sorted(scores, reverse=True)


def test_a_wider_beam_finds_a_strictly_more_probable_multi_step_output():
    """Greedy keeps the locally best first token; beam 4 keeps others and finds a better sentence.

    Seeds are searched (the tiny models are cheap) so the test does not hang on one random draw;
    the found case must beat greedy by a clear margin and equal the exhaustive optimum.
    """
    src = torch.tensor([TINY_SOURCE])
    for seed in range(40):
        model = ref.perturbed_model(TINY_VOCAB, seed=seed)
        greedy = beam_search(model, src, beam_size=1, length_penalty=0.0, max_new_tokens=MAX_STEPS)[0].best
        wide = beam_search(model, src, beam_size=4, length_penalty=0.0, max_new_tokens=MAX_STEPS)[0].best
        if wide.ids[0] != greedy.ids[0] and wide.log_prob > greedy.log_prob + 0.05:
            break
    else:
        pytest.fail("no seed where beam 4 beats greedy with a different first token")
    first_step = torch.log_softmax(ref.forward(model, TINY_SOURCE, [TINY_VOCAB.bos_id]).logits[0], dim=-1)
    assert first_step[greedy.ids[0]] > first_step[wide.ids[0]]  # greedy's first token was locally better
    assert greedy.log_prob == pytest.approx(ref.sequence_log_prob(model, TINY_SOURCE, greedy.ids), abs=1e-4)
    assert wide.log_prob == pytest.approx(ref.sequence_log_prob(model, TINY_SOURCE, wide.ids), abs=1e-4)
    optimum = max(
        every_hypothesis(TINY_VOCAB, MAX_STEPS), key=lambda ids: ref.sequence_log_prob(model, TINY_SOURCE, ids)
    )
    assert wide.ids == optimum


def test_beam_versus_greedy_log_probs_are_an_independent_sum_of_log_softmax(tiny_config, tiny_tokenizer):
    model = ref.perturbed_model(dataclasses.replace(tiny_config, n_encoder_layers=2, n_decoder_layers=3), seed=5)
    source = tiny_tokenizer.encode_source(SENTENCE, "en")
    trace = translate(model, tiny_tokenizer, SENTENCE, "de-en")  # the same default budget as beam search
    comparison = beam_versus_greedy(model, tiny_tokenizer, trace, beam_size=3, length_penalty=0.6)
    assert comparison.greedy.ids == trace.output_ids
    for output in [comparison.greedy, *comparison.beams]:
        exact = ref.sequence_log_prob(model, source, output.ids)
        assert output.log_prob == pytest.approx(exact, abs=2e-3)
        assert output.score == pytest.approx(gnmt_score(exact, len(output.ids), 0.6), abs=2e-3)
