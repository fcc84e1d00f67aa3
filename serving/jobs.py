"""The model work a serving worker can do, by name: each job is a function of (checkpoint, **kwargs).

The pool (serving/pool.py) sends a job's name and keyword arguments to a worker process that holds
the checkpoint, and the result comes back pickled (plain data: the TranslationTrace of
model/decoding/trace.py, numpy arrays, dataclasses). A new job is one line in JOBS; it must be a
module-level function, because workers find it by its module and name. ui/runner.py's Runner is the only
caller; it runs a job in a worker or, in single-process mode, here in the caller's process (where a ZeroGPU
mode would wrap each function of JOBS in `@spaces.GPU`: see Runner's `jobs`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from model import Checkpoint, TranslationTrace
from model.analysis import readouts
from model.decoding.ablation import Ablation
from model.decoding.greedy import translate
from model.analysis.kv_cache import CacheRecording, record_trace_cache
from model.analysis.paper_figures import FigureResult, PaperFigure, run_paper_figures
from model.analysis.corpus import live as corpus_live


def translate_job(checkpoint: Checkpoint, text: str, direction: str, forced_prefix: Sequence[int] | None = None,
                  ablation: Ablation | None = None) -> TranslationTrace:
    """Greedy translation with its full trace (model.decoding.greedy.translate), optionally branched or ablated."""
    return translate(checkpoint.model, checkpoint.tokenizer, text, direction,
                     forced_prefix=None if forced_prefix is None else [int(i) for i in forced_prefix],
                     ablation=ablation)


def token_probabilities_job(checkpoint: Checkpoint, source_ids: Sequence[int], output_ids: Sequence[int],
                            ablation: Ablation | None = None) -> np.ndarray:
    """(T,) probabilities of a given output teacher-forced under an ablation (model.analysis.readouts)."""
    return readouts.token_probabilities(checkpoint.model, source_ids, output_ids, ablation)


def beam_versus_greedy_job(checkpoint: Checkpoint, trace: TranslationTrace, beam_size: int = 4,
                           length_penalty: float = 0.6) -> readouts.BeamComparison:
    """Beam search (section 6.1) beside the greedy output kept in `trace` (model.analysis.readouts)."""
    return readouts.beam_versus_greedy(checkpoint.model, checkpoint.tokenizer, trace, beam_size, length_penalty)


def record_cache_job(checkpoint: Checkpoint, trace: TranslationTrace) -> CacheRecording:
    """The decoder's KV cache at every step of `trace`'s greedy run, replayed through the cached decoder."""
    return record_trace_cache(checkpoint.model, trace)


def paper_figures_job(checkpoint: Checkpoint, figures: Sequence[PaperFigure]) -> list[FigureResult]:
    """The paper's Figures 3-5 sentences through the encoder, the best-matching head of each (Appendix)."""
    return run_paper_figures(checkpoint.model, checkpoint.tokenizer, figures)


def checkpoint_info_job(checkpoint: Checkpoint) -> dict:
    """What a UI process shows without holding the weights: {"config", "metrics", "path"}."""
    return {"config": checkpoint.config, "metrics": checkpoint.metrics, "path": str(checkpoint.path)}


Job = Callable[..., object]  # (checkpoint, **kwargs) -> picklable result

JOBS: dict[str, Job] = {
    "translate": translate_job,
    "token_probabilities": token_probabilities_job,
    "beam_versus_greedy": beam_versus_greedy_job,
    "record_cache": record_cache_job,
    "paper_figures": paper_figures_job,
    "checkpoint_info": checkpoint_info_job,
    "corpus_attribution": corpus_live.attribution_job,  # issue 25: attribution vs attention
    "corpus_sentence_vectors": corpus_live.sentence_vectors_job,  # issue 25: the sentence on the query-key map
}
