"""--init-from (section 5 continued): a new run goes on from a checkpoint's weights, step, schedule and film,
and refuses a command line that asks for another model or tokenizer."""

from __future__ import annotations

import json

import pytest
import torch

from model import SubwordTokenizer, load_checkpoint
from model.training import film
from model.training.loss import learning_rate
from model.training.train import main
from helpers import TINY_MODEL_FLAGS, TINY_RUN_FLAGS

TINY = TINY_MODEL_FLAGS + TINY_RUN_FLAGS
RUN = TINY_RUN_FLAGS  # a continued run's options: no model flags, the checkpoint's are used


@pytest.fixture(scope="module")
def first_run(tmp_path_factory, pairs):
    """A 12-step tiny run with the film on (evaluations at steps 6 and 12): the run directory."""
    root = tmp_path_factory.mktemp("init_from")
    (root / "train.de").write_text("\n".join(de for de, _ in pairs) + "\n", encoding="utf-8")
    (root / "train.en").write_text("\n".join(en for _, en in pairs) + "\n", encoding="utf-8")
    out = root / "first"
    assert (
        main(
            [
                "--data",
                str(root / "train"),
                "--val",
                str(root / "train"),
                "--out",
                str(out),
                *TINY,
                "--eval-every",
                "6",
                "--max-steps",
                "12",
            ]
        )
        == 0
    )
    return out


def data_args(first_run) -> list[str]:
    data = str(first_run.parent / "train")
    return ["--data", data, "--val", data]


def test_init_from_continues_step_schedule_weights_and_film(first_run, tmp_path, capsys):
    source = first_run / "last"  # step 12; its film lies in the run directory
    first_frames = film.load_film(first_run / film.FILM_FILE)
    assert [frame["step"] for frame in first_frames] == [6, 12]
    weights = load_checkpoint(source).model.state_dict()
    out = tmp_path / "second"
    continued = [
        *data_args(first_run),
        "--out",
        str(out),
        *RUN,
        "--init-from",
        str(source),
        "--eval-every",
        "3",
        "--seed",
        "7",
    ]
    assert main([*continued, "--max-steps", "18"]) == 0
    printed = capsys.readouterr().out
    assert f"initialised from {source} at step 12" in printed and "Adam's moments start fresh" in printed

    state = json.loads((out / "last" / "training_state.json").read_text())
    assert state["step"] == 18  # 6 new steps after the checkpoint's 12
    log = json.loads((out / "training_log.json").read_text())
    steps, rates = log["train"]["step"], log["train"]["learning_rate"]
    assert steps == list(range(1, 19))  # the checkpoint's curve, then this run's
    first_log = json.loads((first_run / "training_log.json").read_text())
    assert log["train"]["loss"][:12] == first_log["train"]["loss"]
    assert rates[12] == pytest.approx(learning_rate(13, 32, 20, 2.0))  # the schedule goes on from step 12
    assert rates[12] != pytest.approx(learning_rate(1, 32, 20, 2.0))  # not a schedule restarted from step 1
    assert log["init_from"] == [{"checkpoint": str(source), "step": 12}]

    frames = film.load_film(out / film.FILM_FILE)
    assert [frame["step"] for frame in frames] == [6, 12, 15, 18]  # appended after the checkpoint's frames
    for old, kept in zip(first_frames, frames):
        assert old["probes"]["de-en"]["translation"] == kept["probes"]["de-en"]["translation"]
        assert torch.equal(
            torch.from_numpy(old["probes"]["de-en"]["cross_attention"]),
            torch.from_numpy(kept["probes"]["de-en"]["cross_attention"]),
        )
    trained = load_checkpoint(out / "last")
    assert trained.config == load_checkpoint(source).config
    changed = [name for name, value in trained.model.state_dict().items() if not torch.equal(value, weights[name])]
    assert changed  # the six new steps trained the weights on
    assert json.loads((out / "last" / "tokenizer.json").read_text()) == json.loads(
        (source / "tokenizer.json").read_text()
    )

    assert main([*continued, "--max-steps", "21", "--resume"]) == 0  # the same command resumed: OUT/last wins
    assert json.loads((out / "last" / "training_state.json").read_text())["step"] == 21
    assert [frame["step"] for frame in film.load_film(out / film.FILM_FILE)] == [6, 12, 15, 18, 21]


