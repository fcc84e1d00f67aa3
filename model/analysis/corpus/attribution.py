"""Attribution against attention: which source tokens a chosen output token depends on, measured by
gradients, beside where cross-attention (3.2.3) looks.

f_t(e) = log P(y_t | source, y_<t), a function of the source token embeddings e (S, d_model) (the
rows of the shared embedding matrix, 3.4; positional encodings are not attributed: they stay).
- input x gradient: a_s = sum_d e_sd * df_t/de_sd (Shrikumar et al. 2017; Simonyan et al. 2014).
- integrated gradients (Sundararajan et al. 2017, "Axiomatic Attribution for Deep Networks"):
  a_s = sum_d e_sd * mean over alpha of df_t/de_sd (alpha e), baseline 0 (no token content),
  alpha on the midpoints of `steps` equal intervals of [0, 1]. Completeness:
  sum_s a_s ~= f_t(e) - f_t(0), which a test checks (ReLU kinks on the path slow the midpoint rule:
  on the tiny test model the gap is ~3e-3 nats at 16 steps, ~1e-3 at 256).
"Attention is not Explanation" (Jain & Wallace 2019) compared such measures with attention weights
by rank correlation; `rank_correlation` gives Spearman's rho per layer and step.

One batched forward pass (steps + 2 rows: baseline, midpoints, the input) and one backward pass per
output token give every step's attributions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import torch

from model.core.masks import decoder_mask, padding_mask
from model.core.transformer import Transformer


class Attribution(NamedTuple):
    input_x_gradient: np.ndarray  # (T, S) signed, per output step and source token
    integrated_gradients: np.ndarray  # (T, S) signed
    log_prob: np.ndarray  # (T,) f_t(e): log P of each output token given the real source
    baseline_log_prob: np.ndarray  # (T,) f_t(0): with every source embedding zeroed (positions kept)
    steps: int  # integration steps


def log_probs_from_embeddings(
    model: Transformer, embeddings: torch.Tensor, source_ids: Sequence[int], output_ids: Sequence[int]
) -> torch.Tensor:
    """(R, T) log P(y_t | ...) for R rows of source token embeddings (R, S, d_model), teacher-forced.

    The encoder reads embeddings * sqrt(d_model) + PE (3.4, 3.5) as `Transformer.embed` builds from ids;
    the source padding mask still comes from the ids.
    """
    config = model.config
    device = embeddings.device
    rows, length = embeddings.shape[:2]
    src = torch.tensor([list(source_ids)] * rows, dtype=torch.long, device=device)  # (R, S)
    src_mask = padding_mask(src, config.pad_id)  # (R, 1, 1, S)
    x = model.embedding_dropout(embeddings * math.sqrt(config.d_model) + model.positional_encoding[:length])
    for layer in model.encoder_layers:
        x = layer(x, src_mask).hidden  # (R, S, d_model)
    tgt = torch.tensor([[config.bos_id, *output_ids[:-1]]] * rows, dtype=torch.long, device=device)  # (R, T)
    hidden = model.decode(tgt, x, src_mask, decoder_mask(tgt, config.pad_id)).hidden  # (R, T, d_model)
    logits = model.project(hidden)  # (R, T, V)
    log_probs = torch.log_softmax(logits.to(torch.promote_types(logits.dtype, torch.float32)), dim=-1)
    chosen = torch.tensor(list(output_ids), dtype=torch.long, device=device)
    return log_probs.gather(2, chosen[None, :, None].expand(rows, -1, 1))[..., 0]  # (R, T)


def attribute(
    model: Transformer,
    source_ids: Sequence[int],
    output_ids: Sequence[int],
    steps: int = 32,
    only_steps: Sequence[int] | None = None,
) -> Attribution:
    """Input x gradient and integrated gradients of every output token's log-probability.

    Args:
        model: the Transformer (eval mode is set here; no weight gets a gradient).
        source_ids: S encoder ids (language tag first, [EOS] last); output_ids: T output ids.
        steps: integration steps (midpoint rule; the error of completeness falls as 1 / steps^2).
        only_steps: 0-based output steps to attribute (others stay 0); None = all.
    """
    if steps < 1 or not len(source_ids) or not len(output_ids):
        raise ValueError("need steps >= 1 and non-empty source and output ids")
    model.eval()
    device = model.embedding.weight.device
    embeddings = model.embedding.weight.detach()[torch.tensor(list(source_ids), device=device)]  # (S, d_model)
    alphas = torch.cat([torch.zeros(1), (torch.arange(steps) + 0.5) / steps, torch.ones(1)]).to(embeddings)
    rows = (alphas[:, None, None] * embeddings[None]).requires_grad_(True)  # (steps + 2, S, d_model)
    with torch.enable_grad():
        log_probs = log_probs_from_embeddings(model, rows, source_ids, output_ids)  # (steps + 2, T)
        n_out, n_src = len(output_ids), len(source_ids)
        ixg, ig = np.zeros((n_out, n_src)), np.zeros((n_out, n_src))
        chosen = range(n_out) if only_steps is None else sorted({int(t) for t in only_steps})
        for t in chosen:
            (grad,) = torch.autograd.grad(log_probs[:, t].sum(), rows, retain_graph=True)  # (steps + 2, S, d)
            grad = grad.double()
            ixg[t] = (embeddings.double() * grad[-1]).sum(-1).cpu().numpy()
            ig[t] = (embeddings.double() * grad[1:-1].mean(0)).sum(-1).cpu().numpy()
    values = log_probs.detach().double().cpu().numpy()
    return Attribution(ixg, ig, values[-1], values[0], steps)


def ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n along the last axis, ties sharing their average rank (as Spearman's rho needs)."""
    x = np.asarray(values, dtype=np.float64)
    order = x.argsort(axis=-1, kind="stable")
    sorted_x = np.take_along_axis(x, order, axis=-1)
    out = np.empty_like(x)
    for index in np.ndindex(x.shape[:-1]):
        row, row_order = sorted_x[index], order[index]
        rank = np.arange(1, x.shape[-1] + 1, dtype=np.float64)
        start = 0
        while start < len(row):
            stop = start
            while stop + 1 < len(row) and row[stop + 1] == row[start]:
                stop += 1
            rank[start : stop + 1] = (start + stop + 2) / 2.0
            start = stop + 1
        out[index][row_order] = rank
    return out


def spearman(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Spearman's rank correlation along the last axis (NaN where either side is constant)."""
    ra, rb = ranks(a), ranks(b)
    ra -= ra.mean(-1, keepdims=True)
    rb -= rb.mean(-1, keepdims=True)
    denominator = np.sqrt((ra**2).sum(-1) * (rb**2).sum(-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, (ra * rb).sum(-1) / np.where(denominator > 0, denominator, 1.0), np.nan)


def rank_correlation(attribution: np.ndarray, cross_attention: np.ndarray) -> np.ndarray:
    """(L, T) Spearman's rho between |attribution| (T, S) and each layer's head-mean cross-attention.

    cross_attention: (L, h, T, S) weights (TranslationTrace.cross_attention). The magnitude is ranked:
    attention says how much a token is read, not in which direction it pushes the output.
    """
    a = np.abs(np.asarray(attribution, dtype=np.float64))
    w = np.asarray(cross_attention, dtype=np.float64)
    if w.ndim != 4 or w.shape[2:] != a.shape:
        raise ValueError(f"cross_attention {w.shape} must be (L, h, T, S) with (T, S) = attribution {a.shape}")
    return spearman(np.broadcast_to(a, (w.shape[0], *a.shape)), w.mean(1))
