"""The one object that runs the model for the page: every declared job of serving/jobs.py goes through `call`.

A runner holds one of the app's models (model/checkpoints/catalogue.py): the own checkpoint, which translates both
directions, or OPUS-MT, one checkpoint per direction. A call runs on the checkpoint of its direction: the direction
of the trace it is given, else its `direction` argument (`direction_of_call`, `checkpoint_for`).

Two modes, chosen once in `Runner.start`:
- in this process (the default): a job runs in the caller's thread on the checkpoint the process loaded. The page
  runs a fixed number at once (the Gradio queue group of ui/runner.py); PyTorch releases the GIL.
- ZeroGPU (on a ZeroGPU Space): a job runs through the one `@spaces.GPU` dispatcher of serving/zerogpu.py, on a
  copy of the model put on cuda; the page's checkpoint stays on the CPU with real weights.

Every failure reaches the page as one gr.Error with a title: a gr.Error as raised (ZeroGPU's quota and queue
errors carry theirs), a ValueError (bad input) with its message, anything else as "The model computation failed".
serving/ imports gradio for that error type only (the type the page shows and `spaces` raises); nothing of ui/.

Also here, with no job (functions of the config and the tokenizer, computed in this process): the rows of the
positional-encoding table (3.5) and a padded batch (3.2.3) for the Positions and Masks views.
"""

from __future__ import annotations

import functools
import inspect
import logging
import re
from collections.abc import Mapping

import gradio as gr
import numpy as np

from model.decoding.greedy_choice import screen_for
from model import Checkpoint, TranslationTrace
from model.core.positional import sinusoidal_positional_encoding
from model.text.inputs import PaddedBatch, padding_example

from .jobs import ModelJob, P, R
from .zerogpu import Dispatch, gpu_checkpoint, gpu_dispatcher

LOG = logging.getLogger(__name__)
BAD_INPUT_TITLE = "Input not accepted"
NO_MODEL_TITLE = "No model loaded"  # the server has no model to run (why: the message)
FAILED_TITLE = "The model computation failed"
SHOWN_VALUE_CHARS = 40  # a refused value is echoed this long at most (a 100,000-character value is not sent back)
# an absolute path on the server (POSIX or Windows), up to the next space, quote or bracket
SERVER_PATH = re.compile(r"(?<![\w.:/])(?:/|[A-Za-z]:\\)[^\s'\"()\[\]<>,;]*")


def without_paths(text: str) -> str:
    """`text` with every absolute server path replaced by its last part (a visitor sees which file, not where it is
    on the server)."""
    return SERVER_PATH.sub(lambda match: re.split(r"[/\\]", match.group().rstrip("/\\"))[-1] or "/", text)


def shown_value(value: object) -> str:
    """A value as a refusal echoes it: its repr, cut to SHOWN_VALUE_CHARS characters."""
    text = repr(value)
    return text if len(text) <= SHOWN_VALUE_CHARS else f"{text[: SHOWN_VALUE_CHARS - 1]}…"


