"""The corpus file: every corpus-wide figure of one checkpoint in one small `.npz` beside it.

`scripts/corpus_heads.py` writes `corpus_heads.npz` once per checkpoint; the app reads it. The file
is stamped with `weights_hash` (SHA-256 of the model's tensors), so a file written for other weights
(a retrained checkpoint in the same directory) is detected as stale rather than shown. Plain arrays
only (no pickle: `np.load(allow_pickle=False)`), floats of the 2-D map in float16 to stay small.
A file made before a kind's stats grew (model/analysis/corpus/roles.py KIND_STATS: cross-attention's
aligned and monotone) still reads: `CorpusHeads.lacking` says which stats it has not, and its roles
were labelled without them.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from model.checkpoints.files import CheckpointError
from model.checkpoints.reading import read_checkpoint_file

from .importance import KINDS, PruningCurves
from .qk_map import Projection
from .roles import KIND_STATS

CORPUS_FILE = "corpus_heads.npz"
FORMAT_VERSION = 1
MAX_BYTES = 5 * 1000 * 1000  # the budget for the file


def weights_hash(model: torch.nn.Module) -> str:
    """SHA-256 (hex) over every tensor of the state dict: name, dtype, shape and bytes, by name."""
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        data = tensor.detach().contiguous().cpu()
        digest.update(f"{name}|{data.dtype}|{tuple(data.shape)}|".encode())
        digest.update(data.view(torch.uint8).numpy().tobytes() if data.numel() else b"")
    return digest.hexdigest()


@dataclass
class HeadMap:
    """The query-key map of every head of one kind over the corpus sentences (model/analysis/corpus/qk_map.py)."""

    query_tokens: np.ndarray  # (Nq,) str
    query_positions: np.ndarray  # (Nq,) int: position in its sentence
    query_sentences: np.ndarray  # (Nq,) int: index of its example
    key_tokens: np.ndarray  # (Nk,) str
    key_positions: np.ndarray  # (Nk,) int
    key_sentences: np.ndarray  # (Nk,) int
    coords: np.ndarray  # (L, h, Nq + Nk, 2): queries first, then keys
    mean: np.ndarray  # (L, h, d_k) the projections (Projection fields, per head)
    components: np.ndarray  # (L, h, 2, d_k)
    key_shift: np.ndarray  # (L, h, d_k)
    scale: np.ndarray  # (L, h)
    explained: np.ndarray  # (L, h, 2)

    def projection(self, layer: int, head: int) -> Projection:
        return Projection(
            self.mean[layer, head],
            self.components[layer, head],
            self.key_shift[layer, head],
            float(self.scale[layer, head]),
            self.explained[layer, head],
        )

    @property
    def n_queries(self) -> int:
        return len(self.query_tokens)


@dataclass
class CorpusHeads:
    """Everything the corpus views show for one checkpoint."""

    weights_hash: str
    settings: dict  # how it was made: data, sentences, seconds, ... (JSON)
    stats: dict[str, dict[str, np.ndarray]]  # kind -> stat (model/analysis/corpus/roles.py STATS) -> (L, h)
    roles: dict[str, np.ndarray]  # kind -> (L, h) role names
    importance: dict[str, np.ndarray]  # kind -> (L, h) E|dL/dxi| (Michel et al.)
    importance_normalized: dict[str, np.ndarray]  # kind -> (L, h), l2-normalised per layer
    pruning: PruningCurves
    maps: dict[str, HeadMap] = field(default_factory=dict)  # kind -> query-key map

    @property
    def lacking(self) -> dict[str, list[str]]:
        """{kind: the stats of KIND_STATS this file has not} for the kinds that lack any (an older file)."""
        missing = {kind: [name for name in KIND_STATS[kind] if name not in self.stats[kind]] for kind in KINDS}
        return {kind: names for kind, names in missing.items() if names}


def _flat(data: CorpusHeads) -> dict[str, np.ndarray]:
    arrays = {
        "format_version": np.array(FORMAT_VERSION),
        "weights_hash": np.array(data.weights_hash),
        "settings": np.array(json.dumps(data.settings)),
    }
    for kind in KINDS:
        for name, values in data.stats[kind].items():
            arrays[f"stats.{kind}.{name}"] = np.asarray(values, dtype=np.float32)
        arrays[f"roles.{kind}"] = np.asarray(data.roles[kind], dtype=str)
        arrays[f"importance.{kind}"] = np.asarray(data.importance[kind], dtype=np.float64)
        arrays[f"importance_normalized.{kind}"] = np.asarray(data.importance_normalized[kind], dtype=np.float64)
    for name, values in data.pruning._asdict().items():
        arrays[f"pruning.{name}"] = np.asarray(values)
    for kind, head_map in data.maps.items():
        for name, values in vars(head_map).items():
            values = np.asarray(values)
            if name == "coords":
                values = values.astype(np.float16)  # a point on a plot needs no more
            elif values.dtype.kind == "f":
                values = values.astype(np.float32)
            arrays[f"maps.{kind}.{name}"] = values
    return arrays


def save_corpus(path: str | Path, data: CorpusHeads) -> Path:
    """Write the compressed .npz (atomically: a reader never sees half a file) -> its path."""
    path = Path(path)
    temporary = path.with_name(path.name + ".tmp.npz")
    np.savez_compressed(temporary, **_flat(data))
    temporary.replace(path)
    return path


def load_corpus(path: str | Path) -> CorpusHeads:
    """Read a corpus file; a missing, broken or other file raises CheckpointError naming it in plain words
    (model/checkpoints/reading.py)."""
    return read_checkpoint_file(path, _read_corpus)


def _read_corpus(path: Path) -> CorpusHeads:
    with np.load(path, allow_pickle=False) as npz:
        arrays = {name: npz[name] for name in npz.files}
    if int(arrays.get("format_version", -1)) != FORMAT_VERSION:
        found = arrays.get("format_version")
        raise CheckpointError(f"{path.name} has format version {found}, expected {FORMAT_VERSION}")
    grouped: dict[str, dict] = {}
    for name, values in arrays.items():
        parts = name.split(".")
        node = grouped
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = values
    maps = {
        kind: HeadMap(
            **{
                name: (values.astype(np.float32) if values.dtype == np.float16 else values)
                for name, values in fields.items()
            }
        )
        for kind, fields in grouped.get("maps", {}).items()
    }
    return CorpusHeads(  # a missing entry is a KeyError or TypeError: read_checkpoint_file names the file
        weights_hash=str(arrays["weights_hash"]),
        settings=json.loads(str(arrays["settings"])),
        stats=grouped["stats"],
        roles=grouped["roles"],
        importance=grouped["importance"],
        importance_normalized=grouped["importance_normalized"],
        pruning=PruningCurves(**grouped["pruning"]),
        maps=maps,
    )


def corpus_path(checkpoint_dir: str | Path) -> Path:
    return Path(checkpoint_dir) / CORPUS_FILE


def corpus_status(path: str | Path, model: torch.nn.Module) -> tuple[CorpusHeads | None, str]:
    """(data, "") for a file that matches the model's weights, else (None, "missing" | "stale" | "unreadable: ...")."""
    path = Path(path)
    if not path.exists():
        return None, "missing"
    try:
        data = load_corpus(path)
    except CheckpointError as error:
        return None, f"unreadable: {error}"
    if data.weights_hash != weights_hash(model):
        return None, "stale"
    return data, ""
