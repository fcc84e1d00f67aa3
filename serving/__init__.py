"""Serving the model to many visitors at once, apart from the UI.

- `jobs`: the registry of job names (translate, token_probabilities, beam_versus_greedy, ...).
- `trace_files`: trace JSON files written and expired in constant time per call.
- `wire`: the lean trace JSON (floats compact) and its inverse.
- `device`: which device runs the model (--device).
"""

from .jobs import JOBS, Job
from .trace_files import TraceFiles
from .wire import lean_trace_json, positional_encoding_json, trace_from_lean

__all__ = ["JOBS", "Job", "TraceFiles", "lean_trace_json", "positional_encoding_json", "trace_from_lean"]
