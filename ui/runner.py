"""The page's side of the model runs: the Gradio queue group every model-running listener joins (`model_event`), the
model slots a listener waits for only once its page's turn has come (`in_model_slot`),
the lean trace file (serving/wire.py) written through serving.TraceFiles, and the table of section 3.5 as the API
serves it (ui/api.py). The runner itself, and every model computation, are in serving/
(serving/runner.py, serving/jobs.py).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable

import anyio.to_thread
import orjson

from model import TranslationTrace
from serving import TraceFiles, lean_trace_json
from serving.runner import positional_encoding_table
from serving.wire import positional_encoding_json

from .server import CONCURRENCY_LIMIT, QUEUE_MAX_SIZE

# Model computations at once, over every model-running listener (threads; PyTorch releases the GIL); the rest wait
# for a slot. Measured in ui/server.py's docstring.
MODEL_SLOTS = CONCURRENCY_LIMIT
MODEL_EVENTS_UNDER_WAY = QUEUE_MAX_SIZE  # model events taken from Gradio's queue at once (waiting cost no thread)
MODEL_EVENTS = "model-runs"  # the Gradio concurrency group of every event that runs the model (model_event)
TRACE_FILES = TraceFiles()  # traces/ in the app's own temporary folder (serving/trace_files.py), expired as it goes


def model_event(**options) -> dict:
    """Keyword arguments of a Gradio listener that runs the model (with `options`): it joins MODEL_EVENTS, a group
    of MODEL_EVENTS_UNDER_WAY events at once: each of them waits for its page's turn and then for a model slot itself
    (`in_model_slot`), holding no thread meanwhile; beyond them, events wait in Gradio's bounded queue."""
    return {**options, "concurrency_id": MODEL_EVENTS, "concurrency_limit": MODEL_EVENTS_UNDER_WAY}


class ModelSlots:
    """At most `count` model computations at once in this process, over every listener and model; a waiter holds
    no thread while it waits (an asyncio semaphore, made in the server's event loop on first use)."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.loop: asyncio.AbstractEventLoop | None = None
        self.semaphore = asyncio.Semaphore(count)

    def held(self) -> asyncio.Semaphore:
        """The semaphore of the running event loop (a test's own loop gets its own)."""
        loop = asyncio.get_running_loop()
        if loop is not self.loop:
            self.loop, self.semaphore = loop, asyncio.Semaphore(self.count)
        return self.semaphore


SLOTS = ModelSlots(MODEL_SLOTS)


def in_model_slot(fn: Callable, slots: ModelSlots = SLOTS) -> Callable:
    """`fn` (a listener's function) run in a thread once a model slot is free -> an async function of the same
    signature. A page's events take their turn first (ui/session_order.py) and a slot after it, so a visitor whose
    page queued many events holds one slot at a time, and the other visitors' events and the API's calls find the
    rest free; Gradio's own queue group would have given each queued event a slot before its page's turn came."""

    @functools.wraps(fn)
    async def run(*args, **kwargs):
        async with slots.held():
            # Gradio's own pool of threads (what it runs a plain function in), the context (request, progress) kept
            return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs))

    return run


def write_trace_file(trace: TranslationTrace) -> str:
    """The lean trace JSON (serving/wire.py) in a fresh trace-<direction>.json -> its path; constant-time housekeeping."""
    return TRACE_FILES.write_text(lean_trace_json(trace), f"trace-{trace.direction}.json")


@functools.lru_cache(maxsize=4)
def positional_encoding_text(max_positions: int, d_model: int, layout: str = "interleaved") -> str:
    """The positional-encoding table, in the model's layout, as JSON (computed once)."""
    return positional_encoding_json(positional_encoding_table(max_positions, d_model, layout))


@functools.lru_cache(maxsize=4)
def positional_encoding_object(max_positions: int, d_model: int, layout: str = "interleaved") -> dict:
    """positional_encoding_text as a dict (computed once; shared by every caller, so never change it)."""
    return orjson.loads(positional_encoding_text(max_positions, d_model, layout))
