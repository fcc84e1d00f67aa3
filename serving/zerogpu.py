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
- `duration` is the longest a call may hold the GPU (a call running longer may be stopped); the platform checks the
  requested duration against the visitor's remaining daily quota (2 minutes for an anonymous visitor; a request
  that fits gets a better place in the queue; spaces/zero/configs.json multiplies it by a GPU's duration_factor),
  and charges the time used. It may be a function of the call's arguments (spaces/zero/wrappers.py
  `static_duration`), and `spaces` sends whole seconds: `gpu_seconds` of the job and its arguments, whole.
- A GPU worker that finished a call stays alive for the next one (spaces reuses it while the platform says it is
  idle); only a fresh one pays for CUDA start-up and the weights' move (COLD_START_S). The dispatcher counts it
  when no call has finished within WARM_S.
- spaces records `.to("cuda")` only in a thread where its torch modes are active (they are per thread, entered in
  the thread that imports spaces), so a model loaded after start-up in a background thread (ui/models.py) cannot
  be put on cuda there. Its dispatcher (`in_worker`) holds the CPU checkpoint instead: its GPU worker, forked after
  the load, inherits it and puts a copy on cuda on its first call (the call that pays COLD_START_S), then reuses it.
- Outside ZeroGPU the decorator returns the function unchanged.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import os
import pickle
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from model import Checkpoint

from .job_costs import cost_of
from .job_costs import measured as measured_costs
from .jobs import JOBS, ModelJob

ZERO_GPU_ENV = "SPACES_ZERO_GPU"  # set to "true" by the Hub on a ZeroGPU Space
MODEL_DEVICE = "cuda"  # where the jobs' copy of the model goes on ZeroGPU (at start-up, outside any GPU call)
COLD_START_S = 5  # a fresh GPU worker: CUDA initialised and the ~30 MB of weights moved, before the job runs
WARM_S = 60.0  # a worker that finished a call this recently is taken as still alive (spaces reuses it)
HEADROOM = 2.0  # times the job's measured CPU seconds for its input (the GPU runs these small batches faster)
MAX_GPU_S = 60  # never more than ZeroGPU's default: CPU costs overstate the GPU's most for the largest batches

Dispatch = Callable[[ModelJob, tuple, dict, str], object]  # (job, args, kwargs, direction) -> result


def on_zerogpu(environ: Mapping[str, str] = os.environ) -> bool:
    """True on a ZeroGPU Space: SPACES_ZERO_GPU is 1, t or true (the test of spaces/config.py)."""
    return environ.get(ZERO_GPU_ENV, "").strip().lower() in ("1", "t", "true")


def load_spaces() -> Callable:
    """`import spaces` (on ZeroGPU: patches torch; call before the model goes to cuda) -> spaces.GPU."""
    import spaces

    return spaces.GPU


def model_scale(checkpoint: Checkpoint) -> float:
    """How many times a unit of work costs more on this checkpoint's model than on the one the costs were measured on
    (serving/job_costs.json's `parameters`): the ratio of their parameter counts, as every token passes through all
    the weights (OPUS-MT: about 9.8); never below 1, as a smaller model still pays the same per-call overhead."""
    measured = measured_costs().get("parameters")
    return max(1.0, checkpoint.model.num_parameters() / measured) if measured else 1.0


def gpu_seconds(
    job: ModelJob,
    checkpoint: Checkpoint,
    args: tuple = (),
    kwargs: dict | None = None,
    warm: bool = True,
    scale: float | None = None,
) -> int:
    """The GPU duration one call asks for: HEADROOM x the job's measured cost of the call's work on this model
    (scale, default model_scale(checkpoint)), rounded up to whole seconds (1 to MAX_GPU_S), plus COLD_START_S when
    no worker is warm."""
    scale = model_scale(checkpoint) if scale is None else scale
    seconds = HEADROOM * cost_of(job.name).seconds(job.work(checkpoint, args, kwargs)) * scale
    return min(MAX_GPU_S, max(1, math.ceil(seconds))) + (0 if warm else COLD_START_S)


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


def gpu_dispatcher(
    checkpoint: Checkpoint | Mapping[str, Checkpoint],
    gpu: Callable | None = None,
    clock: Callable[[], float] = time.monotonic,
    in_worker: bool = False,
) -> Dispatch:
    """The one GPU entry point: (job, args, kwargs, direction) -> the job's result, computed in `gpu(duration=...)`
    on the checkpoint (already on MODEL_DEVICE), each call asking for the duration of its own input (gpu_seconds).
    checkpoint: one for every direction, or one per direction (OPUS-MT); gpu: spaces.GPU unless given; clock:
    seconds, for the warm worker's age; in_worker: `checkpoint` is on the CPU, and the GPU worker puts a copy on
    MODEL_DEVICE on its first call (a model loaded after start-up, see the module docstring)."""
    on_gpu = dict(checkpoint) if isinstance(checkpoint, Mapping) else {"": checkpoint}
    # counted now: once spaces has packed the weights (at launch) the server's copies cannot be counted
    scales = {direction: model_scale(model) for direction, model in on_gpu.items()}

    def checkpoint_of(direction: str) -> Checkpoint:
        return on_gpu.get(direction) or next(iter(on_gpu.values()))

    gpu = load_spaces() if gpu is None else gpu
    finished = {"at": None}  # when the last call came back (its worker is then alive and idle)
    lock = threading.Lock()

    def warm() -> bool:
        with lock:
            return finished["at"] is not None and clock() - finished["at"] < WARM_S

    def duration(name: str, args: tuple, kwargs: dict, direction: str = "") -> int:
        scale = scales.get(direction) or next(iter(scales.values()))
        return gpu_seconds(JOBS[name], checkpoint_of(direction), args, kwargs, warm=warm(), scale=scale)

    moved: dict[str, Checkpoint] = {}  # in_worker: the worker's copies on MODEL_DEVICE, by direction

    def worker_checkpoint(direction: str) -> Checkpoint:
        if not in_worker:
            return checkpoint_of(direction)
        if direction not in moved:  # .cuda(): in the worker, the same as .to(MODEL_DEVICE), with real CUDA (the
            # tests' CPU stand-in for CUDA emulates this call: tests/support/zerogpu_space.py)
            cpu = checkpoint_of(direction)
            moved[direction] = dataclasses.replace(cpu, model=copy.deepcopy(cpu.model).cuda())
        return moved[direction]

    def run_on_gpu(name: str, args: tuple, kwargs: dict, direction: str = "") -> object:
        try:
            return JOBS[name].function(worker_checkpoint(direction), *args, **kwargs)
        except Exception as error:  # noqa: BLE001 - raised again by `dispatch`, with its type and message
            return Raised.of(error)

    decorated = gpu(duration=duration)(run_on_gpu)

    def dispatch(job: ModelJob, args: tuple, kwargs: dict, direction: str = "") -> object:
        result = decorated(job.name, args, kwargs, direction)
        with lock:
            finished["at"] = clock()
        if isinstance(result, Raised):
            raise result.error
        return result

    dispatch.duration = duration  # what the next call of each job would ask for (tests, docs)
    return dispatch
