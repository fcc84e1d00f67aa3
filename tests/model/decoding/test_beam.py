"""Beam search of section 6.1: equivalence with greedy decoding, scores that are what they claim
(log P recomputed by teacher forcing, GNMT length penalty), sorting, and batch independence."""

from __future__ import annotations

import math

import pytest
import torch

from model.decoding.beam import BeamResult, beam_search, length_penalty_factor
from model.decoding.greedy import greedy_decode
from model.text.inputs import pad_batch, prepare_source

SENTENCES = [
    "Ein Mann fährt Fahrrad.",
    "Zwei Hunde spielen im Schnee.",
    "Wie spät ist es?",
    "Männer arbeiten auf einer Baustelle.",
]
# With the [EOS] embedding scaled by 5, the seed-0 tiny model ends two of these sentences within a
# few tokens and runs the other two to the step limit: both paths of the search get exercised.
EOS_BIAS = 5.0


@pytest.fixture
def sources(tiny_tokenizer) -> list[list[int]]:
    return [prepare_source(tiny_tokenizer, text, "de-en")[0] for text in SENTENCES]


def with_eos_bias(model, eos_id: int, bias: float):
    """A random model rarely says [EOS]; raising its embedding makes hypotheses end at varied lengths."""
    with torch.no_grad():
        model.embedding.weight[eos_id] *= bias
    return model


def teacher_forced_log_prob(model, source: list[int], ids: list[int]) -> float:
    """Sum of log P(ids[t] | ids[:t], source) from one uncached teacher-forced forward pass."""
    config = model.config
    src = torch.tensor([source])  # (1, S)
    tgt = torch.tensor([[config.bos_id, *ids[:-1]]])  # (1, T)
    with torch.no_grad():
        log_probs = torch.log_softmax(model(src, tgt).float(), dim=-1)[0]  # (T, V)
    return float(log_probs.gather(1, torch.tensor(ids)[:, None]).sum())


def test_length_penalty_is_gnmt_formula():
    assert length_penalty_factor(1, 0.6) == pytest.approx(1.0)
    assert length_penalty_factor(7, 0.6) == pytest.approx(2.0**0.6)
    assert length_penalty_factor(30, 0.0) == 1.0


@pytest.mark.parametrize("eos_bias", [1.0, EOS_BIAS])
def test_beam_size_one_is_greedy(tiny_model, tiny_config, sources, eos_bias):
    model = with_eos_bias(tiny_model, tiny_config.eos_id, eos_bias)
    src = pad_batch(sources, tiny_config.pad_id)  # (B, S)
    greedy = greedy_decode(model, src, max_new_tokens=12)  # (B, T), [PAD] after [EOS]
    results = beam_search(model, src, beam_size=1, max_new_tokens=12)
    assert len(results) == len(sources)
    for row, result in zip(greedy.tolist(), results):
        expected = [t for t in row if t != tiny_config.pad_id]
        assert len(result.hypotheses) == 1
        assert result.best.ids == expected
        assert result.best.finished == (expected[-1] == tiny_config.eos_id)


@pytest.mark.parametrize("beam_size", [2, 4])
def test_hypotheses_sorted_scored_and_log_probs_match_teacher_forcing(tiny_model, tiny_config, sources, beam_size):
    model = with_eos_bias(tiny_model, tiny_config.eos_id, EOS_BIAS)
    alpha = 0.6
    results = beam_search(
        model, pad_batch(sources, tiny_config.pad_id), beam_size=beam_size, length_penalty=alpha, max_new_tokens=15
    )
    saw_finished = False
    for source, result in zip(sources, results):
        assert isinstance(result, BeamResult)
        assert 1 <= len(result.hypotheses) <= beam_size
        scores = [h.score for h in result.hypotheses]
        assert scores == sorted(scores, reverse=True)
        for hypothesis in result.hypotheses:
            assert tiny_config.bos_id not in hypothesis.ids
            assert hypothesis.finished == (hypothesis.ids[-1] == tiny_config.eos_id)
            assert tiny_config.eos_id not in hypothesis.ids[:-1]
            assert hypothesis.score == pytest.approx(hypothesis.log_prob / ((5 + len(hypothesis.ids)) / 6) ** alpha)
            saw_finished |= hypothesis.finished
        best = result.best
        assert best.log_prob == pytest.approx(teacher_forced_log_prob(model, source, best.ids), abs=1e-4)
    assert saw_finished, "the EOS bias should make some hypotheses finish"


def test_wider_beam_finds_at_least_as_probable_first_step(tiny_model, tiny_config, sources):
    # With one step, beam search is exact: the best of K=4 is the argmax, as greedy.
    src = pad_batch(sources, tiny_config.pad_id)
    one_step = beam_search(tiny_model, src, beam_size=4, length_penalty=0.0, max_new_tokens=1)
    greedy = greedy_decode(tiny_model, src, max_new_tokens=1)
    assert [r.best.ids for r in one_step] == greedy.tolist()
    for result in one_step:
        assert len({tuple(h.ids) for h in result.hypotheses}) == len(result.hypotheses)  # distinct beams


def test_batched_equals_one_sentence_at_a_time(tiny_model, tiny_config, sources):
    model = with_eos_bias(tiny_model, tiny_config.eos_id, EOS_BIAS)
    batched = beam_search(model, pad_batch(sources, tiny_config.pad_id), beam_size=3)
    for source, result in zip(sources, batched):
        alone = beam_search(model, torch.tensor([source]), beam_size=3)[0]
        assert [h.ids for h in result.hypotheses] == [h.ids for h in alone.hypotheses]
        for a, b in zip(result.hypotheses, alone.hypotheses):
            assert a.log_prob == pytest.approx(b.log_prob, abs=1e-4)
            assert a.finished == b.finished


def test_default_budget_and_position_limit(tiny_model, tiny_config, sources):
    results = beam_search(tiny_model, torch.tensor([sources[0]]), beam_size=2)
    longest = max(len(h.ids) for h in results[0].hypotheses)
    assert longest <= 2 * len(sources[0]) + 10  # default_max_new_tokens
    assert all(math.isfinite(h.log_prob) for h in results[0].hypotheses)


def test_bad_arguments(tiny_model):
    with pytest.raises(ValueError):
        beam_search(tiny_model, torch.tensor([[4, 5, 2]]), beam_size=0)
    with pytest.raises(ValueError):
        beam_search(tiny_model, torch.tensor([4, 5, 2]))
