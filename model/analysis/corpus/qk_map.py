"""A joint 2-D map of one head's queries and keys, after AttentionViz (Yeh et al. 2023, "AttentionViz:
A Global View of Transformer Attention"), extended to cross-attention, where the queries come from
the target language and the keys from the source language.

A head's weights depend on q . k only (3.2.1), and two changes leave every softmax unchanged, so
AttentionViz makes them before embedding queries and keys together:
- translation: keys are shifted so their centroid lies on the queries' centroid (adding one vector
  c to every key adds q . c to a whole row of scores, which the softmax ignores);
- scaling: queries are multiplied by a and keys divided by a, a = sqrt(mean |k| / mean |q|), so
  both clouds have the same mean norm (q . k unchanged).
Then principal component analysis (numpy SVD) of the stacked vectors gives two axes. The basis is
kept (`Projection`), so the user's sentence is placed on the same map later.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Projection(NamedTuple):
    """How vectors of one head map to the plane: x' = ((x * a or x / a + shift) - mean) @ components.T."""

    mean: np.ndarray  # (d,) centre of the normalised stacked vectors
    components: np.ndarray  # (2, d) the first two principal axes, unit length, by decreasing variance
    key_shift: np.ndarray  # (d,) added to every key (before scaling): query centroid - key centroid
    scale: float  # a: queries x a, keys / a
    explained: np.ndarray  # (2,) share of the variance on each axis


def pca_2d(points: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean (d,), components (2, d), explained variance share (2,)) of points (N, d), by SVD.

    Each component's sign is fixed so that its largest-magnitude entry is positive (SVD's sign is
    arbitrary); with fewer than two dimensions the missing axis is zero.
    """
    x = np.asarray(points, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 1:
        raise ValueError(f"points must be (N, d) with N >= 1, got shape {x.shape}")
    mean = x.mean(axis=0)
    _, singular, vt = np.linalg.svd(x - mean, full_matrices=False)  # vt (min(N, d), d)
    components = np.zeros((2, x.shape[1]))
    components[: min(2, vt.shape[0])] = vt[:2]
    signs = np.sign(components[np.arange(2), np.abs(components).argmax(axis=1)])
    components *= np.where(signs == 0, 1.0, signs)[:, None]
    variance = singular**2
    explained = np.zeros(2)
    if variance.sum() > 0:
        explained[: min(2, len(variance))] = variance[:2] / variance.sum()
    return mean, components, explained


def fit_projection(queries: np.ndarray, keys: np.ndarray) -> Projection:
    """Fit the AttentionViz normalisation and the 2-D PCA on one head's queries (Nq, d) and keys (Nk, d)."""
    q = np.asarray(queries, dtype=np.float64)
    k = np.asarray(keys, dtype=np.float64)
    if q.ndim != 2 or k.ndim != 2 or q.shape[1] != k.shape[1] or not len(q) or not len(k):
        raise ValueError(f"queries and keys must be non-empty (N, d) with the same d, got {q.shape} and {k.shape}")
    shift = q.mean(axis=0) - k.mean(axis=0)
    k_shifted = k + shift
    q_norm = np.linalg.norm(q, axis=1).mean()
    k_norm = np.linalg.norm(k_shifted, axis=1).mean()
    scale = float(np.sqrt(k_norm / q_norm)) if q_norm > 0 and k_norm > 0 else 1.0
    mean, components, explained = pca_2d(np.concatenate([q * scale, k_shifted / scale]))
    return Projection(mean, components, shift, scale, explained)


def project(vectors: np.ndarray, projection: Projection, side: str) -> np.ndarray:
    """(N, d) queries (side="query") or keys (side="key") -> (N, 2) map coordinates."""
    x = np.asarray(vectors, dtype=np.float64)
    if side == "query":
        normalised = x * projection.scale
    elif side == "key":
        normalised = (x + projection.key_shift) / projection.scale
    else:
        raise ValueError(f"side must be 'query' or 'key', got {side!r}")
    return (normalised - projection.mean) @ projection.components.T
