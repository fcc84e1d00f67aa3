"""The app as on a ZeroGPU Space, in one process, for tests/serving/test_zerogpu_spaces.py.

Run as `python3 tests/support/zerogpu_space.py CHECKPOINT PORT [OPUS_MT_FOLDER]` with the environment of a ZeroGPU Space
(SPACES_ZERO_GPU=true, SPACES_ZERO_DEVICE_API_URL: the test's fake device API). It stubs what a CPU build of torch
lacks (CUDA tensors and calls: they become CPU ones), imports the real `spaces` package, builds and launches the
page with ui.server.launch (spaces packs the weights at launch), then runs every model job through the page's
runner (each its declaration's example call, through the one @spaces.GPU dispatcher, in the process spaces forks)
and the same call in this process on the page's CPU checkpoint; given an OPUS-MT folder, it then loads OPUS-MT after
launch and runs its translation the same way (later_opus_mt). It prints one line `READY <json>` with what it saw, keeps serving until
its stdin closes, then exits.
"""

from __future__ import annotations

import dataclasses
import json
import mmap
import os
import pickle
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
GERMAN = "Zwei Hunde spielen im Schnee."
SHORT_FIGURE_SENTENCE = "laws making the process more difficult."  # Figure 3's words, short for the tiny tokenizer


def not_in_bad_fork() -> bool:
    """torch.cuda._is_in_bad_fork of a build without CUDA (there a lambda, which spaces cannot send to a process)."""
    return False


def page_aligned_copy(tensor, *args, **kwargs):
    """Tensor.pin_memory without CUDA: a copy in page-aligned memory, as pinned memory is (spaces reads the packed
    weights into it with O_DIRECT, which refuses unaligned buffers)."""
    import torch

    nbytes = tensor.numel() * tensor.element_size()
    memory = torch.frombuffer(mmap.mmap(-1, max(nbytes, 1)), dtype=torch.uint8)[:nbytes]
    copy = memory.view(tensor.dtype).reshape(tensor.shape)
    copy.copy_(tensor)
    return copy


def stub_cuda_of_a_cpu_build() -> None:
    """What a CPU build of torch cannot do, done on the CPU (before `import spaces`, which saves some of them)."""
    import torch

    torch.version.cuda = "12.8"  # spaces/zero/torch/static.py reads it at import (None on a CPU build)
    torch._C._cuda_init = lambda: None  # saved by spaces/zero/torch/patching.py at import (absent on a CPU build)
    torch.cuda._is_in_bad_fork = not_in_bad_fork  # spaces asks a forked process at import
    torch.Tensor.cuda = lambda self, *args, **kwargs: self.clone()  # a copy, as a move to the device is
    torch.Tensor.pin_memory = page_aligned_copy
    torch.cuda.synchronize = lambda *args, **kwargs: None

    def on_cpu(function):
        def call(*args, **kwargs):
            if str(kwargs.get("device", "")).startswith("cuda"):
                kwargs["device"] = "cpu"
            return function(*args, **kwargs)

        return call

    torch.tensor, torch.empty = on_cpu(torch.tensor), on_cpu(torch.empty)  # the packed weights' CUDA storages


def same(a, b) -> bool:
    """Equal results: arrays exactly, dataclasses and containers field by field."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b))
    if hasattr(a, "__dataclass_fields__"):
        return type(a) is type(b) and all(same(getattr(a, name), getattr(b, name)) for name in a.__dataclass_fields__)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[key], b[key]) for key in a)
    return a == b


def model_bytes(model) -> int:
    """Bytes of the model's tensors (parameters and buffers), each storage once."""
    storages = {}
    for tensor in [*model.parameters(), *model.buffers()]:
        storages[tensor.untyped_storage().data_ptr()] = tensor.untyped_storage().nbytes()
    return sum(storages.values())


