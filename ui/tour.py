"""A guided tour of five stops through "Attention Is All You Need" on the sentence on screen: the
next-token choice (3.4), cross-attention (3.2.3), inside one head (3.2.1), the masks (3.2.3) and
branching (3, auto-regressive decoding). Each stop sets the view (tab, kind, layer, head, step) and
says what to notice; Back / Next move along, nothing else changes.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import gradio as gr

from model import Checkpoint, TranslationTrace

from serving.translation import Translated

from .common import Page
from .page_script import SHOW_TOUR_JS
from .share import StartExample, Targets, View, sharpest_head
from .text import paper


@dataclass(frozen=True)
class Stop:
    title: str
    view: View  # layer 0 / head "sharpest": the sharpest cross-attention head of the sentence
    step: str  # "middle" or "last" (the last step before the end token)
    notice: str
    section: tuple[str, str]
    panel: str | None = None  # an Explain panel to open


STOPS = (
    Stop(
        "Next-token choice",
        View(tab="next"),
        "middle",
        "Each bar is the probability of one token of the shared vocabulary after the softmax; greedy decoding "
        "takes the tallest. Low entropy = a confident step; step with Next › and watch it change.",
        ("3.4", "Embeddings and Softmax"),
    ),
    Stop(
        "Cross-attention",
        View(tab="attention", kind="cross", layer=0, head="sharpest"),
        "last",
        "Rows are output tokens, columns source tokens: this head reads the source word it is translating, so "
        "its weight runs roughly along the diagonal (German and English word orders differ where it bends).",
        ("3.2.3", "Applications of Attention in our Model"),
    ),
    Stop(
        "Inside one head",
        View(tab="attention", kind="decoder_self", layer=1, head="1"),
        "middle",
        "Scroll to the three panels below the heatmap: raw scores QKᵀ/√d_k, the same with future positions "
        "masked to −∞, and the softmax, where the masked cells become exactly 0 and each row sums to 1.",
        ("3.2.1", "Scaled Dot-Product Attention"),
    ),
    Stop(
        "The masks",
        View(tab="masks"),
        "middle",
        "The causal mask lets decoder position i see positions ≤ i only; the padding mask hides the padding keys of "
        "a batch. True (may attend) is where attention can look.",
        ("3.2.3", "Applications of Attention in our Model"),
    ),
    Stop(
        "Branching",
        View(tab="explain"),
        "middle",
        "Greedy decoding never revisits a choice. In Explain → Branch, pick another candidate for this step and "
        "press “Force it and continue” to see what one different choice does to the rest.",
        ("3", "Model Architecture (auto-regressive decoding)"),
        panel="branch",
    ),
)


def stop_view(stop: Stop, trace: TranslationTrace) -> View:
    """The stop's view on this trace: its step, and the sharpest cross-attention head where it asks."""
    steps = max(trace.num_steps - 1, 1)
    view = dataclasses.replace(
        stop.view,
        text=trace.source_text,
        direction=trace.direction,
        step=steps if stop.step == "last" else max(1, (steps + 1) // 2),
    )
    if stop.view.head == "sharpest":
        layer, head = sharpest_head(trace, stop.view.kind)
        view = dataclasses.replace(view, layer=layer, head=str(head))
    return view


def stop_markdown(index: int) -> str:
    stop = STOPS[index]
    return f"**Stop {index + 1} of {len(STOPS)}: {stop.title}.** {stop.notice} {paper(*stop.section)}"


def build() -> tuple[gr.Markdown, gr.Button, gr.Button, gr.State]:
    """The tour's box (one short row right under the player bar): its Back / Next buttons and text."""
    with gr.Row(elem_id="tour-row", equal_height=False):  # the buttons beside the text: one line on a wide screen
        with gr.Column(scale=0, min_width=230), gr.Row(elem_id="tour-buttons"):
            back = gr.Button("‹ Back", elem_id="tour-back", size="sm", min_width=80, scale=0, interactive=False)
            forward = gr.Button("Start the tour ›", elem_id="tour-next", size="sm", min_width=130, scale=0)
        text = gr.Markdown(
            '<span class="tour-intro">**Guided tour**: five views of this sentence, each with what to '
            "notice and its section of the paper.</span>",
            elem_id="tour-text",
        )  # a phone: the button only
    return text, back, forward, gr.State(-1)


def wire(
    page: Page,
    checkpoint: Checkpoint | None,
    targets: Targets,
    example: StartExample | None,
    parts,
    panels,
    pipeline: tuple = (),
) -> None:
    """Back / Next: set the view of the stop (on the trace on screen, else the start-up example), each one action
    of the page that also draws the stop's view."""
    text, back, forward, index = parts
    if checkpoint is None or example is None:
        return
    header = targets.header

    def go(delta: int):
        def handler(trace, current):
            new = min(max(current + delta, 0), len(STOPS) - 1)
            stop = STOPS[new]
            if trace is None:
                translated, _, _ = example.get()
                shown = targets.show(checkpoint, translated, stop_view(stop, translated.trace))
            else:  # the sentence on screen stays as it is: only the view moves
                shown = targets.show(checkpoint, Translated(trace), stop_view(stop, trace))
                shown = {k: v for k, v in shown.items() if k not in (header.source, header.direction, header.notice)}
            return {
                **shown,
                index: new,
                text: stop_markdown(new),
                back: gr.Button(interactive=new > 0),
                forward: gr.Button(
                    "Next stop ›" if new < len(STOPS) - 1 else "Last stop", interactive=new < len(STOPS) - 1
                ),
                **({panels: gr.Tabs(selected=stop.panel)} if panels is not None and stop.panel else {}),
                **opened(stop),
            }

        handler.__name__ = "tour_back" if delta < 0 else "tour_next"
        return handler

    def opened(stop: Stop) -> dict:
        """The "inside one head" stop opens the pipeline accordion (drawn only while open)."""
        if not pipeline or stop.title != "Inside one head":
            return {}
        box, is_open = pipeline
        return {box: gr.Accordion(open=True), is_open: True}

    outputs = [*targets.outputs(), index, text, back, forward, *([panels] if panels is not None else []), *pipeline]
    for button, delta in ((back, -1), (forward, +1)):  # then the stop's text and its view under the player bar
        page.listen(
            button.click, go(delta), [header.trace, index], outputs, show_progress="hidden", then_js=SHOW_TOUR_JS
        )
