"""Every model computation the app runs, each a typed function of (checkpoint, ...) declared once with `@model_job`.

A declared job is called as a function with the runner that holds the model in place of the checkpoint:

    trace = jobs.translate(page.runner, text, "de-en")   # go-to-definition lands on `def translate` below

The runner (serving/runner.py) runs it in this process, or on a ZeroGPU Space through its one `@spaces.GPU`
dispatcher (serving/zerogpu.py), which asks for a GPU duration computed from the job's `cpu_seconds`. Results are
plain data (numpy arrays, token lists, dataclasses: model/decoding/trace.py), so they pickle back from the GPU
process. A new model computation is one decorated function here; docs/adding-a-panel.md shows the whole path.

`cpu_seconds`: the job's CPU time at the input limits (100 source / 120 output tokens) on the shipped checkpoint,
one PyTorch thread, rounded up (scripts/job_seconds.py measures them; the table is in docs/serving.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Concatenate, Generic, ParamSpec, TypeVar

import numpy as np

from model import Checkpoint, TranslationTrace
from model.analysis import readouts
from model.analysis.corpus.attribution import Attribution, attribute
from model.analysis.corpus.live import sentence_vectors
from model.analysis.kv_cache import CacheRecording, record_trace_cache
from model.analysis.paper_figures import FigureResult, PaperFigure, run_paper_figures
from model.decoding.ablation import Ablation
from model.decoding.greedy import translate as greedy_translate

if TYPE_CHECKING:
    from .runner import Runner

P = ParamSpec("P")
R = TypeVar("R")


class ModelJob(Generic[P, R]):
    """A declared model computation: `function(checkpoint, *args)` and what ZeroGPU needs to know (its time)."""

    def __init__(self, function: Callable[Concatenate[Checkpoint, P], R], cpu_seconds: float) -> None:
        self.name, self.function, self.cpu_seconds = function.__name__, function, float(cpu_seconds)
        self.__doc__, self.__wrapped__ = function.__doc__, function

    def __call__(self, runner: Runner, *args: P.args, **kwargs: P.kwargs) -> R:
        """Run on the runner's model (in this process, or in a ZeroGPU call)."""
        return runner.call(self, *args, **kwargs)

    def __repr__(self) -> str:
        return f"<model job {self.name}: {self.cpu_seconds:g} CPU s at the limits>"


JOBS: dict[str, ModelJob] = {}  # name -> job: how the ZeroGPU process finds a job it was sent by name


def model_job(cpu_seconds: float) -> Callable[[Callable[Concatenate[Checkpoint, P], R]], ModelJob[P, R]]:
    """Declare a model computation (see the module docstring); its name is the function's name."""

    def declare(function: Callable[Concatenate[Checkpoint, P], R]) -> ModelJob[P, R]:
        if function.__name__ in JOBS:
            raise ValueError(f"a model job named {function.__name__!r} is already declared")
        JOBS[function.__name__] = job = ModelJob(function, cpu_seconds)
        return job

    return declare


# --------------------------------------------------------------------------- decoding (Figure 1, section 3)
@model_job(cpu_seconds=1.0)
def translate(checkpoint: Checkpoint, text: str, direction: str, forced_prefix: Sequence[int] | None = None,
              ablation: Ablation | None = None) -> TranslationTrace:
    """Greedy translation with its full trace (model.decoding.greedy.translate), optionally branched or ablated;
    ValueError for bad input."""
    return greedy_translate(checkpoint.model, checkpoint.tokenizer, text, direction,
                            forced_prefix=None if forced_prefix is None else [int(i) for i in forced_prefix],
                            ablation=ablation)


@model_job(cpu_seconds=0.1)
def token_probabilities(checkpoint: Checkpoint, source_ids: Sequence[int], output_ids: Sequence[int],
                        ablation: Ablation | None = None) -> np.ndarray:
    """(T,) probabilities of a given output teacher-forced under an ablation (model.analysis.readouts)."""
    return readouts.token_probabilities(checkpoint.model, list(source_ids), list(output_ids), ablation)


@model_job(cpu_seconds=2.0)
def beam_versus_greedy(checkpoint: Checkpoint, trace: TranslationTrace, beam_size: int = 4,
                       length_penalty: float = 0.6) -> readouts.BeamComparison:
    """Beam search (section 6.1) beside the greedy output kept in `trace` (model.analysis.readouts)."""
    return readouts.beam_versus_greedy(checkpoint.model, checkpoint.tokenizer, trace, beam_size, length_penalty)


@model_job(cpu_seconds=0.8)
def record_cache(checkpoint: Checkpoint, trace: TranslationTrace) -> CacheRecording:
    """The decoder's KV cache at every step of `trace`'s greedy run, replayed through the cached decoder (3.1)."""
    return record_trace_cache(checkpoint.model, trace)


# --------------------------------------------------------------------------- analyses
@model_job(cpu_seconds=1.3)
def paper_figures(checkpoint: Checkpoint, figures: Sequence[PaperFigure]) -> list[FigureResult]:
    """The paper's Figures 3-5 sentences through the encoder, the best-matching head of each (Appendix)."""
    return run_paper_figures(checkpoint.model, checkpoint.tokenizer, list(figures))


@model_job(cpu_seconds=20.0)
def corpus_attribution(checkpoint: Checkpoint, source_ids: Sequence[int], output_ids: Sequence[int],
                       steps: int = 32) -> Attribution:
    """Attributions of every output token's log-probability to the source tokens (T, S): input x gradient and
    integrated gradients (model.analysis.corpus.attribution)."""
    return attribute(checkpoint.model, [int(i) for i in source_ids], [int(i) for i in output_ids], int(steps))


@model_job(cpu_seconds=0.5)
def corpus_sentence_vectors(checkpoint: Checkpoint, source_ids: Sequence[int], output_ids: Sequence[int], kind: str,
                            layer: int, head: int) -> tuple[np.ndarray, np.ndarray]:
    """(queries (Tq, d_k), keys (Tk, d_k)) of one head on the user's sentence, to place it on the corpus
    query-key map (model.analysis.corpus.live.sentence_vectors)."""
    return sentence_vectors(checkpoint.model, source_ids, output_ids, kind, int(layer), int(head))
