"""serving/pool.py: model jobs in worker processes give the in-process results, from many threads at
once; a worker killed mid-request is answered with WorkerCrashed and replaced; close() leaves no
process. Two-worker pools on the tiny checkpoint (each worker imports torch: a few seconds to start).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from helpers import assert_same_trace

from model import CheckpointError
from model.analysis import readouts
from model.decoding.ablation import Ablation
from model.decoding.greedy import translate
from serving import JOBS, ModelPool, PoolClosed, WorkerCrashed

SENTENCES = [
    ("Ein Mann fährt Fahrrad.", "de-en"),
    ("Zwei Hunde spielen im Schnee.", "de-en"),
    ("A woman reads a book.", "en-de"),
    ("Wie spät ist es?", "de-en"),
]


# ------------------------------------------------------------------ test-only jobs (workers import this module)
def whoami_job(checkpoint, seconds: float = 0.0) -> tuple[int, int]:
    time.sleep(seconds)
    return os.getpid(), threading.get_ident()


def sleep_job(checkpoint, pid_file: str, seconds: float) -> str:
    Path(pid_file).write_text(str(os.getpid()))
    time.sleep(seconds)
    return "slept"


def rendezvous_job(checkpoint, directory: str, timeout: float = 60.0) -> tuple[int, bool]:
    """Leave a mark in `directory`, then wait for another worker's: True = two jobs ran at the same time
    (one after the other, the first would wait out the timeout and answer False)."""
    Path(directory, str(os.getpid())).touch()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(list(Path(directory).iterdir())) >= 2:
            return os.getpid(), True
        time.sleep(0.01)
    return os.getpid(), False


def exit_job(checkpoint, code: int) -> None:
    os._exit(code)


def segfault_job(checkpoint) -> None:
    os.kill(os.getpid(), signal.SIGSEGV)
    time.sleep(10)


TEST_JOBS = {
    **JOBS,
    "whoami": whoami_job,
    "sleep": sleep_job,
    "rendezvous": rendezvous_job,
    "exit": exit_job,
    "segfault": segfault_job,
}


@pytest.fixture(scope="module")
def pool(tiny_checkpoint):
    with ModelPool(tiny_checkpoint, workers=2, jobs=TEST_JOBS) as pool:
        yield pool


def live_children() -> list[int]:
    """Worker processes whose parent is this process (zombies included)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid() and b"serving.worker" in cmdline:
                found.append(int(entry.name))
    return found


# ------------------------------------------------------------------ results equal the in-process ones
@pytest.mark.parametrize("text, direction", SENTENCES[:3])
def test_translate_in_a_worker_equals_translate_in_process(pool, checkpoint, text, direction):
    assert_same_trace(
        pool.run("translate", text=text, direction=direction),
        translate(checkpoint.model, checkpoint.tokenizer, text, direction),
    )


def test_branching_and_ablation_in_a_worker_equal_in_process(pool, checkpoint):
    text, direction = SENTENCES[0]
    original = translate(checkpoint.model, checkpoint.tokenizer, text, direction)
    forced = [*original.output_ids[:1], int(original.candidate_ids[1][1])]
    ablation = Ablation(encoder_heads={(0, 1)}, cross_heads={(1, 0)}, positional_encoding=False)
    assert_same_trace(
        pool.run("translate", text=text, direction=direction, forced_prefix=forced),
        translate(checkpoint.model, checkpoint.tokenizer, text, direction, forced_prefix=forced),
    )
    assert_same_trace(
        pool.run("translate", text=text, direction=direction, ablation=ablation),
        translate(checkpoint.model, checkpoint.tokenizer, text, direction, ablation=ablation),
    )
    probs = pool.run(
        "token_probabilities", source_ids=original.source_ids, output_ids=original.output_ids, ablation=ablation
    )
    assert np.array_equal(
        probs, readouts.token_probabilities(checkpoint.model, original.source_ids, original.output_ids, ablation)
    )


def test_beam_versus_greedy_and_checkpoint_info_in_a_worker(pool, checkpoint, tiny_checkpoint):
    trace = translate(checkpoint.model, checkpoint.tokenizer, *SENTENCES[1])
    assert pool.run("beam_versus_greedy", trace=trace) == readouts.beam_versus_greedy(
        checkpoint.model, checkpoint.tokenizer, trace
    )
    info = pool.run("checkpoint_info")
    assert info["config"] == checkpoint.config and info["metrics"] == checkpoint.metrics
    assert Path(info["path"]) == Path(tiny_checkpoint).resolve()


# ------------------------------------------------------------------ errors
def test_a_jobs_error_comes_back_with_its_type_and_message(pool, checkpoint):
    with pytest.raises(ValueError) as worker_error:
        pool.run("translate", text="Hallo", direction="xx-yy")
    with pytest.raises(ValueError) as local_error:
        translate(checkpoint.model, checkpoint.tokenizer, "Hallo", "xx-yy")
    assert str(worker_error.value) == str(local_error.value)
    with pytest.raises(TypeError, match="must be a string"):
        pool.run("translate", text=12345, direction="de-en")
    with pytest.raises(ValueError, match="unknown job 'nope'; known jobs: .*translate"):
        pool.run("nope")
    assert pool.run("translate", text="Hallo", direction="de-en").source_text == "Hallo"  # still serving


def test_jobs_must_be_module_level_functions(tiny_checkpoint):
    with pytest.raises(ValueError, match="module-level function"):
        ModelPool(tiny_checkpoint, workers=1, jobs={"lambda": lambda checkpoint: 1})


