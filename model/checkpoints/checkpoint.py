"""Checkpoint directories: config.json, safetensors weights, tokenizer.json, metrics.json, README.md.

Weights are safetensors only (a checkpoint can never run code: nothing is unpickled).
Larger weights are split into shards of at most MAX_SHARD_BYTES; a tensor larger than a shard
is split by rows and joined again on load. Loading from the Hugging Face Hub happens only when
asked for explicitly (`hub=True` / `--hub`); the default reads a local directory, offline.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from model.core.config import ConfigError, TransformerConfig
from model.text.tokenizer import SubwordTokenizer
from model.core.transformer import Transformer

CONFIG_FILE = "config.json"
TOKENIZER_FILE = "tokenizer.json"
METRICS_FILE = "metrics.json"
INDEX_FILE = "model.safetensors.index.json"
SINGLE_WEIGHTS_FILE = "model.safetensors"
HUB_MAX_FILE_BYTES = 10 * 1000 * 1000  # the Hub refuses a plain git push of a file of 10 MB or more
MAX_SHARD_BYTES = 9 * 1000 * 1000  # 9 MB: each shard (plus its small JSON header) stays under that limit
PART_SUFFIX = ".__part"  # "name.__part3": rows of a tensor larger than one shard
HUB_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")


class CheckpointError(Exception):
    """A checkpoint that cannot be loaded; the message names the file and the problem."""


@dataclass
class Checkpoint:
    model: Transformer
    tokenizer: SubwordTokenizer
    config: TransformerConfig
    metrics: dict
    path: Path


# --------------------------------------------------------------------------- saving
def _shards(state: dict[str, torch.Tensor], max_bytes: int) -> list[dict[str, torch.Tensor]]:
    """Split a state dict into groups of at most max_bytes; oversized tensors are split by rows."""
    pieces: list[tuple[str, torch.Tensor]] = []
    for name, tensor in state.items():
        tensor = tensor.detach().contiguous().cpu()
        size = tensor.numel() * tensor.element_size()
        if size <= max_bytes or tensor.dim() == 0:
            pieces.append((name, tensor))
            continue
        rows_per_part = max(1, max_bytes // max(1, tensor[0].numel() * tensor.element_size()))
        for index, part in enumerate(torch.split(tensor, rows_per_part, dim=0)):
            pieces.append((f"{name}{PART_SUFFIX}{index}", part.contiguous()))
    shards: list[dict[str, torch.Tensor]] = [{}]
    used = 0
    for name, tensor in pieces:
        size = tensor.numel() * tensor.element_size()
        if shards[-1] and used + size > max_bytes:
            shards.append({})
            used = 0
        shards[-1][name] = tensor
        used += size
    return shards


def save_checkpoint(
    directory: str | Path,
    model: Transformer,
    tokenizer: SubwordTokenizer,
    metrics: dict | None = None,
    max_shard_bytes: int = MAX_SHARD_BYTES,
) -> Path:
    """Write config.json, weights (one file or shards + index), tokenizer.json, metrics.json, README.md."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    for old in list(directory.glob("model*.safetensors")) + [directory / INDEX_FILE]:
        old.unlink(missing_ok=True)
    model.config.save(directory / CONFIG_FILE)
    tokenizer.save(directory / TOKENIZER_FILE)
    (directory / METRICS_FILE).write_text(json.dumps(metrics or {}, indent=2) + "\n", encoding="utf-8")
    from model.checkpoints.model_card import write_model_card  # here, not at import: huggingface_hub's card code takes 0.5 s

    write_model_card(directory)  # README.md for the Hub, from the metrics and config just written
    shards = _shards(model.state_dict(), max_shard_bytes)
    if len(shards) == 1:
        save_file(shards[0], directory / SINGLE_WEIGHTS_FILE, metadata={"format": "pt"})
        return directory
    weight_map = {}
    for index, shard in enumerate(shards, start=1):
        name = f"model-{index:05d}-of-{len(shards):05d}.safetensors"
        save_file(shard, directory / name, metadata={"format": "pt"})
        weight_map.update({key: name for key in shard})
    (directory / INDEX_FILE).write_text(json.dumps({"weight_map": weight_map}, indent=2) + "\n", encoding="utf-8")
    return directory


# --------------------------------------------------------------------------- loading
def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise CheckpointError(f"{path.name} is not valid JSON: {error}") from None


def _load_state(directory: Path) -> dict[str, torch.Tensor]:
    index = directory / INDEX_FILE
    if index.exists():
        weight_map = _read_json(index).get("weight_map")
        if not isinstance(weight_map, dict):
            raise CheckpointError(f"{INDEX_FILE} has no 'weight_map' object")
        files = sorted(set(weight_map.values()))
    elif (directory / SINGLE_WEIGHTS_FILE).exists():
        files = [SINGLE_WEIGHTS_FILE]
    else:
        raise CheckpointError(f"no weights in {directory}: expected {SINGLE_WEIGHTS_FILE} or {INDEX_FILE}")
    pieces: dict[str, torch.Tensor] = {}
    for name in files:
        path = directory / name
        if Path(name).name != name or not name.endswith(".safetensors"):
            raise CheckpointError(f"{INDEX_FILE} names an unexpected file {name!r}")
        if not path.exists():
            raise CheckpointError(f"missing weights shard {name}")
        try:
            pieces.update(load_file(path))
        except (SafetensorError, OSError) as error:
            raise CheckpointError(f"cannot read {name}: {error}") from None
    state: dict[str, torch.Tensor] = {}
    parts: dict[str, dict[int, torch.Tensor]] = {}
    for key, tensor in pieces.items():
        if PART_SUFFIX in key:
            base, index = key.rsplit(PART_SUFFIX, 1)
            parts.setdefault(base, {})[int(index)] = tensor
        else:
            state[key] = tensor
    for base, indexed in parts.items():
        state[base] = torch.cat([indexed[i] for i in sorted(indexed)], dim=0)
    return state


