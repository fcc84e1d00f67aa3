"""OPUS-MT from a local folder or from the Hub (a local cache standing in for it), and on the command line."""

from __future__ import annotations

import hashlib
import shutil

import pytest
import torch
from marian_hub_folder import load_peer, load_peer_tokenizer

from model.checkpoints import catalogue
from model.checkpoints.marian import MarianError
from model.decoding import cli


def publish(cache, repo_id: str, folder, revision: str = "main", extra: dict | None = None) -> None:
    """Lay `folder`'s files (plus `extra` name -> bytes) out as huggingface_hub's cache holds a downloaded revision:
    what snapshot_download and hf_hub_download read offline."""
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    commit = hashlib.sha1(f"{repo_id}@{revision}".encode()).hexdigest()
    snapshot = repo / "snapshots" / commit
    shutil.copytree(folder, snapshot)
    for name, data in (extra or {}).items():
        (snapshot / name).write_bytes(data)
    ref = repo / "refs" / revision
    ref.parent.mkdir(parents=True, exist_ok=True)
    ref.write_text(commit)


@pytest.fixture
def offline_hub(monkeypatch, tmp_path):
    """The Hub offline, its cache in tmp_path: only what `publish` put there can be downloaded."""
    import huggingface_hub.constants as hub_constants

    cache = tmp_path / "hub-cache"
    cache.mkdir()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.delenv(catalogue.OPUS_MT_ENV, raising=False)
    return cache


@pytest.fixture
def opus_mt_folder(tmp_path, marian_de_en_folder, marian_en_de_folder):
    """A folder laid out as OPUS_MT_ENV expects: opus-mt-de-en/ and opus-mt-en-de/."""
    root = tmp_path / "opus-mt"
    shutil.copytree(marian_de_en_folder, root / "opus-mt-de-en")
    shutil.copytree(marian_en_de_folder, root / "opus-mt-en-de")
    return root


def test_each_direction_has_its_repo_and_the_revision_with_safetensors(monkeypatch):
    monkeypatch.delenv(catalogue.OPUS_MT_ENV, raising=False)
    assert catalogue.opus_mt_source("en-de") == ("Helsinki-NLP/opus-mt-en-de", True, "refs/pr/4")
    assert {d: repo for d, (repo, _) in catalogue.OPUS_MT_REPOS.items()} == {
        "de-en": "Helsinki-NLP/opus-mt-de-en",
        "en-de": "Helsinki-NLP/opus-mt-en-de",
    }
    with pytest.raises(ValueError, match="no model for 'de-fr'"):
        catalogue.opus_mt_source("de-fr")


def test_a_local_folder_is_used_offline(monkeypatch, opus_mt_folder):
    monkeypatch.setenv(catalogue.OPUS_MT_ENV, str(opus_mt_folder))
    assert catalogue.opus_mt_source("en-de") == (str(opus_mt_folder / "opus-mt-en-de"), False, None)
    checkpoint = catalogue.load_opus_mt("en-de")
    assert checkpoint.tokenizer.directions == ("en-de",) and checkpoint.config.positional_layout == "halves"


def test_a_folder_of_the_other_direction_is_refused(tmp_path, marian_de_en_folder):
    shutil.copytree(marian_de_en_folder, tmp_path / "opus-mt-en-de")
    with pytest.raises(MarianError, match="translates de-en, not en-de"):
        catalogue.load_opus_mt("en-de", folder=tmp_path)


def test_from_the_hub_the_revision_with_safetensors_is_read_and_nothing_else(
    offline_hub, monkeypatch, marian_de_en_folder, marian_en_de_folder
):
    """en-de comes from its conversion ref; the pickle and other frameworks' copies are never asked for
    (huggingface_hub's own download functions run; the calls they get are recorded)."""
    import huggingface_hub

    asked = []

    def recording(function):
        def call(repo_id, *args, **kwargs):
            asked.append((repo_id, args, kwargs.get("revision"), kwargs.get("allow_patterns")))
            return function(repo_id, *args, **kwargs)

        return call

    for name in ("snapshot_download", "hf_hub_download"):
        monkeypatch.setattr(huggingface_hub, name, recording(getattr(huggingface_hub, name)))
    publish(offline_hub, "Helsinki-NLP/opus-mt-de-en", marian_de_en_folder)
    publish(offline_hub, "Helsinki-NLP/opus-mt-en-de", marian_en_de_folder, revision="refs/pr/4")
    for direction in ("de-en", "en-de"):
        assert catalogue.load_opus_mt(direction).tokenizer.directions == (direction,)
    assert [(repo, revision) for repo, _, revision, _ in asked] == [
        ("Helsinki-NLP/opus-mt-de-en", None),
        ("Helsinki-NLP/opus-mt-en-de", "refs/pr/4"),
    ]
    patterns = set(asked[0][3])
    assert "model.safetensors" in patterns and {"source.spm", "target.spm", "vocab.json", "config.json"} <= patterns
    assert not any(name.endswith((".bin", ".h5", ".ot", ".msgpack")) for name in patterns)


def test_a_repo_without_safetensors_gives_its_pickled_weights_read_safely(offline_hub, tmp_path, marian_de_en_folder):
    """Where the revision has no model.safetensors, pytorch_model.bin is fetched (and read with weights_only)."""
    from safetensors.torch import load_file

    folder = tmp_path / "pickled"
    shutil.copytree(marian_de_en_folder, folder)
    torch.save(load_file(str(folder / "model.safetensors")), folder / "pytorch_model.bin")
    (folder / "model.safetensors").unlink()
    publish(offline_hub, "Helsinki-NLP/opus-mt-de-en", folder)
    assert catalogue.load_opus_mt("de-en").tokenizer.directions == ("de-en",)


def test_without_the_network_the_message_says_so(offline_hub):
    with pytest.raises(MarianError, match="could not download 'Helsinki-NLP/opus-mt-de-en'.*Check the network"):
        catalogue.load_opus_mt("de-en")


def test_the_command_line_translates_with_opus_mt_as_transformers_does(monkeypatch, opus_mt_folder, capsys):
    monkeypatch.setenv(catalogue.OPUS_MT_ENV, str(opus_mt_folder))
    text = "Ein Mann fährt Fahrrad."
    assert cli.main(["--model", "opus-mt", "--direction", "de-en", text]) == 0
    printed = capsys.readouterr().out.strip()
    peer, tokenizer = load_peer(opus_mt_folder / "opus-mt-de-en"), load_peer_tokenizer(opus_mt_folder / "opus-mt-de-en")
    with torch.no_grad():
        generated = peer.generate(**tokenizer([text], return_tensors="pt"), num_beams=1, do_sample=False)
    assert printed == tokenizer.decode(generated[0], skip_special_tokens=True)
    assert cli.main(["--model", "opus-mt", "--direction", "de-en", "--json", text]) == 0
    assert '"model":"opus-mt"' in capsys.readouterr().out


def test_the_command_line_names_a_missing_model(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv(catalogue.OPUS_MT_ENV, str(tmp_path))
    assert cli.main(["--model", "opus-mt", "--direction", "en-de", "A dog."]) == 2
    assert "opus-mt-en-de does not exist" in capsys.readouterr().err
