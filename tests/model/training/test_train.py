"""Training and data (section 5): readers, both directions, batching, LR schedule, a tiny run, resume."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import types
from pathlib import Path

import pytest

from model import load_checkpoint
from model.training import film
from model.training.data import DataError, collate, make_examples, read_source, read_sources, token_batches
from model.training.loss import learning_rate
from model.training.train import main
from helpers import TINY_MODEL_FLAGS, TINY_RUN_FLAGS


@pytest.fixture
def corpus(tmp_path, pairs):
    """The fixture pairs as Multi30k-style aligned files and as a Tatoeba-style TSV."""
    (tmp_path / "train.de").write_text("\n".join(de for de, _ in pairs) + "\n", encoding="utf-8")
    (tmp_path / "train.en").write_text("\n".join(en for _, en in pairs) + "\n", encoding="utf-8")
    (tmp_path / "extra.tsv").write_text("Hello.\tHallo.\nThank you!\tDanke!\tCC-BY attribution\n", encoding="utf-8")
    return tmp_path


def test_readers_give_german_english_pairs(corpus, pairs):
    assert read_source(str(corpus / "train")) == pairs
    assert read_source(str(corpus / "extra.tsv")) == [("Hallo.", "Hello."), ("Danke!", "Thank you!")]
    assert len(read_sources([str(corpus / "train"), str(corpus / "extra.tsv")])) == len(pairs) + 2


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "no data at"),
        ("only one column\n", "expected 'English<TAB>German'"),
    ],
)
def test_bad_sources_name_the_problem(tmp_path, content, message):
    path = tmp_path / "bad.tsv"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    spec = str(path) if content is not None else str(tmp_path / "missing")
    with pytest.raises(DataError, match=message):
        read_source(spec)


def test_misaligned_files_are_refused(tmp_path):
    (tmp_path / "x.de").write_text("a\nb\n", encoding="utf-8")
    (tmp_path / "x.en").write_text("a\n", encoding="utf-8")
    with pytest.raises(DataError, match="2 lines .* 1"):
        read_source(str(tmp_path / "x"))


def test_hub_dataset_offline_gives_a_clear_error(monkeypatch):
    """hf:DATASET goes through `datasets.load_dataset`; here it fails as it does offline."""
    calls = []

    def load_dataset(name, config, split):
        calls.append((name, config, split))
        raise ConnectionError("offline")

    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=load_dataset))
    with pytest.raises(DataError, match="could not load 'wmt14' from the Hugging Face Hub"):
        read_source("hf:wmt14:de-en")
    assert calls == [("wmt14", "de-en", "train")]


def test_hub_dataset_rows_become_pairs(monkeypatch):
    class Rows(list):  # what datasets.load_dataset returns, reduced to what read_hub uses
        column_names = ["translation"]

    rows = Rows([{"translation": {"de": "Hallo", "en": "Hello"}}])
    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=lambda *a, **k: rows))
    assert read_source("hf:wmt14:de-en") == [("Hallo", "Hello")]


def test_every_pair_is_used_in_both_directions(tiny_tokenizer, pairs):
    examples = make_examples(pairs[:2], tiny_tokenizer, max_tokens=100)
    assert len(examples) == 4
    tags = [tiny_tokenizer.id_to_token(e.source[0]) for e in examples]
    assert tags == ["<2en>", "<2de>", "<2en>", "<2de>"]
    assert examples[0].source[1:-1] == examples[1].target[1:-1]  # German is source, then target
    assert all(e.target[0] == tiny_tokenizer.bos_id and e.target[-1] == tiny_tokenizer.eos_id for e in examples)


def test_token_batches_cover_every_example_once_within_budget(tiny_tokenizer, pairs):
    examples = make_examples(pairs * 5, tiny_tokenizer, max_tokens=100)
    batches = token_batches(examples, max_tokens=200, rng=random.Random(0))
    assert sorted(i for batch in batches for i in batch) == list(range(len(examples)))
    for batch in batches:
        src, tgt_in, labels = collate(examples, batch, tiny_tokenizer.pad_id)
        assert max(src.size(1), tgt_in.size(1) + 1) * len(batch) * 2 <= 200 or len(batch) == 1
        assert (tgt_in[:, 1:] == labels[:, :-1]).all()  # labels are the decoder input shifted left


def test_learning_rate_follows_section_5_3():
    d_model, warmup = 512, 4000
    assert learning_rate(warmup, d_model, warmup) == pytest.approx(d_model**-0.5 * warmup**-0.5)
    assert learning_rate(100, d_model, warmup) == pytest.approx(d_model**-0.5 * 100 * warmup**-1.5)
    assert learning_rate(16000, d_model, warmup) == pytest.approx(d_model**-0.5 * 16000**-0.5)
    rates = [learning_rate(s, d_model, warmup) for s in range(1, 20000, 500)]
    peak = rates.index(max(rates))
    assert all(a < b for a, b in zip(rates[:peak], rates[1 : peak + 1]))  # warm-up rises
    assert all(a > b for a, b in zip(rates[peak + 1 :], rates[peak + 2 :]))  # then decays


TINY = TINY_MODEL_FLAGS + TINY_RUN_FLAGS  # fp32: the same run on every CPU


def test_tiny_training_run_learns_saves_and_resumes(corpus, tmp_path):
    out = tmp_path / "run"
    args = [
        "--data",
        str(corpus / "train"),
        str(corpus / "extra.tsv"),
        "--val",
        str(corpus / "train"),
        "--out",
        str(out),
        *TINY,
        "--eval-every",
        "15",
    ]
    assert main([*args, "--max-steps", "30", "--average-last", "2"]) == 0

    log = json.loads((out / "training_log.json").read_text())  # the run's log (best/ holds it as of the best step)
    losses = log["train"]["loss"]
    assert len(losses) >= 15 and sum(losses[-5:]) / 5 < sum(losses[:5]) / 5  # the loss falls
    assert log["validation"]["step"][:2] == [15, 30]
    assert set(log["validation"]) == {"step", "loss", "bleu_de_en", "bleu_en_de"}
    assert (out / "film.npz").exists()  # the training film (tests/model/training/test_film.py checks its content)
    metrics = json.loads((out / "best" / "metrics.json").read_text())
    assert {"command", "commit", "training_seconds", "parameters", "tokens_per_second", "validation"} <= set(metrics)
    assert metrics["precision"] == log["precision"] == {"name": "fp32", "reason": "--precision fp32 was asked for"}
    speed = log["speed"]  # whole-run throughput: real tokens over training seconds, evaluations left out
    assert speed["tokens"] > 0 and speed["tokens_per_second"] > 0
    assert speed["model_flops"] > 0 and speed["mfu"] is None  # no GPU peak to divide by on a CPU

    checkpoint = load_checkpoint(out / "best")  # the app can load what training wrote
    assert checkpoint.config.d_model == 32
    average = load_checkpoint(out / "average")  # --average-last 2 keeps the average, better or not
    assert average.metrics["selected"] == "average of last 2" and average.metrics["step"] == 30

    assert main([*args, "--max-steps", "40", "--resume"]) == 0  # continues from step 30, not from 0
    state = json.loads((out / "last" / "training_state.json").read_text())
    assert state["step"] == 40
    resumed = json.loads((out / "last" / "training_log.json").read_text())
    assert resumed["train"]["step"][:30] == log["train"]["step"][:30] and resumed["train"]["step"][-1] == 40


def test_unreadable_data_exits_with_a_message(tmp_path, capsys):
    assert main(["--data", str(tmp_path / "nothing"), "--out", str(tmp_path / "run"), *TINY]) == 2
    assert "no data at" in capsys.readouterr().err


def test_gpu_recipe_runs_on_the_cpu_with_tiny_settings(tmp_path, pairs):
    """scripts/train_gpu.sh, the README's recipe, end to end with environment overrides: it trains,
    records the film and prints where the best checkpoint, the log and the film are."""
    data = tmp_path / "data"
    (data / "multi30k").mkdir(parents=True)
    (data / "tatoeba").mkdir()
    for split in ("train", "val"):
        (data / "multi30k" / f"{split}.de").write_text("\n".join(de for de, _ in pairs) + "\n", encoding="utf-8")
        (data / "multi30k" / f"{split}.en").write_text("\n".join(en for _, en in pairs) + "\n", encoding="utf-8")
    (data / "tatoeba" / "eng-deu.large.tsv").write_text("Hello.\tHallo.\n", encoding="utf-8")  # what it trains on
    tiny = {
        "DATA": str(data),
        "D_MODEL": "32",
        "HEADS": "4",
        "LAYERS": "1",
        "D_FF": "64",
        "VOCAB": "400",
        "MAX_TOKENS": "400",
        "WARMUP": "10",
        "EVAL_EVERY": "5",
        "BLEU_SENTENCES": "4",
        "AVERAGE_LAST": "2",
        "MAX_MINUTES": "0",
        "MAX_STEPS": "10",
        "THREADS": "1",
        "PRECISION": "fp32",
    }
    out = tmp_path / "run"
    script = Path(__file__).resolve().parents[3] / "scripts" / "train_gpu.sh"
    result = subprocess.run(
        ["bash", str(script), str(out)], env={**os.environ, **tiny}, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-2000:]
    printed = result.stdout
    assert f"best checkpoint: {out / 'best'}" in printed and f"training film:   {out / 'film.npz'}" in printed
    assert f"training log:    {out / 'training_log.json'}" in printed
    assert len(film.load_film(out / "film.npz")) == 2  # evaluations at steps 5 and 10
    assert load_checkpoint(out / "best").config.d_model == 32
