"""Interventions are what they claim (3.2.2 heads, 3.5 positions), computed independently.

Switching off head i of layer l (`Ablation`, through `translate` and `token_probabilities`) must
equal a deep copy of the model whose W^O columns for that head are zero (the head's slice of
Concat(head_1..head_h) contributes nothing), and the reference forward pass with that head's
output zeroed. Heads and layers are chosen off-centre, so switching off the mirror head h-1-i or
the mirror layer L-1-l gives a different model and fails. Decoding without positional encodings
must equal a copy whose PE table is zero.
"""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest
import torch

import provenance_fixtures as ref
from helpers import assert_close_traces
from model.decoding.ablation import Ablation
from model.analysis.readouts import token_probabilities
from model.decoding.greedy import translate
from model.decoding.trace import ATTENTION_KINDS

SENTENCE = "Zwei Hunde spielen im Schnee und ein Kind isst einen Apfel."
STEPS = 8
COMPARED = [
    "output_ids",
    "chosen_probs",
    "candidate_probs",
    "entropy",
    *(spec.weights_field for spec in ATTENTION_KINDS.values()),
    *(spec.scores_field for spec in ATTENTION_KINDS.values()),
]


@pytest.fixture(scope="module")
def model(tiny_config):
    config = dataclasses.replace(tiny_config, n_encoder_layers=2, n_decoder_layers=3)  # 4 heads
    return ref.perturbed_model(config, seed=7)


@pytest.fixture(scope="module")
def intact(model, tiny_tokenizer):
    return translate(model, tiny_tokenizer, SENTENCE, "de-en", max_new_tokens=STEPS)


@pytest.mark.parametrize("layer, head", [(0, 1), (1, 3)])  # mirrors: head 2 / head 0, layer L-1 / L-2
@pytest.mark.parametrize("kind", list(ATTENTION_KINDS))
def test_switching_a_head_off_zeroes_its_slice_of_the_output_projection_input(
    model, tiny_tokenizer, intact, kind, layer, head
):
    ablation = Ablation(**{f"{kind}_heads": {(layer, head)}})
    clone = ref.without_head(model, kind, layer, head)
    source, output = intact.source_ids, intact.output_ids

    ablated = token_probabilities(model, source, output, ablation)
    np.testing.assert_allclose(ablated, token_probabilities(clone, source, output), atol=1e-6)
    assert np.abs(ablated - intact.chosen_probs).max() > 1e-3  # the head mattered: the test is not vacuous
    n_heads = model.config.n_heads
    mirror = ref.without_head(model, kind, layer, n_heads - 1 - head)
    assert np.abs(ablated - token_probabilities(mirror, source, output)).max() > 1e-4  # a mirror fault shows

    trace = translate(model, tiny_tokenizer, SENTENCE, "de-en", max_new_tokens=STEPS, ablation=ablation)
    assert_close_traces(trace, translate(clone, tiny_tokenizer, SENTENCE, "de-en", max_new_tokens=STEPS), COMPARED)
    assert trace.ablation[f"{kind}_heads"] == [[layer, head]]

    # Independently: the reference forward pass with that head's output zeroed before W^O.
    expected = ref.forward(
        model, source, [model.config.bos_id, *trace.output_ids[:-1]], heads_off={kind: {(layer, head)}}
    )
    probs = torch.softmax(expected.logits, dim=-1)
    np.testing.assert_allclose(trace.chosen_probs, probs[range(trace.num_steps), trace.output_ids].numpy(), atol=1e-5)
    for other_kind, spec in ATTENTION_KINDS.items():  # weights are still computed for every head
        weights = torch.stack([a.weights for a in getattr(expected, other_kind)]).numpy()
        np.testing.assert_allclose(getattr(trace, spec.weights_field), weights, atol=2e-5, err_msg=other_kind)


def test_several_heads_of_several_kinds_at_once(model, intact):
    heads = {"encoder": {(1, 2)}, "decoder_self": {(0, 3), (2, 1)}, "cross": {(2, 0)}}
    clone = model
    for kind, pairs in heads.items():
        for layer, head in pairs:
            clone = ref.without_head(clone, kind, layer, head)
    ablation = Ablation(**{f"{kind}_heads": pairs for kind, pairs in heads.items()})
    np.testing.assert_allclose(
        token_probabilities(model, intact.source_ids, intact.output_ids, ablation),
        token_probabilities(clone, intact.source_ids, intact.output_ids),
        atol=1e-6,
    )


def test_without_positional_encodings_equals_a_zero_pe_table(model, tiny_tokenizer, intact):
    ablation = Ablation(positional_encoding=False)
    clone = copy.deepcopy(model)
    with torch.no_grad():
        clone.positional_encoding.zero_()
    trace = translate(model, tiny_tokenizer, SENTENCE, "de-en", max_new_tokens=STEPS, ablation=ablation)
    assert_close_traces(trace, translate(clone, tiny_tokenizer, SENTENCE, "de-en", max_new_tokens=STEPS), COMPARED)
    source, output = intact.source_ids, intact.output_ids
    ablated = token_probabilities(model, source, output, ablation)
    np.testing.assert_allclose(ablated, token_probabilities(clone, source, output), atol=1e-6)
    assert np.abs(ablated - intact.chosen_probs).max() > 1e-3
    expected = ref.forward(model, source, [model.config.bos_id, *output[:-1]], positions=False)
    probs = torch.softmax(expected.logits, dim=-1)
    np.testing.assert_allclose(ablated, probs[range(len(output)), output].numpy(), atol=1e-5)
