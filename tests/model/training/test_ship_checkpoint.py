"""Shipping a checkpoint (scripts/ship_checkpoint.py) from a tiny CPU run trained with --keep-evaluations: the
weights are the mean of the last kept evaluations (an independent mean of their files), the validation in
metrics.json is the shipped weights' own, the film ends on a frame of the shipped weights, the corpus file is
stamped with them, the counts add up across the run it continues, and the card names the average."""

from __future__ import annotations

import json

import numpy as np
import pytest
from safetensors.numpy import load_file

from helpers import TINY_MODEL_FLAGS, TINY_RUN_FLAGS
from model import load_checkpoint
from model.analysis.corpus.store import corpus_status
from model.decoding.greedy import translate
from model.training import film
from model.training.train import main as train
from scripts import ship_checkpoint
from scripts.ship_checkpoint import run_arguments, validate_checkpoint

CORPUS_ARGS = "--importance-sentences 2 --prune-sentences 2 --map-sentences 2 --prune-points 2 --batch-size 4"


@pytest.fixture(scope="module")
def run(tmp_path_factory, pairs):
    """A tiny run evaluated at steps 10, 20 and 30, every evaluation kept; its data as aligned files."""
    folder = tmp_path_factory.mktemp("ship")
    for side, index in (("de", 0), ("en", 1)):
        (folder / f"train.{side}").write_text("\n".join(pair[index] for pair in pairs) + "\n", encoding="utf-8")
    data = str(folder / "train")
    flags = ["--data", data, "--val", data, "--out", str(folder / "run"), "--eval-every", "10", "--max-steps", "30"]
    assert train([*flags, *TINY_MODEL_FLAGS, *TINY_RUN_FLAGS, "--keep-evaluations"]) == 0
    return folder


def weights(directory) -> dict[str, np.ndarray]:
    return {
        name: value
        for path in sorted(directory.glob("model*.safetensors"))
        for name, value in load_file(str(path)).items()
    }


@pytest.fixture(scope="module")
def shipped(run):
    previous = run / "previous"
    previous.mkdir()
    (previous / "metrics.json").write_text(
        json.dumps({"tokens": 1000, "training_seconds": 50.0, "evaluation_seconds": 5.0, "recipe": "by hand"})
    )
    argv = [str(run / "run"), "--last", "2", "--out", str(run / "shipped"), "--continues", str(previous)]
    assert ship_checkpoint.main([*argv, "--corpus-args", f"--data {run / 'train'} {CORPUS_ARGS}"]) == 0
    return run / "shipped"


def test_training_keeps_every_evaluation_as_a_checkpoint(run):
    kept = ship_checkpoint.kept_evaluations(run / "run")
    assert [path.name for path in kept] == ["10", "20", "30"]
    assert [load_checkpoint(path).metrics["step"] for path in kept] == [10, 20, 30]


def test_the_weights_are_the_mean_of_the_last_evaluations(run, shipped):
    older, newer = (weights(run / "run" / "evaluations" / step) for step in ("20", "30"))
    ours = weights(shipped)
    assert set(ours) == set(newer)
    for name, value in ours.items():
        np.testing.assert_allclose(value, (older[name].astype(np.float64) + newer[name]) / 2, rtol=1e-6, atol=1e-7)
    metrics = json.loads((shipped / "metrics.json").read_text())
    assert metrics["selected"] == "average of 2 evaluations (steps 20, 30)" and metrics["step"] == 30
    assert "average of 2 evaluations (steps 20, 30)" in (shipped / "README.md").read_text()


def test_the_validation_is_the_shipped_weights_own(run, shipped):
    metrics = json.loads((shipped / "metrics.json").read_text())
    newest = json.loads((run / "run" / "evaluations" / "30" / "metrics.json").read_text())
    assert metrics["validation"] == validate_checkpoint(shipped, run_arguments(newest))
    assert set(metrics["validation"]) == {"loss", "bleu_de_en", "bleu_en_de"}


def test_the_film_ends_on_the_shipped_weights(run, shipped):
    frames = film.load_film(shipped / film.FILM_FILE)
    assert [frame["step"] for frame in frames] == [10, 20, 30]
    run_frames = film.load_film(run / "run" / film.FILM_FILE)
    np.testing.assert_array_equal(
        frames[1]["probes"]["de-en"]["cross_attention"], run_frames[1]["probes"]["de-en"]["cross_attention"]
    )
    checkpoint = load_checkpoint(shipped)
    metrics = json.loads((shipped / "metrics.json").read_text())
    assert frames[-1]["val_bleu"] == pytest.approx(
        {"de-en": metrics["validation"]["bleu_de_en"], "en-de": metrics["validation"]["bleu_en_de"]}, abs=1e-3
    )
    for direction, text in film.PROBES.items():
        trace = translate(
            checkpoint.model, checkpoint.tokenizer, text, direction, max_new_tokens=film.FILM_MAX_NEW_TOKENS
        )
        probe = frames[-1]["probes"][direction]
        assert probe["output_tokens"] == trace.output_tokens
        np.testing.assert_allclose(probe["cross_attention"], trace.cross_attention, atol=2e-3)


def test_the_corpus_file_belongs_to_the_shipped_weights(shipped):
    checkpoint = load_checkpoint(shipped)
    data, problem = corpus_status(shipped / "corpus_heads.npz", checkpoint.model)
    assert problem == "" and data is not None


def test_counts_add_up_across_the_runs(run, shipped):
    metrics = json.loads((shipped / "metrics.json").read_text())
    newest = json.loads((run / "run" / "evaluations" / "30" / "metrics.json").read_text())
    assert metrics["tokens"] == 1000 + newest["tokens"] > 1000
    assert metrics["training_seconds"] == pytest.approx(50.0 + newest["training_seconds"], abs=0.1)
    assert metrics["evaluation_seconds"] == pytest.approx(5.0 + newest["evaluation_seconds"], abs=0.1)
    assert metrics["tokens_per_second"] == round(metrics["tokens"] / metrics["training_seconds"])
    assert metrics["recipe"] == "by hand" and "scores" not in metrics


def test_a_run_without_kept_evaluations_cannot_ship(tmp_path, capsys):
    assert ship_checkpoint.main([str(tmp_path), "--last", "3", "--out", str(tmp_path / "out")]) == 2
    assert "kept evaluation" in capsys.readouterr().err and not (tmp_path / "out").exists()
