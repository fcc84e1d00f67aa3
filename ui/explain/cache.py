"""Explain panel "KV cache": the decoder's key/value cache at the current step (section 3.1, auto-regressive
decoding; 3.2.3, masked self-attention and encoder-decoder attention) and what the step reads from it.

The cache is recorded once per translation by replaying its greedy decoding through the cached decoder
(`model.analysis.kv_cache.record_trace_cache`, one pass: the panel's only model call, a job of the page's runner),
kept in this user's gr.State (`kept_for`), and every step then reads from the recording.
"""

from __future__ import annotations

import gradio as gr
import numpy as np

from model import TranslationTrace
from model.analysis.kv_cache import CacheRecording
from serving import jobs
from visualizer.cache import cache_figure

from ..attention import HeadOpener
from ..common import Page, TabView, clamp, plot, step_index
from .panel import MODEL_RUN, Panel, cleared_view, code, kept_for, require, sentence_matches, show_result, view

LEAD = (
    "what the decoder keeps from earlier steps so it need not compute them again, and which of the kept rows this "
    "step reads; record it once, then move the step."
)
RUN, READING = "cache-run", "cache-facts"  # the button, and the text that opens on what the recording means
ABOUT = """
Decoding is auto-regressive (section 3.1): one new token per step. Thanks to
the look-ahead mask (3.2.3) the keys and values of earlier target positions never change, so each decoder layer
keeps them in a cache instead of recomputing them: the *masked self-attention* keys and values grow by one
row per step (outlined: the row this step wrote), and the *encoder-decoder* keys and values are projected
once from the encoder's output and reused at every step. The bars are what this step's query *reads*: its
softmax weights over the cached keys (3.2.1); the head's output is those weights times the cached values.
Press the button once per translation: it replays the decoding through the cached decoder and keeps what the
cache held at every step, so moving the step slider afterwards needs no model call.
"""
WAITING = "Press *Record the cache* to replay this translation through the cached decoder."


def cache_views(
    trace: TranslationTrace, recording: CacheRecording, step: float | None, layer: float | None, head: float | None
) -> tuple:
    """(cache figure, facts markdown) at the step for one decoder layer and head."""
    t = step_index(trace, step)
    now = recording.at(t)
    n_layers, n_heads, n_source, d_head = now.cross_keys.shape
    l, h = clamp(layer, n_layers), clamp(head, n_heads)
    figure = cache_figure(
        now.self_keys[l, h],
        now.self_values[l, h],
        now.self_read[l, h],
        now.cross_keys[l, h],
        now.cross_values[l, h],
        now.cross_read[l, h],
        trace.target_tokens[: t + 1],
        trace.source_tokens,
        title=f"Step {t + 1} · L{l + 1} H{h + 1}",
    )
    rows = t + 1
    numbers = 2 * n_layers * n_heads * d_head
    top = int(np.argmax(now.self_read[l, h]))
    kept = f"the {rows} token{'s' * (rows > 1)} read so far" if rows > 1 else "the first token"
    facts = (
        f"At step {t + 1} the decoder reuses what it stored for {kept} instead of computing it again, and this head "
        f"reads most from the stored {code(trace.target_tokens[top])} (row {top + 1}, weight "
        f"{now.self_read[l, h, top]:.2f}). In detail: the self-attention cache holds {rows} row{'s' * (rows > 1)} per "
        f"layer and head ({numbers * rows:,} numbers: keys and values of {n_layers} layers × {n_heads} heads × "
        f"{d_head} dims); the cross cache holds {n_source} rows ({numbers * n_source:,} numbers), computed once at "
        f"step 1 and {'reused at every step' if recording.cross_reused else 'NOT reused (recomputed)'}."
    )
    return plot(figure, f"kv-cache-step-{t + 1}"), facts


def build(page: Page, opener: HeadOpener, tab: gr.Tab) -> list[TabView]:
    checkpoint, config = page.checkpoint, page.checkpoint.config
    with gr.Row():
        run = gr.Button("Record the cache", variant="primary", elem_id=RUN, scale=0, min_width=220)
        layer = gr.Radio(
            list(range(1, config.n_decoder_layers + 1)), value=1, label="Decoder layer", elem_id="cache-layer"
        )
        head = gr.Radio(list(range(1, config.n_heads + 1)), value=1, label="Head", elem_id="cache-head")
    kept = gr.State(None)  # this user's recording: {"source_ids", "output_ids", "recording" (CacheRecording)}
    facts = gr.Markdown(WAITING, elem_id=READING)
    figure = gr.Plot(elem_id="cache-plot", show_label=False)
    show_result(run, figure)

    def draw(trace, step, values) -> dict:
        if not sentence_matches(trace, values[kept]):
            return {figure: None, facts: WAITING}
        shown, text = cache_views(trace, values[kept]["recording"], step, values[layer], values[head])
        return {figure: shown, facts: text}

    def on_run(trace):  # the recording kept: a new `kept` redraws the view
        require(checkpoint, trace)
        return {kept: kept_for(trace, recording=jobs.record_cache(page.runner, trace))}

    page.listen(run.click, on_run, [page.trace], [kept], **MODEL_RUN)
    return [cleared_view({kept: None}), view([figure, facts], draw, controls=[kept, layer, head], follows_step=True)]


PANEL = Panel(
    place=110,
    id="cache",
    title="KV cache",
    lead=LEAD,
    about=ABOUT,
    build=build,
    reading=READING,
    run=RUN,
)
