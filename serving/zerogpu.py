"""ZeroGPU mode: on a Hugging Face ZeroGPU Space every model job runs through one `@spaces.GPU` dispatcher.

ZeroGPU (https://huggingface.co/docs/hub/spaces-zerogpu) lends a Space a GPU only while a function decorated
with `@spaces.GPU(duration=seconds)` runs. What the `spaces` package does, read in its source (spaces/zero/):
- A Space on ZeroGPU hardware has SPACES_ZERO_GPU=true (spaces/config.py); `on_zerogpu` reads it the same way.
- There `import spaces` patches torch: `.to("cuda")` in the server process records the weights for the GPU
  without touching one; at launch they are packed to disk and the server's own tensors become empty (zeros).
  So the page keeps the checkpoint it loaded on the CPU (the model card, the corpus file's weights hash and
  the parameter count read real weights) and the runner puts a copy on cuda (`gpu_checkpoint`) for the jobs.
  The import must come before anything initializes CUDA (`load_spaces`, called before the checkpoint loads).
- Each decorated function gets its own GPU worker process, forked from the server on its first call, which
  initializes CUDA and moves the weights; later calls reuse it. One dispatcher (`gpu_dispatcher`) for every job
  means one such process. Its arguments (the job's name, args, kwargs) and its result are pickled across
  (jobs return plain data). The checkpoint is not an argument: the fork inherits it from the closure.
- An exception other than gr.Error comes back as a generic "ZeroGPU worker error" naming only its class, so the
  dispatcher returns a job's exception as a value (`Raised`) and raises it again in the server: ValueError for
  bad input keeps its message, gr.Error its title. Errors of the platform itself (quota exceeded, no GPU) are
  gr.Error with a title, raised in the server before any fork; they reach the page as they are.
- `duration` is the longest a call may hold the GPU (a call running longer is stopped); the platform checks the
  requested duration against the visitor's remaining daily quota (a few minutes for an anonymous visitor;
  spaces/zero/configs.json multiplies it by a GPU's duration_factor), and charges the time used. It may be a
  function of the call's arguments (spaces/zero/wrappers.py `static_duration`): `gpu_seconds` of the job named.
- Outside ZeroGPU the decorator returns the function unchanged.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import os
import pickle
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from model import Checkpoint

from .jobs import JOBS, ModelJob

ZERO_GPU_ENV = "SPACES_ZERO_GPU"  # set to "true" by the Hub on a ZeroGPU Space
MODEL_DEVICE = "cuda"  # where the jobs' copy of the model goes on ZeroGPU (at start-up, outside any GPU call)
GPU_START_S = 5  # a fresh GPU process: CUDA initialised and the ~30 MB of weights moved, before the job runs
HEADROOM = 2.0  # times the job's CPU seconds at the input limits (the GPU runs these small batches faster)

Dispatch = Callable[[ModelJob, tuple, dict], object]


def on_zerogpu(environ: Mapping[str, str] = os.environ) -> bool:
    """True on a ZeroGPU Space: SPACES_ZERO_GPU is 1, t or true (the test of spaces/config.py)."""
    return environ.get(ZERO_GPU_ENV, "").strip().lower() in ("1", "t", "true")


def load_spaces() -> Callable:
    """`import spaces` (on ZeroGPU: patches torch; call before the model goes to cuda) -> spaces.GPU."""
    import spaces

    return spaces.GPU


def gpu_seconds(job: ModelJob) -> int:
    """The GPU duration a job asks for: GPU_START_S + HEADROOM x its CPU seconds at the limits, rounded up."""
    return math.ceil(GPU_START_S + HEADROOM * job.cpu_seconds)


def dispatch_seconds(name: str, args: tuple = (), kwargs: dict | None = None) -> int:
    """spaces.GPU's `duration` of one dispatcher call: that of the job it runs."""
    return gpu_seconds(JOBS[name])


@dataclass(frozen=True)
class Raised:
    """A job's exception carried back from the GPU process as a value (see the module docstring)."""

    error: Exception

    @classmethod
    def of(cls, error: Exception) -> "Raised":
        """The error itself if it pickles, else a RuntimeError with its type and message."""
        try:
            pickle.dumps(error)
        except Exception:  # noqa: BLE001 - any pickling failure: send what can be sent
            return cls(RuntimeError(f"{type(error).__name__}: {error}"))
        return cls(error)


def gpu_checkpoint(checkpoint: Checkpoint) -> Checkpoint:
    """A copy of the checkpoint whose model is on MODEL_DEVICE (the page keeps `checkpoint` on the CPU)."""
    return dataclasses.replace(checkpoint, model=copy.deepcopy(checkpoint.model).to(MODEL_DEVICE))


def gpu_dispatcher(checkpoint: Checkpoint, gpu: Callable | None = None) -> Dispatch:
    """The one GPU entry point: (job, args, kwargs) -> the job's result, computed in `gpu(duration=...)` on
    `checkpoint` (already on MODEL_DEVICE). gpu: spaces.GPU unless given."""
    gpu = load_spaces() if gpu is None else gpu

    def run_on_gpu(name: str, args: tuple, kwargs: dict) -> object:
        try:
            return JOBS[name].function(checkpoint, *args, **kwargs)
        except Exception as error:  # noqa: BLE001 - raised again by `dispatch`, with its type and message
            return Raised.of(error)

    decorated = gpu(duration=dispatch_seconds)(run_on_gpu)

    def dispatch(job: ModelJob, args: tuple, kwargs: dict) -> object:
        result = decorated(job.name, args, kwargs)
        if isinstance(result, Raised):
            raise result.error
        return result

    return dispatch
