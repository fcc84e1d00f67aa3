"""What changed from decoding step t to t+1, read from the kept trace alone (no model call).

Greedy decoding (section 3.1, "auto-regressive") adds one query per step to both decoder
attention kinds (3.2.3): a new row of masked self-attention, whose keys grow by one (the token
just read), and a new row of encoder-decoder attention over the same S source keys. Encoder
self-attention is computed once per sentence and does not change between steps.

Rows are compared over the keys both steps share; `moved` is the total-variation distance
between the two rows (half the summed absolute change, counting the self-attention key that just
appeared as 0 before): 0 = the head reads exactly as before, 1 = it reads entirely new places.
The top-k next-token candidates (the softmax of the output layer, 3.4) are compared by token id.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from model.decoding.trace import TranslationTrace, attention_kind

STEP_KINDS = ("decoder_self", "cross")  # the kinds that gain a row per step


@dataclass
class RowChange:
    """One decoder attention kind's new row at `step` beside the row of the step before."""

    kind: str  # "decoder_self" or "cross"
    step: int  # 0-based step whose query row is new (row `step` of the trace's arrays)
    keys: list[str]  # K keys of the new row (decoder self: the step + 1 tokens read so far)
    new_row: np.ndarray  # (L, h, K) the new query's weights
    previous_row: np.ndarray | None  # (L, h, K_prev) row step - 1; None at step 0
    difference: np.ndarray | None  # (L, h, K_prev) new_row[..., :K_prev] - previous_row; None at step 0
    new_key_weight: np.ndarray | None  # (L, h) decoder self: weight on the key that just appeared; else None
    moved: np.ndarray | None  # (L, h) total-variation distance between the two rows, in [0, 1]


def row_change(weights: np.ndarray, keys: Sequence[str], kind: str, step: int) -> RowChange:
    """The new row of a decoder attention kind at `step` and its change from step - 1.

    Args:
        weights: (L, h, T, K) weights of the whole sentence (trace.decoder_self_attention with
            K = T, or trace.cross_attention with K = S).
        keys: K key tokens; kind: "decoder_self" or "cross"; step: 0 <= step < T.
    """
    spec = attention_kind(kind)
    if spec.name not in STEP_KINDS:
        raise ValueError(
            f"{spec.label} is computed once per sentence and does not change between steps; "
            f"expected one of {', '.join(STEP_KINDS)}"
        )
    w = np.asarray(weights, dtype=np.float32)
    if w.ndim != 4 or w.shape[-1] != len(keys):
        raise ValueError(f"weights must be (L, h, T, K) with K = {len(keys)} keys, got shape {w.shape}")
    n_steps = w.shape[2]
    if not 0 <= step < n_steps:
        raise ValueError(f"step must be in 0..{n_steps - 1}, got {step}")
    grows = spec.name == "decoder_self"
    width = step + 1 if grows else w.shape[-1]  # keys that exist at this step
    new_row = w[:, :, step, :width]  # (L, h, K)
    if step == 0:
        return RowChange(
            spec.name, step, list(keys[:width]), new_row, None, None, new_row[..., -1] if grows else None, None
        )
    previous_width = width - 1 if grows else width
    previous = w[:, :, step - 1, :previous_width]  # (L, h, K_prev)
    difference = new_row[..., :previous_width] - previous
    appeared = new_row[..., previous_width:].sum(-1)  # (L, h): weight on keys that did not exist before
    moved = 0.5 * (np.abs(difference).sum(-1) + appeared)
    return RowChange(
        spec.name, step, list(keys[:width]), new_row, previous, difference, new_row[..., -1] if grows else None, moved
    )


@dataclass(frozen=True)
class CandidateMove:
    """One token among the top-k next-token candidates of step - 1 and/or step."""

    token: str
    token_id: int
    rank_before: int | None  # 0-based rank at step - 1; None = not in that step's top-k
    rank_after: int | None  # 0-based rank at step; None = not in this step's top-k
    prob_before: float | None  # None where the token was below the kept top-k (unknown)
    prob_after: float | None


@dataclass
class CandidateChange:
    step: int
    entered: list[CandidateMove]  # in step's top-k, not in step - 1's (all of them at step 0)
    left: list[CandidateMove]  # in step - 1's top-k, not in step's
    stayed: list[CandidateMove]  # in both, in step's order


def candidate_change(
    candidate_ids: np.ndarray, candidate_tokens: Sequence[Sequence[str]], candidate_probs: np.ndarray, step: int
) -> CandidateChange:
    """Top-k next-token candidates at `step` against those at step - 1 (trace.candidate_*: (T, k))."""
    ids, probs = np.asarray(candidate_ids), np.asarray(candidate_probs, dtype=np.float32)
    if ids.ndim != 2 or ids.shape != probs.shape or len(candidate_tokens) != ids.shape[0]:
        raise ValueError(
            f"candidate ids {ids.shape}, probs {probs.shape} and {len(candidate_tokens)} token rows must all be (T, k)"
        )
    if not 0 <= step < ids.shape[0]:
        raise ValueError(f"step must be in 0..{ids.shape[0] - 1}, got {step}")

    def ranks(row: int) -> dict[int, int]:
        return {int(token_id): rank for rank, token_id in enumerate(ids[row])}

    after = ranks(step)
    before = ranks(step - 1) if step > 0 else {}

    def move(token_id: int, token: str) -> CandidateMove:
        rank_before, rank_after = before.get(token_id), after.get(token_id)
        return CandidateMove(
            token,
            token_id,
            rank_before,
            rank_after,
            None if rank_before is None else float(probs[step - 1, rank_before]),
            None if rank_after is None else float(probs[step, rank_after]),
        )

    now = [move(int(i), t) for i, t in zip(ids[step], candidate_tokens[step])]
    gone = (
        []
        if step == 0
        else [move(int(i), t) for i, t in zip(ids[step - 1], candidate_tokens[step - 1]) if int(i) not in after]
    )
    return CandidateChange(
        step, [m for m in now if m.rank_before is None], gone, [m for m in now if m.rank_before is not None]
    )


@dataclass
class StepChange:
    step: int
    query_token: str  # the token the new query reads (trace.target_tokens[step])
    chosen_token: str  # what the step chose (trace.output_tokens[step])
    rows: dict[str, RowChange]  # per kind in STEP_KINDS
    candidates: CandidateChange


def step_change(trace: TranslationTrace, step: int) -> StepChange:
    """Everything that changed when decoding went from step - 1 to `step` (0-based), from the trace."""
    if not 0 <= step < trace.num_steps:
        raise ValueError(f"step must be in 0..{trace.num_steps - 1}, got {step}")
    rows = {}
    for kind in STEP_KINDS:
        whole = trace.attention(kind)
        rows[kind] = row_change(whole.weights, whole.keys, kind, step)
    return StepChange(
        step,
        trace.target_tokens[step],
        trace.output_tokens[step],
        rows,
        candidate_change(trace.candidate_ids, trace.candidate_tokens, trace.candidate_probs, step),
    )
