"""An OPUS-MT checkpoint in this project's core computes what `transformers`' MarianMTModel computes.

The folder is built in the test (tests/support/marian_hub_folder.py: the published config's fields and flags at
small sizes, SentencePiece trained here, a random logits bias). Loaded by model/checkpoints/marian.py, with no
`transformers` involved, the core's logits, every attention weight of every layer and head (encoder self, masked
decoder self, cross) and the greedy tokens equal the peer's (`output_attentions=True`, eager attention;
`generate` with one beam and the model's own generation rules), in both directions and through the trace that
every view draws.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from marian_hub_folder import PAIRS, load_peer, load_peer_tokenizer

from model.checkpoints.marian import MarianError, load_marian_checkpoint, marian_config
from model.core.masks import decoder_mask, padding_mask
from model.decoding import greedy_choice
from model.decoding.greedy import default_max_new_tokens, translate

TOLERANCE = 1e-5
SENTENCES = {
    "de-en": [PAIRS[0][0], PAIRS[12][0], "Der Hund läuft über die nasse Straße.", "Grüße aus 東京!"],
    "en-de": [PAIRS[0][1], PAIRS[12][1], "The dog runs across the wet street.", "Greetings from 東京!"],
}


@pytest.fixture(scope="module", params=["de-en", "en-de"])
def pair(request, marian_de_en_folder, marian_en_de_folder):
    folder = {"de-en": marian_de_en_folder, "en-de": marian_en_de_folder}[request.param]
    return request.param, load_marian_checkpoint(folder), load_peer(folder), load_peer_tokenizer(folder)


def forward_both(checkpoint, peer, source_ids, target_ids):
    """The core's and the peer's teacher-forced pass over the same ids (decoder input starts with <pad>)."""
    src, tgt = torch.tensor([source_ids]), torch.tensor([target_ids])
    model = checkpoint.model
    with torch.no_grad():
        src_mask = padding_mask(src, model.config.pad_id)
        encoded = model.encode(src, src_mask, output_attentions=True)
        decoded = model.decode(
            tgt, encoded.memory, src_mask, decoder_mask(tgt, model.config.pad_id), output_attentions=True
        )
        ours = (
            model.project(decoded.hidden),
            encoded.self_attentions,
            decoded.self_attentions,
            decoded.cross_attentions,
        )
        out = peer(input_ids=src, decoder_input_ids=tgt, output_attentions=True)
    theirs = (out.logits, out.encoder_attentions, out.decoder_attentions, out.cross_attentions)
    return ours, theirs


def test_logits_and_every_attention_weight_equal_the_peer(pair):
    direction, checkpoint, peer, peer_tokenizer = pair
    for text in SENTENCES[direction]:
        source_ids = peer_tokenizer(text)["input_ids"]
        target_ids = [checkpoint.config.bos_id, *peer_tokenizer(text_target=text)["input_ids"][:-1]]
        ours, theirs = forward_both(checkpoint, peer, source_ids, target_ids)
        assert (ours[0] - theirs[0]).abs().max() <= TOLERANCE
        for mine, peers in zip(ours[1:], theirs[1:]):  # encoder self, decoder self, cross
            assert len(mine) == len(peers) == 2
            for layer, reference in zip(mine, peers):
                assert layer.weights.shape == reference.shape
                assert (layer.weights - reference).abs().max() <= TOLERANCE


@pytest.mark.parametrize("screened", [False, True], ids=["whole projection", "int8 screen"])
def test_greedy_translation_and_its_trace_equal_the_peer(pair, screened, monkeypatch):
    """translate() (the app's one call) picks the peer's tokens, and the trace holds the peer's attention; also with
    each step's choice made through the int8 screen (model/decoding/greedy_choice.py), as a full-size model's is."""
    direction, checkpoint, peer, peer_tokenizer = pair
    if screened:
        monkeypatch.setattr(greedy_choice, "SCREEN_MIN_WEIGHTS", 0)
        assert greedy_choice.screen_for(checkpoint.model) is not None
    outputs = []
    for text in SENTENCES[direction]:
        trace = translate(checkpoint.model, checkpoint.tokenizer, text, direction)
        source_ids = peer_tokenizer(text)["input_ids"]
        assert trace.source_ids == source_ids
        budget = default_max_new_tokens(len(source_ids))
        with torch.no_grad():
            generated = peer.generate(
                torch.tensor([source_ids]), num_beams=1, do_sample=False, max_new_tokens=budget
            )  # the model's own rules: <pad> never generated, </s> forced at the limit
        assert trace.output_ids == generated[0, 1:].tolist()
        assert trace.translation == peer_tokenizer.decode(generated[0], skip_special_tokens=True)
        assert trace.target_tokens[0] == "<pad>"  # the decoder's start token, as Marian's
        target = [checkpoint.config.bos_id, *trace.output_ids[:-1]]
        _, theirs = forward_both(checkpoint, peer, source_ids, target)
        np.testing.assert_allclose(trace.cross_attention, torch.stack(theirs[3])[:, 0].numpy(), atol=TOLERANCE)
        np.testing.assert_allclose(trace.decoder_self_attention, torch.stack(theirs[2])[:, 0].numpy(), atol=TOLERANCE)
        probs = torch.softmax(theirs[0][0], dim=-1).numpy()  # (T, V)
        np.testing.assert_allclose(trace.candidate_probs[:, 0], probs.max(-1), atol=TOLERANCE)
        outputs.append(trace.output_ids)
    assert len({tuple(ids) for ids in outputs}) == len(outputs)  # the fixture's model is not a constant


def test_a_sentence_that_reaches_the_limit_ends_with_the_forced_end_token(pair):
    direction, checkpoint, peer, peer_tokenizer = pair
    text = SENTENCES[direction][1]
    trace = translate(checkpoint.model, checkpoint.tokenizer, text, direction, max_new_tokens=3)
    with torch.no_grad():
        generated = peer.generate(
            torch.tensor([peer_tokenizer(text)["input_ids"]]), num_beams=1, do_sample=False, max_new_tokens=3
        )
    assert trace.output_ids == generated[0, 1:].tolist()
    assert len(trace.output_ids) == 3 and trace.output_ids[-1] == checkpoint.config.eos_id


def test_the_start_token_is_never_hidden_nor_generated(pair):
    _, checkpoint, _, _ = pair
    config = checkpoint.config
    assert config.bos_id == config.pad_id  # Marian starts the decoder from <pad>
    mask = decoder_mask(torch.tensor([[config.pad_id, 5, 6]]), config.pad_id)[0, 0]
    assert mask[:, 0].all()  # every query may attend to the start token
    bias = checkpoint.model.final_logits_bias.clone()
    checkpoint.model.final_logits_bias[0, config.pad_id] = 1e4  # <pad> now wins every argmax
    try:
        trace = translate(checkpoint.model, checkpoint.tokenizer, "Ein Mann.", checkpoint.tokenizer.directions[0])
    finally:
        checkpoint.model.final_logits_bias.copy_(bias)
    assert config.pad_id not in trace.output_ids
    assert trace.candidate_tokens[0][0] == "<pad>"  # shown among the candidates, never chosen


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("normalize_before", True, "pre-LN"),
        ("static_position_embeddings", False, "learnt positional"),
        ("model_type", "bart", "another architecture"),
        ("share_encoder_decoder_embeddings", False, "separate source and target"),
        ("activation_function", "gelu_new", "activation_function"),
        ("decoder_ffn_dim", 99, "decoder_ffn_dim"),
    ],
)
def test_what_the_core_cannot_hold_is_refused_naming_the_field(marian_de_en_folder, field, value, named):
    config = json.loads((marian_de_en_folder / "config.json").read_text())
    with pytest.raises(MarianError, match=named):
        marian_config({**config, field: value}, {}, unk_id=1)


def test_a_folder_with_only_the_pickled_weights_loads_them_without_code(marian_de_en_folder, tmp_path):
    """pytorch_model.bin through torch.load(weights_only=True): the same model; a pickle holding code is refused."""
    from safetensors.torch import load_file

    folder = tmp_path / "opus-mt-de-en"
    folder.mkdir()
    for path in marian_de_en_folder.iterdir():
        if path.name != "model.safetensors":
            (folder / path.name).write_bytes(path.read_bytes())
    torch.save(load_file(str(marian_de_en_folder / "model.safetensors")), folder / "pytorch_model.bin")
    pickled, safe = load_marian_checkpoint(folder), load_marian_checkpoint(marian_de_en_folder)
    for (name, a), (_, b) in zip(pickled.model.state_dict().items(), safe.model.state_dict().items()):
        assert torch.equal(a, b), name
    torch.save({"model.shared.weight": torch.zeros(1), "hook": print}, folder / "pytorch_model.bin")
    with pytest.raises(MarianError, match="cannot read the weights"):
        load_marian_checkpoint(folder)
