"""Beam search of section 6.1 on a Marian (OPUS-MT) checkpoint: the decoding rules of its generation config (the
start token <pad> never generated, [EOS] forced at the length limit) and the GNMT score, against references.

- Exhaustive search: a MarianMTModel with a 6-token vocabulary, built and initialised by `transformers` and
  loaded into the core, searched with a beam as wide as the whole hypothesis space, returns every hypothesis
  the rules allow, each with log P(ids | source) as `transformers`' own forward pass computes it and the GNMT
  score ((5 + |Y|) / 6) ** alpha, ranked as the exhaustive ranking.
- On the small OPUS-MT folder (tests/support/marian_hub_folder.py): beam size 1 is greedy decoding, token for
  token, for sentences that end by themselves and ones that reach the limit; every beam hypothesis's score is
  its teacher-forced log P over the GNMT length penalty.
"""

from __future__ import annotations

import itertools

import pytest
import torch
from marian_hub_folder import generation_fields, marian_config_fields, sentences

from model.checkpoints.marian import load_marian_checkpoint, load_marian_model
from model.decoding.beam import beam_search, length_penalty_factor
from model.decoding.greedy import translate

VOCAB = 6  # </s> 0, <unk> 1, pieces 2..4, <pad> 5 (the start token)
SOURCE = [2, 4, 3, 3, 0]  # ends with </s>, as the Marian tokenizer frames a source
MAX_STEPS = 3
WEIGHT_SCALE = 0.5  # transformers' init (std 0.02) leaves every distribution nearly uniform: ranks would tie


@pytest.fixture(scope="module")
def tiny_marian(tmp_path_factory):
    """(the core's model, transformers' model) of one tiny MarianMTModel saved as a Hub-style folder."""
    import transformers

    folder = tmp_path_factory.mktemp("tiny-marian")
    torch.manual_seed(7)
    peer = transformers.MarianMTModel(transformers.MarianConfig(**marian_config_fields(VOCAB))).eval()
    generator = torch.Generator().manual_seed(7)
    with torch.no_grad():
        for _, parameter in sorted(peer.named_parameters()):
            parameter.copy_(WEIGHT_SCALE * torch.randn(parameter.shape, generator=generator))
        peer.final_logits_bias.copy_(torch.randn(peer.final_logits_bias.shape, generator=generator))
    peer.generation_config = transformers.GenerationConfig(**generation_fields(VOCAB))
    peer.save_pretrained(folder)
    peer = transformers.MarianMTModel.from_pretrained(folder, attn_implementation="eager").eval()
    return load_marian_model(folder, unk_id=1), peer


def peer_log_prob(peer, source: list[int], ids: list[int]) -> float:
    """log P(ids | source) from transformers' forward pass, teacher-forced on [<pad>] + ids[:-1]."""
    start = peer.config.decoder_start_token_id
    with torch.no_grad():
        logits = peer(input_ids=torch.tensor([source]), decoder_input_ids=torch.tensor([[start, *ids[:-1]]])).logits
    log_probs = torch.log_softmax(logits[0].double(), dim=-1)  # (T, V)
    return float(sum(log_probs[t, token] for t, token in enumerate(ids)))


def allowed_hypotheses(eos: int, pad: int, length: int) -> list[list[int]]:
    """Every output the rules allow in `length` steps: a body without </s> and <pad>, then </s> (forced at the
    last step, so no output is left unfinished)."""
    body_tokens = [token for token in range(VOCAB) if token not in (eos, pad)]
    return [[*body, eos] for n in range(length) for body in itertools.product(body_tokens, repeat=n)]


def gnmt_score(log_prob: float, length: int, alpha: float) -> float:
    return log_prob / ((5 + length) / 6) ** alpha


