"""Views part: server-side re-render time of each view from a kept trace, calling the UI's view functions.

The model runs once per trace; every timed call only draws from the trace, as the app does when
a user steps, switches layer/head or opens a tab: the open tab's views of ui/ (+ `step_html` for a
step), which build the Plotly figure and serialize it to the JSON that gr.Plot sends. Gradio's own
queueing and websocket time are not included (the browser part measures those).
"""

from __future__ import annotations

import itertools

from model.decoding.greedy import translate
from ui.attention import attention_view, pipeline_view
from ui.next_token import candidates_view
from ui.positions import masks_view, positions_view
from serving import Runner
from ui.stepping import step_html

from .common import SOURCE_LANGUAGE, summarize, text_of_tokens, time_interleaved

TRACE_LENGTHS = (20, 80)  # source tokens of the kept trace; targets are judged on 20


def tab_views(tab: str, runner: Runner, trace, step, kind: str, layer, head: str) -> list:
    """The figures the page draws for the open `tab` (what ui/redraw.py asks that tab for); the positions and
    masks views ask `runner` for the table and the padded batch (the trace no longer holds them)."""
    if tab == "attention":
        return [attention_view(trace, step, kind, layer, head), pipeline_view(trace, step, kind, layer, head)]
    return [{"next": lambda: candidates_view(trace, step), "positions": lambda: positions_view(runner, trace),
             "masks": lambda: masks_view(runner, trace, step)}[tab]()]


def view_calls(runner: Runner, trace, n_heads: int, n_layers: int) -> dict:
    """{view name: a zero-argument callable that redraws it}, each cycling through its inputs."""
    last = trace.num_steps
    steps = itertools.cycle(range(1, last + 1))
    layer_head = itertools.cycle([(layer, str(head)) for layer in range(1, n_layers + 1)
                                  for head in range(1, n_heads + 1)])

    def step(tab, kind="cross", head="1"):
        def call():
            s = next(steps)
            return step_html(trace, s), tab_views(tab, runner, trace, s, kind, 1, head)
        return call

    def layer_or_head():
        layer, head = next(layer_head)
        return tab_views("attention", runner, trace, last, "cross", layer, head)

    return {
        "step: next-token tab": step("next"),
        "step: attention tab (cross, one head)": step("attention"),
        "step: attention tab (decoder, all heads)": step("attention", "decoder_self", "all"),
        "step: masks tab": step("masks"),
        "layer/head change (cross)": layer_or_head,
        "all-heads grid (cross)": lambda: tab_views("attention", runner, trace, last, "cross", 1, "all"),
        "all-heads grid (encoder)": lambda: tab_views("attention", runner, trace, last, "encoder", 1, "all"),
        "positional encodings": lambda: tab_views("positions", runner, trace, last, "cross", 1, "1"),
        "masks": lambda: tab_views("masks", runner, trace, last, "cross", 1, "1"),
    }


def measure(checkpoint, checkpoint_dir: str, repeats: int, lengths=TRACE_LENGTHS, direction: str = "de-en") -> dict:
    """checkpoint_dir is kept for the other parts' signature; the views need only the loaded checkpoint."""
    config = checkpoint.config
    runner = Runner(checkpoint)  # in this process, as the page's single-process mode
    rows = []
    for n_tokens in lengths:
        text = text_of_tokens(checkpoint.tokenizer, SOURCE_LANGUAGE[direction], n_tokens)
        trace = translate(checkpoint.model, checkpoint.tokenizer, text, direction)
        for name, call in view_calls(runner, trace, config.n_heads, config.n_decoder_layers).items():
            call()  # warm-up (imports, plotly validators)
            wall, cpu = time_interleaved({name: call}, repeats, warmup=0)
            rows.append({"view": name, "source_tokens": n_tokens, "steps": trace.num_steps,
                         "ms": summarize(wall[name]), "cpu_ms": summarize(cpu[name])})
    return {"direction": direction, "rows": rows}
