"""Running the model for the page, apart from the UI.

- `jobs`: every model computation, a typed function declared once with `@model_job` (called as `jobs.x(runner, ...)`).
- `runner`: Runner, which runs a job in this process or, on a ZeroGPU Space, through `zerogpu`.
- `zerogpu`: ZeroGPU mode: detection, the one `@spaces.GPU` dispatcher and each job's GPU duration.
- `device`: which device runs the model (--device).
- `trace_files`: trace JSON files written and expired in constant time per call.
- `wire`: the lean trace JSON (floats compact) and its inverse.

The import graph: serving/ imports model/ (and gradio for its error type only); ui/ imports serving/; never back.
"""

from .jobs import JOBS, ModelJob, model_job
from .runner import Runner
from .trace_files import TraceFiles
from .wire import lean_trace_json, positional_encoding_json, trace_from_lean

__all__ = ["JOBS", "ModelJob", "Runner", "TraceFiles", "lean_trace_json", "model_job", "positional_encoding_json",
           "trace_from_lean"]
