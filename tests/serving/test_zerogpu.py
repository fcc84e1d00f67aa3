"""Where the model runs (issue 24): --device auto, and the ZeroGPU mode of ui/zerogpu.py.

The ZeroGPU tests run the decorated path with the `spaces` package's own behaviour off ZeroGPU (its decorator
returns the function unchanged) and, with a recording stand-in for `spaces.GPU`, check that a ZeroGPU Space
would wrap every named job with its duration. The last test needs CUDA (skipped without it): a trace on the
GPU equals the CPU's.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from model import load_checkpoint
from model.checkpoints.paths import DEFAULT_CHECKPOINT
from model.decoding.ablation import Ablation
from model.decoding.greedy import translate
from serving import JOBS
from serving.device import DEVICE_ENV, choose_device
from ui import build_demo, zerogpu
from ui.runner import Runner

GERMAN = "Zwei Hunde spielen im Schnee."


class RecordingGPU:
    """A stand-in for spaces.GPU(duration=...): records each decoration and each call, runs the function."""

    def __init__(self):
        self.durations: dict[str, object] = {}
        self.calls: list[tuple[str, dict]] = []

    def __call__(self, task=None, *, duration=None):
        assert task is None, "jobs are decorated as @spaces.GPU(duration=...)"

        def decorate(function):
            name = function.__name__.removesuffix("_on_gpu")
            self.durations[name] = duration

            def called(**kwargs):
                self.calls.append((name, kwargs))
                return function(**kwargs)
            return called
        return decorate


def contains_tensor(value) -> bool:
    """True if a job's result holds a torch.Tensor anywhere (it must be plain data: numpy, lists, dataclasses)."""
    if isinstance(value, torch.Tensor):
        return True
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return any(contains_tensor(getattr(value, field.name)) for field in dataclasses.fields(value))
    if isinstance(value, dict):
        return any(contains_tensor(item) for item in value.values())
    if isinstance(value, (list, tuple)):
        return any(contains_tensor(item) for item in value)
    return False


# --------------------------------------------------------------------------- --device
def test_device_auto_picks_the_cpu_without_cuda(monkeypatch):
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: auto picks it")
    monkeypatch.delenv(DEVICE_ENV, raising=False)
    assert choose_device("auto") == choose_device(None) == "cpu"
    monkeypatch.setenv(DEVICE_ENV, "auto")
    assert choose_device(None) == "cpu"
    with pytest.raises(ValueError, match="no CUDA device"):
        choose_device("cuda")
    with pytest.raises(ValueError, match="unknown device"):
        choose_device("tpu")


def test_the_command_line_and_the_environment_choose_the_device(monkeypatch):
    import app

    assert app.parse_args(["--device", "cpu"]).device == "cpu"
    assert app.parse_args([]).device is None  # then $ATTENTION_EXPLORER_DEVICE, else auto
    monkeypatch.setenv(DEVICE_ENV, "cpu")
    assert choose_device(None) == "cpu"


# --------------------------------------------------------------------------- ZeroGPU
@pytest.mark.parametrize("value, expected", [("true", True), ("True", True), ("1", True), ("t", True),
                                             ("", False), ("false", False), ("0", False)])
def test_zerogpu_is_detected_as_the_spaces_package_does(value, expected):
    from spaces.config import boolean

    assert zerogpu.on_zerogpu({zerogpu.ZERO_GPU_ENV: value}) is expected is boolean(value)
    assert zerogpu.on_zerogpu({}) is False


def test_every_job_has_a_duration_and_explain_runs_get_longer():
    assert set(zerogpu.DURATIONS) == set(JOBS), "a new job in serving/jobs.py needs a ZeroGPU duration"
    seconds = {name: value if isinstance(value, int) else value() for name, value in zerogpu.DURATIONS.items()}
    assert all(0 < value <= 120 for value in seconds.values())
    plain = zerogpu.translate_seconds(text=GERMAN, direction="de-en")
    assert plain < zerogpu.translate_seconds(text=GERMAN, direction="de-en", forced_prefix=[5])  # branching
    assert plain < zerogpu.translate_seconds(text=GERMAN, direction="de-en", ablation=Ablation())
    assert plain < seconds["beam_versus_greedy"] and plain < seconds["paper_figures"]


@pytest.fixture
def zerogpu_space(monkeypatch):
    """This process as if on a ZeroGPU Space, with a recording spaces.GPU and the model on the CPU."""
    gpu = RecordingGPU()
    monkeypatch.setattr(zerogpu, "on_zerogpu", lambda environ=None: True)
    monkeypatch.setattr(zerogpu, "load_spaces", lambda: gpu)
    monkeypatch.setattr(zerogpu, "MODEL_DEVICE", "cpu")  # no GPU here; on ZeroGPU "cuda" (patched by spaces)
    return gpu


