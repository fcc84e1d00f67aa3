"""scripts/score_checkpoint.py on an OPUS-MT (Marian) checkpoint, through this project's core.

The provenance of the number: the greedy BLEU the script reports for the small OPUS-MT test folder
(tests/support/marian_hub_folder.py) equals sacreBLEU on the translations `transformers`' own `generate`
produces for the same folder (one beam, the model's generation rules, the app's step budget), in the one
direction the model translates. The same holds where every sentence runs to its length limit inside a batch
(the end token forced at each sentence's own limit), and through a local folder standing in for the Hub.
"""

from __future__ import annotations

import json
import shutil

import pytest
import sacrebleu
import torch
from marian_hub_folder import load_peer, load_peer_tokenizer, sentences
from safetensors.torch import load_file, save_file

from model.checkpoints.marian import load_marian_checkpoint
from model.decoding.beam import beam_search
from model.decoding.greedy import default_max_new_tokens
from scripts import score_checkpoint

COUNT = 12  # sentences scored: varied lengths, so one batch holds sentences of different step budgets


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """test.de / test.en: the folder's training lines and three it never saw."""
    folder = tmp_path_factory.mktemp("opus-mt-data")
    unseen = {
        "de": ["Der Hund läuft über die nasse Straße.", "Grüße aus 東京!", "Ein Mann liest im Park."],
        "en": ["The dog runs across the wet street.", "Greetings from Tokyo!", "A man reads in the park."],
    }
    for language in ("de", "en"):
        lines = sentences(language)[: COUNT - 3] + unseen[language]
        (folder / f"test.{language}").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def peer_translations(folder, texts: list[str]) -> list[str]:
    """transformers' greedy translations: generate with one beam, the folder's generation rules (<pad> never
    generated, </s> forced at the limit) and the budget the app gives a source of that length."""
    peer, tokenizer = load_peer(folder), load_peer_tokenizer(folder)
    outputs = []
    for text in texts:
        ids = tokenizer(text)["input_ids"]
        with torch.no_grad():
            generated = peer.generate(
                torch.tensor([ids]), num_beams=1, do_sample=False, max_new_tokens=default_max_new_tokens(len(ids))
            )
        outputs.append(tokenizer.decode(generated[0], skip_special_tokens=True))
    return outputs


def lines(path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def test_greedy_bleu_equals_sacrebleu_on_transformers_own_translations(marian_de_en_folder, data, tmp_path):
    out = tmp_path / "scores.json"
    argv = ["--opus-mt", str(marian_de_en_folder), "--data", str(data), "--splits", "test", "--out", str(out)]
    assert score_checkpoint.main([*argv, "--decodings", "greedy"]) == 0
    result = json.loads(out.read_text(encoding="utf-8"))
    assert list(result["scores"]["test"]) == ["de-en"]  # the one direction this model translates
    expected = peer_translations(marian_de_en_folder, lines(data / "test.de"))
    references = lines(data / "test.en")
    bleu = sacrebleu.corpus_bleu(expected, [references]).score
    chrf = sacrebleu.corpus_chrf(expected, [references]).score
    measured = result["scores"]["test"]["de-en"]["greedy"]
    assert bleu > 0  # a number that can differ: some n-grams of the references are matched
    assert (measured["bleu"], measured["chrf"]) == (round(bleu, 2), round(chrf, 2))
    assert result["model"] == marian_de_en_folder.name and result["published_scores"] == []


def test_each_sentence_of_a_batch_ends_at_its_own_limit_as_generate_ends_it(marian_de_en_folder, data, tmp_path):
    """With </s> made improbable every sentence runs to its own limit, shorter ones inside a batch whose budget
    follows its longest source: the scorer forces </s> where generate forces it, sentence by sentence."""
    folder = shutil.copytree(marian_de_en_folder, tmp_path / "opus-mt-de-en")
    weights = load_file(str(folder / "model.safetensors"))
    weights["final_logits_bias"][0, 0] = -30.0  # </s> = 0
    save_file(weights, str(folder / "model.safetensors"), metadata={"format": "pt"})
    checkpoint = load_marian_checkpoint(folder)
    scores = score_checkpoint.score_checkpoint(checkpoint, data, ["test"], ["greedy"])["test"]["de-en"]["greedy"]
    expected = peer_translations(folder, lines(data / "test.de"))
    references = lines(data / "test.en")
    assert scores["bleu"] == round(sacrebleu.corpus_bleu(expected, [references]).score, 2)
    assert scores["chrf"] == round(sacrebleu.corpus_chrf(expected, [references]).score, 2)


def test_beam_scores_are_the_beam_search_of_each_sentence(marian_de_en_folder, data):
    """Batched beam 4 in the scorer = beam_search one sentence at a time, detokenized by transformers."""
    checkpoint = load_marian_checkpoint(marian_de_en_folder)
    scores = score_checkpoint.score_checkpoint(checkpoint, data, ["test"], ["beam4"])["test"]["de-en"]["beam4"]
    peer_tokenizer = load_peer_tokenizer(marian_de_en_folder)
    hypotheses = []
    for text in lines(data / "test.de"):
        source = torch.tensor([peer_tokenizer(text)["input_ids"]])
        best = beam_search(checkpoint.model, source, beam_size=4, length_penalty=0.6)[0].best
        hypotheses.append(peer_tokenizer.decode(best.ids, skip_special_tokens=True))
    assert scores["bleu"] == round(sacrebleu.corpus_bleu(hypotheses, [lines(data / "test.en")]).score, 2)


def test_a_hub_repo_id_is_scored_through_the_local_hub(
    marian_de_en_folder, data, tmp_path, monkeypatch, socket_attempts
):
    import local_hub

    hub = local_hub.install(monkeypatch, tmp_path / "hub-cache")
    hub.create_repo("Helsinki-NLP/opus-mt-de-en")
    hub.upload_folder(repo_id="Helsinki-NLP/opus-mt-de-en", folder_path=marian_de_en_folder)
    out = tmp_path / "hub.json"
    argv = ["--opus-mt", "Helsinki-NLP/opus-mt-de-en", "--hub", "--data", str(data), "--splits", "test"]
    assert score_checkpoint.main([*argv, "--decodings", "greedy", "--out", str(out)]) == 0
    local = score_checkpoint.score_checkpoint(load_marian_checkpoint(marian_de_en_folder), data, ["test"], ["greedy"])
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["model"] == "Helsinki-NLP/opus-mt-de-en"
    assert {k: v for k, v in result["scores"]["test"]["de-en"]["greedy"].items() if k != "seconds"} == {
        k: v for k, v in local["test"]["de-en"]["greedy"].items() if k != "seconds"
    }
    assert socket_attempts == []


def test_bad_options_and_a_missing_folder_get_one_message(tmp_path, capsys):
    with pytest.raises(SystemExit):
        score_checkpoint.main(["--opus-mt", str(tmp_path), "--revision", "main"])
    assert "--revision needs --hub" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        score_checkpoint.main(["--checkpoint", str(tmp_path), "--hub"])
    assert "go with --opus-mt" in capsys.readouterr().err
    assert score_checkpoint.main(["--opus-mt", str(tmp_path / "nowhere")]) == 1
    assert "does not exist" in capsys.readouterr().err
