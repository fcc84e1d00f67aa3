"""Checkpoints and configs: what is saved loads back exactly, safely, and every fault is named.

- Save -> load gives a model with identical outputs, as one safetensors file and as shards (a tensor
  larger than a shard gets one of its own); loading never unpickles anything (pickle and torch.load are
  booby-trapped). The shipped shards load as they are, to the logits of a plain safetensors read. With
  the default shard size every file of the shipped model stays under the Hub's 10 MB.
- Every broken checkpoint (bad JSON, missing file, wrong shape, vocabulary mismatch, ...) raises
  CheckpointError with a message naming the problem.
- The Hub (from_pretrained, push_to_hub, repo ids): tests/model/checkpoints/test_hub.py.
- TransformerConfig (the paper's hyper-parameters, Table 3) refuses impossible models, is frozen,
  changes with dataclasses.replace and survives to_dict/from_dict and JSON files.
"""

from __future__ import annotations

import dataclasses
import json
import pickle
import shutil

import pytest
import torch
from safetensors.torch import load_file, save_file

from model.checkpoints.checkpoint import (
    CONFIG_FILE,
    HUB_MAX_FILE_BYTES,
    INDEX_FILE,
    MAX_SHARD_BYTES,
    SINGLE_WEIGHTS_FILE,
    TOKENIZER_FILE,
    CheckpointError,
    load_checkpoint,
    save_checkpoint,
)
from model.core.config import ConfigError, TransformerConfig
from model.checkpoints.paths import DEFAULT_CHECKPOINT
from model.core.transformer import Transformer
from model.checkpoints.hub import PretrainedTransformer

SHARD_BYTES = 20_000  # the tiny embedding (vocab x 32 floats, ~51 kB) is larger: a shard of its own
LAYOUTS = {"single": None, "sharded": SHARD_BYTES}


def saved(directory, model, tokenizer, layout: str):
    shard_bytes = LAYOUTS[layout]
    kwargs = {} if shard_bytes is None else {"max_shard_bytes": shard_bytes}
    return save_checkpoint(directory, model, tokenizer, {"bleu": 1.5}, **kwargs)


@pytest.fixture
def sharded_checkpoint(tmp_path, tiny_model, tiny_tokenizer):
    return saved(tmp_path / "sharded", tiny_model, tiny_tokenizer, "sharded")


# --------------------------------------------------------------------------- round trip
@pytest.mark.parametrize("layout", LAYOUTS)
def test_save_then_load_gives_identical_outputs(tmp_path, tiny_model, tiny_tokenizer, layout, monkeypatch):
    directory = saved(tmp_path / layout, tiny_model, tiny_tokenizer, layout)
    if layout == "sharded":
        index = json.loads((directory / INDEX_FILE).read_text())
        weight_map = index["weight_map"]
        assert len(set(weight_map.values())) > 2 and set(weight_map) == set(tiny_model.state_dict())
        embedding_shard = weight_map["embedding.weight"]
        assert [key for key, name in weight_map.items() if name == embedding_shard] == ["embedding.weight"]
        tensors = tiny_model.state_dict().values()
        assert index["metadata"]["total_size"] == sum(t.numel() * t.element_size() for t in tensors)
        assert not (directory / SINGLE_WEIGHTS_FILE).exists()
    else:
        assert (directory / SINGLE_WEIGHTS_FILE).exists() and not (directory / INDEX_FILE).exists()

    def no_unpickling(*args, **kwargs):
        raise AssertionError("a checkpoint must load without unpickling anything")

    for target, name in [(pickle, "load"), (pickle, "loads"), (pickle, "Unpickler"), (torch, "load")]:
        monkeypatch.setattr(target, name, no_unpickling)
    checkpoint = load_checkpoint(directory)

    assert checkpoint.config == tiny_model.config
    assert checkpoint.metrics == {"bleu": 1.5}
    assert checkpoint.tokenizer.vocab_size == tiny_tokenizer.vocab_size
    assert not checkpoint.model.training
    original, loaded = tiny_model.state_dict(), checkpoint.model.state_dict()
    assert original.keys() == loaded.keys()
    assert all(torch.equal(original[key], loaded[key]) for key in original)
    src = torch.tensor([tiny_tokenizer.encode_source("Ein Mann fährt Fahrrad.", "en")])
    tgt = torch.tensor([tiny_tokenizer.encode_target("A man rides a bike.")[:-1]])
    with torch.no_grad():
        assert torch.equal(checkpoint.model(src, tgt), tiny_model(src, tgt))


