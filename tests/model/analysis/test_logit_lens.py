"""The logit lens (model/analysis/logit_lens.py), read when its view opens: each decoder layer's output through the
tied projection (3.4), against the float64 reference of Figure 1 (tests/support/provenance_fixtures.py), for an
intact and an ablated trace (the lens replays the trace's own run, heads switched off or positions removed)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

import provenance_fixtures as ref
from model.analysis.logit_lens import LOGIT_LENS_K, logit_lens
from model.decoding.ablation import Ablation
from model.decoding.greedy import translate

SENTENCE = "Zwei Hunde spielen im Schnee und ein Kind isst einen Apfel."
STEPS = 9
ABLATIONS = {
    "intact": Ablation(),
    "cross heads off": Ablation(cross_heads=frozenset({(0, 0), (1, 2)}), decoder_self_heads=frozenset({(2, 1)})),
    "no positions": Ablation(positional_encoding=False),
}


@pytest.fixture(scope="module")
def model(tiny_config):
    config = dataclasses.replace(tiny_config, n_encoder_layers=2, n_decoder_layers=3)
    return ref.perturbed_model(config, seed=11)


def heads_off(ablation: Ablation) -> dict:
    return {kind: getattr(ablation, f"{kind}_heads") for kind in ("encoder", "decoder_self", "cross")}


@pytest.mark.parametrize("name", list(ABLATIONS))
def test_each_layers_top_tokens_are_the_float64_projection_of_its_output(model, tiny_tokenizer, name):
    ablation = ABLATIONS[name]
    trace = translate(model, tiny_tokenizer, SENTENCE, "de-en", max_new_tokens=STEPS, ablation=ablation)
    lens = logit_lens(model, tiny_tokenizer, trace)
    target = [model.config.bos_id, *trace.output_ids[:-1]]
    reference = ref.forward(
        model, trace.source_ids, target, heads_off=heads_off(ablation), positions=ablation.positional_encoding
    )
    n_layers = len(reference.layer_hiddens)
    assert lens.probs.shape == (STEPS, n_layers, LOGIT_LENS_K) and lens.output_ids == trace.output_ids
    embedding = model.embedding.weight.detach().double()  # (V, d): the tied projection of 3.4
    for layer, hidden in enumerate(reference.layer_hiddens):
        probs = torch.softmax(hidden @ embedding.T, dim=-1)  # (T, V)
        top_probs, top_ids = probs.topk(LOGIT_LENS_K, dim=-1)  # (T, k)
        np.testing.assert_allclose(lens.probs[:, layer], top_probs.numpy(), atol=1e-5, err_msg=f"layer {layer}")
        assert [step[layer] for step in lens.tokens] == [tiny_tokenizer.tokens(row) for row in top_ids.tolist()]
    assert np.abs(np.diff(lens.probs[:, :, 0], axis=1)).max() > 1e-3  # layers differ: an order swap would show
    # the last layer is the trace's own next-token distribution, read in the same run
    np.testing.assert_allclose(lens.probs[:, -1], trace.candidate_probs[:, :LOGIT_LENS_K], atol=1e-6)


def test_an_ablated_traces_lens_is_not_the_intact_models(model, tiny_tokenizer):
    intact = translate(model, tiny_tokenizer, SENTENCE, "de-en", max_new_tokens=STEPS)
    ablated = dataclasses.replace(intact, ablation=ABLATIONS["no positions"].describe())
    assert (
        np.abs(logit_lens(model, tiny_tokenizer, intact).probs - logit_lens(model, tiny_tokenizer, ablated).probs).max()
        > 1e-3
    )


@pytest.mark.parametrize("name", list(ABLATIONS))
def test_an_ablation_is_read_back_from_its_description(name):
    assert Ablation.from_description(ABLATIONS[name].describe()) == ABLATIONS[name]
    assert Ablation.from_description({}) == Ablation() == Ablation.from_description(None)
