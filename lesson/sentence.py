"""One sentence of a lesson: its trace with what its views need beside it, as the page's data.

The positional-encoding rows (3.5) and the padded batch of the Masks view (3.2.3) are not part of a trace; a
runner (serving.runner.Runner, or anything with its `positional_encoding`, `padding_example` and
`checkpoint_for`) gives them, as it gives the app.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model import TranslationTrace
from model.decoding.trace import ATTENTION_KINDS
from visualizer.positional import MIN_PE_ROWS

from . import figures
from .arrays import packed


@dataclass
class LessonSentence:
    trace: TranslationTrace
    title: str  # shown above the sentence (the lecturer's words; the source text by default)
    note: str  # a paragraph under the title ("" for none)
    positions: np.ndarray  # (P, d_model) rows of the positional-encoding table, P = max(S, T, MIN_PE_ROWS)
    positional_layout: str  # how the table's columns hold sines and cosines ("interleaved" or "halves")
    batch: object  # model.text.inputs.PaddedBatch: this source padded beside a longer sentence

    @classmethod
    def of(cls, runner, trace: TranslationTrace, title: str = "", note: str = "") -> "LessonSentence":
        """The sentence with what the runner computes for its views, as the app's Positions and Masks tabs ask."""
        rows = max(len(trace.source_tokens), len(trace.target_tokens), MIN_PE_ROWS)
        layout = runner.checkpoint_for(trace.direction).config.positional_layout
        return cls(
            trace,
            title or trace.source_text,
            note,
            runner.positional_encoding(rows),
            layout,
            runner.padding_example(trace),
        )


def sentence_data(sentence: LessonSentence) -> dict:
    """What the page holds of one sentence: texts, tokens, the attention arrays (packed) and every view's figures."""
    trace = sentence.trace
    return {
        "title": sentence.title,
        "note": sentence.note,
        "direction": trace.direction,
        "model": trace.model,
        "source": trace.source_text,
        "translation": trace.translation,
        "source_tokens": list(trace.source_tokens),
        "target_tokens": list(trace.target_tokens),
        "output_tokens": list(trace.output_tokens),
        "steps": trace.num_steps,
        "entropy": [round(float(value), 4) for value in trace.entropy],  # the player bar's text
        "layers": {kind: getattr(trace, spec.weights_field).shape[0] for kind, spec in ATTENTION_KINDS.items()},
        "heads": int(trace.cross_attention.shape[1]),
        "arrays": {name: packed(array) for name, array in figures.attention_arrays(trace).items()},
        "figures": {
            "attention": {kind: figures.kind_figures(trace, kind) for kind in ATTENTION_KINDS},
            "next": figures.candidates_figures(trace),
            "masks": figures.masks_figures(trace, sentence.batch),
            "positions": figures.positions_figure(trace, sentence.positions, sentence.positional_layout),
        },
    }