def load_local_checkpoint(directory: str | Path, device: str | torch.device = "cpu") -> Checkpoint:
    """Load a checkpoint directory; every problem becomes a CheckpointError naming it."""
    directory = Path(directory)
    if not directory.is_dir():
        raise CheckpointError(f"checkpoint directory {directory} does not exist")
    for required in (CONFIG_FILE, TOKENIZER_FILE):
        if not (directory / required).exists():
            raise CheckpointError(f"missing {required} in {directory}")
    try:
        config = TransformerConfig.from_dict(_read_json(directory / CONFIG_FILE))
    except ConfigError as error:
        raise CheckpointError(f"bad {CONFIG_FILE}: {error}") from None
    try:
        tokenizer = SubwordTokenizer.load(directory / TOKENIZER_FILE)
    except ValueError as error:
        raise CheckpointError(str(error)) from None
    if tokenizer.vocab_size != config.vocab_size:
        raise CheckpointError(
            f"tokenizer has {tokenizer.vocab_size} tokens but config.json says vocab_size={config.vocab_size}"
        )
    model = Transformer(config)
    state = _load_state(directory)
    expected = model.state_dict()
    missing = sorted(set(expected) - set(state))
    unexpected = sorted(set(state) - set(expected))
    if missing or unexpected:
        raise CheckpointError(
            f"weights do not match config.json: missing {missing[:5]}, unexpected {unexpected[:5]}"
        )
    for key, tensor in state.items():
        if tuple(tensor.shape) != tuple(expected[key].shape):
            raise CheckpointError(
                f"weight {key} has shape {tuple(tensor.shape)}, config.json implies {tuple(expected[key].shape)}"
            )
    model.load_state_dict(state)
    model.to(device).eval()
    metrics_path = directory / METRICS_FILE
    metrics = _read_json(metrics_path) if metrics_path.exists() else {}
    return Checkpoint(model, tokenizer, config, metrics, directory)


def validate_repo_id(repo_id: str) -> str:
    """Check a Hub repo id ("owner/name") before any request is made."""
    if not isinstance(repo_id, str) or not HUB_REPO_ID.match(repo_id) or ".." in repo_id or "--" in repo_id:
        raise CheckpointError(f"{repo_id!r} is not a valid Hugging Face repo id (expected 'owner/name')")
    return repo_id


def download_from_hub(repo_id: str, revision: str | None = None) -> Path:
    """Fetch a checkpoint's JSON and safetensors files (nothing else) from the Hub."""
    validate_repo_id(repo_id)
    try:
        from huggingface_hub import snapshot_download
    except ImportError:  # pragma: no cover - huggingface-hub is in requirements.txt
        raise CheckpointError("loading from the Hub needs the huggingface-hub package") from None
    try:
        path = snapshot_download(repo_id, revision=revision, allow_patterns=["*.json", "*.safetensors"])
    except Exception as error:  # network errors, 404s, offline mode: all become one clear message
        raise CheckpointError(
            f"could not download {repo_id!r} from the Hugging Face Hub ({type(error).__name__}: {error}). "
            "Check the repo id and the network, or load a local checkpoint directory."
        ) from None
    return Path(path)


def load_checkpoint(source: str | Path, hub: bool = False, device: str | torch.device = "cpu") -> Checkpoint:
    """Load from a local directory (default, offline) or, with hub=True, a Hub repo id."""
    return load_local_checkpoint(download_from_hub(str(source)) if hub else source, device)


def push_to_hub(directory: str | Path, repo_id: str, private: bool = False, api=None) -> str:
    """Upload a checkpoint directory to a Hub model repo; returns the repo URL.

    The model card (README.md) is regenerated for repo_id first, so the Hub shows the scores of
    metrics.json and how to load this repo. `api` is an `huggingface_hub.HfApi` (tests pass a fake).
    """
    validate_repo_id(repo_id)
    load_local_checkpoint(directory)  # refuse to publish something that does not load
    from model.checkpoints.model_card import write_model_card

    write_model_card(directory, repo_id)
    if api is None:
        from huggingface_hub import HfApi

        api = HfApi()
    url = api.create_repo(repo_id, repo_type="model", private=private, exist_ok=True)
    api.upload_folder(folder_path=str(directory), repo_id=repo_id, repo_type="model",
                      allow_patterns=["*.json", "*.safetensors", "*.md"])
    return str(url)
