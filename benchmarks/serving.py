"""Serving part: the app as visitors see it, measured from outside through gradio_client.

- single call: `/translate` through a default `gradio_client.Client` (the translation alone) and
  `/translation_trace` (the trace, for a client that wants it), beside the bare model call
  (`model.decoding.greedy.translate` in this process, same 20-token sentence), interleaved in one run; the
  API's cost in units of the model's (`api_over_bare`). `python3 -m benchmarks.serving` runs this part alone;
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

from .common import started_app, summarize, text_of_tokens
from .memory import tree_rss_mib

from scripts import load_test

SENTENCE_TOKENS = 20  # a sentence of 20 source subwords (text_of_tokens of benchmarks/common.py)


def single_call(url: str, checkpoint, repeats: int) -> dict:
    """Medians of `repeats` calls of each, interleaved in one run after two warm-ups: `/translate` through a default
    gradio_client Client (the translation alone), `/translation_trace` (the lean trace JSON, for a client that
    wants it), and the bare model call in this process (`model.decoding.greedy.translate`, the same sentence,
    its full trace built, one PyTorch thread as the app's): `api_over_bare` is the API's cost in units of the model's."""
    import torch
    from gradio_client import Client

    torch.set_num_threads(1)  # as the app runs each request (ui/server.py's default threads)
    sentence = (text_of_tokens(checkpoint.tokenizer, "de", SENTENCE_TOKENS), "de-en")
    client = Client(url, verbose=False)  # default settings
    runs = {
        "api_ms": lambda: client.predict(*sentence, api_name="/translate"),
        "api_trace_ms": lambda: client.predict(*sentence, api_name="/translation_trace"),
        "bare_model_ms": lambda: translate(checkpoint.model, checkpoint.tokenizer, *sentence),
    }
    samples: dict[str, list[float]] = {name: [] for name in runs}
    for index in range(repeats + 2):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            if index >= 2:  # two warm-up rounds
                samples[name].append((time.perf_counter() - start) * 1000)
    result = {name: summarize(values) for name, values in samples.items()}
    api, bare = result["api_ms"]["median"], result["bare_model_ms"]["median"]
    return {
        **result,
        "sentence_tokens": SENTENCE_TOKENS,
        "api_over_bare": round(api / bare, 3),
        "model_share": round(bare / api, 3),
        "machine": load_test.machine(),
    }


def burst_options(clients: int, requests: int) -> dict:
    return {"clients": clients, "requests": requests, "visitors": 1, "window": 0.0, "verify": True}


def measure(
    checkpoint,
    checkpoint_dir: str,
    repeats: int = 20,
    clients: int = 32,
    requests: int = 5,
    visitors: int = 100,
    window_s: float = 10.0,
) -> dict:
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="benchmark-serving-") as folder:
        with started_app(checkpoint_dir, Path(folder) / "app.log") as (url, process):
            results["single_call"] = single_call(url, checkpoint, repeats)
            results["burst"] = load_test.run_load(url, "burst", burst_options(clients, requests), process.pid)
            lecture = {**burst_options(1, 1), "visitors": visitors, "window": window_s}
            results["lecture"] = load_test.run_load(url, "lecture", lecture, process.pid)
            results["rss"] = tree_rss_mib(process.pid)
    return results


def main(argv: list[str] | None = None) -> dict:
    """`python3 -m benchmarks.serving [--checkpoint DIR] [--repeats N]`: the single-call part alone, as JSON."""
    import argparse
    import json

    from model import load_checkpoint
    from model.checkpoints.paths import DEFAULT_CHECKPOINT

    parser = argparse.ArgumentParser(description="/translate against the bare model call, in one run")
    parser.add_argument("--checkpoint", default=str(DEFAULT_CHECKPOINT))
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args(argv)
    checkpoint = load_checkpoint(args.checkpoint)
    with tempfile.TemporaryDirectory(prefix="benchmark-serving-") as folder:
        with started_app(args.checkpoint, Path(folder) / "app.log") as (url, _process):
            result = single_call(url, checkpoint, args.repeats)
    print(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