def test_saving_again_replaces_old_weight_files(tmp_path, tiny_model, tiny_tokenizer):
    directory = saved(tmp_path / "ckpt", tiny_model, tiny_tokenizer, "sharded")
    saved(directory, tiny_model, tiny_tokenizer, "single")
    assert sorted(p.name for p in directory.glob("model*")) == [SINGLE_WEIGHTS_FILE]
    load_checkpoint(directory)


def test_default_shards_keep_every_file_under_the_hubs_10_mb(tmp_path):
    """The shipped model (30 MB of float32) saved with the defaults: every file < 10 MB, same tensors."""
    assert MAX_SHARD_BYTES < HUB_MAX_FILE_BYTES == 10 * 1000 * 1000
    shipped = load_checkpoint(DEFAULT_CHECKPOINT)
    directory = save_checkpoint(tmp_path / "resaved", shipped.model, shipped.tokenizer, shipped.metrics)
    sizes = {path.name: path.stat().st_size for path in directory.iterdir()}
    assert sum(sizes.values()) > 3 * HUB_MAX_FILE_BYTES and max(sizes.values()) < 10 * 1000 * 1000
    original, resaved = shipped.model.state_dict(), load_checkpoint(directory).model.state_dict()
    assert original.keys() == resaved.keys() and all(torch.equal(original[k], resaved[k]) for k in original)


def test_the_shipped_shards_load_as_they_are_to_the_logits_of_a_plain_safetensors_read():
    """The shipped checkpoint (sharded before the library did it, its index without metadata) loads through
    huggingface_hub's load_torch_model to the very logits of its shards read one by one with safetensors."""
    index = json.loads((DEFAULT_CHECKPOINT / INDEX_FILE).read_text())
    state = {}
    for name in sorted(set(index["weight_map"].values())):
        state.update(load_file(DEFAULT_CHECKPOINT / name))
    reference = Transformer(TransformerConfig.load(DEFAULT_CHECKPOINT / CONFIG_FILE)).eval()
    reference.load_state_dict(state, strict=True)
    shipped = load_checkpoint(DEFAULT_CHECKPOINT)
    src = torch.tensor([shipped.tokenizer.encode_source("Ein Mann fährt Fahrrad.", "en")])
    tgt = torch.tensor([shipped.tokenizer.encode_target("A man rides a bike.")[:-1]])
    with torch.no_grad():
        assert torch.equal(shipped.model(src, tgt), reference(src, tgt))
    assert torch.equal(
        PretrainedTransformer.from_pretrained(DEFAULT_CHECKPOINT).embedding.weight, state["embedding.weight"]
    )


# --------------------------------------------------------------------------- broken checkpoints
def shard_holding(directory, key: str):
    weight_map = json.loads((directory / INDEX_FILE).read_text())["weight_map"]
    return directory / weight_map[key]


def rewrite_tensor(directory, key: str, tensor: torch.Tensor | None) -> None:
    """Replace (or with None, drop) one tensor in the shard that holds it."""
    path = shard_holding(directory, key)
    tensors = load_file(path)
    if tensor is None:
        del tensors[key]
    else:
        tensors[key] = tensor
    save_file(tensors, path)


