"""The page's side of the model runs: the Gradio queue group every model-running listener joins (`model_event`),
the lean trace file (serving/wire.py) written through serving.TraceFiles, and the table of section 3.5 as the API
serves it (ui/api.py). The runner itself, and every model computation, are in serving/
(serving/runner.py, serving/jobs.py).
"""

from __future__ import annotations

import functools

import orjson

from model import TranslationTrace
from serving import TraceFiles, lean_trace_json
from serving.runner import positional_encoding_table
from serving.wire import positional_encoding_json

from .server import CONCURRENCY_LIMIT

# Model computations at once, over every model-running listener (threads; PyTorch releases the GIL); the rest wait
# in Gradio's queue, which shows each page its position. Measured in ui/server.py's docstring.
MODEL_SLOTS = CONCURRENCY_LIMIT
MODEL_EVENTS = "model-runs"  # the Gradio concurrency group of every event that runs the model (model_event)
TRACE_FILES = TraceFiles()  # traces/ in the app's own temporary folder (serving/trace_files.py), expired as it goes


def model_event(**options) -> dict:
    """Keyword arguments of a Gradio listener that runs the model (with `options`): it joins MODEL_EVENTS,
    the one group of MODEL_SLOTS slots shared by every model computation."""
    return {**options, "concurrency_id": MODEL_EVENTS, "concurrency_limit": MODEL_SLOTS}


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
