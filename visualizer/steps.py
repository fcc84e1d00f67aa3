"""The figures of one decoding step of a translation trace, as the app's tabs and a lesson draw them: the next-token
candidates (section 3.4) and the masks (section 3.2.3).

A trace is read by its fields only (model/decoding/trace.py's TranslationTrace; nothing of model/ is imported), and
a padded batch by its `tokens` and `mask` (model.text.inputs.PaddedBatch).
"""

from __future__ import annotations

import plotly.graph_objects as go

from .candidates import candidates_chart
from .masks import masks_figure


def step_candidates(trace, t: int) -> go.Figure:
    """The top-k next tokens of step ``t`` (0-based) with their probabilities, the chosen one highlighted."""
    ids = trace.candidate_ids[t].tolist()
    chosen = ids.index(trace.output_ids[t]) if trace.output_ids[t] in ids else None
    return candidates_chart(
        trace.candidate_tokens[t],
        trace.candidate_probs[t],
        chosen,
        entropy_bits=float(trace.entropy[t]),
        title=f"Step {t + 1}: the {len(ids)} most probable next tokens",
    )


def step_masks(trace, batch, t: int) -> go.Figure:
    """The four masks at step ``t`` (0-based): ``batch`` the sentence padded beside another (its tokens and mask)."""
    return masks_figure(
        batch.mask,
        batch.tokens,
        trace.causal_mask,
        trace.decoder_mask,
        trace.cross_mask,
        trace.source_tokens,
        trace.target_tokens,
        step=t,
    )
