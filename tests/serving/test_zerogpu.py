"""Where the model runs: --device auto, and the ZeroGPU mode of serving/zerogpu.py without a ZeroGPU Space.

The ZeroGPU tests here run the one dispatcher with a recording stand-in for `spaces.GPU` (a ZeroGPU Space would
decorate it once, with a duration per job) and with the `spaces` package's own behaviour off ZeroGPU (its decorator
returns the function unchanged). test_zerogpu_spaces.py runs the real package in ZeroGPU mode. The last test needs
CUDA (skipped without it): a trace on the GPU equals the CPU's.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from helpers import api_function, run_listener
from page_driver import PageDriver
import torch

from model import load_checkpoint
from model.checkpoints.paths import DEFAULT_CHECKPOINT
from model.decoding.ablation import Ablation
from model.decoding.greedy import translate
import gradio as gr

from benchmarks.common import text_of_tokens
from model.text import limits
from serving import JOBS, JobSample, Runner, jobs, zerogpu
from serving.job_costs import fit
from ui.text import EXAMPLES
from serving.device import DEVICE_ENV, choose_device
from serving.runner import BAD_INPUT_TITLE, FAILED_TITLE
from ui import build_demo

GERMAN = "Zwei Hunde spielen im Schnee."
OTHER = "Ein Hund rennt durch den Park."  # not a built-in example (those come from memory: no model call)
ROOT = Path(__file__).resolve().parents[2]


class RecordingGPU:
    """A stand-in for spaces.GPU(duration=...): records each decoration and each call (with its duration), runs
    the function."""

    def __init__(self):
        self.decorated: list[str] = []
        self.calls: list[tuple[tuple, int]] = []

    def __call__(self, task=None, *, duration=None):
        assert task is None and callable(duration), "the dispatcher is decorated as @spaces.GPU(duration=fn)"

        def decorate(function):
            self.decorated.append(function.__name__)

            def called(*args):
                self.calls.append((args, duration(*args)))
                return function(*args)

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
@pytest.mark.parametrize(
    "value, expected",
    [("true", True), ("True", True), ("1", True), ("t", True), ("", False), ("false", False), ("0", False)],
)
def test_zerogpu_is_detected_as_the_spaces_package_does(value, expected):
    from spaces.config import boolean

    assert zerogpu.on_zerogpu({zerogpu.ZERO_GPU_ENV: value}) is expected is boolean(value)
    assert zerogpu.on_zerogpu({}) is False


def test_each_call_asks_for_the_gpu_time_of_its_own_input(checkpoint):
    """duration = HEADROOM x (fixed + per unit x work), whole seconds, from serving/job_costs.json and the call's work
    counted here independently; a longer sentence asks for more, a warm worker for no start-up."""
    costs = json.loads((ROOT / "serving" / "job_costs.json").read_text())["jobs"]
    assert set(costs) == set(JOBS)  # every job measured
    short = JobSample.of(checkpoint, GERMAN, "de-en")
    long = JobSample.of(checkpoint, text_of_tokens(checkpoint.tokenizer, "de", 60), "de-en")
    for name, job in JOBS.items():
        asked = {}
        for size, sample in (("short", short), ("long", long)):
            args, kwargs = job.example(sample)
            work = job.work(checkpoint, args, kwargs)
            seconds = zerogpu.HEADROOM * (costs[name]["fixed_s"] + costs[name]["per_unit_s"] * work)
            asked[size] = zerogpu.gpu_seconds(job, checkpoint, args, kwargs)
            assert asked[size] == min(zerogpu.MAX_GPU_S, max(1, math.ceil(seconds))), (name, size)
            cold = zerogpu.gpu_seconds(job, checkpoint, args, kwargs, warm=False)
            assert cold == asked[size] + zerogpu.COLD_START_S, name
        assert asked["short"] <= asked["long"], name
    # the work counted from the input, as the model would spend it
    budget = lambda trace: min(limits.MAX_TARGET_TOKENS, 2 * len(trace.source_ids) + 10)  # noqa: E731
    assert jobs.translate.work(checkpoint, (GERMAN, "de-en")) == budget(short.trace)
    assert jobs.beam_versus_greedy.work(checkpoint, (long.trace, 4)) == 4 * budget(long.trace)
    src, out = short.source_ids, short.output_ids
    assert jobs.corpus_attribution.work(checkpoint, (src, out), {"steps": 8}) == 10 * len(out) * (len(src) + len(out))
    assert jobs.translate.work(checkpoint, (GERMAN, "fr-en")) == 0  # refused at once: no time for work
    # a typical sentence's translation asks for a second or two, not a fixed allowance
    assert zerogpu.gpu_seconds(jobs.translate, checkpoint, (GERMAN, "de-en")) <= 2


def test_the_cost_line_is_fitted_to_the_measurements():
    line = fit([(10, 0.3), (20, 0.5), (40, 0.9)])
    assert line.fixed_s == pytest.approx(0.1) and line.per_unit_s == pytest.approx(0.02)
    assert fit([(176, 0.3), (176, 0.4)]).seconds(176) == pytest.approx(0.35)  # one size: through the origin
    falling = fit([(10, 0.5), (20, 0.1)])  # noise cannot make more work cheaper
    assert falling.per_unit_s >= 0 and falling.seconds(20) >= falling.seconds(10)


def test_the_dispatcher_counts_the_start_up_only_for_a_cold_worker(tiny_checkpoint):
    gpu, now = RecordingGPU(), [1000.0]
    checkpoint = load_checkpoint(tiny_checkpoint)
    dispatch = zerogpu.gpu_dispatcher(checkpoint, gpu=gpu, clock=lambda: now[0])
    runner = Runner(checkpoint, dispatch)
    warm = zerogpu.gpu_seconds(jobs.translate, checkpoint, ("Ein Hund.", "de-en"))
    jobs.translate(runner, "Ein Hund.", "de-en")  # the first call forks the worker
    now[0] += zerogpu.WARM_S / 2
    jobs.translate(runner, "Ein Hund.", "de-en")  # reused
    now[0] += zerogpu.WARM_S * 2
    jobs.translate(runner, "Ein Hund.", "de-en")  # idle too long: taken as a fresh worker
    assert [seconds for _, seconds in gpu.calls] == [warm + zerogpu.COLD_START_S, warm, warm + zerogpu.COLD_START_S]


@pytest.fixture
def zerogpu_space(monkeypatch):
    """This process as if on a ZeroGPU Space, with a recording spaces.GPU and the jobs' model on the CPU."""
    gpu = RecordingGPU()
    monkeypatch.setattr(zerogpu, "on_zerogpu", lambda environ=None: True)
    monkeypatch.setattr(zerogpu, "load_spaces", lambda: gpu)
    monkeypatch.setattr(zerogpu, "MODEL_DEVICE", "cpu")  # no GPU here; on ZeroGPU "cuda" (patched by spaces)
    return gpu


