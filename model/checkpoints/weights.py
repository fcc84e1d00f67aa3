"""A checkpoint's weights as safetensors, through huggingface_hub's serialization helpers.

`save_torch_state_dict` writes one `model.safetensors`, or shards of at most MAX_SHARD_BYTES with a
`model.safetensors.index.json` (weight map and total size); `load_torch_model` reads either back. Loading
never unpickles anything (safetensors only), and every problem becomes a CheckpointError naming it.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from huggingface_hub import load_torch_model, save_torch_state_dict
from safetensors import SafetensorError

from model.checkpoints.files import INDEX_FILE, SINGLE_WEIGHTS_FILE, CheckpointError

# Shards stay under 10 MB, the Hub's limit for a plain `git push` (upload_folder has none), so a checkpoint
# can be committed to a git repository or a Space as it is. A single tensor larger than this gets a shard
# of its own (the shipped model's largest, the 8000 x 256 embedding, is 8.2 MB).
MAX_SHARD_BYTES = 9 * 1000 * 1000


def save_weights(
    state_dict: dict[str, torch.Tensor], directory: str | Path, max_shard_bytes: int = MAX_SHARD_BYTES
) -> None:
    """Write the weights into directory (old model*.safetensors files and index are removed first)."""
    tensors = {name: tensor.detach().cpu() for name, tensor in state_dict.items()}
    save_torch_state_dict(tensors, directory, max_shard_size=max_shard_bytes)


def weights_source(directory: Path) -> Path:
    """The index (sharded) or the single file: what load_torch_model reads."""
    if (directory / INDEX_FILE).is_file():
        return directory
    if (directory / SINGLE_WEIGHTS_FILE).is_file():
        return directory / SINGLE_WEIGHTS_FILE  # the file itself: a run's OUT/last also holds optimizer.safetensors
    raise CheckpointError(f"no weights in {directory}: expected {SINGLE_WEIGHTS_FILE} or {INDEX_FILE}")


def load_weights(model: torch.nn.Module, directory: str | Path) -> None:
    """Load a checkpoint directory's weights into model; they must match its parameters exactly."""
    source = weights_source(Path(directory))
    try:
        result = load_torch_model(model, source, strict=False, safe=True)
    except json.JSONDecodeError as error:  # the index is the only JSON load_torch_model reads
        raise CheckpointError(f"{INDEX_FILE} is not valid JSON: {error}") from None
    except RuntimeError as error:  # load_state_dict: a tensor whose shape is not the model's
        detail = " ".join(str(error).split("\n", 1)[-1].split())
        raise CheckpointError(f"weights do not match config.json: {detail}") from None
    except (OSError, ValueError, SafetensorError) as error:  # a missing or unreadable shard, a bad index
        raise CheckpointError(f"cannot read the weights in {Path(directory).name}: {error}") from None
    missing, unexpected = sorted(result.missing_keys), sorted(result.unexpected_keys)
    if missing or unexpected:
        raise CheckpointError(f"weights do not match config.json: missing {missing[:5]}, unexpected {unexpected[:5]}")
