"""The greedy choice of one decoding step: the argmax over the vocabulary of the output projection (3.4), exact, with
an int8 screen in front of it on the CPU.

On a CPU a large model's step waits on its projection: OPUS-MT's 58,101 x 512 float32 embedding matrix is 119 MB,
read in full at every step, while the choice needs only its largest logit. `ScreenedChoice` reads an int8 copy of
the matrix first (a quarter of the bytes, one scale per row) and bounds, for every token, how far that screen's
logit can lie from the float32 one. Only a token whose screen logit plus its bound reaches the best screen logit
minus its bound can be the argmax; the float32 logits of those few candidates, from their rows of the real matrix,
decide. Where the best two candidates lie within float32 rounding of each other (`TIE_TOLERANCE`), the whole float32
projection decides, as without the screen: the choice is always the float32 projection's argmax.

The bound, for a hidden state h (d,), a row w_v of the matrix, its int8 copy c_v = s_v q_v (the largest error
e_v = max_j |w_vj - c_vj| is measured when the copy is made) and h~, h rounded to bfloat16 (the kernel's input,
|h_j - h~_j| <= 2^-8 |h_j|):

    |h.w_v - h~.c_v| <= 2^-8 ||h||_2 ||w_v||_2 + e_v ||h~||_1

plus the kernel's float32 sums (d 2^-24 ||h~||_2 ||c_v||_2) and the bfloat16 rounding of its output (2^-8 of the
logit, taken as 2^-7); the bound used is SAFETY times their sum. tests/model/decoding/test_greedy_choice.py checks
it holds on full-size matrices, and that the choice equals the float32 argmax.

The screen is used for one sentence on the CPU (a batch reads the matrix once for all its rows anyway; a GPU reads
it fast) where the matrix is large enough to pay (`SCREEN_MIN_WEIGHTS`), and where PyTorch has the int8 kernel
(`torch.ops.aten._weight_int8pack_mm`, weight-only int8 with bfloat16 activations); else the float32 projection
decides alone.
"""

from __future__ import annotations

import threading
import weakref

import torch
import torch.nn.functional as F

from model.core.transformer import Transformer

SAFETY = 2.0  # the bound used is twice the derived one
TIE_TOLERANCE = 1e-4  # relative: two candidate logits nearer than this are left to the whole float32 projection
SCREEN_MIN_WEIGHTS = 2**21  # vocabulary x d_model from which the screen pays (benchmarks/greedy_choice.py)
BF16_UNIT = 2.0**-8  # relative rounding of a bfloat16 (8 significant bits)
FP32_UNIT = 2.0**-24
ROWS_AT_ONCE = 1024  # rows converted to float64 at a time while the copy is made (4 MB for d_model 512)


def int8_kernel():
    """PyTorch's weight-only int8 matrix product, or None where this build lacks it."""
    return getattr(torch.ops.aten, "_weight_int8pack_mm", None)


