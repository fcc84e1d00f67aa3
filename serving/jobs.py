"""Every model computation the app runs, each a typed function of (checkpoint, ...) declared once with `@model_job`.

A declared job is called as a function with the runner that holds the model in place of the checkpoint:

    trace = jobs.translate(page.runner, text, "de-en")   # go-to-definition lands on `def translate` below

The runner (serving/runner.py) runs it in this process, or on a ZeroGPU Space through its one `@spaces.GPU`
dispatcher (serving/zerogpu.py). Results are plain data (numpy arrays, token lists, dataclasses:
model/decoding/trace.py), so they pickle back from the GPU process. A new model computation is one decorated
function here; docs/adding-a-panel.md shows the whole path.

Each declaration carries, beside the function, the two facts every other part reads from it:
- `work`: the size of one call in the job's own unit (decoder steps, tokens, integration steps x output tokens),
  computed from its arguments before it runs. The ZeroGPU duration of a call is the job's measured cost of that
  much work (serving/job_costs.py, measured by scripts/job_seconds.py).
- `example`: the job's call on a sample sentence (`JobSample`), which scripts/job_seconds.py times and the
  ZeroGPU test (tests/support/zerogpu_space.py) runs through the real `spaces` package.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Concatenate, Generic, ParamSpec, Protocol, TypeVar

import numpy as np

from model import Checkpoint, TranslationTrace
from model.analysis import readouts
from model.analysis.corpus.attribution import Attribution, attribute
from model.analysis.corpus.live import sentence_vectors
from model.analysis.kv_cache import CacheRecording, record_trace_cache
from model.analysis.logit_lens import LogitLens
from model.analysis.logit_lens import logit_lens as read_logit_lens
from model.analysis.paper_figures import DIRECTION as PAPER_DIRECTION
from model.checkpoints.catalogue import OWN
from model.analysis.paper_figures import PAPER_FIGURES, FigureResult, PaperFigure, run_paper_figures
from model.decoding.ablation import Ablation
from model.decoding.greedy import default_max_new_tokens
from model.decoding.greedy import translate as greedy_translate
from model.text.inputs import prepare_source

P = ParamSpec("P")
R = TypeVar("R")
Call = tuple[tuple, dict]  # (args, kwargs) of one job call, without the checkpoint


class JobRunner(Protocol):
    """What runs a job (serving.runner.Runner): `call(job, *args, **kwargs)` on the model it holds."""

    def call(self, job: ModelJob[P, R], *args: P.args, **kwargs: P.kwargs) -> R: ...


@dataclass(frozen=True)
class JobSample:
    """One sentence's inputs for every job's example call: the sentence, its greedy trace, an ablation, figures."""

    text: str
    direction: str
    trace: TranslationTrace
    ablation: Ablation = Ablation(cross_heads=frozenset({(0, 0)}))
    figures: Sequence[PaperFigure] = field(default=PAPER_FIGURES)

    @classmethod
    def of(cls, checkpoint: Checkpoint, text: str, direction: str, **options) -> JobSample:
        """The sample of `text`, decoded once here (options: ablation, figures)."""
        return cls(
            text, direction, greedy_translate(checkpoint.model, checkpoint.tokenizer, text, direction), **options
        )

    @property
    def source_ids(self) -> list[int]:
        return [int(i) for i in self.trace.source_ids]

    @property
    def output_ids(self) -> list[int]:
        return [int(i) for i in self.trace.output_ids]


class ModelJob(Generic[P, R]):
    """A declared model computation: `function(checkpoint, *args)`, the size of a call (`work`) and an example."""

    def __init__(
        self,
        function: Callable[Concatenate[Checkpoint, P], R],
        work: Callable[..., float],
        unit: str,
        example: Callable[[JobSample], Call],
    ) -> None:
        self.name, self.function, self.unit = function.__name__, function, unit
        self.work_of, self.example = work, example
        self.__doc__, self.__wrapped__ = function.__doc__, function

    def __call__(self, runner: JobRunner, *args: P.args, **kwargs: P.kwargs) -> R:
        """Run on the runner's model (in this process, or in a ZeroGPU call)."""
        return runner.call(self, *args, **kwargs)

    def work(self, checkpoint: Checkpoint, args: tuple = (), kwargs: dict | None = None) -> float:
        """The size of one call in `unit`s; 0 for input that cannot be sized (the job refuses it at once)."""
        try:
            return float(self.work_of(checkpoint, *args, **(kwargs or {})))
        except Exception:  # noqa: BLE001 - bad input: the job raises its ValueError before any real work
            return 0.0

    def __repr__(self) -> str:
        return f"<model job {self.name}: work in {self.unit}>"


