"""ZeroGPU mode: on a Hugging Face ZeroGPU Space every model computation runs in a `@spaces.GPU` call (issue 24).

ZeroGPU (https://huggingface.co/docs/hub/spaces-zerogpu) lends a Space a GPU only while a function decorated
with `@spaces.GPU(duration=seconds)` runs. What the `spaces` package (0.51.3) does, read in its source:
- A Space on ZeroGPU hardware has SPACES_ZERO_GPU=true (spaces/config.py); `on_zerogpu` reads it the same way.
- There `import spaces` patches torch: `.to("cuda")` in the server process records the weights for the GPU
  without touching one, so the model is placed on cuda at start-up, outside the decorated functions.
  The import must come before anything initializes CUDA (`load_spaces` is called before the checkpoint loads).
- A decorated call runs in a process forked from the server: its arguments and its result are pickled
  across (our jobs return plain data: numpy arrays, token lists, dataclasses), and an exception other than
  gr.Error reaches the caller as a generic "ZeroGPU worker error". So the job's exception comes back as a
  value (`_Raised`) and is raised again here: ValueError for bad input keeps its type and message, as in
  the worker pool. The checkpoint is not an argument (it would be pickled on every call): the forked process
  inherits it from the closure.
- `duration` is the longest a call may hold the GPU (default 60 s; a call running longer is stopped); a
  shorter duration gets the visitor a GPU sooner, and the quota is charged for the time actually used. It
  may be a function of the call's arguments (spaces/zero/wrappers.py `static_duration`).
- Outside ZeroGPU the decorator returns the function unchanged, so the same code runs on CPU Basic and here.

ui/runner.py's Runner uses `gpu_jobs(checkpoint)` as its jobs in single-process mode (no worker pool of our
own: the GPU exists only in the server's own @spaces.GPU calls; the deploy pins 0 workers too).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from model import Checkpoint
from serving import JOBS, Job

ZERO_GPU_ENV = "SPACES_ZERO_GPU"  # set to "true" by the Hub on a ZeroGPU Space
MODEL_DEVICE = "cuda"  # where the model goes on ZeroGPU (at start-up, outside the decorated functions)
SHORT_S, LONG_S = 15, 60


def translate_seconds(forced_prefix=None, ablation=None, **_) -> int:
    """Translate + trace (<= 100 source, 120 output tokens) takes well under a second on a GPU; 15 s leaves
    room for the forked process's first CUDA start. A branch or an ablation (Explain) gets LONG_S, as the
    page often runs one right after another (the ablation's token probabilities follow it)."""
    return SHORT_S if forced_prefix is None and ablation is None else LONG_S


# Seconds each named job (serving/jobs.py) may hold the GPU: an int or a function of the job's arguments.
DURATIONS: dict[str, int | Callable[..., int]] = {
    "translate": translate_seconds,
    "token_probabilities": SHORT_S,  # one teacher-forced pass
    "checkpoint_info": SHORT_S,  # no model work
    "record_cache": SHORT_S,  # one cached replay of a greedy run
    "beam_versus_greedy": LONG_S,  # beam search, 4 beams (section 6.1)
    "paper_figures": LONG_S,  # the paper's Figures 3-5 through the encoder
    "corpus_attribution": LONG_S,  # gradients at every output step (integrated gradients)
    "corpus_sentence_vectors": SHORT_S,  # one teacher-forced pass
}


def on_zerogpu(environ: Mapping[str, str] = os.environ) -> bool:
    """True on a ZeroGPU Space: SPACES_ZERO_GPU is 1, t or true (the test of spaces/config.py)."""
    return environ.get(ZERO_GPU_ENV, "").strip().lower() in ("1", "t", "true")


def load_spaces() -> Callable:
    """`import spaces` (on ZeroGPU: patches torch; call before the model goes to cuda) -> spaces.GPU."""
    import spaces

    return spaces.GPU


@dataclass(frozen=True)
class _Raised:
    """A job's exception carried back from the GPU process as a value (see the module docstring)."""

    error: Exception


def gpu_job(name: str, job: Job, checkpoint: Checkpoint, gpu: Callable) -> Job:
    """`job` as a function of (checkpoint, **kwargs) whose work runs in `gpu(duration=DURATIONS[name])`."""
    if name not in DURATIONS:
        raise KeyError(f"job {name!r} has no ZeroGPU duration: add it to DURATIONS in ui/zerogpu.py")

    def on_gpu(**kwargs):
        try:
            return job(checkpoint, **kwargs)
        except Exception as error:  # noqa: BLE001 - raised again by `run`, with its type and message
            return _Raised(error)

    on_gpu.__name__ = on_gpu.__qualname__ = f"{name}_on_gpu"  # how ZeroGPU's logs name it
    decorated = gpu(duration=DURATIONS[name])(on_gpu)

    def run(given: Checkpoint, **kwargs):
        if given is not checkpoint:
            raise ValueError(f"the ZeroGPU job {name!r} runs on the checkpoint it was made for")
        result = decorated(**kwargs)
        if isinstance(result, _Raised):
            raise result.error
        return result

    run.__name__ = run.__qualname__ = name
    return run


def gpu_jobs(checkpoint: Checkpoint, jobs: Mapping[str, Job] = JOBS, gpu: Callable | None = None) -> dict[str, Job]:
    """Every named job wrapped in @spaces.GPU with its duration (gpu: spaces.GPU unless given)."""
    gpu = load_spaces() if gpu is None else gpu
    return {name: gpu_job(name, job, checkpoint, gpu) for name, job in jobs.items()}
