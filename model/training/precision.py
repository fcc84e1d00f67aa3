"""Which arithmetic precision training uses (`--precision auto|bf16|fp32`, model/training/train.py).

bf16 autocast pays only on hardware with native bf16 maths: CUDA GPUs that support it, and CPUs
with AMX or AVX-512-BF16 (Linux lists them as `amx_bf16` / `avx512_bf16` in /proc/cpuinfo).
Elsewhere it is emulated and slow: measured on a 2-core AMD EPYC without them, bf16 autocast
trained at 100 tokens/s against 1,435 in float32. `auto` therefore picks bf16 on such
hardware and float32 everywhere else; the choice and its reason go into the training log and
metrics.json. Section 5 of the paper does not fix a precision; this only decides speed.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

CPU_BF16_FLAGS = ("amx_bf16", "avx512_bf16")
PRECISIONS = ("auto", "bf16", "fp32")


class Precision(NamedTuple):
    name: str  # "bf16" or "fp32": what the run uses
    reason: str  # why, for the log

    @property
    def autocast(self) -> bool:
        return self.name == "bf16"


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    """The CPU feature flags Linux reports (the first `flags` line); empty where there is none."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        if line.startswith("flags"):
            return frozenset(line.split(":", 1)[1].split())
    return frozenset()


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The CPU's `model name` from /proc/cpuinfo, or "unknown"."""
    try:
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def choose_precision(requested: str, device_type: str, cuda_bf16: bool, flags: frozenset[str]) -> Precision:
    """The precision for `requested` ("auto", "bf16", "fp32") on this hardware.

    device_type: "cuda" or "cpu"; cuda_bf16: torch.cuda.is_bf16_supported() (ignored on a CPU);
    flags: the CPU's feature flags (`cpu_flags()`), injected so tests need no particular CPU.
    """
    if requested not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {requested!r}")
    if requested != "auto":
        return Precision(requested, f"--precision {requested} was asked for")
    if device_type == "cuda":
        if cuda_bf16:
            return Precision("bf16", "auto: the CUDA device supports bf16")
        return Precision("fp32", "auto: the CUDA device has no bf16 support")
    native = [flag for flag in CPU_BF16_FLAGS if flag in flags]
    if native:
        return Precision("bf16", f"auto: the CPU has native bf16 ({', '.join(native)})")
    return Precision("fp32", f"auto: the CPU has no native bf16 ({' / '.join(CPU_BF16_FLAGS)} absent), "
                             "where bf16 autocast is emulated and slow")
