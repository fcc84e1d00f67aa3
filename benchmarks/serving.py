"""Serving part: the app as visitors see it, measured from outside through gradio_client.

- single call: one `/translate` call through a default `gradio_client.Client` (it downloads the lean
  trace file), median after warm-up, beside the bare model call (`model.decoding.greedy.translate` in this
  process, same sentence) and the model's share of the call;
- burst: C clients x R translations at once (scripts/load_test.py: clients in a separate process);
- lecture hall: V visitors opening the page within W seconds and translating;
- RSS of the app's processes after the runs.
Every result carries the CPU model and the load average before and after.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from model.decoding.greedy import translate

from .common import started_app, summarize
from .memory import tree_rss_mib

from scripts import load_test

SENTENCE = ("Ein Mann mit einem roten Hut fährt mit dem Fahrrad die Straße entlang.", "de-en")


def single_call(url: str, checkpoint, repeats: int) -> dict:
    """Median of `repeats` /translate calls through a default Client, and of the bare model call here."""
    from gradio_client import Client

    client = Client(url, verbose=False)  # default settings (downloads the trace file)
    api = []
    for index in range(repeats + 2):
        start = time.perf_counter()
        client.predict(*SENTENCE, api_name="/translate")
        if index >= 2:  # two warm-up calls
            api.append((time.perf_counter() - start) * 1000)
    lean = Client(url, verbose=False, download_files=False)  # the translation only; the trace stays at its URL
    no_download = []
    for index in range(repeats + 2):
        start = time.perf_counter()
        lean.predict(*SENTENCE, api_name="/translate")
        if index >= 2:
            no_download.append((time.perf_counter() - start) * 1000)
    bare = []
    for index in range(repeats + 2):
        start = time.perf_counter()
        translate(checkpoint.model, checkpoint.tokenizer, *SENTENCE)
        if index >= 2:
            bare.append((time.perf_counter() - start) * 1000)
    api_ms, bare_ms = summarize(api), summarize(bare)
    return {"api_ms": api_ms, "api_no_download_ms": summarize(no_download), "bare_model_ms": bare_ms,
            "model_share": round(bare_ms["median"] / api_ms["median"], 3), "machine": load_test.machine()}


def burst_options(clients: int, requests: int) -> dict:
    return {"clients": clients, "requests": requests, "visitors": 1, "window": 0.0, "verify": True}


def measure(checkpoint, checkpoint_dir: str, repeats: int = 20, clients: int = 32, requests: int = 5,
            visitors: int = 100, window_s: float = 10.0) -> dict:
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="benchmark-serving-") as folder:
        with started_app(checkpoint_dir, Path(folder) / "app.log") as (url, process):
            results["single_call"] = single_call(url, checkpoint, repeats)
            results["burst"] = load_test.run_load(url, "burst", burst_options(clients, requests), process.pid)
            lecture = {**burst_options(1, 1), "visitors": visitors, "window": window_s}
            results["lecture"] = load_test.run_load(url, "lecture", lecture, process.pid)
            results["rss"] = tree_rss_mib(process.pid)
    return results