def test_the_first_continued_step_starts_from_the_checkpoint_weights(first_run, tmp_path):
    """One step at a learning rate of ~0 leaves the weights where the checkpoint had them (a model trained from
    scratch would differ everywhere): the new run starts from the checkpoint, not from a fresh initialisation."""
    source = first_run / "last"
    out = tmp_path / "one"
    assert (
        main(
            [
                *data_args(first_run),
                "--out",
                str(out),
                *RUN,
                "--init-from",
                str(source),
                "--lr-factor",
                "1e-12",
                "--max-steps",
                "13",
                "--film",
                "off",
            ]
        )
        == 0
    )
    before, after = load_checkpoint(source).model.state_dict(), load_checkpoint(out / "last").model.state_dict()
    for name, value in before.items():
        assert torch.allclose(after[name], value, atol=1e-6), name


def test_a_later_frame_than_the_checkpoint_is_not_continued(first_run, tmp_path):
    """best/ at an earlier step than the film's last frame: the continued film keeps the frames up to best's step."""
    best_step = json.loads((first_run / "best" / "metrics.json").read_text())["step"]
    out = tmp_path / "from_best"
    assert (
        main(
            [
                *data_args(first_run),
                "--out",
                str(out),
                *RUN,
                "--init-from",
                str(first_run / "best"),
                "--eval-every",
                "100",
                "--max-steps",
                str(best_step + 2),
            ]
        )
        == 0
    )
    steps = [frame["step"] for frame in film.load_film(out / film.FILM_FILE)]
    assert steps == [s for s in (6, 12) if s <= best_step] + [best_step + 2]


@pytest.mark.parametrize(
    "flags, named",
    [
        (["--d-model", "64"], "--d-model 64 (checkpoint: 32)"),
        (["--encoder-layers", "2", "--d-ff", "128"], "--encoder-layers 2 (checkpoint: 1); --d-ff 128 (checkpoint: 64)"),
        (["--vocab-size", "300"], "--vocab-size 300 (checkpoint:"),
    ],
)
def test_a_different_config_is_refused_with_one_message(first_run, tmp_path, capsys, flags, named):
    out = tmp_path / "refused"
    assert main([*data_args(first_run), "--out", str(out), *RUN, *flags, "--init-from", str(first_run / "last")]) == 2
    error = capsys.readouterr().err
    assert (
        error.startswith(f"error: --init-from {first_run / 'last'} continues its checkpoint's model") and named in error
    )
    assert error.count("error:") == 1 and not (out / "last").exists()


def test_the_same_config_given_explicitly_and_a_new_dropout_are_accepted(first_run, tmp_path):
    """The first run's model flags again (with --vocab-size the size its tokenizer came out at: the tiny
    corpus gives fewer than the 400 asked for) plus another dropout rate."""
    out = tmp_path / "same"
    vocab = str(load_checkpoint(first_run / "last").config.vocab_size)
    same = [vocab if previous == "--vocab-size" else flag for previous, flag in zip(["", *TINY], TINY)]
    assert (
        main(
            [
                *data_args(first_run),
                "--out",
                str(out),
                *same,
                "--dropout",
                "0.3",
                "--init-from",
                str(first_run / "last"),
                "--max-steps",
                "13",
                "--film",
                "off",
            ]
        )
        == 0
    )
    assert load_checkpoint(out / "last").config.dropout == 0.3


def test_a_different_tokenizer_is_refused(first_run, tmp_path, capsys, pairs):
    other = tmp_path / "other.json"
    SubwordTokenizer.train([text for pair in pairs[:6] for text in pair] * 3, vocab_size=320, min_frequency=1).save(
        other
    )
    same = first_run / "last" / "tokenizer.json"
    assert (
        main(
            [
                *data_args(first_run),
                "--out",
                str(tmp_path / "a"),
                *RUN,
                "--tokenizer",
                str(other),
                "--init-from",
                str(first_run / "last"),
            ]
        )
        == 2
    )
    assert f"--tokenizer {other} (a different tokenizer from the checkpoint's)" in capsys.readouterr().err
    assert (
        main(
            [
                *data_args(first_run),
                "--out",
                str(tmp_path / "b"),
                *RUN,
                "--tokenizer",
                str(same),
                "--init-from",
                str(first_run / "last"),
                "--max-steps",
                "13",
                "--film",
                "off",
            ]
        )
        == 0
    )


def test_a_missing_checkpoint_is_a_clear_error(tmp_path, capsys, first_run):
    assert (
        main([*data_args(first_run), "--out", str(tmp_path / "run"), *RUN, "--init-from", str(tmp_path / "nowhere")])
        == 2
    )
    assert f"--init-from {tmp_path / 'nowhere'}: checkpoint directory" in capsys.readouterr().err
