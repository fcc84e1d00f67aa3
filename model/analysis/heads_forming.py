"""Watch the heads form: per-head entropy and sharpness over a training film.

A training film keeps, at every evaluation, the trace of fixed probe sentences, so a view can show
attention (3.2.2's heads of the three kinds of 3.2.3) sharpening from uniform to aligned as the
model trains (section 5). This module turns a list of frames, as `model.training.film.load_film` gives
them, into series. The fields it reads of each frame:

    {"step": int,                      # optimiser step of the evaluation, increasing
     "val_bleu": {"de-en": float, "en-de": float},   # validation BLEU of each direction at that step
     "probes": {"de-en": {             # one probe per direction (any direction names work)
         "encoder_attention": (L_enc, h, S, S),
         "decoder_self_attention": (L_dec, h, T, T),
         "cross_attention": (L_dec, h, T, S),
         "translation": str,
         "source_tokens": [S str], "target_tokens": [T str]},
       "en-de": {...}}}

T (the model's own output) may change from frame to frame; S, L and h may not.

Entropy is in bits, averaged over the query rows of the probe. Sharpness is 1 - H / H_max with
H_max = log2(keys the row may attend): 0 = uniform over its keys, 1 = all weight on one key;
rows with a single allowed key (the decoder's first self-attention row) have no uniform
alternative and are left out of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from model.decoding.trace import ATTENTION_KINDS, attention_kind

PROBE_ARRAYS = {kind.name: kind.weights_field for kind in ATTENTION_KINDS.values()}  # kind -> probe key


def frame_probe(frame: dict, direction: str) -> dict:
    """The probe of one direction in a frame, with a clear error when the frame is not as documented."""
    if not isinstance(frame, dict) or "probes" not in frame or "step" not in frame:
        raise ValueError("a film frame must be a dict with 'step', 'val_bleu' and 'probes'")
    probes = frame["probes"]
    if direction not in probes:
        raise ValueError(f"frame at step {frame['step']} has no probe for {direction!r}; it has {', '.join(probes)}")
    return probes[direction]


def frame_bleu(frame: dict, direction: str) -> float:
    """The frame's validation BLEU of `direction` (NaN when the frame has none for it)."""
    bleu = frame.get("val_bleu")
    if not isinstance(bleu, dict):
        raise ValueError(f"frame at step {frame.get('step')} must give val_bleu per direction, got {bleu!r}")
    return float(bleu.get(direction, np.nan))


def allowed_keys(kind: str, n_queries: int, n_keys: int) -> np.ndarray:
    """(Tq,) how many keys each query row may attend: all for encoder and cross, row + 1 for decoder self."""
    if attention_kind(kind).name == "decoder_self":
        return np.minimum(np.arange(1, n_queries + 1), n_keys)
    return np.full(n_queries, n_keys)


def head_entropy_and_sharpness(weights: np.ndarray, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Per-head mean entropy (bits) and mean sharpness of one attention kind of one probe.

    weights (L, h, Tq, Tk), rows summing to 1 -> two (L, h) float32 arrays (sharpness NaN when no
    row has more than one allowed key).
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 4:
        raise ValueError(f"{kind} attention must be (L, h, Tq, Tk), got shape {w.shape}")
    entropy = -(w * np.log2(np.clip(w, 1e-12, None))).sum(-1)  # (L, h, Tq)
    maximum = np.log2(allowed_keys(kind, *w.shape[2:]))  # (Tq,)
    rows = maximum > 0
    sharpness = 1.0 - entropy[..., rows] / maximum[rows]  # (L, h, Tq')
    mean_sharpness = sharpness.mean(-1) if rows.any() else np.full(w.shape[:2], np.nan)
    return entropy.mean(-1).astype(np.float32), mean_sharpness.astype(np.float32)


@dataclass
class FilmSummary:
    """Series over the frames of a film for one probe direction. N = frames."""

    direction: str
    steps: np.ndarray  # (N,) training steps
    val_bleu: np.ndarray  # (N,) validation BLEU of this direction
    translations: list[str]  # N translations of the probe
    entropy: dict[str, np.ndarray]  # kind -> (N, L, h) mean entropy per head, bits
    head_sharpness: dict[str, np.ndarray]  # kind -> (N, L, h) mean sharpness per head
    sharpness: dict[str, np.ndarray]  # kind -> (N,) sharpness averaged over layers and heads

    def frame_index(self, step: int) -> int:
        """Index of the last frame at or before training step `step` (the first frame if none)."""
        return max(0, int(np.searchsorted(self.steps, step, side="right")) - 1)


def film_summary(frames: Sequence[dict], direction: str) -> FilmSummary:
    """Entropy and sharpness of every head of every kind over the film, for one probe direction."""
    if not frames:
        raise ValueError("the film has no frames")
    probes = [frame_probe(frame, direction) for frame in frames]  # checks every frame's shape first
    steps = np.array([int(frame["step"]) for frame in frames])
    if (np.diff(steps) <= 0).any():
        raise ValueError(f"film frames must have increasing steps, got {steps.tolist()}")
    entropy = {kind: [] for kind in PROBE_ARRAYS}
    sharp = {kind: [] for kind in PROBE_ARRAYS}
    for frame, probe in zip(frames, probes):
        for kind, field in PROBE_ARRAYS.items():
            if field not in probe:
                raise ValueError(f"probe {direction!r} at step {frame['step']} lacks {field!r}")
            frame_entropy, frame_sharpness = head_entropy_and_sharpness(probe[field], kind)
            if entropy[kind] and frame_entropy.shape != entropy[kind][0].shape:
                raise ValueError(
                    f"{field} has {frame_entropy.shape} layers x heads at step {frame['step']} "
                    f"but {entropy[kind][0].shape} at step {frames[0]['step']}"
                )
            entropy[kind].append(frame_entropy)
            sharp[kind].append(frame_sharpness)
    head_sharpness = {kind: np.stack(values) for kind, values in sharp.items()}  # (N, L, h)
    return FilmSummary(
        direction,
        steps,
        np.array([frame_bleu(frame, direction) for frame in frames], dtype=np.float32),
        [str(probe.get("translation", "")) for probe in probes],
        {kind: np.stack(values) for kind, values in entropy.items()},
        head_sharpness,
        {kind: _mean_over_heads(values) for kind, values in head_sharpness.items()},
    )


def _mean_over_heads(values: np.ndarray) -> np.ndarray:
    """(N, L, h) -> (N,) mean ignoring NaN; a frame whose heads are all NaN (a one-token probe's decoder
    self-attention has no row with a choice) stays NaN, without numpy's empty-slice warning."""
    counts = np.isfinite(values).sum(axis=(1, 2))
    sums = np.nansum(values, axis=(1, 2))
    return np.divide(sums, counts, out=np.full(len(values), np.nan, dtype=np.float64), where=counts > 0).astype(
        np.float32
    )