# ------------------------------------------------------------------ concurrency
def test_eight_threads_at_once_each_get_their_own_result(pool, checkpoint):
    expected = {key: translate(checkpoint.model, checkpoint.tokenizer, *key) for key in SENTENCES}
    asks = [SENTENCES[i % len(SENTENCES)] for i in range(24)]
    with ThreadPoolExecutor(8) as threads:
        results = list(threads.map(lambda key: pool.run("translate", text=key[0], direction=key[1]), asks))
    for key, trace in zip(asks, results):
        assert_same_trace(trace, expected[key])


def test_both_workers_run_at_the_same_time(pool, tmp_path):
    """Two jobs meet: each waits for the other's mark, which only a job running at the same time can leave."""
    with ThreadPoolExecutor(2) as threads:
        answers = list(threads.map(lambda _: pool.run("rendezvous", directory=str(tmp_path)), range(2)))
    assert all(met for _, met in answers), "the second job started only after the first had finished"
    assert {pid for pid, _ in answers} == set(pool.pids) and len(pool.pids) == 2
    assert os.getpid() not in {pid for pid, _ in answers}


# ------------------------------------------------------------------ crashes
def run_in_thread(function):
    box = {}

    def target():
        try:
            box["result"] = function()
        except BaseException as error:  # noqa: BLE001 - the test inspects it
            box["error"] = error

    thread = threading.Thread(target=target)
    thread.start()
    return thread, box


def test_a_worker_killed_mid_request_answers_worker_crashed_and_is_replaced(pool, tmp_path):
    before = pool.pids
    pid_file = tmp_path / "pid"
    thread, box = run_in_thread(lambda: pool.run("sleep", pid_file=str(pid_file), seconds=60))
    deadline = time.monotonic() + 60
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline, "the sleep job never started"
        time.sleep(0.05)
    victim = int(pid_file.read_text())
    assert victim in before
    os.kill(victim, signal.SIGKILL)
    thread.join(timeout=30)
    assert not thread.is_alive(), "the request hung after its worker died"
    assert isinstance(box.get("error"), WorkerCrashed)
    assert "stopped unexpectedly (killed by SIGKILL)" in str(box["error"]) and "try again" in str(box["error"])
    assert pool.run("translate", text="Hallo", direction="de-en").source_text == "Hallo"
    assert victim not in pool.pids and len(pool.pids) == 2


@pytest.mark.parametrize(
    "job, kwargs, how", [("exit", {"code": 3}, "exit code 3"), ("segfault", {}, "killed by SIGSEGV")]
)
def test_a_worker_that_dies_inside_a_job_is_reported_and_replaced(pool, job, kwargs, how):
    with pytest.raises(WorkerCrashed, match=f"stopped unexpectedly \\({how}\\) while running '{job}'"):
        pool.run(job, **kwargs)
    with ThreadPoolExecutor(4) as threads:  # both slots serve again, the replacement once it has loaded
        answers = list(threads.map(lambda _: pool.run("whoami", seconds=0.2), range(4)))
    assert len({pid for pid, _ in answers}) == 2 and sorted({pid for pid, _ in answers}) == pool.pids


def test_a_job_over_the_time_limit_is_stopped(pool, tmp_path):
    pool.job_timeout_s = 0.5
    try:
        with pytest.raises(WorkerCrashed, match="took longer than 0.5 s while running 'sleep'"):
            pool.run("sleep", pid_file=str(tmp_path / "pid"), seconds=30)
    finally:
        pool.job_timeout_s = None
    assert pool.run("whoami")[0] in pool.pids


# ------------------------------------------------------------------ single-process mode and closing
def test_single_process_mode_runs_in_the_callers_thread(tiny_checkpoint, checkpoint):
    with ModelPool(tiny_checkpoint, workers=0, jobs=TEST_JOBS) as single:
        assert single.pids == []
        assert single.run("whoami") == (os.getpid(), threading.get_ident())
        assert_same_trace(
            single.run("translate", text="Hallo Welt", direction="de-en"),
            translate(checkpoint.model, checkpoint.tokenizer, "Hallo Welt", "de-en"),
        )
        with pytest.raises(ValueError, match="direction"):
            single.run("translate", text="Hallo", direction="xx")
    with pytest.raises(PoolClosed):
        single.run("whoami")


def test_close_stops_every_worker_and_answers_the_request_in_flight(tiny_checkpoint, tmp_path):
    pool = ModelPool(tiny_checkpoint, workers=2, jobs=TEST_JOBS)
    pids = pool.pids
    assert len(pids) == 2 and set(pids) <= set(live_children())
    thread, box = run_in_thread(lambda: pool.run("sleep", pid_file=str(tmp_path / "pid"), seconds=60))
    while not (tmp_path / "pid").exists():
        time.sleep(0.05)
    pool.close()
    thread.join(timeout=30)
    assert isinstance(box.get("error"), PoolClosed)
    assert pool.pids == [] and not set(pids) & set(live_children())  # reaped: not even zombies
    with pytest.raises(PoolClosed):
        pool.run("whoami")


def test_a_bad_checkpoint_raises_its_error_and_leaves_no_process(tmp_path):
    before = set(live_children())  # the module's pool may be running
    with pytest.raises(CheckpointError, match="does not exist"):
        ModelPool(tmp_path / "missing", workers=1)
    assert set(live_children()) <= before


def test_the_throughput_command_in_single_process_mode(tiny_checkpoint, capsys):
    from scripts import pool_throughput

    [result] = pool_throughput.main(
        ["--checkpoint", str(tiny_checkpoint), "--workers", "0", "--threads", "2", "--requests", "4"]
    )
    assert result["requests"] == 4 and result["per_s"] > 0 and 0 < result["p50_s"] <= result["p95_s"]
    assert "workers 0: " in capsys.readouterr().out
