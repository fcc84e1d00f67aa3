"""Sinusoidal positional encoding, section 3.5.

PE(pos, 2i)   = sin(pos / 10000^(2i / d_model))
PE(pos, 2i+1) = cos(pos / 10000^(2i / d_model))

That is the "interleaved" layout. Marian's models (OPUS-MT) use the same sinusoids laid out in "halves": the
d_model / 2 sines first, then the d_model / 2 cosines, PE(pos, i) = sin(...), PE(pos, d_model/2 + i) = cos(...),
computed in float64 and rounded to float32 as Marian's Hugging Face port does, so its table is bitwise theirs.
"""

from __future__ import annotations

import math

import torch


def sinusoidal_positional_encoding(max_positions: int, d_model: int, layout: str = "interleaved") -> torch.Tensor:
    """The fixed table of section 3.5. -> (max_positions, d_model), float32."""
    if layout == "halves":
        return _halves(max_positions, d_model)
    position = torch.arange(max_positions, dtype=torch.float32)[:, None]  # (P, 1)
    # 1 / 10000^(2i / d_model) for i = 0 .. d_model/2 - 1, computed in log space
    inverse_frequency = torch.exp(
        torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / d_model)
    )  # (d_model / 2,)
    angles = position * inverse_frequency  # (P, d_model / 2)
    table = torch.zeros(max_positions, d_model)
    table[:, 0::2] = torch.sin(angles)
    table[:, 1::2] = torch.cos(angles)
    return table


def _halves(max_positions: int, d_model: int) -> torch.Tensor:
    """Sines in the first half, cosines in the second; angles pos / 10000^(2i / d_model) in float64."""
    position = torch.arange(max_positions, dtype=torch.float64)[:, None]  # (P, 1)
    exponent = torch.arange(0, d_model, 2, dtype=torch.float64) / d_model  # 2i / d_model, (d_model / 2,)
    angles = position / torch.pow(torch.tensor(10000.0, dtype=torch.float64), exponent)  # (P, d_model / 2)
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=1).float()  # (P, d_model)
