"""Explain panel "Switch heads off" (section 3.2.2): tick heads, re-decode with their outputs zeroed,
and compare the original output's per-step probabilities with and without them.
"""

from __future__ import annotations

import gradio as gr

from model import Checkpoint, TransformerConfig
from model.decoding.ablation import Ablation
from model.decoding.trace import ATTENTION_KINDS

from ..attention import HeadOpener
from ..common import PRIVATE, Page, TabView
from .panel import MODEL_RUN, Panel, cleared_view, intervene, intervention_views, require, show_result

LEAD = (
    "tick heads and re-decode your sentence without them; each bar is how much "
    "the probability of an original token fell (red) or rose (blue)."
)
RUN, READING = "ablate-run", "ablate-result"  # the button, and the result that opens on what it changed
ABOUT = """
*Head ablation* (section 3.2.2). A head's output (its slice of `Concat(head₁, …, head_h)`, before `W^O`) is
set to zero, as in Michel et al. (2019). The sentence is decoded again greedily, and the *original* output is
teacher-forced through the ablated model, so each step compares the probability of the same token with and
without the heads.
"""


def ablation_from_choices(choices: list[list[int] | None], config: TransformerConfig) -> Ablation:
    """Per-layer checkbox values (1-based heads), one list per layer of each attention kind in the
    registry's order (encoder, decoder self, cross) -> an Ablation of 0-based (layer, head) pairs."""
    counts = {name: kind.num_layers(config) for name, kind in ATTENTION_KINDS.items()}
    if len(choices) != sum(counts.values()):
        raise ValueError(f"expected {sum(counts.values())} head lists, got {len(choices)}")
    heads, start = {}, 0
    for name, count in counts.items():
        layers = choices[start : start + count]
        heads[f"{name}_heads"] = {
            (layer, int(head) - 1) for layer, ticked in enumerate(layers) for head in ticked or []
        }
        start += count
    return Ablation(**heads)


def head_boxes(config: TransformerConfig) -> list[gr.CheckboxGroup]:
    """A column of per-layer head checkboxes for each attention kind."""
    boxes = []
    with gr.Row(equal_height=False):
        for name, kind in ATTENTION_KINDS.items():
            with gr.Column(min_width=240, elem_classes="head-grid"):
                gr.Markdown(kind.label, elem_id=f"ablate-{name}-title")
                for layer in range(1, kind.num_layers(config) + 1):
                    boxes.append(
                        gr.CheckboxGroup(
                            [(f"H{h}", h) for h in range(1, config.n_heads + 1)],
                            label=f"layer {layer}",
                            elem_id=f"ablate-{name}-{layer}",
                            container=True,
                        )
                    )
    return boxes


def build(page: Page, opener: HeadOpener, tab: gr.Tab) -> list[TabView]:
    checkpoint: Checkpoint = page.checkpoint
    boxes = head_boxes(checkpoint.config)
    with gr.Row():
        run = gr.Button("Re-decode without these heads", variant="primary", elem_id=RUN, scale=0, min_width=340)
        clear = gr.Button("Clear", elem_id="ablate-clear", scale=0, min_width=100)
    result = gr.HTML(elem_id=READING)
    figure = gr.Plot(elem_id="ablate-plot", show_label=False)
    show_result(run, figure)

    def on_ablate(trace, *choices):
        require(checkpoint, trace)
        ablation = ablation_from_choices(list(choices), checkpoint.config)
        if ablation.is_empty:
            raise gr.Error("Tick at least one head to switch off.")
        count = sum(len(getattr(ablation, f"{name}_heads")) for name in ATTENTION_KINDS)
        doing = f"With the {count} head{'s' * (count > 1)} you ticked switched off"
        html, change = intervention_views(
            trace, intervene(page.runner, trace, ablation), "Heads switched off", "ablation-probabilities", doing
        )
        return {result: html, figure: change}

    page.listen(run.click, on_ablate, [page.trace, *boxes], [result, figure], **MODEL_RUN)
    cleared = {result: "", figure: None}
    page.listen(
        clear.click, lambda: {**{box: [] for box in boxes}, **cleared}, None, [*boxes, result, figure], **PRIVATE
    )
    return [cleared_view(cleared)]


PANEL = Panel(
    place=10,
    id="ablate",
    title="Switch heads off",
    lead=LEAD,
    about=ABOUT,
    build=build,
    reading=READING,
    run=RUN,
)
