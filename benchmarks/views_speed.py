"""Views part: server-side re-render time of each view from a kept trace, calling app.py's callbacks.

The model runs once per trace; every timed call only draws from the trace, as the app does when
a user steps, switches layer/head or opens a tab: `render_views` (+ `step_html` for a step), which
builds the Plotly figure and serializes it to the JSON that gr.Plot sends. Gradio's own
queueing and websocket time are not included (the browser part measures those).
"""

from __future__ import annotations

import itertools
import os
import sys

from model.decoding import translate

from .common import SOURCE_LANGUAGE, summarize, text_of_tokens, time_interleaved

CHECKPOINT_ENV = "ATTENTION_EXPLORER_CHECKPOINT"  # app.py's variable
TRACE_LENGTHS = (20, 80)  # source tokens of the kept trace; targets are judged on 20


def import_app(checkpoint_dir: str):
    """app.py; when first imported here, its module-level demo is built on this checkpoint, not the default."""
    if "app" in sys.modules:
        return sys.modules["app"]
    previous = os.environ.get(CHECKPOINT_ENV)
    os.environ[CHECKPOINT_ENV] = str(checkpoint_dir)
    try:
        import app  # noqa: PLC0415 - builds the demo at import
    finally:
        if previous is None:
            os.environ.pop(CHECKPOINT_ENV, None)
        else:
            os.environ[CHECKPOINT_ENV] = previous
    return app


def view_calls(app, trace, n_heads: int, n_layers: int) -> dict:
    """{view name: a zero-argument callable that redraws it}, each cycling through its inputs."""
    last = trace.num_steps
    steps = itertools.cycle(range(1, last + 1))
    layer_head = itertools.cycle([(layer, str(head)) for layer in range(1, n_layers + 1)
                                  for head in range(1, n_heads + 1)])

    def step(tab, kind="cross", head="1"):
        def call():
            s = next(steps)
            return app.step_html(trace, s), app.render_views(tab, trace, s, kind, 1, head)
        return call

    def layer_or_head():
        layer, head = next(layer_head)
        return app.render_views("attention", trace, last, "cross", layer, head)[1:3]

    return {
        "step: next-token tab": step("next"),
        "step: attention tab (cross, one head)": step("attention"),
        "step: attention tab (decoder, all heads)": step("attention", "decoder_self", "all"),
        "step: masks tab": step("masks"),
        "layer/head change (cross)": layer_or_head,
        "all-heads grid (cross)": lambda: app.render_views("attention", trace, last, "cross", 1, "all"),
        "all-heads grid (encoder)": lambda: app.render_views("attention", trace, last, "encoder", 1, "all"),
        "positional encodings": lambda: app.render_views("positions", trace, last, "cross", 1, "1"),
        "masks": lambda: app.render_views("masks", trace, last, "cross", 1, "1"),
    }


def measure(checkpoint, checkpoint_dir: str, repeats: int, lengths=TRACE_LENGTHS, direction: str = "de-en") -> dict:
    app = import_app(checkpoint_dir)
    config = checkpoint.config
    rows = []
    for n_tokens in lengths:
        text = text_of_tokens(checkpoint.tokenizer, SOURCE_LANGUAGE[direction], n_tokens)
        trace = translate(checkpoint.model, checkpoint.tokenizer, text, direction)
        for name, call in view_calls(app, trace, config.n_heads, config.n_decoder_layers).items():
            call()  # warm-up (imports, plotly validators)
            wall, cpu = time_interleaved({name: call}, repeats, warmup=0)
            rows.append({"view": name, "source_tokens": n_tokens, "steps": trace.num_steps,
                         "ms": summarize(wall[name]), "cpu_ms": summarize(cpu[name])})
    return {"direction": direction, "rows": rows}
