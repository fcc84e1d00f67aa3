"""One way to read a file of a checkpoint: every way the file can be broken becomes one CheckpointError.

A file can be missing, a folder, unreadable, cut off, emptied, not UTF-8, not JSON, a damaged .npz or
safetensors file, or in a format this code does not read. `read_checkpoint_file` turns each into a
CheckpointError whose message is one plain line naming the file by its name in the checkpoint
("film.npz is not a complete .npz archive (cut off or damaged)"): no server path, no library's advice.
`read_optional_file` does the same for a file the checkpoint may lack (the film, the corpus heads, the
metrics, the training log): it answers (value, "") or (default, the line that says what is wrong).
"""

from __future__ import annotations

import json
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from safetensors import SafetensorError

from model.checkpoints.files import CheckpointError

T = TypeVar("T")

# What reading a broken file raises: the OS, text decoding, JSON, a zip (.npz) cut off, its deflate stream, the
# safetensors header, and a reader that finds the data in another shape (a missing key, a wrong type).
FILE_ERRORS = (OSError, ValueError, zipfile.BadZipFile, zlib.error, EOFError, SafetensorError, KeyError, TypeError)


def problem_of(path: Path, error: BaseException) -> str:
    """What is wrong with the file, in plain words (after its name)."""
    if isinstance(error, FileNotFoundError):
        return "is missing"
    if isinstance(error, IsADirectoryError) or path.is_dir():
        return "is a folder, not a file"
    if isinstance(error, OSError):
        return f"cannot be opened ({error.strerror or type(error).__name__})"
    if path.is_file() and path.stat().st_size == 0:
        return "is empty"
    if isinstance(error, UnicodeDecodeError):
        return f"is not UTF-8 text (byte {error.start} cannot be read)"
    if isinstance(error, json.JSONDecodeError):
        return f"is not valid JSON (line {error.lineno}, column {error.colno})"
    if isinstance(error, (zipfile.BadZipFile, zlib.error, EOFError)):
        return "is not a complete .npz archive (cut off or damaged)"
    if isinstance(error, SafetensorError):
        return "is not a complete safetensors file (cut off or damaged)"
    return "is not in the format this app reads"


def read_checkpoint_file(path: str | Path, read: Callable[[Path], T]) -> T:
    """read(path); any way the file is broken (FILE_ERRORS) raises CheckpointError("<name> <what is wrong>")."""
    path = Path(path)
    try:
        return read(path)
    except CheckpointError:
        raise
    except FILE_ERRORS as error:
        raise CheckpointError(f"{path.name} {problem_of(path, error)}") from None


def read_optional_file(path: str | Path, read: Callable[[Path], T], default: T = None) -> tuple[T, str]:
    """(read(path), "") ; (default, "") when there is no such file; (default, the line saying what is wrong with
    it) when it is there and broken (a folder in its place counts as there)."""
    path = Path(path)
    if not path.exists():
        return default, ""
    try:
        return read_checkpoint_file(path, read), ""
    except CheckpointError as error:
        return default, str(error)


def json_object(path: Path) -> dict:
    """A JSON file holding one object (UTF-8), as a dict; CheckpointError when it holds anything else."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise CheckpointError(f"{path.name} is not a JSON object (it holds a {type(data).__name__})")
    return data


def read_json_object(path: str | Path) -> dict:
    """A checkpoint's JSON file (config.json, metrics.json, the index, the training log) as a dict, or CheckpointError."""
    return read_checkpoint_file(path, json_object)