class ScreenedChoice:
    """The int8 copy of one model's projection matrix and the per-row facts of its bound."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None) -> None:
        weight = weight.detach().float()  # (V, d)
        self.weight, self.bias = weight, None if bias is None else bias.detach().float().reshape(-1)  # (V,)
        self.quantized = torch.empty(weight.shape, dtype=torch.int8)  # (V, d) q_v
        self.scale = torch.empty(weight.size(0), dtype=torch.bfloat16)  # (V,) s_v, as the kernel reads it
        self.row_norm, self.copy_error, self.copy_norm = (torch.empty(weight.size(0)) for _ in range(3))  # (V,) each
        for rows in torch.arange(weight.size(0)).split(ROWS_AT_ONCE):  # float64 facts, a block of rows at a time
            block = weight[rows].double()  # (R, d)
            scale = (block.abs().amax(dim=1) / 127).clamp_min(torch.finfo(torch.float32).tiny).to(torch.bfloat16)
            quantized = torch.round(block / scale.double()[:, None]).clamp(-127, 127)  # (R, d)
            copy = quantized * scale.double()[:, None]  # (R, d): what the kernel multiplies by, c_v
            self.quantized[rows], self.scale[rows] = quantized.to(torch.int8), scale
            self.row_norm[rows] = block.norm(dim=1).float()  # ||w_v||_2
            self.copy_error[rows] = (block - copy).abs().amax(dim=1).float()  # e_v
            self.copy_norm[rows] = copy.norm(dim=1).float()  # ||c_v||_2
        self.sum_unit = weight.size(1) * FP32_UNIT  # d 2^-24

    def screen(self, hidden: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """hidden (d,) -> (screen logits (V,), their bound (V,)): |float32 logit - screen logit| <= bound."""
        rounded = hidden.to(torch.bfloat16)  # (d,) h~
        logits = int8_kernel()(rounded[None], self.quantized, self.scale)[0].float()  # (V,)
        if self.bias is not None:
            logits = logits + self.bias
        rounded = rounded.float()
        bound = self.row_norm * (BF16_UNIT * float(hidden.norm()))  # (V,)
        bound = bound.add_(self.copy_error, alpha=float(rounded.abs().sum()))
        bound = bound.add_(self.copy_norm, alpha=self.sum_unit * float(rounded.norm()))
        bound = bound.add_(logits.abs(), alpha=2 * BF16_UNIT)
        return logits, bound.mul_(SAFETY)

    def choose(self, hidden: torch.Tensor, banned: torch.Tensor) -> int | None:
        """The float32 projection's argmax for one hidden state (d,), `banned` ids never chosen; None where two
        candidates tie within TIE_TOLERANCE (the caller then reads the whole projection)."""
        logits, bound = self.screen(hidden)
        if len(banned):
            logits = logits.index_fill(0, banned, float("-inf"))
        candidates = torch.nonzero(logits + bound >= (logits - bound).max())[:, 0]  # (C,) ascending ids
        exact = F.linear(hidden, self.weight.index_select(0, candidates))  # (C,)
        if self.bias is not None:
            exact = exact + self.bias.index_select(0, candidates)
        if len(candidates) > 1:
            top = exact.topk(2).values
            if float(top[0] - top[1]) <= TIE_TOLERANCE * max(1.0, abs(float(top[0]))):
                return None
        return int(candidates[exact.argmax()])


_screens: weakref.WeakKeyDictionary[Transformer, tuple[tuple, ScreenedChoice]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def screen_for(model: Transformer) -> ScreenedChoice | None:
    """The model's screen, made on first use and again after its weights change; None where it is not used."""
    weight = model.embedding.weight
    if weight.device.type != "cpu" or weight.numel() < SCREEN_MIN_WEIGHTS or int8_kernel() is None:
        return None
    bias = model.final_logits_bias if model.config.logits_bias else None
    version = (weight.data_ptr(), weight._version, None if bias is None else (bias.data_ptr(), bias._version))
    with _lock:
        known = _screens.get(model)
        if known is None or known[0] != version:
            known = (version, ScreenedChoice(weight, bias))
            _screens[model] = known
    return known[1]


def greedy_choice(model: Transformer, hidden: torch.Tensor, banned: torch.Tensor) -> torch.Tensor:
    """argmax_v of the projection of each hidden state (B, d_model) -> (B,) ids, never a banned id: through the
    screen for one sentence where it is used, else from the whole float32 projection."""
    screen = screen_for(model) if hidden.size(0) == 1 else None
    if screen is not None:
        chosen = screen.choose(hidden[0].float(), banned)
        if chosen is not None:
            return torch.tensor([chosen], dtype=torch.long, device=hidden.device)
    return full_choice(model.project(hidden), banned)


def full_choice(logits: torch.Tensor, banned: torch.Tensor) -> torch.Tensor:
    """argmax over the vocabulary of logits (B, V), never a banned id -> (B,)."""
    return logits.index_fill(1, banned, float("-inf")).argmax(dim=-1) if len(banned) else logits.argmax(dim=-1)
