"""The one object the page calls for every model computation, each a named job of serving/jobs.py:
translate (Figure 1, greedy decoding; also share links and the start-up example), forced prefixes and
ablations (sections 3 and 3.2.2), teacher-forced token probabilities, beam search (section 6.1), the KV-cache
recording (3.1) and the paper's Figures 3-5 (Appendix).

Two modes, chosen once in `Runner.start`:
- in-process: the jobs run in the caller's thread on the checkpoint this process loaded. Every listener that
  runs the model is declared with `model_event(...)`, which puts it in the one Gradio concurrency group
  MODEL_EVENTS of MODEL_SLOTS slots; requests beyond it wait in Gradio's queue, which shows the page its
  position. A job that fails is answered with one gr.Error with a title.
- ZeroGPU mode (on a ZeroGPU Space, ui/zerogpu.py): the same, with `jobs` each wrapped in `@spaces.GPU`.

The jobs run on `device` (serving/device.py: --device auto is cuda when there is one); the traces they return
are plain numpy data on the CPU either way.

The Gradio process keeps its own Checkpoint either way (config, tokenizer and metrics for the page;
its weights are ~30 MB of the app's memory). Also here: the lean trace file (serving/wire.py) written
through serving.TraceFiles, and the `/positional_encoding` endpoint that serves the table of section 3.5.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

import gradio as gr
import numpy as np
import orjson

from model import Checkpoint, TranslationTrace
from model.decoding.ablation import Ablation
from model.analysis.readouts import BeamComparison
from model.analysis.kv_cache import CacheRecording
from model.analysis.paper_figures import FigureResult, PaperFigure
from model.core.positional import sinusoidal_positional_encoding
from model.text.inputs import PaddedBatch, padding_example
from serving import JOBS, Job, TraceFiles, lean_trace_json
from serving.wire import positional_encoding_json

MODEL_SLOTS = 8  # model computations at once (threads; PyTorch releases the GIL); the rest wait in the queue
MODEL_EVENTS = "model-runs"  # the Gradio concurrency group of every event that runs the model (model_event)
TRACE_FILES = TraceFiles()  # <tmp>/attention-explorer-traces, expired in the background


def model_event(**options) -> dict:
    """Keyword arguments of a Gradio listener that runs the model (with `options`): it joins MODEL_EVENTS,
    the one group of MODEL_SLOTS slots shared by every model computation."""
    return {**options, "concurrency_id": MODEL_EVENTS, "concurrency_limit": MODEL_SLOTS}


class Runner:
    """Model computations for the page, in this process.

    Args:
        checkpoint: the checkpoint this process loaded (the jobs run on it).
        jobs: the named jobs (serving.JOBS; ZeroGPU mode: each wrapped in @spaces.GPU).
        zerogpu: ZeroGPU mode: the GPU exists only within a visitor's request, so nothing runs the model at start-up.
    """

    def __init__(self, checkpoint: Checkpoint, jobs: Mapping[str, Job] = JOBS, zerogpu: bool = False) -> None:
        self.checkpoint, self.jobs, self.zerogpu = checkpoint, jobs, zerogpu

    @classmethod
    def start(cls, checkpoint: Checkpoint, zerogpu: bool = False) -> "Runner":
        """zerogpu: ZeroGPU mode (the jobs through @spaces.GPU)."""
        if zerogpu:
            from .zerogpu import gpu_jobs

            return cls(checkpoint, jobs=gpu_jobs(checkpoint), zerogpu=True)
        return cls(checkpoint)

    def run(self, job: str, **kwargs) -> object:
        """Run a named job (serving/jobs.py) on this process's checkpoint."""
        return self.jobs[job](self.checkpoint, **kwargs)

    def translate(self, text: str, direction: str, forced_prefix: Sequence[int] | None = None,
                  ablation: Ablation | None = None) -> TranslationTrace:
        """Greedy translation with its trace (model.decoding.greedy.translate); ValueError for bad input."""
        return self.run("translate", text=text, direction=direction, forced_prefix=forced_prefix, ablation=ablation)

    def token_probabilities(self, source_ids: Sequence[int], output_ids: Sequence[int],
                            ablation: Ablation | None = None) -> np.ndarray:
        """(T,) probabilities of `output_ids` teacher-forced under `ablation` (model.analysis.readouts)."""
        return self.run("token_probabilities", source_ids=list(source_ids), output_ids=list(output_ids),
                        ablation=ablation)

    def beam_versus_greedy(self, trace: TranslationTrace, beam_size: int = 4,
                           length_penalty: float = 0.6) -> BeamComparison:
        """Beam search (section 6.1) beside the greedy output of `trace` (model.analysis.readouts)."""
        return self.run("beam_versus_greedy", trace=trace, beam_size=beam_size, length_penalty=length_penalty)

    def record_cache(self, trace: TranslationTrace) -> CacheRecording:
        """The decoder's KV cache at every step of `trace` (model.analysis.kv_cache.record_trace_cache)."""
        return self.run("record_cache", trace=trace)

    def paper_figures(self, figures: Sequence[PaperFigure]) -> list[FigureResult]:
        """The paper's Figures 3-5 on this model (model.analysis.paper_figures.run_paper_figures)."""
        return self.run("paper_figures", figures=list(figures))

    def positional_encoding(self, rows: int) -> np.ndarray:
        """(min(rows, max_positions), d_model): the first rows of the sinusoidal table the model adds (3.5).
        A function of the config, so computed in this process: no job, nothing on a worker or a GPU."""
        config = self.checkpoint.config
        return positional_encoding_table(config.max_positions, config.d_model)[:rows]

    def padding_example(self, trace: TranslationTrace) -> PaddedBatch:
        """The trace's source batched with a longer sentence and padded and masked as the encoder's batches are
        (model.text.inputs.padding_example; section 3.2.3). Tokenizer only, in this process: no job."""
        return padding_example(self.checkpoint.tokenizer, trace.source_ids, trace.direction,
                               self.checkpoint.config.pad_id)


