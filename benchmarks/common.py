"""Shared pieces of the benchmarks: timing statistics, fixed texts cut to N tokens, the app server.

Nothing here knows which part is measured; each part module imports what it needs.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import platform
import subprocess
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
from model.training.precision import cpu_flags  # noqa: E402
from scripts.sample_texts import SOURCE_LANGUAGE, TEXTS, text_of_tokens  # noqa: E402, F401 (read here by benchmarks)
from scripts.app_process import started_app  # noqa: E402


# Fixed source texts (written for these benchmarks, in the style of the training data), long enough
# to give 80+ subword tokens with any tokenizer; sentences of exactly N tokens are cut from them.
# --------------------------------------------------------------------------- statistics
def summarize(samples_ms: list[float]) -> dict:
    """Median, p95, min, mean of timings in milliseconds (rounded to 0.01 ms)."""
    values = np.asarray(samples_ms, dtype=float)
    return {
        "median": round(float(np.median(values)), 2),
        "p95": round(float(np.percentile(values, 95)), 2),
        "min": round(float(values.min()), 2),
        "mean": round(float(values.mean()), 2),
        "n": int(values.size),
    }


def time_interleaved(
    functions: dict[str, Callable[[], object]], repeats: int, warmup: int = 1
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Call each function `repeats` times, round-robin (so load changes hit every variant alike).

    -> ({name: wall-clock ms per call}, {name: CPU ms of this process per call}); `warmup`
    untimed rounds first. On a shared machine the CPU time (all threads summed) is the steadier
    of the two; with one thread it approaches the wall time an idle machine would give.
    """
    for _ in range(warmup):
        for function in functions.values():
            function()
    wall: dict[str, list[float]] = {name: [] for name in functions}
    cpu: dict[str, list[float]] = {name: [] for name in functions}
    for _ in range(repeats):
        for name, function in functions.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            function()
            cpu[name].append((time.process_time() - start_cpu) * 1000)
            wall[name].append((time.perf_counter() - start) * 1000)
    return wall, cpu


def ratio(numerator: float, denominator: float) -> float:
    return round(numerator / denominator, 3) if denominator else float("nan")


# --------------------------------------------------------------------------- the app in a subprocess
@contextlib.contextmanager
def app_server(checkpoint: str | Path, checkout: Path = ROOT) -> Iterator[tuple[str, int]]:
    """`python app.py --checkpoint DIR` (`checkout`'s app.py) on a free port (scripts/app_process.py) -> (url, pid);
    always stopped."""
    with (
        tempfile.TemporaryDirectory(prefix="benchmark-app-") as folder,
        started_app(checkpoint, Path(folder) / "app.log", checkout=checkout) as (url, process),
    ):
        yield url, process.pid


def read_memory_kib(pid: int) -> dict:
    """VmRSS / VmHWM (peak RSS) / VmSize of a process from /proc/<pid>/status, in KiB."""
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM", "VmSize"):
            values[key] = int(rest.split()[0])
    return values


def median(values: list[float]) -> float:
    return round(statistics.median(values), 2)


def machine_info(threads: int, checkpoint=None) -> dict:
    """The machine, the software and (when given) the checkpoint a run measured, for its results file."""
    cpu = (
        next(
            (
                line.split(":", 1)[1].strip()
                for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")
            ),
            platform.processor(),
        )
        if Path("/proc/cpuinfo").exists()
        else ""
    )
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    import gradio

    return {
        "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cpu": cpu,
        "cpu_flags": sorted(flag for flag in cpu_flags() if flag.startswith(("avx", "fma", "amx"))),
        "cpu_count": os.cpu_count(),
        "load_average_start": list(os.getloadavg()),
        "torch_threads": threads,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "gradio": gradio.__version__,
        "git_commit": commit,
        **(
            {}
            if checkpoint is None
            else {
                "checkpoint": str(checkpoint.path),
                "parameters": checkpoint.model.num_parameters(),
                "config": checkpoint.config.to_dict(),
            }
        ),
    }