def test_on_zerogpu_every_job_runs_through_one_dispatcher(zerogpu_space, tiny_checkpoint):

    demo = build_demo(tiny_checkpoint)
    runner = demo.runner
    assert runner.zerogpu and zerogpu_space.decorated == ["run_on_gpu"]  # one GPU entry point, one GPU process
    assert zerogpu_space.calls == []  # nothing ran the model at start-up: no GPU outside a request there
    driver = PageDriver(demo)
    driver.load()  # the start-up example, computed on the page's CPU copy: no GPU request
    assert zerogpu_space.calls == [] and driver.trace.source_text == EXAMPLES[0][0]
    driver.translate(OTHER, "de-en")  # the page's Translate
    trace, translation = driver.trace, driver.shown("translation")
    [((name, args, kwargs, direction), seconds)] = zerogpu_space.calls
    assert (
        name == "translate"
        and direction == ""
        and seconds == zerogpu.gpu_seconds(jobs.translate, runner.checkpoint, args, kwargs, False)
    )
    assert not any(isinstance(value, type(runner.checkpoint)) for value in (*args, *kwargs.values()))  # inherited
    expected = translate(runner.checkpoint.model, runner.checkpoint.tokenizer, OTHER, "de-en")
    assert trace.output_ids == expected.output_ids and translation == expected.translation
    np.testing.assert_array_equal(trace.cross_attention, expected.cross_attention)
    jobs.beam_versus_greedy(runner, trace)
    assert zerogpu_space.calls[-1][0][0] == "beam_versus_greedy"
    assert zerogpu_space.calls[-1][1] == zerogpu.gpu_seconds(jobs.beam_versus_greedy, runner.checkpoint, (trace,))


