"""A sentence that ends: the trace and the analyses on an output that stops with [EOS] (3.1, 6.1).

An untrained model never says [EOS], so the path of a finished sentence needs a model that has
learned something. A tiny Transformer learns to copy the fixture sentences in ~80 Adam steps
(a few seconds on one CPU thread); its greedy output then ends with [EOS], and `translate`, the
trace, `token_probabilities`, `beam_versus_greedy`, `word_alignment` and the head diagnostics
run on it and agree with the independent reference forward pass.
"""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest
import torch

import provenance_fixtures as ref
from model.decoding.ablation import Ablation
from model.analysis.readouts import beam_versus_greedy, token_probabilities, trace_head_diagnostics, word_alignment
from model.decoding.greedy import translate
from model.decoding.trace import ATTENTION_KINDS, TranslationTrace
from model.core.transformer import Transformer

SENTENCE = "Ein Mann fährt Fahrrad."
STEPS = 80


@pytest.fixture(scope="module")
def copy_model(tiny_tokenizer, pairs) -> Transformer:
    """Trained to copy each fixture sentence, in both directions' framing: it learns where to stop."""
    return ref.train_copy_model(tiny_tokenizer, pairs, n_encoder_layers=1, steps=STEPS, seed=0)


@pytest.fixture(scope="module")
def trace(copy_model, tiny_tokenizer) -> TranslationTrace:
    return translate(copy_model, tiny_tokenizer, SENTENCE, "de-en")


def test_the_trace_ends_with_eos(trace, copy_model):
    assert trace.stopped_by == "eos"
    assert trace.output_ids[-1] == copy_model.config.eos_id and trace.output_tokens[-1] == "[EOS]"
    assert copy_model.config.eos_id not in trace.output_ids[:-1]
    assert trace.translation == SENTENCE  # it learned to copy, so it stopped where the sentence stops
    assert trace.num_steps < 2 * len(trace.source_ids) + 10  # before the step budget


def test_an_end_at_the_length_limit_says_whether_the_model_chose_it(trace, copy_model, tiny_tokenizer):
    """With the end forced at the limit (Marian's forced_eos_token_id): a budget one short of the copy ends with an
    [EOS] the model did not choose ("eos_at_limit"); a budget exactly as long ends with its own ("eos"); without
    the rule the short budget stops without one ("max_length")."""
    forcing = copy.deepcopy(copy_model)
    forcing.config = dataclasses.replace(copy_model.config, force_eos_at_limit=True)
    n = trace.num_steps
    exact = translate(forcing, tiny_tokenizer, SENTENCE, "de-en", max_new_tokens=n)
    assert exact.output_ids == trace.output_ids and exact.stopped_by == "eos"
    short = translate(forcing, tiny_tokenizer, SENTENCE, "de-en", max_new_tokens=n - 1)
    assert short.output_ids == [*trace.output_ids[: n - 2], copy_model.config.eos_id]
    assert short.stopped_by == "eos_at_limit"
    assert short.candidate_ids[-1][0] != copy_model.config.eos_id  # the model's own first choice was another token
    unforced = translate(copy_model, tiny_tokenizer, SENTENCE, "de-en", max_new_tokens=n - 1)
    assert unforced.output_ids == trace.output_ids[: n - 1] and unforced.stopped_by == "max_length"


def test_the_finished_trace_is_the_models_own(trace, copy_model):
    reference = ref.forward(copy_model, trace.source_ids, [copy_model.config.bos_id, *trace.output_ids[:-1]])
    for kind, spec in ATTENTION_KINDS.items():
        expected = torch.stack([a.weights for a in getattr(reference, kind)]).numpy()
        np.testing.assert_allclose(getattr(trace, spec.weights_field), expected, atol=2e-5, err_msg=kind)
        last = trace.attention(kind, step=trace.num_steps - 1)
        assert len(last.queries) == (len(trace.source_tokens) if kind == "encoder" else trace.num_steps)
    probs = torch.softmax(reference.logits, dim=-1)  # (T, V)
    assert trace.output_ids == probs.argmax(-1).tolist()
    np.testing.assert_allclose(trace.chosen_probs, probs[range(trace.num_steps), trace.output_ids].numpy(), atol=1e-5)
    assert trace.chosen_probs[-1] > 0.5  # [EOS] is chosen with confidence, not by a fluke


def test_token_probabilities_on_the_finished_output(trace, copy_model):
    np.testing.assert_allclose(
        token_probabilities(copy_model, trace.source_ids, trace.output_ids), trace.chosen_probs, atol=1e-5
    )
    every_cross_head = Ablation(cross_heads={(layer, head) for layer in range(2) for head in range(4)})
    ablated = token_probabilities(copy_model, trace.source_ids, trace.output_ids, every_cross_head)
    assert ablated.mean() < trace.chosen_probs.mean() - 0.1  # copying needs the source


def test_beam_versus_greedy_on_a_finished_sentence(trace, copy_model, tiny_tokenizer):
    comparison = beam_versus_greedy(copy_model, tiny_tokenizer, trace, beam_size=4, length_penalty=0.6)
    assert comparison.greedy.ids == trace.output_ids
    assert comparison.greedy.log_prob == pytest.approx(
        ref.sequence_log_prob(copy_model, trace.source_ids, trace.output_ids), abs=1e-3
    )
    assert comparison.beams and all(b.ids[-1] == copy_model.config.eos_id for b in comparison.beams)
    assert comparison.beams[0].ids == trace.output_ids and comparison.beams[0].diverges_at is None
    for beam in comparison.beams:
        assert beam.log_prob == pytest.approx(ref.sequence_log_prob(copy_model, trace.source_ids, beam.ids), abs=1e-3)


def test_alignment_and_diagnostics_on_a_finished_sentence(trace):
    alignment = word_alignment(trace.cross_attention, trace.source_tokens, trace.output_tokens)
    assert alignment.source_index[-1] == -1  # the [EOS] output aligns to nothing
    assert len(alignment.links) == trace.num_steps - 1
    expected_mean = trace.cross_attention.mean(axis=(0, 1))  # (T, S)
    np.testing.assert_allclose(alignment.weights, expected_mean, atol=1e-6)
    for s, t in alignment.links:  # (source index, output index)
        real = [k for k, token in enumerate(trace.source_tokens) if token not in ("[EOS]", "<2en>", "<2de>")]
        assert s == real[int(np.argmax(expected_mean[t, real]))]
    for kind in ATTENTION_KINDS:
        weights = trace.attention(kind).weights.astype(np.float64)
        entropy = -(weights * np.log2(np.clip(weights, 1e-12, None))).sum(-1).mean(-1)  # (L, h)
        diagnostics = trace_head_diagnostics(trace, kind)
        np.testing.assert_allclose(diagnostics["entropy"], entropy, atol=1e-4)
        assert diagnostics["special"].shape == entropy.shape
