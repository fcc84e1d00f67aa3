"""Checkpoint averaging (section 6.1): the mean of several checkpoints' weights as one loadable checkpoint."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import torch

from model import load_checkpoint
from model.checkpoints.checkpoint import CheckpointError, save_checkpoint
from model.core.transformer import Transformer
from model.text.tokenizer import SubwordTokenizer
from model.training.average import average_checkpoints, average_state_dicts, main


def saved(tmp_path, name, config, tokenizer, seed, metrics):
    torch.manual_seed(seed)
    model = Transformer(config).eval()
    directory = tmp_path / name
    save_checkpoint(directory, model, tokenizer, metrics, max_shard_bytes=60_000)  # sharded, as the shipped one
    (directory / "training_log.json").write_text(json.dumps({"from": name}) + "\n", encoding="utf-8")
    return directory, {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}


@pytest.fixture
def three(tmp_path, tiny_config, tiny_tokenizer):
    """Three checkpoints of different weights: a run's best/ ("step"), two of its last/ ("training")."""
    return [
        saved(tmp_path, "late", tiny_config, tiny_tokenizer, 3, {"step": 300, "selected": "best"}),
        saved(tmp_path, "early", tiny_config, tiny_tokenizer, 1, {"training": {"step": 100}}),
        saved(tmp_path, "middle", tiny_config, tiny_tokenizer, 2, {"training": {"step": 200}}),
    ]


def test_the_average_holds_the_mean_of_every_weight_and_names_its_steps(three, tmp_path):
    out = average_checkpoints([directory for directory, _ in three], tmp_path / "average")

    averaged = load_checkpoint(out)
    for name, tensor in averaged.model.state_dict().items():
        expected = np.mean([weights[name] for _, weights in three], axis=0)
        np.testing.assert_allclose(tensor.numpy(), expected, rtol=1e-6, atol=1e-7)
    embedding = averaged.model.state_dict()["embedding.weight"].numpy()
    assert all(not np.allclose(embedding, weights["embedding.weight"]) for _, weights in three)  # not a copy
    metrics = averaged.metrics
    assert metrics["step"] == 300
    assert [entry["step"] for entry in metrics["averaged"]] == [100, 200, 300]  # oldest first, whatever the order
    assert metrics["selected"] == "average of 3 checkpoints (steps 100, 200, 300)"
    assert json.loads((out / "training_log.json").read_text()) == {"from": "late"}  # the newest one's log
    assert (out / "README.md").is_file()  # a model card, like every checkpoint


def test_average_state_dicts_keeps_the_dtype_and_refuses_other_weights():
    first = {"w": torch.tensor([1.0, 2.0], dtype=torch.bfloat16), "b": torch.tensor([0.0])}
    second = {"w": torch.tensor([3.0, 6.0], dtype=torch.bfloat16), "b": torch.tensor([1.0])}
    mean = average_state_dicts([first, second])
    assert mean["w"].dtype == torch.bfloat16 and mean["w"].tolist() == [2.0, 4.0] and mean["b"].tolist() == [0.5]
    with pytest.raises(ValueError, match="different weights"):
        average_state_dicts([first, {"w": second["w"]}])
    with pytest.raises(ValueError, match="nothing"):
        average_state_dicts([])


def test_checkpoints_of_another_config_or_tokenizer_are_refused(three, tmp_path, tiny_config, tiny_tokenizer, pairs):
    (first, _), (second, _) = three[:2]
    wider = dataclasses.replace(tiny_config, d_ff=128)
    other_config, _ = saved(tmp_path, "wider", wider, tiny_tokenizer, 4, {"step": 400})
    with pytest.raises(CheckpointError, match="another config"):
        average_checkpoints([first, other_config], tmp_path / "out")
    texts = [text for pair in pairs for text in pair] * 3 + [
        "Zwölf Quokkas zählen Zebras.",
        "Quirky quokkas quiz zebras.",
    ] * 9
    tokenizer = SubwordTokenizer.train(texts, vocab_size=tiny_config.vocab_size, min_frequency=1)
    assert tokenizer.vocab_size == tiny_config.vocab_size  # same size, other subwords
    other_tokenizer, _ = saved(tmp_path, "retokenized", tiny_config, tokenizer, 5, {"step": 500})
    with pytest.raises(CheckpointError, match="another tokenizer"):
        average_checkpoints([first, other_tokenizer], tmp_path / "out")
    undated, _ = saved(tmp_path, "undated", tiny_config, tiny_tokenizer, 6, {})
    with pytest.raises(CheckpointError, match="training step"):
        average_checkpoints([first, undated], tmp_path / "out")
    with pytest.raises(CheckpointError, match="at least two"):
        average_checkpoints([second], tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_the_command_line_writes_the_average_or_says_why_not(three, tmp_path, capsys):
    directories = [str(directory) for directory, _ in three]
    assert main([*directories, "--out", str(tmp_path / "average")]) == 0
    assert "average of 3 checkpoints" in capsys.readouterr().out
    assert load_checkpoint(tmp_path / "average").metrics["step"] == 300

    assert main([*directories, "--out", directories[0]]) == 2  # never over one of its inputs
    assert "must not be one of the checkpoints" in capsys.readouterr().err
    assert main([directories[0], str(tmp_path / "missing"), "--out", str(tmp_path / "x")]) == 2
    error = capsys.readouterr().err
    assert "cannot average" in error and "does not exist" in error