def later_opus_mt(demo, folder: str, own_sample) -> dict:
    """OPUS-MT loaded after launch (as a visitor's pick or the Space's preload does), from a local folder: its page is
    built into the running app and its translate job runs through its own @spaces.GPU dispatcher, in a process
    forked after the load, on the copy put on cuda in this process, outside any GPU call."""
    from model.checkpoints.catalogue import OPUS_MT_ENV, load_opus_mt
    from serving import jobs, zerogpu

    import io
    import logging

    log = io.StringIO()
    logging.getLogger("ui.models").addHandler(logging.StreamHandler(log))
    os.environ[OPUS_MT_ENV] = folder  # read when the load runs: the page was built without OPUS-MT
    demo.later.start()
    state = demo.later.wait(300)
    if state != "ready":  # the reason, for the test's message
        import traceback

        from ui.models import open_opus_mt

        try:
            demo.later.open_page(open_opus_mt())
        except Exception:  # noqa: BLE001
            return {"state": state, "problem": demo.later.problem, "error": traceback.format_exc()[-3000:]}
        return {"state": state, "problem": demo.later.problem, "log": log.getvalue()[-4000:]}
    runner, fresh = demo.runners["opus-mt"], load_opus_mt("de-en", folder=folder)
    text = "Der Hund läuft über die nasse Straße."
    on_gpu = jobs.translate(runner, text, "de-en")
    here = jobs.translate.function(fresh, text, "de-en")
    return {
        "state": state,
        "pages": [path for path, *_ in demo.pages],
        "same": same(on_gpu, here),
        "differ": [name for name in here.__dataclass_fields__ if not same(getattr(on_gpu, name), getattr(here, name))],
        "translations": [on_gpu.translation, here.translation],
        "runner_zerogpu": runner.zerogpu,
        "seconds": zerogpu.gpu_seconds(jobs.translate, fresh, (text, "de-en"), {}, warm=False),
    }


def main(checkpoint: str, port: int, opus_mt_folder: str = "") -> None:
    stub_cuda_of_a_cpu_build()
    import spaces  # noqa: F401 - ZeroGPU mode from the environment; before the model loads, as the app does
    from spaces.zero.torch import patching

    import gradio as gr

    from model import load_checkpoint
    from model.analysis.paper_figures import PAPER_FIGURES
    from serving import jobs, zerogpu
    from ui import build_demo, server

    demo = build_demo(checkpoint)
    runner = demo.runner
    server.launch(demo, port=port, prevent_thread_lock=True, quiet=True)  # spaces packs the weights here
    fresh = load_checkpoint(checkpoint)
    page_weights_real = all(
        np.array_equal(a.detach().numpy(), b.detach().numpy())
        for a, b in zip(runner.checkpoint.model.state_dict().values(), fresh.model.state_dict().values())
    )
    figure = dataclasses.replace(PAPER_FIGURES[0], sentence=SHORT_FIGURE_SENTENCE)  # the tiny tokenizer's length
    sample = jobs.JobSample.of(fresh, GERMAN, "de-en", figures=[figure])
    results = {}
    for index, (name, job) in enumerate(jobs.JOBS.items()):
        args, kwargs = job.example(sample)
        seconds = zerogpu.gpu_seconds(job, fresh, args, kwargs, warm=index > 0)  # the first call forks the worker
        on_gpu = job(runner, *args, **kwargs)  # the dispatcher: a GPU call in the forked process
        here = job.function(fresh, *args, **kwargs)
        results[name] = {
            "same": same(on_gpu, here),
            "pickled_bytes": len(pickle.dumps(on_gpu)),
            "seconds": seconds,
            "seconds_warm": zerogpu.gpu_seconds(job, fresh, args, kwargs),
        }
    try:
        jobs.translate(runner, GERMAN, "fr-en")
        bad_input = None
    except gr.Error as error:
        bad_input = {"title": error.title, "message": error.message}
    try:
        jobs.translate.function(fresh, GERMAN, "fr-en")
    except ValueError as error:
        expected_message = str(error)
    report = {
        "pid": os.getpid(),
        "url": f"http://127.0.0.1:{port}/",
        "page_weights_real": page_weights_real,
        "packed_bytes": sum(pack.total_size for pack in patching.tensor_packs),
        "model_bytes": model_bytes(fresh.model),
        "jobs": results,
        "bad_input": bad_input,
        "bad_input_expected": expected_message,
    }
    if opus_mt_folder:
        report["opus_mt"] = later_opus_mt(demo, opus_mt_folder, sample)
    print("READY " + json.dumps(report), flush=True)
    sys.stdin.read()  # serve until the test closes our stdin
    demo.close()


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main(sys.argv[1], int(sys.argv[2]), *sys.argv[3:])
