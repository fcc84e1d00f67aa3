"""Running the model for the page, apart from the UI.

- `jobs`: every model computation, a typed function declared once with `@model_job` (called as `jobs.x(runner, ...)`).
- `runner`: Runner, which runs a job in this process or, on a ZeroGPU Space, through `zerogpu`.
- `zerogpu`: ZeroGPU mode: detection, the one `@spaces.GPU` dispatcher and each call's GPU duration.
- `job_costs`: each job's measured cost per unit of work (serving/job_costs.json), from which ZeroGPU durations come.
- `example_cache`: the built-in examples' traces, computed once in this process (never a GPU request).
- `device`: which device runs the model (--device).
- `trace_files`: trace JSON files written and expired in constant time per call.
- `wire`: the lean trace JSON (floats compact) and its inverse.

The import graph: serving/ imports model/ (and gradio for its error type only); ui/ imports serving/; never back.
"""

from .example_cache import ExampleCache
from .jobs import JOBS, JobSample, ModelJob, model_job
from .runner import Runner
from .trace_files import TraceFiles
from .wire import LEAN_FORMAT, lean_trace_json, positional_encoding_json, trace_from_lean

__all__ = [
    "JOBS",
    "ExampleCache",
    "JobSample",
    "ModelJob",
    "Runner",
    "TraceFiles",
    "LEAN_FORMAT",
    "lean_trace_json",
    "model_job",
    "positional_encoding_json",
    "trace_from_lean",
]
