"""Evaluation of section 6.1: batched translation keeps order and equals one-at-a-time decoding,
scores equal sacreBLEU called directly, and the command line reports scores or clear errors."""

from __future__ import annotations

import json

import pytest
import sacrebleu

from model.decoding.greedy import translate
from model.training.evaluate import main, score, translate_batch


@pytest.fixture
def text_files(tmp_path, pairs):
    src, ref = tmp_path / "test.de", tmp_path / "test.en"
    src.write_text("".join(de + "\n" for de, _ in pairs), encoding="utf-8")
    ref.write_text("".join(en + "\n" for _, en in pairs), encoding="utf-8")
    return src, ref


def test_score_identical_is_100(pairs):
    references = [en for _, en in pairs]
    assert score(references, references) == {"bleu": 100.0, "chrf": 100.0}


def test_score_partial_equals_sacrebleu():
    hypotheses = ["A man rides a bicycle.", "The woman reads a book .", "Two dogs are playing in snow."]
    references = ["A man rides a bike.", "A woman reads a book.", "Two dogs play in the snow."]
    result = score(hypotheses, references)
    assert result["bleu"] == round(sacrebleu.corpus_bleu(hypotheses, [references]).score, 2)
    assert result["chrf"] == round(sacrebleu.corpus_chrf(hypotheses, [references]).score, 2)
    assert 0 < result["bleu"] < 100 and 0 < result["chrf"] < 100
    assert score(["a man rides a bike."], ["A man rides a bike."])["bleu"] < 100  # cased


def test_score_rejects_mismatched_lengths():
    with pytest.raises(ValueError):
        score(["a"], ["a", "b"])


@pytest.mark.parametrize("beam_size", [1, 2])
def test_translate_batch_keeps_order_and_matches_single_sentences(checkpoint, pairs, beam_size):
    texts = [de for de, _ in pairs]
    batched = translate_batch(checkpoint.model, checkpoint.tokenizer, texts, "de-en", beam_size=beam_size, batch_size=5)
    assert len(batched) == len(texts) and all(isinstance(t, str) for t in batched)
    singles = [
        translate_batch(checkpoint.model, checkpoint.tokenizer, [text], "de-en", beam_size=beam_size)[0]
        for text in texts[:4]
    ]
    assert batched[:4] == singles


def test_greedy_translate_batch_equals_traced_translation(checkpoint, pairs):
    texts = [de for de, _ in pairs[:3]]
    batched = translate_batch(checkpoint.model, checkpoint.tokenizer, texts, "de-en")
    traced = [translate(checkpoint.model, checkpoint.tokenizer, text, "de-en").translation for text in texts]
    assert batched == traced


def test_translate_batch_restores_training_mode(tiny_model, tiny_tokenizer):
    tiny_model.train()
    translate_batch(tiny_model, tiny_tokenizer, ["Ein Hund."], "de-en")
    assert tiny_model.training
    assert translate_batch(tiny_model, tiny_tokenizer, [], "de-en") == []


def test_cli_prints_scores(tiny_checkpoint, text_files, capsys):
    src, ref = text_files
    assert (
        main(
            [
                "--checkpoint",
                str(tiny_checkpoint),
                "--src",
                str(src),
                "--ref",
                str(ref),
                "--direction",
                "de-en",
                "--limit",
                "5",
            ]
        )
        == 0
    )
    line = capsys.readouterr().out.strip()
    assert line.startswith("BLEU ") and "chrF" in line and "(greedy, de-en, 5 sentences" in line


def test_cli_json_with_beam(tiny_checkpoint, text_files, capsys):
    src, ref = text_files
    assert (
        main(
            [
                "--checkpoint",
                str(tiny_checkpoint),
                "--src",
                str(src),
                "--ref",
                str(ref),
                "--beam",
                "2",
                "--length-penalty",
                "0.6",
                "--batch-size",
                "4",
                "--limit",
                "3",
                "--json",
            ]
        )
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["sentences"] == 3 and report["beam_size"] == 2 and report["decoding"] == "beam"
    assert report["direction"] == "de-en" and report["length_penalty"] == 0.6
    assert 0.0 <= report["bleu"] <= 100.0 and 0.0 <= report["chrf"] <= 100.0 and report["seconds"] >= 0


def test_cli_errors_exit_2_without_traceback(tiny_checkpoint, text_files, tmp_path, capsys):
    src, ref = text_files
    short = tmp_path / "short.en"
    short.write_text("One line.\n", encoding="utf-8")
    bad = tmp_path / "bad_checkpoint"
    bad.mkdir()
    (bad / "config.json").write_text("{not json", encoding="utf-8")
    (bad / "tokenizer.json").write_text("{}", encoding="utf-8")
    cases = {
        "does not exist": [
            "--checkpoint",
            str(tiny_checkpoint),
            "--src",
            str(tmp_path / "missing.de"),
            "--ref",
            str(ref),
        ],
        "lines": ["--checkpoint", str(tiny_checkpoint), "--src", str(src), "--ref", str(short)],
        "config.json": ["--checkpoint", str(bad), "--src", str(src), "--ref", str(ref)],
        "missing_dir": ["--checkpoint", str(tmp_path / "missing_dir"), "--src", str(src), "--ref", str(ref)],
    }
    for expected, argv in cases.items():
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and expected in err and "Traceback" not in err
