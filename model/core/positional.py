"""Sinusoidal positional encoding, section 3.5.

PE(pos, 2i)   = sin(pos / 10000^(2i / d_model))
PE(pos, 2i+1) = cos(pos / 10000^(2i / d_model))
"""

from __future__ import annotations

import math

import torch


def sinusoidal_positional_encoding(max_positions: int, d_model: int) -> torch.Tensor:
    """The fixed table of section 3.5. -> (max_positions, d_model), float32."""
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
