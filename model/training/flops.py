"""Training FLOPs of one batch and model FLOPs utilisation (MFU), for the training log.

Counted analytically from the shapes of section 3: every matrix product of the forward pass
(projections, feed-forward, attention scores and weighted sums, the output projection) at two
FLOPs per multiply-add, times three for forward + backward (the backward pass costs two forwards).
Only real tokens count: padding is wasted work, not useful work. Layer norms, softmax, dropout and
the embedding lookup are left out, as is usual for MFU. tests/test_flops.py checks the count
against PyTorch's own FlopCounterMode on a batch without padding.
"""

from __future__ import annotations

import torch

from model.core.config import TransformerConfig

# Dense bf16 tensor-core peaks (no sparsity), FLOP/s, from the vendors' data sheets.
PEAK_BF16_FLOPS = {
    "H100 80GB HBM3": 989.4e12,  # H100 SXM
    "H100 PCIe": 756.0e12,
    "H100 NVL": 835.0e12,
    "H200": 989.4e12,
    "A100": 312.0e12,
}


def training_flops(config: TransformerConfig, source_lengths: torch.Tensor, target_lengths: torch.Tensor) -> float:
    """FLOPs of one forward + backward pass over sequences of these real lengths (1-D tensors, one per row).

    Per layer, with d = d_model, S a source length and T a target length:
      encoder:  S (4 d^2 + 2 d d_ff)  +  2 S^2 d                       (self-attention Q, K, V, O; FFN; scores, sum)
      decoder:  T (6 d^2 + 2 d d_ff)  +  S 2 d^2  +  2 T^2 d  +  2 T S d (self Q, K, V, O + cross Q, O; cross K, V)
    plus the output projection T d V. Multiply-adds x 2 (FLOPs) x 3 (forward + backward).
    """
    d, d_ff, vocab = config.d_model, config.d_ff, config.vocab_size
    S, T = source_lengths.double(), target_lengths.double()
    encoder = config.n_encoder_layers * (S * (4 * d * d + 2 * d * d_ff) + 2 * S * S * d)
    decoder = config.n_decoder_layers * (T * (6 * d * d + 2 * d * d_ff) + S * 2 * d * d + 2 * T * T * d + 2 * T * S * d)
    output = T * d * vocab
    return float(6 * (encoder + decoder + output).sum())


def peak_flops(device_name: str) -> float | None:
    """The bf16 peak of a known GPU by its name (torch.cuda.get_device_name), else None."""
    for key, value in PEAK_BF16_FLOPS.items():
        if key in device_name:
            return value
    return None