JOBS: dict[str, ModelJob] = {}  # name -> job: how the ZeroGPU process finds a job it was sent by name


def model_job(
    work: Callable[..., float], unit: str, example: Callable[[JobSample], Call]
) -> Callable[[Callable[Concatenate[Checkpoint, P], R]], ModelJob[P, R]]:
    """Declare a model computation (see the module docstring); its name is the function's name.

    work: (checkpoint, *the job's arguments) -> the call's size in `unit`s (a cheap count: no model call).
    example: JobSample -> (args, kwargs) of the job on that sentence.
    """

    def declare(function: Callable[Concatenate[Checkpoint, P], R]) -> ModelJob[P, R]:
        if function.__name__ in JOBS:
            raise ValueError(f"a model job named {function.__name__!r} is already declared")
        JOBS[function.__name__] = job = ModelJob(function, work, unit, example)
        return job

    return declare


# --------------------------------------------------------------------------- sizes of a call, from its input
def decoder_steps(checkpoint: Checkpoint, text: str, direction: str) -> int:
    """The most greedy steps a sentence may take: its length budget (2 x source + 10, at most MAX_TARGET_TOKENS)."""
    source_ids, _ = prepare_source(checkpoint.tokenizer, text, direction)
    return default_max_new_tokens(len(source_ids))


def most_steps(trace: TranslationTrace) -> int:
    """The length budget of a traced sentence (what beam search may use at most)."""
    return default_max_new_tokens(len(trace.source_ids))


# --------------------------------------------------------------------------- decoding (Figure 1, section 3)
@model_job(
    work=lambda checkpoint, text, direction, *rest, **options: decoder_steps(checkpoint, text, direction),
    unit="decoder steps",
    example=lambda sample: ((sample.text, sample.direction), {"ablation": sample.ablation}),
)
def translate(
    checkpoint: Checkpoint,
    text: str,
    direction: str,
    forced_prefix: Sequence[int] | None = None,
    ablation: Ablation | None = None,
) -> TranslationTrace:
    """Greedy translation with its full trace (model.decoding.greedy.translate), optionally branched or ablated;
    ValueError for bad input."""
    trace = greedy_translate(
        checkpoint.model,
        checkpoint.tokenizer,
        text,
        direction,
        forced_prefix=None if forced_prefix is None else [int(i) for i in forced_prefix],
        ablation=ablation,
    )
    trace.model = checkpoint.kind  # the trace names the model that wrote it (share links, the API, the JSON)
    return trace


@model_job(
    work=lambda checkpoint, source_ids, output_ids, *rest: len(source_ids) + len(output_ids),
    unit="tokens",
    example=lambda sample: ((sample.source_ids, sample.output_ids, sample.ablation), {}),
)
def token_probabilities(
    checkpoint: Checkpoint,
    source_ids: Sequence[int],
    output_ids: Sequence[int],
    ablation: Ablation | None = None,
    direction: str = "",
) -> np.ndarray:
    """(T,) probabilities of a given output teacher-forced under an ablation (model.analysis.readouts).
    direction: whose checkpoint's ids these are, where the model has one per direction (OPUS-MT; the runner
    picks by it)."""
    return readouts.token_probabilities(checkpoint.model, list(source_ids), list(output_ids), ablation)


