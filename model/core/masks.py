"""Masks of section 3.2.3: padding masks and the look-ahead (causal) mask.

Convention, used everywhere: a boolean mask with True = "this query may attend to this key".
Masks have shapes that broadcast against attention scores (B, h, T_query, T_key).
"""

from __future__ import annotations

import torch


def padding_mask(ids: torch.Tensor, pad_id: int) -> torch.Tensor:
    """Keys that are real tokens. ids (B, S) -> mask (B, 1, 1, S)."""
    return (ids != pad_id)[:, None, None, :]


def causal_mask(length: int, device: torch.device | str | None = None) -> torch.Tensor:
    """Look-ahead mask: position i may attend to positions j <= i. -> (1, 1, T, T)."""
    return torch.ones(length, length, dtype=torch.bool, device=device).tril()[None, None]


def decoder_mask(tgt_ids: torch.Tensor, pad_id: int) -> torch.Tensor:
    """Combined decoder self-attention mask: causal AND not padding. (B, T) -> (B, 1, T, T).

    tgt_ids[:, 0] is the decoder's start token, never padding, even where it is the pad token itself
    (Marian's models start from <pad>): hiding it would leave the first query nothing to attend to.
    """
    keys = padding_mask(tgt_ids, pad_id).clone()  # (B, 1, 1, T)
    keys[..., 0] = True
    return keys & causal_mask(tgt_ids.size(1), tgt_ids.device)


def masked_fill_value(dtype: torch.dtype) -> float:
    """The most negative finite number: exp() gives 0, and an all-masked row stays finite (no NaN)."""
    return torch.finfo(dtype).min