def write_trace_file(trace: TranslationTrace) -> str:
    """The lean trace JSON (serving/wire.py) in a fresh trace-<direction>.json -> its path; constant-time housekeeping."""
    return TRACE_FILES.write_text(lean_trace_json(trace), f"trace-{trace.direction}.json")


@functools.lru_cache(maxsize=4)
def positional_encoding_table(max_positions: int, d_model: int) -> np.ndarray:
    """The sinusoidal table (3.5) of a config, read-only (computed once)."""
    table = sinusoidal_positional_encoding(max_positions, d_model).numpy()
    table.flags.writeable = False
    return table


@functools.lru_cache(maxsize=4)
def positional_encoding_text(max_positions: int, d_model: int) -> str:
    """The positional-encoding table as JSON (computed once)."""
    return positional_encoding_json(positional_encoding_table(max_positions, d_model))


@functools.lru_cache(maxsize=4)
def positional_encoding_object(max_positions: int, d_model: int) -> dict:
    """positional_encoding_text as a dict (computed once; shared by every caller, so never change it)."""
    return orjson.loads(positional_encoding_text(max_positions, d_model))


def add_endpoints(checkpoint: Checkpoint | None) -> None:
    """The `/positional_encoding` API endpoint (inside the page's gr.Blocks): the table of section 3.5."""
    if checkpoint is None:
        return
    config = checkpoint.config

    def positional_encoding() -> dict:
        """The sinusoidal positional-encoding table (section 3.5) that the model adds to its embeddings, as a
        JSON object: {"rows", "d_model", "table"} (4 decimals)."""
        return positional_encoding_object(config.max_positions, config.d_model)

    positional_encoding.__annotations__["return"] = dict  # a type, not the string `from __future__` makes: gr.api
    # reads the return annotation unevaluated, and "dict" would be documented as Any rather than a JSON object
    gr.api(positional_encoding, api_name="positional_encoding", concurrency_limit=None)
