"""Checkpoints as Hub models, against a local folder standing in for the Hub (no network).

- save_pretrained -> push_to_hub -> from_pretrained (tests/support/local_hub.py: uploads land in
  huggingface_hub's own cache layout, downloads are its own offline code) gives identical weights,
  tokenizer, metrics, film and corpus heads; nothing is unpickled on the way back.
- The pushed card is for the repo (library pytorch, the mixin's tags) and its Python example runs in a
  fresh interpreter, printing the translation the model gives in-process.
- The download and upload patterns take every checkpoint file and nothing else (no pickles, code or
  optimizer state).
- A bad repo id is refused (huggingface_hub's rules, plus an owner) before any request; with the Hub
  offline the failure is a CheckpointError. No test touches the network (sockets are trapped too).
"""

from __future__ import annotations

import os
import pickle
import re
import subprocess
import sys

import pytest
import torch
from huggingface_hub import ModelCard
from huggingface_hub.utils import filter_repo_objects

import local_hub
from model.checkpoints.checkpoint import HUB_MAX_FILE_BYTES, CheckpointError, load_checkpoint, validate_repo_id
from model.checkpoints.files import CHECKPOINT_FILES, COMPANION_FILES
from model.checkpoints.paths import DEFAULT_CHECKPOINT, REPO_ROOT
from model.checkpoints.hub import PretrainedTransformer
from model.decoding.greedy import translate


# --------------------------------------------------------------------------- the Hub, offline
@pytest.fixture
def no_network(monkeypatch, tmp_path, socket_attempts):
    """Hub offline, an empty Hub cache, and any socket use recorded (and refused)."""
    import huggingface_hub.constants as hub_constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # huggingface_hub reads its environment once, at import: set the module constants as well
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    return socket_attempts


@pytest.mark.parametrize(
    "repo_id",
    [
        "",
        "model",
        "owner/",
        "/name",
        "a/b/c",
        "../etc/passwd",
        "owner/..",
        "owner/na me",
        "-owner/name",
        "owner/name?x=1",
        "owner/a--b",
        "https://huggingface.co/owner/name",
        "o" * 97 + "/name",
        None,
        42,
    ],
)
def test_bad_repo_id_is_refused_before_any_request(repo_id, monkeypatch, no_network):
    import huggingface_hub

    def never(*args, **kwargs):
        raise AssertionError("no request may be made for an invalid repo id")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", never)
    with pytest.raises(CheckpointError, match="not a valid Hugging Face repo id"):
        validate_repo_id(repo_id)
    with pytest.raises(CheckpointError, match="not a valid Hugging Face repo id"):
        load_checkpoint(repo_id, hub=True)
    assert no_network == []


@pytest.mark.parametrize("repo_id", ["owner/name", "Some-Org/transformer_de.en-v2", "a/b"])
def test_good_repo_ids_are_accepted(repo_id):
    assert validate_repo_id(repo_id) == repo_id


def test_hub_load_without_network_is_a_checkpoint_error(no_network):
    with pytest.raises(CheckpointError, match=r"could not download 'someone/no-such-model'"):
        load_checkpoint("someone/no-such-model", hub=True)
    assert no_network == []  # offline mode made no attempt at all


def test_hub_model_load_without_network_is_a_checkpoint_error(no_network):
    with pytest.raises(CheckpointError, match=r"could not download 'someone/no-such-model'"):
        PretrainedTransformer.from_pretrained("someone/no-such-model")
    with pytest.raises(CheckpointError, match=r"checkpoint directory \./nowhere does not exist"):
        PretrainedTransformer.from_pretrained("./nowhere")
    with pytest.raises(CheckpointError, match=r"'no/such/folder' is neither a checkpoint directory nor a valid Hug"):
        PretrainedTransformer.from_pretrained("no/such/folder")
    assert no_network == []


def test_the_hub_patterns_take_every_checkpoint_file_and_nothing_else():
    """What from_pretrained downloads and the deploy uploads (huggingface_hub's filter, as the download uses it)."""
    shipped = sorted(p.name for p in DEFAULT_CHECKPOINT.iterdir())
    assert set(shipped) >= {"film.npz", "corpus_heads.npz", "training_log.json"}
    assert list(filter_repo_objects(shipped, allow_patterns=CHECKPOINT_FILES)) == shipped
    others = [
        "optimizer.safetensors",
        "training_state.json",
        "model.bin",
        "pytorch_model.bin",
        "hubconf.py",
        "film.pkl",
        "notes/model.safetensors",
    ]
    assert list(filter_repo_objects(others, allow_patterns=CHECKPOINT_FILES)) == []


@pytest.fixture
def hub(monkeypatch, tmp_path, socket_attempts):
    """A local folder standing in for the Hub (tests/support/local_hub.py); the test fails if a socket is used."""
    hub = local_hub.install(monkeypatch, tmp_path / "hub-cache")
    yield hub
    assert socket_attempts == []