def edit_config(directory, **changes) -> None:
    data = json.loads((directory / CONFIG_FILE).read_text())
    data.update(changes)
    (directory / CONFIG_FILE).write_text(json.dumps(data))


def remove_weights(directory) -> None:
    for path in directory.glob("model*"):
        path.unlink()


def write(name: str, text: str):
    return lambda directory: (directory / name).write_text(text)


BREAKAGES = {
    "malformed_config": (write(CONFIG_FILE, '{"d_model": 32,'), r"config\.json is not valid JSON"),
    "config_unknown_field": (
        lambda d: edit_config(d, d_modle=32),
        r"bad config\.json: unknown config field\(s\): d_modle",
    ),
    "config_impossible": (lambda d: edit_config(d, n_heads=5), r"bad config\.json: d_model \(32\) must be divisible"),
    "config_not_an_object": (write(CONFIG_FILE, "[1, 2]"), r"config\.json is not a JSON object \(it holds a list\)"),
    "missing_config": (lambda d: (d / CONFIG_FILE).unlink(), r"^config\.json is missing$"),
    "missing_tokenizer": (lambda d: (d / TOKENIZER_FILE).unlink(), r"^tokenizer\.json is missing$"),
    "malformed_tokenizer": (
        write(TOKENIZER_FILE, "not a tokenizer"),
        r"^tokenizer\.json is not valid JSON \(line 1, column 1\)$",
    ),
    "missing_weights": (remove_weights, r"^no weights: expected model\.safetensors or"),
    "missing_shard": (
        lambda d: shard_holding(d, "decoder_layers.1.norm3.bias").unlink(),
        r"^model-\d+-of-\d+\.safetensors is missing$",
    ),
    "corrupt_shard": (
        lambda d: shard_holding(d, "decoder_layers.1.norm3.bias").write_bytes(b"\x00" * 20),
        r"^model-\d+-of-\d+\.safetensors is not a complete safetensors file \(cut off or damaged\)$",
    ),
    "malformed_index": (write(INDEX_FILE, "{"), r"model\.safetensors\.index\.json is not valid JSON"),
    "index_escapes_directory": (
        write(INDEX_FILE, json.dumps({"weight_map": {"x": "../x.safetensors"}})),
        r"model\.safetensors\.index\.json names a shard outside the checkpoint: '\.\./x\.safetensors'",
    ),
    "wrong_shape": (
        lambda d: rewrite_tensor(d, "encoder_layers.0.norm1.weight", torch.ones(33)),
        r"weights do not match config\.json: size mismatch for encoder_layers\.0\.norm1\.weight: "
        r"copying a param with shape torch\.Size\(\[33\]\) .* torch\.Size\(\[32\]\)",
    ),
    "missing_tensor": (
        lambda d: rewrite_tensor(d, "decoder_layers.1.norm3.bias", None),
        r"weights do not match config\.json: missing \['decoder_layers\.1\.norm3\.bias'\]",
    ),
    "vocab_mismatch": (
        lambda d: edit_config(d, vocab_size=1000),
        r"tokenizer has \d+ tokens but config\.json says vocab_size=1000",
    ),
}


@pytest.mark.parametrize("name", BREAKAGES)
def test_broken_checkpoint_raises_checkpoint_error_naming_the_problem(sharded_checkpoint, name):
    breakage, message = BREAKAGES[name]
    load_checkpoint(sharded_checkpoint)  # intact before the breakage
    breakage(sharded_checkpoint)
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(sharded_checkpoint)


def test_missing_directory_is_a_checkpoint_error(tmp_path):
    with pytest.raises(CheckpointError, match="does not exist"):
        load_checkpoint(tmp_path / "nowhere")


def test_shared_fixture_checkpoint_loads(tiny_checkpoint, tmp_path):
    copy = shutil.copytree(tiny_checkpoint, tmp_path / "copy")
    assert load_checkpoint(copy).metrics == {"note": "untrained test fixture"}