def test_the_examples_menu_costs_no_gpu_request(zerogpu_space, tiny_checkpoint):
    """Every built-in example, picked twice from the menu: no GPU call at all (the trace is computed once in the
    server, on the page's CPU copy, then kept by the page's one Translate action); it equals the model's own
    translation. Another sentence costs one call."""
    demo = build_demo(tiny_checkpoint)
    runner, driver = demo.runner, PageDriver(demo)
    driver.load()
    for index, (text, direction) in enumerate(EXAMPLES):
        driver.input("examples", str(index))
        first = driver.trace
        assert (first.source_text, first.direction) == (text, direction) and driver.value("source") == text
        driver.input("examples", str(index))
        assert driver.trace is first  # from memory
        expected = translate(runner.checkpoint.model, runner.checkpoint.tokenizer, text, direction)
        assert first.output_ids == expected.output_ids and first.translation == expected.translation
    translator = inspect.getclosurevars(driver.listener("translate").fn.action.fn).nonlocals["translator"]
    assert zerogpu_space.calls == [] and translator.cache.cached(runner) == len(EXAMPLES)
    run_listener(api_function(demo, "translate"), OTHER, "de-en")
    assert [name for (name, *_), _ in zerogpu_space.calls] == ["translate"]


def test_the_page_keeps_its_own_cpu_weights_on_zerogpu(zerogpu_space, tiny_checkpoint):
    """The jobs' copy is the one ZeroGPU packs (and empties in the server at launch); the page's stays real."""
    demo = build_demo(tiny_checkpoint)
    page_model = demo.runner.checkpoint.model
    with torch.no_grad():
        for parameter in page_model.parameters():
            saved = parameter.detach().clone()
            break
    gpu_trace = jobs.translate(demo.runner, GERMAN, "de-en")
    weights = {name: tensor.clone() for name, tensor in page_model.state_dict().items()}  # shared with other tests
    try:
        with torch.no_grad():  # what the pack does to the server's copy: the jobs must not compute on it
            for parameter in page_model.parameters():
                parameter.zero_()
        assert jobs.translate(demo.runner, GERMAN, "de-en").output_ids == gpu_trace.output_ids
        assert not torch.equal(saved, next(page_model.parameters()))
    finally:
        page_model.load_state_dict(weights)


