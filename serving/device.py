"""Which device runs the model: `--device auto|cpu|cuda` or $ATTENTION_EXPLORER_DEVICE.

auto (the default) is cuda when PyTorch sees a CUDA device, else the CPU. The trace is the same plain
data either way: every trace builder copies its tensors to the CPU as numpy arrays
(model/decoding/trace.py), so the views, the wire format and the API never see a CUDA tensor.
"""

from __future__ import annotations

import os

import torch

DEVICE_ENV = "ATTENTION_EXPLORER_DEVICE"
DEVICES = ("auto", "cpu", "cuda")


def choose_device(requested: str | None = None) -> str:
    """"cpu" or "cuda" for --device (None: $ATTENTION_EXPLORER_DEVICE, else "auto").

    auto: cuda if torch.cuda.is_available(), else cpu. ValueError for an unknown choice, or for cuda on a
    machine without CUDA (asked for explicitly, it should not quietly run on the CPU).
    """
    choice = (requested or os.environ.get(DEVICE_ENV) or "auto").strip().lower()
    if choice not in DEVICES:
        raise ValueError(f"unknown device {choice!r}: use one of {', '.join(DEVICES)}")
    if choice == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if choice == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda, but PyTorch sees no CUDA device (use --device auto or cpu)")
    return choice