# --------------------------------------------------------------------------- config
BAD_CONFIGS = {
    "heads_do_not_divide": ({"d_model": 30, "n_heads": 4}, r"d_model \(30\) must be divisible by n_heads \(4\)"),
    "negative_width": ({"d_model": -32}, r"d_model must be a positive integer, got -32"),
    "negative_layers": ({"n_encoder_layers": -1}, r"n_encoder_layers must be a positive integer"),
    "zero_vocab": ({"vocab_size": 0}, r"vocab_size must be a positive integer"),
    "zero_ff": ({"d_ff": 0}, r"d_ff must be a positive integer"),
    "float_heads": ({"n_heads": 8.0}, r"n_heads must be a positive integer"),
    "bool_layers": ({"n_decoder_layers": True}, r"n_decoder_layers must be a positive integer"),
    "string_width": ({"d_model": "256"}, r"d_model must be a positive integer"),
    "odd_width": ({"d_model": 9, "n_heads": 3}, r"must be even for sinusoidal positions"),
    "dropout_one": ({"dropout": 1.0}, r"dropout must be in \[0, 1\)"),
    "negative_attention_dropout": ({"attention_dropout": -0.1}, r"attention_dropout must be in \[0, 1\)"),
    "pad_outside_vocab": ({"vocab_size": 10, "pad_id": 10}, r"pad_id must be an id in \[0, vocab_size\)"),
    "same_special_ids": ({"eos_id": 1}, r"special token ids must differ"),
}


@pytest.mark.parametrize("name", BAD_CONFIGS)
def test_impossible_config_is_a_config_error(name):
    fields, message = BAD_CONFIGS[name]
    with pytest.raises(ConfigError, match=message):
        TransformerConfig(**fields)
    with pytest.raises(ConfigError, match=message):
        TransformerConfig.from_dict({**TransformerConfig().to_dict(), **fields})


def test_unknown_json_fields_are_a_config_error():
    with pytest.raises(ConfigError, match=r"unknown config field\(s\): heads, layers"):
        TransformerConfig.from_dict({**TransformerConfig().to_dict(), "layers": 6, "heads": 8})
    with pytest.raises(ConfigError, match="config must be a JSON object, got list"):
        TransformerConfig.from_dict([])


def test_config_error_is_a_value_error():
    assert issubclass(ConfigError, ValueError)


def test_config_is_frozen_and_changes_with_replace(tiny_config):
    with pytest.raises(dataclasses.FrozenInstanceError):
        tiny_config.d_model = 64
    wider = dataclasses.replace(tiny_config, d_model=64, d_ff=128)
    assert (wider.d_model, wider.d_ff, wider.d_head) == (64, 128, 16)
    assert tiny_config.d_model == 32  # the original is untouched
    with pytest.raises(ConfigError, match="must be divisible"):
        dataclasses.replace(tiny_config, n_heads=5)  # replace validates too


def test_config_round_trips_through_dict_and_json(tiny_config, tmp_path):
    assert TransformerConfig.from_dict(tiny_config.to_dict()) == tiny_config
    assert TransformerConfig.from_dict(json.loads(json.dumps(tiny_config.to_dict()))) == tiny_config
    tiny_config.save(tmp_path / CONFIG_FILE)
    assert TransformerConfig.load(tmp_path / CONFIG_FILE) == tiny_config
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(ConfigError, match="is not valid JSON"):
        TransformerConfig.load(tmp_path / "broken.json")


def test_missing_fields_take_the_defaults():
    config = TransformerConfig.from_dict({"d_model": 64, "n_heads": 4})
    assert config == dataclasses.replace(TransformerConfig(), d_model=64, n_heads=4)
    assert (
        Transformer(
            dataclasses.replace(config, vocab_size=300, n_encoder_layers=1, n_decoder_layers=1, d_ff=32)
        ).num_parameters()
        > 0
    )
