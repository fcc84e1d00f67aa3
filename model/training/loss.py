"""The training objective, sections 5.3 and 5.4 of the paper: the warm-up + inverse-square-root learning rate
and the label-smoothed cross-entropy that training and validation both sum over real target tokens.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def learning_rate(step: int, d_model: int, warmup: int, factor: float = 1.0) -> float:
    """lrate = d_model^-0.5 * min(step^-0.5, step * warmup^-1.5), section 5.3 (times a factor)."""
    step = max(step, 1)
    return factor * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


def summed_loss(model, src, tgt_in, labels, pad_id: int, label_smoothing: float, autocast: bool) -> torch.Tensor:
    """Label-smoothed cross-entropy (section 5.4) summed over real tokens (a tensor: no GPU sync)."""
    with torch.autocast(device_type=src.device.type, dtype=torch.bfloat16, enabled=autocast):
        logits = model(src, tgt_in)  # (B, T, V)
    return F.cross_entropy(
        logits.float().flatten(0, 1),
        labels.flatten(),
        ignore_index=pad_id,
        label_smoothing=label_smoothing,
        reduction="sum",
    )


def batch_loss(model, src, tgt_in, labels, pad_id: int, label_smoothing: float, autocast: bool):
    """The summed loss and the number of real target tokens it is summed over."""
    return (summed_loss(model, src, tgt_in, labels, pad_id, label_smoothing, autocast), int((labels != pad_id).sum()))