@model_job(
    work=lambda checkpoint, trace, beam_size=4, *rest: int(beam_size) * most_steps(trace),
    unit="beam x decoder steps",
    example=lambda sample: ((sample.trace,), {}),
)
def beam_versus_greedy(
    checkpoint: Checkpoint, trace: TranslationTrace, beam_size: int = 4, length_penalty: float = 0.6
) -> readouts.BeamComparison:
    """Beam search (section 6.1) beside the greedy output kept in `trace` (model.analysis.readouts)."""
    return readouts.beam_versus_greedy(checkpoint.model, checkpoint.tokenizer, trace, beam_size, length_penalty)


@model_job(
    work=lambda checkpoint, trace: trace.num_steps,
    unit="decoder steps",
    example=lambda sample: ((sample.trace,), {}),
)
def record_cache(checkpoint: Checkpoint, trace: TranslationTrace) -> CacheRecording:
    """The decoder's KV cache at every step of `trace`'s greedy run, replayed through the cached decoder (3.1)."""
    return record_trace_cache(checkpoint.model, trace)


@model_job(
    work=lambda checkpoint, trace: trace.num_steps,
    unit="decoder steps",
    example=lambda sample: ((sample.trace,), {}),
)
def logit_lens(checkpoint: Checkpoint, trace: TranslationTrace) -> LogitLens:
    """Each decoder layer's top tokens at every step of `trace` through the final projection (3.1, 3.4;
    model.analysis.logit_lens), read when its view is opened."""
    return read_logit_lens(checkpoint.model, checkpoint.tokenizer, trace)


# --------------------------------------------------------------------------- analyses
@model_job(
    work=lambda checkpoint, figures: sum(decoder_steps(checkpoint, figure.sentence, "en-de") for figure in figures),
    unit="decoder steps",
    example=lambda sample: ((list(sample.figures),), {}),
)
def paper_figures(
    checkpoint: Checkpoint, figures: Sequence[PaperFigure], direction: str = PAPER_DIRECTION
) -> list[FigureResult]:
    """The paper's Figures 3-5 sentences through the encoder, the best-matching head of each (Appendix).
    direction: the paper's sentences are English, read translating into German (where the model has a
    checkpoint per direction, the runner runs the one of this direction)."""
    return run_paper_figures(
        checkpoint.model, checkpoint.tokenizer, list(figures), own_model=checkpoint.kind == OWN.key
    )


@model_job(
    work=lambda checkpoint, source_ids, output_ids, steps=32: (
        (int(steps) + 2) * len(output_ids) * (len(source_ids) + len(output_ids))
    ),
    unit="(integration steps + 2) x output tokens x all tokens",
    example=lambda sample: ((sample.source_ids, sample.output_ids), {"steps": 32}),
)
def corpus_attribution(
    checkpoint: Checkpoint, source_ids: Sequence[int], output_ids: Sequence[int], steps: int = 32, direction: str = ""
) -> Attribution:
    """Attributions of every output token's log-probability to the source tokens (T, S): input x gradient and
    integrated gradients (model.analysis.corpus.attribution). direction: as in `token_probabilities`."""
    return attribute(checkpoint.model, [int(i) for i in source_ids], [int(i) for i in output_ids], int(steps))


@model_job(
    work=lambda checkpoint, source_ids, output_ids, *rest: len(source_ids) + len(output_ids),
    unit="tokens",
    example=lambda sample: ((sample.source_ids, sample.output_ids, "cross", 0, 1), {}),
)
def corpus_sentence_vectors(
    checkpoint: Checkpoint,
    source_ids: Sequence[int],
    output_ids: Sequence[int],
    kind: str,
    layer: int,
    head: int,
    direction: str = "",
) -> tuple[np.ndarray, np.ndarray]:
    """(queries (Tq, d_k), keys (Tk, d_k)) of one head on the user's sentence, to place it on the corpus
    query-key map (model.analysis.corpus.live.sentence_vectors). direction: as in `token_probabilities`."""
    return sentence_vectors(checkpoint.model, source_ids, output_ids, kind, int(layer), int(head))
