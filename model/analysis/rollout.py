"""Attention rollout and attention flow to the source (Abnar & Zuidema 2020, "Quantifying Attention
Flow in Transformers", section 3: attention rollout), extended to the encoder-decoder of Figure 1.

Raw attention of one layer says where that layer reads from, not which *input tokens* end up in a
position: each layer mixes positions that earlier layers already mixed. Rollout follows the mixing
down the stack. As in the paper, every sub-layer's residual connection is an identity path beside
the attention, so one layer's mixing matrix is

    Ã = 0.5 * A + 0.5 * I      (A = the layer's attention averaged over heads; rows renormalised)

and the rollout after layer l is Ã_l · Ã_(l-1) · ... · Ã_1 (later layers multiply on the left).
Feed-forward sub-layers and layer norms act on one position at a time and are ignored, as in the paper.

Encoder-decoder flow, the method stated exactly (`source_flow`):
- The encoder's rollout R_enc (S, S) says how much of each source input token every encoder
  output (the memory row the decoder reads, 3.2.3) is made of.
- A decoder position t is tracked as a distribution over S + T input tokens (S source tokens,
  T target input tokens). It starts as the one-hot of its own target token. Each decoder layer l:
    * masked self-attention sub-layer: X <- Ã_self,l · X, with Ã_self,l = 0.5 * mean_h(A_self,l) + 0.5 * I;
    * cross-attention sub-layer: X <- 0.5 * X + 0.5 * [mean_h(C_l) · R_enc | 0], i.e. the
      residual keeps half, and half is the memory read through cross-attention, itself made of
      source tokens according to R_enc.
  Rows stay distributions (sum to 1). The source part X[:, :S] is the flow to the source; divided
  by its row sum it is a distribution over source tokens comparable with raw cross-attention.
  Note: the split between source and target is fixed by the method, not measured: every cross
  sub-layer replaces the same (1 - residual) of every row with source, so each row keeps exactly
  residual ** L_dec on the target side whatever the attention. Only how each side is spread
  over its tokens says something about the model, so no "source share" is reported.
- `cross_rollout` gives the simpler per-layer view: mean_h(C_l) · R_enc for each decoder layer l.

Everything takes and returns plain numpy arrays, like model/analysis/readouts.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

RESIDUAL = 0.5  # weight of the identity (residual) path in each sub-layer, as in Abnar & Zuidema


def _check_stack(weights: np.ndarray, name: str, square: bool) -> np.ndarray:
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 4:
        raise ValueError(f"{name} must be (L, h, Tq, Tk), got shape {w.shape}")
    if square and w.shape[2] != w.shape[3]:
        raise ValueError(f"{name} must be square self-attention (L, h, T, T), got shape {w.shape}")
    if not np.all(np.isfinite(w)) or (w < 0).any():
        raise ValueError(f"{name} must hold finite, non-negative attention weights")
    return w


def _normalise_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows divided by their sums; an all-zero row (a fully masked query) stays zero."""
    sums = matrix.sum(-1, keepdims=True)
    return np.divide(matrix, sums, out=np.zeros_like(matrix), where=sums > 0)


def _check_residual(residual: float) -> float:
    if not 0.0 <= residual <= 1.0:
        raise ValueError(f"residual must be in [0, 1], got {residual}")
    return float(residual)


def residual_attention(weights: np.ndarray, residual: float = RESIDUAL) -> np.ndarray:
    """Per-layer mixing matrices Ã_l = (1 - residual) * mean_h(A_l) + residual * I, rows renormalised.

    weights (L, h, T, T) -> (L, T, T).
    """
    w = _check_stack(weights, "weights", square=True)
    residual = _check_residual(residual)
    mean = _normalise_rows(w.mean(axis=1))  # (L, T, T)
    identity = np.eye(w.shape[-1])[None]  # (1, T, T)
    return _normalise_rows((1.0 - residual) * mean + residual * identity)


def attention_rollout(weights: np.ndarray, residual: float = RESIDUAL) -> np.ndarray:
    """Rollout after every layer of a self-attention stack (Abnar & Zuidema 2020, eq. for rollout).

    Args:
        weights: (L, h, T, T) self-attention weights of one stack (encoder or decoder self).
        residual: weight of the identity path (0.5 in the paper; 0 = raw attention products).

    Returns:
        (L, T, T) float64: entry [l, i, j] is how much input token j makes up position i after
        layer l + 1. Rows sum to 1 (rows that were fully masked stay 0).
    """
    mixing = residual_attention(weights, residual)  # (L, T, T)
    rollouts = np.empty_like(mixing)
    current = np.eye(mixing.shape[-1])
    for layer, step in enumerate(mixing):
        current = step @ current  # later layers on the left: R_l = Ã_l R_(l-1)
        rollouts[layer] = current
    return rollouts