def test_on_zerogpu_every_job_runs_through_spaces_gpu(zerogpu_space, tiny_checkpoint):
    from helpers import api_function  # noqa: PLC0415 - the one helper that finds an endpoint

    demo = build_demo(tiny_checkpoint)
    runner = demo.runner
    assert runner.zerogpu
    assert zerogpu_space.durations == zerogpu.DURATIONS  # every JOBS entry wrapped, with its duration
    assert zerogpu_space.calls == []  # nothing ran the model at start-up: no GPU outside a request there
    trace, translation = api_function(demo, "translate").fn(GERMAN, "de-en")[:2]
    assert [name for name, _ in zerogpu_space.calls] == ["translate"]
    assert "checkpoint" not in zerogpu_space.calls[0][1]  # the checkpoint is inherited, never pickled per call
    expected = translate(runner.checkpoint.model, runner.checkpoint.tokenizer, GERMAN, "de-en")
    assert trace.output_ids == expected.output_ids and translation == expected.translation
    np.testing.assert_array_equal(trace.cross_attention, expected.cross_attention)
    runner.run("beam_versus_greedy", trace=trace)
    assert zerogpu_space.calls[-1][0] == "beam_versus_greedy"


def test_the_decorated_jobs_with_the_spaces_package_off_zerogpu_equal_the_plain_ones(checkpoint):
    """The real `spaces.GPU` (a no-op off ZeroGPU) around every job: same results, same exceptions, plain data."""
    if zerogpu.on_zerogpu():
        pytest.skip("on a ZeroGPU Space the decorator is not a no-op")
    import spaces

    plain, wrapped = Runner(checkpoint), Runner(checkpoint, jobs=zerogpu.gpu_jobs(checkpoint, gpu=spaces.GPU),
                                                zerogpu=True)
    trace = wrapped.translate(GERMAN, "de-en")
    assert trace.output_ids == plain.translate(GERMAN, "de-en").output_ids
    ablation = Ablation(encoder_heads=frozenset({(0, 1)}))
    branched = wrapped.translate(GERMAN, "de-en", forced_prefix=trace.output_ids[:1], ablation=ablation)
    assert branched.output_ids == plain.translate(GERMAN, "de-en", forced_prefix=trace.output_ids[:1],
                                                  ablation=ablation).output_ids
    results = {
        "token_probabilities": wrapped.token_probabilities(trace.source_ids, trace.output_ids, ablation),
        "beam_versus_greedy": wrapped.beam_versus_greedy(trace),
        "record_cache": wrapped.record_cache(trace),
    }
    np.testing.assert_array_equal(results["token_probabilities"],
                                  plain.token_probabilities(trace.source_ids, trace.output_ids, ablation))
    assert results["beam_versus_greedy"] == plain.beam_versus_greedy(trace)
    assert not any(contains_tensor(value) for value in [trace, branched, *results.values()])
    with pytest.raises(ValueError) as wrapped_error:  # bad input keeps its type and message (the page shows it)
        wrapped.translate(GERMAN, "fr-en")
    with pytest.raises(ValueError) as plain_error:
        plain.translate(GERMAN, "fr-en")
    assert str(wrapped_error.value) == str(plain_error.value)


# --------------------------------------------------------------------------- on a real GPU
SENTENCES = [
    ("Zwei Hunde spielen im Schnee.", "de-en"),
    ("Ein Mann mit einem roten Hut fährt Fahrrad durch die Stadt.", "de-en"),
    ("Eine Frau liest ein Buch im Park.", "de-en"),
    ("A little girl is climbing a tree.", "en-de"),
    ("Two men are working on a construction site in the rain.", "en-de"),
]
WEIGHT_FIELDS = ("encoder_attention", "decoder_self_attention", "cross_attention", "chosen_probs", "candidate_probs",
                 "logit_lens_probs")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_a_trace_on_the_gpu_equals_the_cpu_trace():
    """Five sentences through the shipped checkpoint on cuda and on the CPU: the same tokens, the same plain
    numpy data, attention (and probabilities) within 1e-4."""
    cpu, cuda = load_checkpoint(DEFAULT_CHECKPOINT), load_checkpoint(DEFAULT_CHECKPOINT, device="cuda")
    assert next(cuda.model.parameters()).is_cuda
    for text, direction in SENTENCES:
        on_cpu = JOBS["translate"](cpu, text=text, direction=direction)
        on_gpu = JOBS["translate"](cuda, text=text, direction=direction)
        assert not contains_tensor(on_gpu)
        assert on_gpu.output_tokens == on_cpu.output_tokens and on_gpu.translation == on_cpu.translation, text
        assert on_gpu.source_tokens == on_cpu.source_tokens and on_gpu.stopped_by == on_cpu.stopped_by
        for field in dataclasses.fields(on_cpu):
            x, y = getattr(on_gpu, field.name), getattr(on_cpu, field.name)
            if isinstance(y, np.ndarray):
                assert isinstance(x, np.ndarray) and x.dtype == y.dtype and x.shape == y.shape, field.name
        for name in WEIGHT_FIELDS:
            np.testing.assert_allclose(getattr(on_gpu, name), getattr(on_cpu, name), atol=1e-4, err_msg=name)
