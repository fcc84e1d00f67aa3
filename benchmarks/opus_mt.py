"""OPUS-MT part: an OPUS-MT (Marian) model in the app on the CPU: Translate -> trace -> first figure, and memory.

Speed, in this process, per torch thread count: for a source of exactly 20 subword tokens (`</s>` not counted),
the app's Translate (`ui.session.translate_text`: the serving job `translate`, i.e. greedy decoding with the
KV cache, the teacher-forced traced pass and the numpy trace, then the trace JSON file for the download button)
and the first figure the Attention tab draws for a new trace (`ui.attention.attention_view` at its defaults:
step 1, encoder-decoder attention, layer 1, head 1: the heatmap built by the visualizer and serialized for
gr.Plot). Server-side only: the browser part measures Gradio's queue and the browser. Rows: the app's own step
budget (a model that never ends runs to the limit, 2 x 21 + 10 = 52 steps) and an output of OUTPUT_TOKENS
tokens (`max_new_tokens`, the same computation cut where a translation about as long as its source ends).

Memory, in a fresh process (`python -m benchmarks.opus_mt --memory-child OWN OPUS N`): VmRSS after the app's
imports, after the page is built over the project's own checkpoint (ui.build_demo, as app.py), after the OPUS-MT
checkpoint is loaded beside it, and after N Translate + first figure with each model; VmHWM is the peak.

The OPUS-MT folder: `--opus-mt DIR` (a real Helsinki-NLP/opus-mt-* folder), else a full-size OPUS-MT-shaped one
with random weights built in a temporary folder (benchmarks/opus_mt_folder.py; its outputs never end, so the
budget row runs to the limit) and deleted afterwards.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import torch

from .common import ROOT, read_memory_kib, summarize, text_of_tokens

SOURCE_TOKENS = 20
OUTPUT_TOKENS = 24  # an output about as long as its source (</s> included)
THREADS = (1, 2)
SKIPPED_WORDS = range(40)  # a few-line SentencePiece model cuts words finely: try later starts until one fits


@contextlib.contextmanager
def opus_mt_folder(folder: str | None, direction: str = "de-en") -> Iterator[tuple[Path, str]]:
    """(the folder, "given" or "random"): `folder` as given, else a full-size random one built in a temp folder."""
    if folder:
        yield Path(folder), "given"
        return
    from .opus_mt_folder import build_opus_mt_folder

    with tempfile.TemporaryDirectory(prefix="benchmark-opus-mt-") as temporary:
        yield build_opus_mt_folder(Path(temporary) / f"opus-mt-{direction}", direction), "random"


def source_text(tokenizer, language: str, n_tokens: int = SOURCE_TOKENS) -> str:
    """A prefix of the benchmark text of exactly n_tokens source tokens (benchmarks/common.py)."""
    for skip in SKIPPED_WORDS:
        with contextlib.suppress(ValueError):
            return text_of_tokens(tokenizer, language, n_tokens, skip_words=skip)
    raise ValueError(f"no prefix of the {language} text has exactly {n_tokens} tokens with this tokenizer")


def translate_and_draw(checkpoint, text: str, direction: str, budget: int | None) -> tuple[dict, int]:
    """The app's Translate and the Attention tab's first figure, each stage timed -> ({stage: ms}, steps)."""
    from model.decoding.greedy import translate
    from ui.attention import attention_view
    from ui.runner import write_trace_file

    start = time.perf_counter()
    trace = translate(checkpoint.model, checkpoint.tokenizer, text, direction, max_new_tokens=budget)
    traced = time.perf_counter()
    write_trace_file(trace)
    written = time.perf_counter()
    attention_view(trace, 1, "cross", 1, "1")  # the Attention tab's defaults after Translate
    drawn = time.perf_counter()
    stages = {"translate": traced - start, "trace_file": written - traced, "first_figure": drawn - written}
    return {name: seconds * 1000 for name, seconds in stages.items()}, trace.num_steps


def measure_speed(checkpoint, repeats: int, threads=THREADS) -> list[dict]:
    """One row per (thread count, budget): median/p95 ms of each stage and of the whole, and the steps decoded."""
    direction = checkpoint.tokenizer.directions[0]
    text = source_text(checkpoint.tokenizer, direction.split("-")[0])
    before = torch.get_num_threads()
    rows = []
    try:
        for count in threads:
            torch.set_num_threads(count)
            for budget in (None, OUTPUT_TOKENS):
                translate_and_draw(checkpoint, text, direction, budget)  # warm-up
                samples: dict[str, list[float]] = {"translate": [], "trace_file": [], "first_figure": [], "total": []}
                cpu = []
                for _ in range(repeats):
                    start_cpu = time.process_time()
                    stages, steps = translate_and_draw(checkpoint, text, direction, budget)
                    cpu.append((time.process_time() - start_cpu) * 1000)
                    for name, ms in stages.items():
                        samples[name].append(ms)
                    samples["total"].append(sum(stages.values()))
                rows.append(
                    {
                        "threads": count,
                        "budget": budget,  # max_new_tokens; None: the app's default budget
                        "direction": direction,
                        "source_tokens": SOURCE_TOKENS,
                        "output_steps": steps,
                        "ms": {name: summarize(values) for name, values in samples.items()},
                        "cpu_ms": summarize(cpu),
                        "ms_per_step": round(summarize(samples["translate"])["median"] / steps, 2),
                    }
                )
    finally:
        torch.set_num_threads(before)
    return rows


def measure_memory(own_checkpoint_dir: str, opus_mt_dir: Path, translations: int) -> dict:
    """The memory child's JSON (run in a fresh process, so nothing of this one is counted)."""
    command = [sys.executable, "-m", "benchmarks.opus_mt", "--memory-child", own_checkpoint_dir, str(opus_mt_dir)]
    done = subprocess.run(
        [*command, str(translations)], cwd=ROOT, capture_output=True, text=True, check=False, timeout=1800
    )
    if done.returncode != 0:
        raise RuntimeError(f"the memory child failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(own_checkpoint_dir: str, opus_mt: str | None, repeats: int, translations: int, threads=THREADS) -> dict:
    """The OPUS-MT part: load time, speed rows and memory, with what the folder was."""
    from model.checkpoints.marian import load_marian_checkpoint

    with opus_mt_folder(opus_mt) as (folder, kind):
        start = time.perf_counter()
        checkpoint = load_marian_checkpoint(folder)
        load_seconds = time.perf_counter() - start
        result = {
            "folder": str(folder) if kind == "given" else f"random full-size OPUS-MT shape ({folder.name})",
            "weights": kind,
            "parameters": checkpoint.model.num_parameters(),
            "config": checkpoint.config.to_dict(),
            "weights_mib": round((folder / "model.safetensors").stat().st_size / 2**20, 1)
            if (folder / "model.safetensors").is_file()
            else None,
            "load_s": round(load_seconds, 2),
            "rows": measure_speed(checkpoint, repeats, threads),
        }
        del checkpoint
        result["memory"] = measure_memory(own_checkpoint_dir, folder, translations)
    return result


# --------------------------------------------------------------------------- the memory child
def rss_mib() -> dict:
    """This process's VmRSS now and VmHWM (its peak so far), in MiB."""
    values = read_memory_kib(os.getpid())
    return {"rss_mib": round(values["VmRSS"] / 1024, 1), "peak_mib": round(values["VmHWM"] / 1024, 1)}


def memory_child(own_checkpoint_dir: str, opus_mt_dir: str, translations: int) -> dict:
    """In a fresh process: the app's page over its own checkpoint, then OPUS-MT beside it, then translations.

    opus_mt_dir: one OPUS-MT folder (loaded beside the page), or a folder holding opus-mt-de-en/ and
    opus-mt-en-de/ ($ATTENTION_EXPLORER_OPUS_MT): then the whole two-page app is built as app.py builds it, and the
    seconds that takes (start-up with both models) are recorded too."""
    torch.set_num_threads(1)  # as app.py's default --threads
    import gradio  # noqa: F401  (the app's imports, counted in the first reading)

    from model.checkpoints.catalogue import OPUS_MT_ENV
    from model.checkpoints.marian import load_marian_checkpoint
    from ui import build_demo

    readings, both = {"imports": rss_mib()}, (Path(opus_mt_dir) / "opus-mt-de-en").is_dir()
    start = time.perf_counter()
    demo = build_demo(own_checkpoint_dir, device="cpu")
    readings["own model and page"] = rss_mib()
    result = {"own_page_s": round(time.perf_counter() - start, 2)}
    if both:
        os.environ[OPUS_MT_ENV] = opus_mt_dir
        start = time.perf_counter()
        demo = build_demo(own_checkpoint_dir, device="cpu")
        result["both_pages_s"] = round(time.perf_counter() - start, 2)
        readings["the app with both models (two pages)"] = rss_mib()
        opus = demo.runners["opus-mt"].checkpoint
    else:
        opus = load_marian_checkpoint(opus_mt_dir)
        readings["OPUS-MT loaded beside it"] = rss_mib()
    for checkpoint in (demo.runners["own"].checkpoint, opus):
        direction = checkpoint.tokenizer.directions[0]
        text = source_text(checkpoint.tokenizer, direction.split("-")[0])
        for _ in range(translations):
            translate_and_draw(checkpoint, text, direction, None)
    readings[f"after {translations} translations with each"] = rss_mib()
    last = readings[f"after {translations} translations with each"]
    return {**result, "translations_per_model": translations, "readings": readings, "peak_mib": last["peak_mib"]}


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--memory-child":
        print(json.dumps(memory_child(sys.argv[2], sys.argv[3], int(sys.argv[4]))))
        sys.exit(0)
    sys.exit("usage: python -m benchmarks.run --parts opus-mt (this module's entry point is its memory child)")
