"""Explain panel "Step changes": what one more step of auto-regressive decoding (section 3.1) changed:
the new query row of masked self-attention and of encoder-decoder attention (3.2.3), how far every head's
row moved, and the change among the top next-token candidates (3.4). Reads the kept trace: no model call.
"""

from __future__ import annotations

import html

import gradio as gr
import numpy as np

from model import TranslationTrace
from model.analysis.step_changes import StepChange, step_change
from visualizer.changes import candidate_change_figure, row_change_figure
from visualizer.explain import head_diagnostics_figure
from visualizer.fluid import fluid

from ..attention import HeadOpener
from ..common import Page, TabView, chips, clamp, plot, step_index
from .panel import Panel, view

LEAD = (
    "what one more decoding step changed: the new attention row beside the previous one (grey), "
    "how far each head's row moved, and the top candidates."
)
ABOUT = """
Each decoding step (section 3.1) adds one query row to the decoder's two
attention kinds (3.2.3); the encoder's attention is computed once and never changes. Top: the new row (bars)
beside the row of the step before (grey), over the same keys; in masked self-attention the key that just
appeared (the token read at this step) is orange. The grid gives, for every layer and head, how far its row
*moved*: the total-variation distance between the two rows (0 = reads the same places, 1 = entirely new ones).
Bottom: this step's top candidates (section 3.4's softmax), orange = entered the top list, ↑/↓ = rank moves,
grey = left it. Everything is read from the kept trace.
"""


SHORT = {"decoder_self": "self-attention", "cross": "cross-attention"}  # titles that fit a phone
READING = "changes-summary"  # the text that opens on what the step changed


def reading(change: StepChange) -> str:
    """One plain sentence of what the step changed: the token it reads and the one it chooses, how many candidates
    entered the top list, and the head whose row moved most (by how much: the total-variation distance, after it)."""
    step, entered = change.step + 1, len(change.candidates.entered)
    said = f"At step {step} the decoder reads “{change.query_token}” and chooses “{change.chosen_token}”"
    if change.step == 0:
        return f"{said}; there is no step before it to compare with."
    kind, (l, h) = max(
        ((kind, np.unravel_index(int(np.argmax(row.moved)), row.moved.shape)) for kind, row in change.rows.items()),
        key=lambda found: change.rows[found[0]].moved[found[1]],
    )
    moved = float(change.rows[kind].moved[l, h])
    news = (
        f"{entered} new candidate{'s' * (entered > 1)} entered its top list"
        if entered
        else "its top candidates stay the same"
    )
    return (
        f"{said}; {news}, and the head that reads most differently from the step before is {SHORT[kind]} layer "
        f"{l + 1}, head {h + 1} ({moved:.2f} of its attention moved)."
    )


def summary_html(change: StepChange) -> str:
    """What the step changed in one plain sentence (`reading`), then rows of token chips (a .token-row wraps on a
    phone): the query, the choice, what entered and left."""
    candidates = change.candidates
    rows = (
        ("query reads", [change.query_token]),
        ("step chooses", [change.chosen_token]),
        ("entered top", [m.token for m in candidates.entered]),
        ("left top", [m.token for m in candidates.left]),
    )
    return f'<p class="explain-reading">{html.escape(reading(change))}</p>' + "".join(
        f'<div class="token-row"><span class="label">{label}</span>{chips(tokens) or "none"}</div>'
        for label, tokens in rows
    )


def changes_views(trace: TranslationTrace, step: float | None, layer: float | None, head: float | None) -> dict:
    """{"summary", "rows", "moved", "candidates"} for the step; head 0 = the mean of the layer's heads."""
    change = step_change(trace, step_index(trace, step))
    n_layers, n_heads = trace.cross_attention.shape[:2]
    l = clamp(layer, n_layers)
    h = None if not head else clamp(head, n_heads)
    who = f"L{l + 1} " + ("mean of heads" if h is None else f"H{h + 1}")

    def pick(row: np.ndarray | None) -> np.ndarray | None:  # (L, h, K) -> (K,)
        return None if row is None else (row[l].mean(0) if h is None else row[l, h])

    panels = [
        (f"{SHORT[kind]} · {who}", row.keys, pick(row.new_row), pick(row.previous_row), kind == "decoder_self")
        for kind, row in change.rows.items()
    ]
    rows = row_change_figure(panels, title=f"Step {change.step + 1}: the new query rows")
    shown = change.candidates.entered + change.candidates.stayed
    shown.sort(key=lambda move: move.rank_after)
    candidates = candidate_change_figure(
        [m.token for m in shown],
        [m.prob_after for m in shown],
        [m.rank_before for m in shown],
        [m.token for m in change.candidates.left],
        [m.prob_before for m in change.candidates.left],
        title=f"Top candidates at step {change.step + 1} vs step {change.step}"
        if change.step
        else "Top candidates at step 1 (no step before)",
    )
    moved = None
    if change.step > 0:
        stats = {kind: row.moved for kind, row in change.rows.items()}
        moved = plot(
            fluid(
                head_diagnostics_figure(
                    stats,
                    {k: SHORT[k].split("-")[0] for k in stats},
                    selected=None if h is None else (l, h),
                    title="Row moved (total variation)",
                )
            ),
            f"step-{change.step + 1}-moved",
        )
    return {
        "summary": summary_html(change),
        "rows": plot(rows, f"step-{change.step + 1}-rows"),
        "moved": moved,
        "candidates": plot(candidates, f"step-{change.step + 1}-candidates"),
    }


def build(page: Page, opener: HeadOpener, tab: gr.Tab) -> list[TabView]:
    config = page.checkpoint.config
    with gr.Row():
        layer = gr.Radio(
            list(range(1, config.n_decoder_layers + 1)),
            value=config.n_decoder_layers,
            label="Decoder layer",
            elem_id="changes-layer",
        )
        head = gr.Radio(
            [("mean", 0), *[(str(n), n) for n in range(1, config.n_heads + 1)]],
            value=0,
            label="Head",
            elem_id="changes-head",
        )
    summary = gr.HTML(elem_id=READING)
    rows = gr.Plot(elem_id="changes-rows", show_label=False)
    moved = gr.Plot(elem_id="changes-moved", show_label=False)
    candidates = gr.Plot(elem_id="changes-candidates", show_label=False)
    names = {"summary": summary, "rows": rows, "moved": moved, "candidates": candidates}

    def draw(trace, step, values) -> dict:
        drawn = changes_views(trace, step, values[layer], values[head])
        return {names[key]: value for key, value in drawn.items()}

    return [view(names.values(), draw, controls=[layer, head], follows_step=True)]


PANEL = Panel(
    place=120,
    id="changes",
    title="Step changes",
    lead=LEAD,
    about=ABOUT,
    build=build,
    reading=READING,
)