def cross_rollout(cross_attention: np.ndarray, encoder_rollout: np.ndarray) -> np.ndarray:
    """Cross-attention of each decoder layer carried down to the source input tokens.

    cross_attention (L_dec, h, T, S); encoder_rollout (S, S), the encoder's final rollout.
    Returns (L_dec, T, S): mean_h(C_l) · R_enc for each decoder layer l; rows sum to 1.
    """
    cross = _check_stack(cross_attention, "cross_attention", square=False)
    rollout = np.asarray(encoder_rollout, dtype=np.float64)
    n_source = cross.shape[-1]
    if rollout.shape != (n_source, n_source):
        raise ValueError(
            f"encoder_rollout must be ({n_source}, {n_source}) to match cross_attention's "
            f"{n_source} source keys, got shape {rollout.shape}"
        )
    return _normalise_rows(cross.mean(axis=1)) @ rollout  # (L, T, S) @ (S, S)


@dataclass
class SourceFlow:
    """Where each decoder position's information comes from (see the module docstring for the method)."""

    encoder_rollout: np.ndarray  # (L_enc, S, S) encoder rollout after each encoder layer
    cross_rollout: np.ndarray  # (L_dec, T, S) mean_h(cross of layer l) · final encoder rollout
    to_source: np.ndarray  # (T, S) flow from each source input token into decoder position t
    to_target: np.ndarray  # (T, T) flow from each target input token (lower-triangular: causal)
    source_distribution: np.ndarray  # (T, S) to_source with rows renormalised: rows sum to 1
    residual: float  # identity weight used in every sub-layer

    METHOD = (
        "Attention rollout (Abnar & Zuidema 2020): each sub-layer mixes 0.5 · attention (mean of heads) "
        "+ 0.5 · identity (the residual path); products run down the encoder, and each decoder "
        "layer's cross-attention reads memory made of source tokens by the encoder rollout."
    )


def source_flow(
    encoder_attention: np.ndarray,
    decoder_self_attention: np.ndarray,
    cross_attention: np.ndarray,
    residual: float = RESIDUAL,
) -> SourceFlow:
    """Attention flow from the source input tokens to every decoder position (module docstring).

    Args:
        encoder_attention: (L_enc, h, S, S), trace.encoder_attention.
        decoder_self_attention: (L_dec, h, T, T), trace.decoder_self_attention.
        cross_attention: (L_dec, h, T, S), trace.cross_attention.
        residual: identity weight of every sub-layer (0.5 as in the paper).

    Returns:
        SourceFlow; row t belongs to decoder position t, which chooses trace.output_tokens[t].
    """
    residual = _check_residual(residual)
    encoder = attention_rollout(encoder_attention, residual)  # (L_enc, S, S)
    self_mixing = residual_attention(decoder_self_attention, residual)  # (L_dec, T, T)
    cross = _check_stack(cross_attention, "cross_attention", square=False)
    n_layers, _, n_target, n_source = cross.shape
    if self_mixing.shape != (n_layers, n_target, n_target) or encoder.shape[-1] != n_source:
        raise ValueError(
            f"shapes disagree: encoder {np.shape(encoder_attention)}, decoder self "
            f"{np.shape(decoder_self_attention)}, cross {cross.shape}; expected (L_enc, h, S, S), "
            "(L_dec, h, T, T), (L_dec, h, T, S)"
        )
    per_layer = cross_rollout(cross, encoder[-1])  # (L_dec, T, S)
    flow = np.concatenate([np.zeros((n_target, n_source)), np.eye(n_target)], axis=1)  # (T, S + T)
    for layer in range(n_layers):
        flow = self_mixing[layer] @ flow  # masked self-attention sub-layer
        read = np.concatenate([per_layer[layer], np.zeros((n_target, n_target))], axis=1)  # (T, S + T)
        flow = residual * flow + (1.0 - residual) * read  # cross-attention sub-layer
    to_source, to_target = flow[:, :n_source], flow[:, n_source:]
    return SourceFlow(encoder, per_layer, to_source, to_target, _normalise_rows(to_source), residual)


def trace_source_flow(trace, residual: float = RESIDUAL) -> SourceFlow:
    """`source_flow` of a TranslationTrace's three attention kinds."""
    return source_flow(trace.encoder_attention, trace.decoder_self_attention, trace.cross_attention, residual)
