"""Model work in a pool of worker processes, each holding the checkpoint (serving/worker.py).

Why processes: eight translation threads in one Python process contend for the GIL, so a 2-core
server ran the model at 10.7 translations/s with 8 threads against 30.8/s as two processes
(issue 15). The Gradio process keeps the page, the queue and the views; `ModelPool.run` sends a
named job (serving/jobs.py) to an idle worker and blocks until it answers, so it can be called
from Gradio's worker threads, many at once. With more callers than workers, callers wait their
turn here (in practice in Gradio's queue, with its concurrency limit set to the pool size).

A worker that dies mid-request (killed, segfault, out of memory) answers that request with
WorkerCrashed, a message for the page, and is replaced; an exception raised by a job (ValueError
for bad input) reaches the caller with the same type and message. workers=0 is the single-process
mode: jobs run in the caller's thread on a checkpoint loaded in this process (tests, small machines).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Mapping
from multiprocessing.connection import Connection
from pathlib import Path

from .cpus import process_cpus
from .jobs import JOBS

ROOT = Path(__file__).resolve().parent.parent
WORKERS_ENV = "ATTENTION_EXPLORER_WORKERS"
START_TIMEOUT_S = 300.0  # importing torch and loading a checkpoint on a busy 2-core machine is slow
STOP_TIMEOUT_S = 5.0


class WorkerCrashed(RuntimeError):
    """The worker process running a request stopped before answering; the message suits the page."""


class PoolClosed(RuntimeError):
    """A request reached a pool after close()."""


def default_workers() -> int:
    """$ATTENTION_EXPLORER_WORKERS if set (0 = single-process mode), else one worker per CPU this process may
    use (serving/cpus.py: affinity and cgroup quota, not the host's core count)."""
    value = os.environ.get(WORKERS_ENV, "").strip()
    return int(value) if value else process_cpus()


def job_reference(name: str, function: Callable) -> str:
    """"module:qualname" of a module-level function: how a worker process finds the job."""
    module, qualname = getattr(function, "__module__", None), getattr(function, "__qualname__", "")
    if not module or module == "__main__" or "<" in qualname:
        raise ValueError(f"job {name!r} must be a module-level function of an importable module, got {function!r}")
    return f"{module}:{qualname}"


def how_it_ended(process: subprocess.Popen) -> str:
    code = process.poll()
    if code is None:
        return "no answer"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


class _Worker:
    """One worker process and the parent's end of its connection; used by one thread at a time."""

    def __init__(self, init: dict) -> None:
        parent_end, child_end = socket.socketpair()
        env = {**os.environ, "OMP_NUM_THREADS": str(init["threads"]), "MKL_NUM_THREADS": str(init["threads"]),
               "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        with child_end:
            self.process = subprocess.Popen([sys.executable, "-m", "serving.worker", str(child_end.fileno())],
                                            pass_fds=[child_end.fileno()], env=env, stdin=subprocess.DEVNULL)
        self.conn = Connection(parent_end.detach())
        self.ready = False
        self.broken = False  # set when the process died or was stopped: it must be replaced
        try:
            self.conn.send(init)
        except (BrokenPipeError, ConnectionResetError):
            pass  # it died at once: wait_ready() reports how

    @property
    def pid(self) -> int:
        return self.process.pid

    def receive(self, timeout_s: float | None, doing: str) -> tuple[str, object]:
        """The next message; WorkerCrashed (and the worker marked broken) if the process ends or times out."""
        try:
            if timeout_s is not None and not self.conn.poll(timeout_s):
                self.stop(kill=True)
                raise WorkerCrashed(f"The model worker took longer than {timeout_s:g} s {doing} and was stopped; "
                                    "it is being restarted. Please try again.")
            return self.conn.recv()
        except (EOFError, OSError):
            self.broken = True
            try:
                self.process.wait(STOP_TIMEOUT_S)  # reap it: the exit status says what happened
            except subprocess.TimeoutExpired:  # alive but its connection broke: unusable all the same
                self.process.kill()
                self.process.wait()
            raise WorkerCrashed(f"The model worker stopped unexpectedly ({how_it_ended(self.process)}) {doing}; "
                                "it is being restarted. Please try again.") from None

    def wait_ready(self, timeout_s: float) -> None:
        status, value = self.receive(timeout_s, "while loading the checkpoint")
        if status != "ready":
            self.broken = True
            raise value
        self.ready = True

    def call(self, job: str, kwargs: dict, timeout_s: float | None, start_timeout_s: float) -> object:
        if not self.ready:
            self.wait_ready(start_timeout_s)
        try:
            self.conn.send((job, kwargs))  # pickles first: unpicklable arguments raise before anything is sent
        except (BrokenPipeError, ConnectionResetError):
            pass  # the process is gone: receive() reports it
        status, value = self.receive(timeout_s, f"while running {job!r}")
        if status == "error":
            raise value
        return value

    def stop(self, kill: bool = False, timeout_s: float = STOP_TIMEOUT_S) -> None:
        """Ask the process to stop (or kill it), reap it and close the connection."""
        self.broken = True
        if self.process.poll() is None and not kill:
            try:
                self.conn.send(None)
                self.process.wait(timeout_s)
            except (OSError, subprocess.TimeoutExpired):
                pass
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        if kill:  # another thread may be blocked reading: it sees EOF and closes the connection
            return
        self.conn.close()


def _kill_all(workers: set) -> None:
    """Finalizer: no worker outlives its pool (garbage collection or interpreter exit without close())."""
    for worker in list(workers):
        if worker.process.poll() is None:
            worker.process.kill()
            worker.process.wait()


class ModelPool:
    """Named model jobs (serving/jobs.py) run by `workers` processes, each holding the checkpoint.

    Args:
        checkpoint_dir: a local checkpoint directory (model.checkpoints.checkpoint.load_checkpoint).
        workers: worker processes; None = default_workers() (one per core, or $ATTENTION_EXPLORER_WORKERS);
            0 = single-process mode (jobs run in the caller's thread, checkpoint loaded here).
        jobs: name -> module-level function (checkpoint, **kwargs); default serving.jobs.JOBS.
        job_timeout_s: a job running longer is stopped (its worker killed and replaced) with
            WorkerCrashed; None = no limit. Not applied in single-process mode.
        start_timeout_s: how long a worker may take to import torch and load the checkpoint.
        threads: torch threads per worker.
        device: where each worker puts its copy of the model ("cpu" or "cuda"; serving/device.py).

    Raises what loading raises (CheckpointError for a bad checkpoint), with no process left behind.
    """

    def __init__(self, checkpoint_dir: str | Path, workers: int | None = None, jobs: Mapping[str, Callable] | None = None,
                 job_timeout_s: float | None = None, start_timeout_s: float = START_TIMEOUT_S, threads: int = 1,
                 device: str = "cpu") -> None:
        self.workers = default_workers() if workers is None else int(workers)
        if self.workers < 0:
            raise ValueError(f"workers must be 0 (single-process mode) or more, got {self.workers}")
        self.jobs = dict(JOBS if jobs is None else jobs)
        self.job_timeout_s, self.start_timeout_s = job_timeout_s, start_timeout_s
        self._cond = threading.Condition()
        self._idle: deque[_Worker] = deque()
        self._all: set[_Worker] = set()
        self._closed = False
        self._checkpoint = None
        self._finalizer = weakref.finalize(self, _kill_all, self._all)
        if self.workers == 0:
            from model.checkpoints.checkpoint import load_checkpoint

            self._checkpoint = load_checkpoint(checkpoint_dir, device=device)
            return
        self._init = {"sys_path": list(sys.path), "checkpoint": str(Path(checkpoint_dir).resolve()),
                      "jobs": {name: job_reference(name, fn) for name, fn in self.jobs.items()}, "threads": threads,
                      "device": device}
        try:
            started = [self._start_worker() for _ in range(self.workers)]
            for worker in started:
                worker.wait_ready(start_timeout_s)
        except BaseException:
            self.close()
            raise
        self._idle.extend(started)

    # ------------------------------------------------------------------- workers
    def _start_worker(self) -> _Worker:
        worker = _Worker(self._init)
        with self._cond:
            self._all.add(worker)
        return worker

    def _acquire(self) -> _Worker:
        with self._cond:
            while not self._idle and not self._closed:
                self._cond.wait()
            if self._closed:
                raise PoolClosed("The model pool has been shut down.")
            worker = self._idle.popleft()
        if worker.process.poll() is not None:  # died while idle: never blame the next request on it
            worker.broken = True
            worker = self._replace(worker)
        return worker

    def _replace(self, worker: _Worker) -> _Worker:
        worker.stop(kill=True)
        worker.conn.close()
        with self._cond:
            self._all.discard(worker)
        return self._start_worker()  # loads in the background; its first user waits for "ready"

    def _release(self, worker: _Worker) -> None:
        if self._closed:
            worker.stop(kill=True)
            worker.conn.close()
            return
        if worker.broken or worker.process.poll() is not None:
            worker = self._replace(worker)
        with self._cond:
            if self._closed:
                worker.stop()
                return
            self._idle.append(worker)
            self._cond.notify()

    # ------------------------------------------------------------------- public
    def run(self, job: str, /, **kwargs) -> object:
        """Run a named job on an idle worker and return its result; blocks; safe from many threads.

        Raises the job's own exception (same type and message), WorkerCrashed if the worker died
        or timed out (it is replaced), PoolClosed after close(), ValueError for an unknown job.
        """
        if job not in self.jobs:
            raise ValueError(f"unknown job {job!r}; known jobs: {', '.join(sorted(self.jobs))}")
        if self.workers == 0:
            if self._closed:
                raise PoolClosed("The model pool has been shut down.")
            return self.jobs[job](self._checkpoint, **kwargs)
        worker = self._acquire()
        try:
            return worker.call(job, kwargs, self.job_timeout_s, self.start_timeout_s)
        except WorkerCrashed:
            if self._closed:  # close() stopped it: not a crash
                raise PoolClosed("The model pool has been shut down.") from None
            raise
        finally:
            self._release(worker)

    @property
    def pids(self) -> list[int]:
        """Process ids of the live workers (empty in single-process mode)."""
        with self._cond:
            return sorted(w.pid for w in self._all if w.process.poll() is None)

    def close(self) -> None:
        """Stop every worker (a request in flight gets WorkerCrashed or PoolClosed) and reap them."""
        with self._cond:
            self._closed = True
            idle, self._idle = list(self._idle), deque()
            busy = [w for w in self._all if w not in idle]
            self._all.clear()
            self._cond.notify_all()
        for worker in busy:
            worker.stop(kill=True)
        for worker in idle:
            worker.stop()
        self._checkpoint = None

    def __enter__(self) -> "ModelPool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