def files_of(directory) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def test_a_checkpoint_round_trips_through_the_hub_with_every_file(hub, tmp_path, monkeypatch):
    """save_pretrained -> push_to_hub -> from_pretrained: identical weights, tokenizer, film and corpus heads."""
    from model.analysis.corpus.store import corpus_status
    from model.training.film import load_film

    shipped = load_checkpoint(DEFAULT_CHECKPOINT)
    saved = tmp_path / "saved"
    shipped.model.save_pretrained(saved)
    files = files_of(saved)
    assert sorted(files) == sorted(p.name for p in DEFAULT_CHECKPOINT.iterdir())  # shards and index included
    for name in COMPANION_FILES:
        assert files[name] == (DEFAULT_CHECKPOINT / name).read_bytes(), name
    assert max(map(len, files.values())) < HUB_MAX_FILE_BYTES

    commit = PretrainedTransformer.from_pretrained(saved).push_to_hub("someone/de-en-small")
    assert commit.oid and hub.calls[0][:2] == ("create_repo", "someone/de-en-small")
    pushed = hub.files("someone/de-en-small")
    assert set(pushed) == set(files)
    assert all(pushed[name] == files[name] for name in files if name != "README.md")  # the card: for the repo

    def no_unpickling(*args, **kwargs):
        raise AssertionError("a checkpoint must load without unpickling anything")

    for target, name in [(pickle, "load"), (pickle, "loads"), (pickle, "Unpickler"), (torch, "load")]:
        monkeypatch.setattr(target, name, no_unpickling)
    model = PretrainedTransformer.from_pretrained("someone/de-en-small")
    loaded = load_checkpoint("someone/de-en-small", hub=True)
    assert model.checkpoint_dir == loaded.path == hub.snapshot("someone/de-en-small")
    original = shipped.model.state_dict()
    for state in (model.state_dict(), loaded.model.state_dict()):
        assert state.keys() == original.keys() and all(torch.equal(state[k], original[k]) for k in original)
    sentence = "Grüße aus Köln!"
    assert loaded.tokenizer.encode_source(sentence, "en") == shipped.tokenizer.encode_source(sentence, "en")
    assert loaded.metrics == shipped.metrics and loaded.config == shipped.config
    for name in COMPANION_FILES:
        assert (loaded.path / name).read_bytes() == (DEFAULT_CHECKPOINT / name).read_bytes(), name
    assert corpus_status(loaded.path / "corpus_heads.npz", loaded.model)[1] == ""  # stamped with these very weights
    assert len(load_film(loaded.path / "film.npz")) == len(load_film(DEFAULT_CHECKPOINT / "film.npz")) > 1


def test_the_pushed_card_is_for_the_repo_and_its_python_example_runs(hub, tmp_path, tiny_checkpoint):
    """The card's Python block, run as a reader would (a fresh interpreter, the Hub cache the stand-in's),
    prints the translation the tiny model gives in-process."""
    checkpoint = load_checkpoint(tiny_checkpoint)
    checkpoint.model.save_pretrained(tmp_path / "tiny", push_to_hub=True, repo_id="someone/tiny")
    assert "someone/tiny" not in (tmp_path / "tiny" / "README.md").read_text()  # the local copy's card is local
    card = ModelCard(hub.files("someone/tiny")["README.md"].decode())
    assert card.data.library_name == "pytorch" and card.data.pipeline_tag == "translation"
    mixin = PretrainedTransformer._hub_mixin_info.model_card_data
    assert card.data.library_name == mixin.library_name and set(mixin.tags) <= set(card.data.tags)
    assert {"model_hub_mixin", "pytorch_model_hub_mixin"} <= set(card.data.tags)
    (example,) = re.findall(r"```python\n(.*?)```", card.text, re.S)
    assert 'load_checkpoint("someone/tiny", hub=True)' in example and 'from_pretrained("someone/tiny")' in example
    assert "python3 app.py --hub someone/tiny" in card.text and "--hub --checkpoint someone/tiny" in card.text
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(hub.cache), "PYTHONPATH": str(REPO_ROOT)}
    run = subprocess.run(
        [sys.executable, "-c", example], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr
    expected = translate(checkpoint.model, checkpoint.tokenizer, "Ein Mann fährt Fahrrad.", "de-en").translation
    assert run.stdout == expected + "\n"


def test_a_runs_film_travels_with_its_best_checkpoint(film_run, tmp_path):
    """train.py writes the film to OUT/film.npz, beside OUT/best: save_pretrained puts it in the saved folder."""
    assert not (film_run / "best" / "film.npz").exists() and (film_run / "film.npz").is_file()
    load_checkpoint(film_run / "best").model.save_pretrained(tmp_path / "published")
    assert (tmp_path / "published" / "film.npz").read_bytes() == (film_run / "film.npz").read_bytes()
    assert not (tmp_path / "published" / "optimizer.safetensors").exists()


def test_push_to_hub_refuses_a_bad_repo_id_before_any_call(hub, checkpoint):
    with pytest.raises(CheckpointError, match="not a valid Hugging Face repo id"):
        checkpoint.model.push_to_hub("not a repo")
    assert hub.calls == []