def test_the_dispatcher_with_the_spaces_package_off_zerogpu_equals_the_plain_jobs(checkpoint):
    """The real `spaces.GPU` (a no-op off ZeroGPU) around the dispatcher: same results, same errors, plain data."""
    if zerogpu.on_zerogpu():
        pytest.skip("on a ZeroGPU Space the decorator is not a no-op")
    import spaces

    plain, wrapped = Runner(checkpoint), Runner(checkpoint, zerogpu.gpu_dispatcher(checkpoint, gpu=spaces.GPU))
    trace = jobs.translate(wrapped, GERMAN, "de-en")
    assert trace.output_ids == jobs.translate(plain, GERMAN, "de-en").output_ids
    ablation = Ablation(encoder_heads=frozenset({(0, 1)}))
    branched = jobs.translate(wrapped, GERMAN, "de-en", forced_prefix=trace.output_ids[:1], ablation=ablation)
    assert (
        branched.output_ids
        == jobs.translate(plain, GERMAN, "de-en", forced_prefix=trace.output_ids[:1], ablation=ablation).output_ids
    )
    probabilities = jobs.token_probabilities(wrapped, trace.source_ids, trace.output_ids, ablation)
    np.testing.assert_array_equal(
        probabilities, jobs.token_probabilities(plain, trace.source_ids, trace.output_ids, ablation)
    )
    comparison, recording = jobs.beam_versus_greedy(wrapped, trace), jobs.record_cache(wrapped, trace)
    assert comparison == jobs.beam_versus_greedy(plain, trace)
    assert not any(contains_tensor(value) for value in [trace, branched, probabilities, comparison, recording])
    with pytest.raises(gr.Error) as wrapped_error:  # bad input keeps its message (the page shows it), no quotes
        jobs.translate(wrapped, GERMAN, "fr-en")
    with pytest.raises(ValueError) as plain_error:
        jobs.translate.function(checkpoint, GERMAN, "fr-en")
    assert wrapped_error.value.message == str(plain_error.value) and wrapped_error.value.title == BAD_INPUT_TITLE


