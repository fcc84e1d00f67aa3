"""Training FLOPs of one batch and model FLOPs utilisation (MFU), for the training log and benchmarks.

Counted analytically from the shapes of section 3: every matrix product of the forward pass
(projections, feed-forward, attention scores and weighted sums, the output projection) at two
FLOPs per multiply-add, times three for forward + backward (the backward pass costs two forwards).
Only real tokens count: padding is wasted work, not useful work. Layer norms, softmax, dropout and
the embedding lookup are left out, as is usual for MFU. tests/model/training/test_flops.py checks the count
against PyTorch's own FlopCounterMode on a batch without padding.
"""

from __future__ import annotations

from pathlib import Path

import torch

from model.core.config import TransformerConfig
from model.training.precision import cpu_flags

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


def cpu_clock_hz(cpuinfo: Path = Path("/proc/cpuinfo")) -> float | None:
    """The first core's clock as Linux reports it (`cpu MHz` in /proc/cpuinfo), in Hz; None if absent."""
    try:
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("cpu MHz"):
                return float(line.split(":", 1)[1]) * 1e6
    except (OSError, ValueError):
        pass
    return None


def cpu_fp32_lanes(flags: frozenset[str]) -> int:
    """float32 lanes of one FMA instruction: 16 with AVX-512, 8 with AVX2 + FMA, else 4 (SSE, no FMA counted)."""
    if "avx512f" in flags:
        return 16
    return 8 if {"avx2", "fma"} <= flags else 4


def cpu_peak_flops(
    cores: int, clock_hz: float | None = None, flags: frozenset[str] | None = None, fma_units: int = 2
) -> float | None:
    """float32 peak of `cores` cores: fma_units x lanes x 2 FLOPs (multiply + add) x clock, per core.

    Two FMA units per core is right for AMD Zen and Intel server cores since Haswell / Skylake-SP;
    the clock is the reported one (a turbo clock would raise the peak, so MFU here is an upper bound).
    """
    clock_hz = cpu_clock_hz() if clock_hz is None else clock_hz
    if not clock_hz:
        return None
    return cores * fma_units * cpu_fp32_lanes(cpu_flags() if flags is None else flags) * 2 * clock_hz