@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.0])
def test_a_beam_as_wide_as_the_space_is_exhaustive_search_with_transformers_probabilities(tiny_marian, alpha):
    model, peer = tiny_marian
    config = model.config
    assert (config.bos_id, config.pad_id, config.eos_id, config.force_eos_at_limit) == (5, 5, 0, True)
    space = allowed_hypotheses(config.eos_id, config.pad_id, MAX_STEPS)
    log_probs = {tuple(ids): peer_log_prob(peer, SOURCE, ids) for ids in space}
    expected = sorted(log_probs, key=lambda ids: gnmt_score(log_probs[ids], len(ids), alpha), reverse=True)
    best, runner_up = (gnmt_score(log_probs[ids], len(ids), alpha) for ids in expected[:2])
    assert best - runner_up > 1e-3  # a clear optimum: the ranking below is no float tie

    result = beam_search(
        model, torch.tensor([SOURCE]), beam_size=len(space), length_penalty=alpha, max_new_tokens=MAX_STEPS
    )[0]
    assert sorted(tuple(h.ids) for h in result.hypotheses) == sorted(log_probs)  # every allowed output, no other
    assert tuple(result.best.ids) == expected[0]
    for hypothesis in result.hypotheses:
        exact = log_probs[tuple(hypothesis.ids)]
        assert hypothesis.finished and hypothesis.ids[-1] == config.eos_id
        assert hypothesis.log_prob == pytest.approx(exact, abs=1e-4)
        assert hypothesis.score == pytest.approx(gnmt_score(exact, len(hypothesis.ids), alpha), abs=1e-4)
    scores = [h.score for h in result.hypotheses]
    assert scores == sorted(scores, reverse=True)


def test_the_forced_end_token_keeps_its_own_probability(tiny_marian):
    """At the limit [EOS] is the only choice, but its log P is the model's: a two-token hypothesis that the
    limit ended scores log P(a) + log P(</s> | a), as transformers' forward pass gives it."""
    model, peer = tiny_marian
    result = beam_search(model, torch.tensor([SOURCE]), beam_size=4, length_penalty=0.0, max_new_tokens=2)[0]
    for hypothesis in result.hypotheses:
        assert len(hypothesis.ids) <= 2 and hypothesis.ids[-1] == model.config.eos_id
        assert hypothesis.log_prob == pytest.approx(peer_log_prob(peer, SOURCE, hypothesis.ids), abs=1e-4)


@pytest.fixture(scope="module")
def opus_mt(marian_de_en_folder):
    return load_marian_checkpoint(marian_de_en_folder)


def ending_never(checkpoint):
    """The same checkpoint with </s> made improbable (logits bias -30): every sentence runs to its limit."""
    model = checkpoint.model
    original = model.final_logits_bias.clone()
    model.final_logits_bias[0, model.config.eos_id] = -30.0
    return original


@pytest.mark.parametrize("runs_to_the_limit", [False, True])
def test_beam_size_one_is_greedy_decoding(opus_mt, runs_to_the_limit):
    model, tokenizer = opus_mt.model, opus_mt.tokenizer
    original = ending_never(opus_mt) if runs_to_the_limit else None
    try:
        for text in sentences("de")[:6]:
            trace = translate(model, tokenizer, text, "de-en")  # the default budget, as beam search's
            result = beam_search(model, torch.tensor([trace.source_ids]), beam_size=1)[0]
            assert result.best.ids == trace.output_ids
            assert result.best.finished and result.best.ids[-1] == model.config.eos_id
            if runs_to_the_limit:
                assert model.config.eos_id not in trace.output_ids[:-1]  # forced at the limit, not chosen
    finally:
        if original is not None:
            model.final_logits_bias.copy_(original)


def test_every_hypothesis_scores_its_teacher_forced_log_prob_over_the_gnmt_penalty(opus_mt):
    model, tokenizer = opus_mt.model, opus_mt.tokenizer
    source = tokenizer.encode_source(sentences("de")[4], "en")
    result = beam_search(model, torch.tensor([source]), beam_size=4, length_penalty=0.6)[0]
    assert len(result.hypotheses) == 4
    for hypothesis in result.hypotheses:
        target = torch.tensor([[model.config.bos_id, *hypothesis.ids[:-1]]])  # (1, T), from <pad>
        with torch.no_grad():
            log_probs = torch.log_softmax(model(torch.tensor([source]), target)[0].double(), dim=-1)  # (T, V)
        exact = float(log_probs[torch.arange(len(hypothesis.ids)), hypothesis.ids].sum())
        assert model.config.pad_id not in hypothesis.ids
        assert hypothesis.log_prob == pytest.approx(exact, abs=1e-4)
        assert hypothesis.score == pytest.approx(exact / length_penalty_factor(len(hypothesis.ids), 0.6), abs=1e-4)
