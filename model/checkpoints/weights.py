"""A checkpoint's weights as safetensors, through huggingface_hub's serialization helpers.

`save_torch_state_dict` writes one `model.safetensors`, or shards of at most MAX_SHARD_BYTES with a
`model.safetensors.index.json` (weight map and total size); `load_torch_model` reads either back. Loading
never unpickles anything (safetensors only); each file is read first (model/checkpoints/reading.py), so every
problem becomes a CheckpointError naming the file, in plain words.
"""

from __future__ import annotations

from pathlib import Path

import torch
from huggingface_hub import load_torch_model, save_torch_state_dict
from safetensors import safe_open

from model.checkpoints.files import INDEX_FILE, SINGLE_WEIGHTS_FILE, CheckpointError
from model.checkpoints.reading import FILE_ERRORS, json_object, read_checkpoint_file

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


def weight_files(directory: Path) -> tuple[Path, list[str]]:
    """(what load_torch_model reads: the folder of an index or the single file, the safetensors files' names)."""
    if (directory / INDEX_FILE).exists():
        shards = read_checkpoint_file(directory / INDEX_FILE, shard_names)
        for name in shards:
            if Path(name).name != name:  # a shard outside the checkpoint's folder is never read
                raise CheckpointError(f"{INDEX_FILE} names a shard outside the checkpoint: {name!r}")
        return directory, shards
    if (directory / SINGLE_WEIGHTS_FILE).exists():
        # the file itself: a run's OUT/last also holds optimizer.safetensors
        return directory / SINGLE_WEIGHTS_FILE, [SINGLE_WEIGHTS_FILE]
    raise CheckpointError(f"no weights: expected {SINGLE_WEIGHTS_FILE} or {INDEX_FILE}")


def shard_names(index: Path) -> list[str]:
    """The shard files an index names, each once, in order."""
    return sorted(set(json_object(index)["weight_map"].values()))


def tensor_names(path: Path) -> list[str]:
    """The tensors a safetensors file holds (reading its header checks the file covers every tensor)."""
    with safe_open(path, framework="pt") as weights:
        return list(weights.keys())


def load_weights(model: torch.nn.Module, directory: str | Path) -> None:
    """Load a checkpoint directory's weights into model; they must match its parameters exactly. Each file is read
    first through model/checkpoints/reading.py, so a missing, cut-off or damaged one is named."""
    directory = Path(directory)
    source, names = weight_files(directory)
    for name in names:
        read_checkpoint_file(directory / name, tensor_names)
    try:
        result = load_torch_model(model, source, strict=False, safe=True)
    except RuntimeError as error:  # load_state_dict: a tensor whose shape is not the model's
        detail = " ".join(str(error).split("\n", 1)[-1].split())
        raise CheckpointError(f"weights do not match config.json: {detail}") from None
    except FILE_ERRORS as error:  # the files were read above: what is left is no file's fault alone
        raise CheckpointError(f"the weights cannot be read ({type(error).__name__})") from None
    missing, unexpected = sorted(result.missing_keys), sorted(result.unexpected_keys)
    if missing or unexpected:
        raise CheckpointError(f"weights do not match config.json: missing {missing[:5]}, unexpected {unexpected[:5]}")