class Runner:
    """Model computations for the page.

    Args:
        checkpoint: the checkpoint this process loaded (in-process jobs run on it; the page reads it: its config,
            card, film and corpus file).
        dispatch: ZeroGPU mode's dispatcher (serving.zerogpu.gpu_dispatcher), or None to run jobs here.
        by_direction: a checkpoint per direction where the model has one each (OPUS-MT); None: `checkpoint` for all.
    """

    def __init__(
        self,
        checkpoint: Checkpoint,
        dispatch: Dispatch | None = None,
        by_direction: Mapping[str, Checkpoint] | None = None,
    ) -> None:
        self.checkpoint, self.dispatch = checkpoint, dispatch
        self.by_direction = dict(by_direction or {})

    @classmethod
    def start(
        cls,
        checkpoint: Checkpoint,
        zerogpu: bool = False,
        by_direction: Mapping[str, Checkpoint] | None = None,
        after_start_up: bool = False,
    ) -> "Runner":
        """zerogpu: every job through @spaces.GPU, on cuda copies of the checkpoints made here (after_start_up: a
        model loaded in a background thread, whose copies its GPU worker makes; serving/zerogpu.py). In this process,
        each model's greedy-choice screen is made here (model/decoding/greedy_choice.py), not in the first Translate."""
        if not zerogpu:
            for held in {id(c): c for c in (checkpoint, *(by_direction or {}).values())}.values():
                screen_for(held.model)
            return cls(checkpoint, None, by_direction)
        checkpoints = dict(by_direction or {"": checkpoint})
        if after_start_up:
            return cls(checkpoint, gpu_dispatcher(checkpoints, in_worker=True), by_direction)
        on_gpu = {direction: gpu_checkpoint(c) for direction, c in checkpoints.items()}
        return cls(checkpoint, gpu_dispatcher(on_gpu), by_direction)

    @property
    def model(self) -> str:
        """Which of the app's models this runner holds: "own" or "opus-mt"."""
        return self.checkpoint.kind

    @property
    def directions(self) -> tuple[str, ...]:
        """The directions it translates (the own model: both; OPUS-MT: those loaded)."""
        return tuple(self.by_direction) or tuple(self.checkpoint.tokenizer.directions)

    def direction_of_call(self, job: ModelJob, args: tuple, kwargs: dict) -> str:
        """The direction a call works in: its trace's, else its `direction` argument, given or the job's default
        ("" if it has neither)."""
        for value in (*args, *kwargs.values()):
            if isinstance(value, TranslationTrace):
                return value.direction
        bound = inspect.signature(job.function).bind_partial(None, *args, **kwargs)
        bound.apply_defaults()
        return str(bound.arguments.get("direction", ""))

    def checkpoint_for(self, direction: str) -> Checkpoint:
        """The checkpoint that translates `direction` (ValueError, shown as bad input, if none does)."""
        if not self.by_direction:
            return self.checkpoint
        if direction not in self.by_direction:
            raise ValueError(
                f"this model translates {' and '.join(self.by_direction)} only; {direction or 'no direction'} "
                "is not one of them"
            )
        return self.by_direction[direction]

    @property
    def zerogpu(self) -> bool:
        """ZeroGPU mode: the GPU exists only within a visitor's request, so nothing runs the model at start-up."""
        return self.dispatch is not None

    def call(self, job: ModelJob[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        """Run a declared job (what `job(runner, ...)` does); every failure is a gr.Error with a title."""
        try:
            direction = self.direction_of_call(job, args, kwargs) if self.by_direction else ""
            if self.dispatch is None:
                return job.function(self.checkpoint_for(direction), *args, **kwargs)
            self.checkpoint_for(direction)  # a direction this model lacks is bad input, before any GPU request
            return self.dispatch(job, args, kwargs, direction)
        except gr.Error:
            raise
        except ValueError as error:
            raise gr.Error(without_paths(str(error)), title=BAD_INPUT_TITLE, print_exception=False) from None
        except Exception as error:
            LOG.exception("model job %s failed", job.name)
            raise gr.Error(
                f"{job.name.replace('_', ' ')} stopped with {type(error).__name__}: {without_paths(str(error))}. "
                "Try again; if it happens again, try a shorter sentence.",
                title=FAILED_TITLE,
            ) from error

    def call_here(self, job: ModelJob[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        """Run a job in this process on the page's checkpoint, even on ZeroGPU (there: the CPU copy, no GPU request);
        for work computed once and kept (serving/example_cache.py). Failures as in `call`."""
        return Runner(self.checkpoint, None, self.by_direction).call(job, *args, **kwargs)

    def positional_encoding(self, rows: int) -> np.ndarray:
        """(min(rows, max_positions), d_model): the first rows of the sinusoidal table the model adds (3.5)."""
        config = self.checkpoint.config
        return positional_encoding_table(config.max_positions, config.d_model, config.positional_layout)[:rows]

    def padding_example(self, trace: TranslationTrace) -> PaddedBatch:
        """The trace's source batched with a longer sentence and padded and masked as the encoder's batches are
        (model.text.inputs.padding_example; section 3.2.3)."""
        checkpoint = self.checkpoint_for(trace.direction)
        return padding_example(checkpoint.tokenizer, trace.source_ids, trace.direction, checkpoint.config.pad_id)


@functools.lru_cache(maxsize=4)
def positional_encoding_table(max_positions: int, d_model: int, layout: str = "interleaved") -> np.ndarray:
    """The sinusoidal table (3.5) of a config, in its layout, read-only (computed once)."""
    table = sinusoidal_positional_encoding(max_positions, d_model, layout).numpy()
    table.flags.writeable = False
    return table
