"""Input checks shared by every view: arrays of the right rank, shapes that match the tokens.

A view that receives a trace of the wrong shape says which argument is wrong and why (ValueError),
instead of drawing a misleading figure or failing deep inside Plotly.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .tokens import display_tokens


def as_array(name: str, value, ndim: int, dtype=np.float32) -> np.ndarray:
    """A numpy array of rank ``ndim`` with at least one element per axis, or ValueError."""
    try:
        array = np.asarray(value, dtype=dtype)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be a numeric array: {error}") from None
    if array.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, got shape {array.shape}")
    if 0 in array.shape:
        raise ValueError(f"{name} is empty (shape {array.shape})")
    return array


def as_probabilities(name: str, value, size: int | None = None) -> np.ndarray:
    """A 1-D float64 array of probabilities in [0, 1] (``size`` of them where given), or ValueError."""
    p = as_array(name, value, 1, dtype=np.float64)
    if size is not None and p.shape[0] != size:
        raise ValueError(f"{name} has {p.shape[0]} values, expected {size}")
    if not np.all(np.isfinite(p)) or p.min() < 0 or p.max() > 1 + 1e-6:
        raise ValueError(f"{name} must be probabilities in [0, 1], got min {p.min()} max {p.max()}")
    return p


def check_axis(name: str, array: np.ndarray, axis: int, size: int, what: str) -> None:
    """ValueError unless ``array.shape[axis] == size`` (the number of ``what``)."""
    if array.shape[axis] != size:
        raise ValueError(f"{name} has shape {array.shape}, but axis {axis} should match the {size} {what}")


def labels_for(name: str, tokens: Sequence[str], size: int | None = None) -> list[str]:
    """Escaped labels for ``tokens``; ValueError if there are none or not ``size`` of them."""
    try:
        labels = display_tokens(tokens)
    except ValueError as error:
        raise ValueError(f"{name}: {error}") from None
    if not labels:
        raise ValueError(f"{name} is empty")
    if size is not None and len(labels) != size:
        raise ValueError(f"{name} has {len(labels)} tokens, but the array has {size} positions")
    return labels


def check_index(name: str, index, size: int) -> int | None:
    """``index`` as an int in [0, size), None passes through, anything else is a ValueError."""
    if index is None:
        return None
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
        raise ValueError(f"{name} must be an integer or None, got {index!r}")
    if not 0 <= index < size:
        raise ValueError(f"{name}={index} is out of range for {size} rows")
    return int(index)


def checked_heads(
    heads: Sequence[int] | None, head_names: Sequence[str] | None, n_heads: int
) -> tuple[list[int], list[str]]:
    """(the distinct 0-based heads drawn, in order; a name for each of the n_heads heads)."""
    heads = list(range(n_heads)) if heads is None else [check_index("heads", h, n_heads) for h in heads]
    if not heads or len(set(heads)) != len(heads):
        raise ValueError(f"heads must name distinct heads of {n_heads}, got {heads}")
    names = [f"head {h + 1}" for h in range(n_heads)] if head_names is None else list(head_names)
    if len(names) != n_heads:
        raise ValueError(f"head_names has {len(names)} names for {n_heads} heads")
    return heads, names
