"""What one unit of each model job's work costs, as measured: the source of every ZeroGPU duration.

serving/job_costs.json holds, per job of serving/jobs.py, a line `seconds = fixed_s + per_unit_s x work` fitted by
least squares to the job's CPU seconds at several input sizes (its `work` in the unit the job declares: decoder
steps, tokens, ...), one PyTorch thread, with the machine and the command that measured it:

    python3 -m scripts.job_seconds --checkpoint checkpoints/de-en-small --write

The CPU times are an upper bound for the GPU (the same small batches, the same number of kernel launches, each
faster); a measurement on a GPU replaces them by running the same command there.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

COSTS_FILE = Path(__file__).resolve().parent / "job_costs.json"


@dataclass(frozen=True)
class JobCost:
    """seconds = fixed_s + per_unit_s x work (the job's declared unit)."""

    fixed_s: float
    per_unit_s: float

    def seconds(self, work: float) -> float:
        return self.fixed_s + self.per_unit_s * max(0.0, work)


def fit(points: list[tuple[float, float]]) -> JobCost:
    """The least-squares line through (work, seconds) points, its intercept and slope kept >= 0 (a cost never falls
    with more work); one point, or points of one size: a line through the origin."""
    works = [float(w) for w, _ in points]
    seconds = [float(s) for _, s in points]
    n = len(points)
    if n == 0:
        raise ValueError("no measurements to fit")
    mean_w, mean_s = sum(works) / n, sum(seconds) / n
    spread = sum((w - mean_w) ** 2 for w in works)
    if spread == 0:
        return JobCost(0.0, mean_s / mean_w if mean_w else 0.0) if mean_w else JobCost(mean_s, 0.0)
    slope = max(0.0, sum((w - mean_w) * (s - mean_s) for w, s in zip(works, seconds)) / spread)
    intercept = mean_s - slope * mean_w
    if intercept < 0:  # through the origin instead
        return JobCost(0.0, sum(w * s for w, s in zip(works, seconds)) / sum(w * w for w in works))
    return JobCost(intercept, slope)


@functools.lru_cache(maxsize=1)
def measured(path: Path = COSTS_FILE) -> dict:
    """The parsed costs file: {"measured_on": ..., "command": ..., "jobs": {name: {"fixed_s", "per_unit_s", ...}}}."""
    return json.loads(path.read_text(encoding="utf-8"))


def cost_of(name: str) -> JobCost:
    """The measured cost line of the job called `name`; KeyError for a job that was never measured."""
    entry = measured()["jobs"][name]
    return JobCost(float(entry["fixed_s"]), float(entry["per_unit_s"]))
