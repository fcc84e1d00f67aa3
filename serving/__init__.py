"""Serving the model to many visitors at once (issue 15), apart from the UI.

- `pool`: ModelPool, named model jobs in worker processes that each hold the checkpoint.
- `jobs`: the registry of job names (translate, token_probabilities, beam_versus_greedy, ...).
- `trace_files`: trace JSON files written and expired in constant time per call.
- `wire`: the lean trace JSON (positional encodings referenced, floats compact) and its inverse.
"""

from .jobs import JOBS, Job
from .pool import ModelPool, PoolClosed, WorkerCrashed, default_workers
from .trace_files import TraceFiles
from .wire import lean_trace_json, positional_encoding_json, trace_from_lean

__all__ = ["JOBS", "ModelPool", "PoolClosed", "TraceFiles", "WorkerCrashed", "default_workers",
           "lean_trace_json", "positional_encoding_json", "trace_from_lean"]