def test_a_failing_job_is_one_titled_error_in_both_modes(checkpoint, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("out of memory")

    monkeypatch.setattr(jobs.record_cache, "function", broken)
    trace = jobs.translate(Runner(checkpoint), GERMAN, "de-en")
    for runner in (Runner(checkpoint), Runner(checkpoint, zerogpu.gpu_dispatcher(checkpoint, gpu=RecordingGPU()))):
        with pytest.raises(gr.Error) as raised:
            jobs.record_cache(runner, trace)
        assert raised.value.title == FAILED_TITLE and "RuntimeError: out of memory" in raised.value.message


# --------------------------------------------------------------------------- what a ZeroGPU Space installs
ROOT = Path(__file__).resolve().parents[2]


def test_requirements_leave_spaces_to_the_platform_and_pin_a_torch_zerogpu_runs():
    from scripts import deploy_space

    requirements = ROOT / "requirements.txt"
    specs = [line.split("#")[0].strip().lower() for line in requirements.read_text(encoding="utf-8").splitlines()]
    assert not [spec for spec in specs if spec.startswith("spaces")]
    pin = deploy_space.torch_pin(requirements)
    assert deploy_space.zerogpu_torch_problem(pin) is None
    # listed by ZeroGPU's documentation, or newer and the deploy docs say how that risk is handled
    deploy_doc = (ROOT / "docs" / "deploy.md").read_text(encoding="utf-8")
    assert pin in deploy_space.ZEROGPU_LISTED or (
        f"`torch=={pin}`, newer than that list" in deploy_doc
        and all(version in deploy_doc for version in deploy_space.ZEROGPU_LISTED)
        and "tests/serving/test_zerogpu_spaces.py" in deploy_doc
    )
    assert deploy_space.zerogpu_torch_note("2.11.0") is None and "newer than" in deploy_space.zerogpu_torch_note(
        "2.13.0"
    )


@pytest.mark.parametrize(
    "version, says",
    [
        ("2.7.1", "older than 2.8.0"),
        ("2.0.1", "older than 2.8.0"),
        ("2.13.0+cpu", "local build"),
        ("two", "not a version"),
    ],
)
def test_the_deploy_refuses_a_torch_zerogpu_cannot_run(tmp_path, version, says):
    from scripts import deploy_space

    (tmp_path / "requirements.txt").write_text(f"gradio==6.31.0\ntorch=={version}  # pinned\n")
    with pytest.raises(deploy_space.DeployError, match=f"{re.escape(says)}.*Pin a supported torch"):
        deploy_space.check_torch_for(tmp_path, "zerogpu")
    deploy_space.check_torch_for(tmp_path, "cpu-basic")  # CPU hardware runs any torch


# --------------------------------------------------------------------------- on a real GPU
SENTENCES = [
    ("Zwei Hunde spielen im Schnee.", "de-en"),
    ("Ein Mann mit einem roten Hut fährt Fahrrad durch die Stadt.", "de-en"),
    ("Eine Frau liest ein Buch im Park.", "de-en"),
    ("A little girl is climbing a tree.", "en-de"),
    ("Two men are working on a construction site in the rain.", "en-de"),
]
WEIGHT_FIELDS = (
    "encoder_attention",
    "decoder_self_attention",
    "cross_attention",
    "chosen_probs",
    "candidate_probs",
)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_a_trace_on_the_gpu_equals_the_cpu_trace():
    """Five sentences through the shipped checkpoint on cuda and on the CPU: the same tokens, the same plain
    numpy data, attention (and probabilities) within 1e-4."""
    cpu, cuda = load_checkpoint(DEFAULT_CHECKPOINT), load_checkpoint(DEFAULT_CHECKPOINT, device="cuda")
    assert next(cuda.model.parameters()).is_cuda
    for text, direction in SENTENCES:
        on_cpu = jobs.translate.function(cpu, text, direction)
        on_gpu = jobs.translate.function(cuda, text, direction)
        assert not contains_tensor(on_gpu)
        assert on_gpu.output_tokens == on_cpu.output_tokens and on_gpu.translation == on_cpu.translation, text
        assert on_gpu.source_tokens == on_cpu.source_tokens and on_gpu.stopped_by == on_cpu.stopped_by
        for field in dataclasses.fields(on_cpu):
            x, y = getattr(on_gpu, field.name), getattr(on_cpu, field.name)
            if isinstance(y, np.ndarray):
                assert isinstance(x, np.ndarray) and x.dtype == y.dtype and x.shape == y.shape, field.name
        for name in WEIGHT_FIELDS:
            np.testing.assert_allclose(getattr(on_gpu, name), getattr(on_cpu, name), atol=1e-4, err_msg=name)


def test_the_job_table_in_the_docs_is_the_measured_one():
    """docs/serving.md's job table is `python3 -m scripts.job_seconds --table` on the shipped checkpoint: one row per
    declared job, from serving/job_costs.json."""
    from scripts.job_seconds import table

    generated = table(load_checkpoint(DEFAULT_CHECKPOINT))
    assert generated in (ROOT / "docs" / "serving.md").read_text(encoding="utf-8")
    assert [row.split("`")[1] for row in generated.splitlines()[2:]] == list(JOBS)


def test_a_larger_model_asks_for_its_parameter_counts_share_more(checkpoint):
    """On a model with k times the parameters of the measured one (serving/job_costs.json), the same input asks for
    k times the seconds (OPUS-MT: about 9.8); a smaller model asks as the measured one does."""
    from types import SimpleNamespace

    measured = json.loads((ROOT / "serving" / "job_costs.json").read_text())["parameters"]
    assert measured == load_checkpoint(DEFAULT_CHECKPOINT).model.num_parameters()  # the model the costs are of
    args = (list(range(30)), list(range(40)))  # token_probabilities: its work is the token count alone
    cost = json.loads((ROOT / "serving" / "job_costs.json").read_text())["jobs"]["token_probabilities"]
    for parameters in (measured // 10, measured, 74_410_000, 40 * measured):
        model = SimpleNamespace(num_parameters=lambda parameters=parameters: parameters)
        scale = max(1.0, parameters / measured)
        assert zerogpu.model_scale(SimpleNamespace(model=model)) == scale
        seconds = zerogpu.HEADROOM * (cost["fixed_s"] + cost["per_unit_s"] * 70) * scale
        asked = zerogpu.gpu_seconds(jobs.token_probabilities, SimpleNamespace(model=model), args)
        assert asked == min(zerogpu.MAX_GPU_S, max(1, math.ceil(seconds))), parameters
    big = SimpleNamespace(model=SimpleNamespace(num_parameters=lambda: 100 * measured))
    assert zerogpu.gpu_seconds(jobs.token_probabilities, big, args) > zerogpu.gpu_seconds(
        jobs.token_probabilities, SimpleNamespace(model=SimpleNamespace(num_parameters=lambda: measured)), args
    )
