"""Where a lesson's page opens: the sentence, the view, the attention kind, layer and head, and the step (the view on
the app's screen when its "Download as a lesson" was pressed), with a note where the app's view is not one a lesson
has (lesson/sections.py lists those it has).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from model.decoding.trace import ATTENTION_KINDS

from .sections import VIEWS

HEADS = ("mean", "all")  # besides "1".."h"


@dataclass(frozen=True)
class Start:
    """The lesson's "start" record, in the page's terms (1-based as <body data-step data-layer> show them)."""

    sentence: int = 1  # 1-based
    view: str = "attention"  # a lesson view's id (lesson/sections.py)
    kind: str = "cross"  # an attention kind (model.decoding.trace.ATTENTION_KINDS)
    layer: int = 1  # 1-based
    head: str = "1"  # "1".."h" (1-based), "mean" or "all"
    step: int | None = None  # 1-based; None: the sentence's last step, where every output row is there to see
    note: str = ""  # what the page says about where it opened ("" for nothing)

    def __post_init__(self):
        views = [view for view, *_ in VIEWS]
        if self.view not in views:
            raise ValueError(f"unknown lesson view {self.view!r}; expected one of {', '.join(views)}")
        if self.kind not in ATTENTION_KINDS:
            raise ValueError(f"unknown attention kind {self.kind!r}; expected one of {', '.join(ATTENTION_KINDS)}")
        if self.head not in HEADS and not (self.head.isascii() and self.head.isdigit() and int(self.head) >= 1):
            raise ValueError(f"a head is 1, 2, ..., 'mean' or 'all', not {self.head!r}")
        if self.sentence < 1 or self.layer < 1 or (self.step is not None and self.step < 1):
            raise ValueError("sentence, layer and step are 1-based")

    def record(self) -> dict:
        """The record data/lesson.js holds as "start" (a null step: the last)."""
        return asdict(self)
