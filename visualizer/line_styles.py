"""How the lines of the lines view (visualizer/lines.py) look: a line's opacity from its weight, and how each head is
told apart when several are drawn together: its colour, its dash pattern, and how far its lines are fanned out from
the token's row.
"""

from __future__ import annotations

import numpy as np

OPACITY_LEVELS = 10  # a line's opacity is its weight rounded up to 1 / OPACITY_LEVELS
MIN_OPACITY = 0.3  # the faintest line (weight at the threshold): dark enough to see on a projector

# a colour per head that stays apart under the common colour-vision deficiencies (Paul Tol's "vibrant" scheme and
# Okabe & Ito's reddish purple, mid-light so they read on the light and the dark page alike), and a dash pattern
# per head besides: two heads whose colours a viewer cannot tell apart still differ in their pattern
HEAD_COLORS = ("#0077BB", "#EE7733", "#009988", "#EE3377", "#33BBEE", "#CC3311", "#BBBBBB", "#CC79A7")
HEAD_DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot", "6px,3px,1px,3px,1px,3px", "1px,5px")
FAN_ROWS = 0.09  # several heads: each head's line ends this many rows from the next head's (overlaps stay apart)


def head_color(head: int) -> str:
    """The colour of head ``head`` (0-based) in every lines figure, in head order."""
    return HEAD_COLORS[head % len(HEAD_COLORS)]


def head_dash(head: int) -> str:
    """The dash pattern of head ``head`` (0-based) where several heads are drawn together."""
    return HEAD_DASHES[head % len(HEAD_DASHES)]


def head_shift(slot: int, n_heads: int) -> float:
    """Rows by which the head in ``slot`` of ``n_heads`` drawn together moves both ends of its lines (centred)."""
    return FAN_ROWS * (slot - (n_heads - 1) / 2)


def opacity(weight: np.ndarray) -> np.ndarray:
    """A line's opacity: its weight rounded up to the next 1 / OPACITY_LEVELS, from MIN_OPACITY (the lightest
    line) to 1 (a weight of 1)."""
    level = np.ceil(np.asarray(weight) * OPACITY_LEVELS - 1e-9).clip(1, OPACITY_LEVELS) / OPACITY_LEVELS
    return np.round(MIN_OPACITY + (1 - MIN_OPACITY) * level, 2)
