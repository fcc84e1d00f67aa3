"""Explain panel "Heads forming": the training film (model/training/film.py) of the loaded checkpoint's run, a slider
over its evaluations (section 5, training) showing the probe's translation, validation BLEU, any attention
kind / layer / head (3.2.2, 3.2.3) at that step, and every head's entropy over training.

The film is read from disk once, when the page is built (beside the checkpoint or in its run directory,
`model.training.film.find_film`); moving the slider only indexes it: no model call.
"""

from __future__ import annotations

import html
from pathlib import Path

import gradio as gr

from model.analysis.heads_forming import FilmSummary, film_summary
from model.checkpoints.reading import read_optional_file
from model.decoding.trace import ATTENTION_KINDS
from model.training import film
from visualizer.attention import attention_heatmap
from visualizer.film import entropy_multiples_figure
from visualizer.fluid import fluid

from ..attention import HeadOpener
from ..common import KIND_CHOICES, Page, TabView, chips, clamp, plot
from .panel import Panel, view

LEAD = (
    "slide through the training run's evaluations to watch a head sharpen from a blur into a "
    "pattern; below, how spread out every head's attention is, falling as it learns where to look."
)
READING = "film-facts"  # the text that opens on what the model had learned at the chosen evaluation
FOCUSED = 0.5  # a head whose rows put this share of their attention on one token on average looks somewhere
ABOUT = """
While `python -m model.training.train` trains (section 5), it translates two fixed probe
sentences at every evaluation and keeps their attention in a *training film* (`film.npz` in the run directory).
Slide over the evaluations: the probe's translation and the validation BLEU at that step, one attention head
(section 3.2.2; the three kinds of 3.2.3) as it sharpens from near-uniform to aligned, and below, every head's
mean entropy over training (bits; a falling line is a head learning to look somewhere in particular).
"""


def public_place(path: Path, checkpoint_dir: Path) -> str:
    """A film's place as the page may say it: relative to the checkpoint's folder, never the server's path:
    "beside the checkpoint" or "in its run directory"."""
    return "beside the checkpoint" if path.parent == checkpoint_dir else "in its run directory"


def no_film_message(checkpoint_dir: Path, problem: str = "") -> str:
    """HTML: why there is no film and how to record one; no path of the server appears."""
    places = " or ".join(public_place(path, checkpoint_dir) for path in film.film_candidates(checkpoint_dir))
    reason = html.escape(problem) if problem else f"no <code>{film.FILM_FILE}</code> {places}"
    command = (
        "python -m model.training.train \\\n    --data DATA/train --val DATA/val \\\n    --out runs/mine --film on"
    )
    return (
        f'<div style="overflow-wrap: anywhere"><p><b>This checkpoint has no training film</b> ({reason}). '
        "A checkpoint trained before the film existed has none. To record one, "
        "train with the film on (the default):</p>"
        f'<pre style="white-space: pre-wrap"><code>{command}</code></pre>'
        f"<p>then load <code>runs/mine/best</code>: the app finds <code>runs/mine/{film.FILM_FILE}</code> "
        "in its run directory.</p></div>"
    )


def load(checkpoint_dir: Path) -> tuple[list[dict] | None, str]:
    """(frames, "") or (None, why there is no film to show): none in either place, or the first one found is broken
    (a folder in its place counts as found; model/checkpoints/reading.py says what is wrong in plain words)."""
    path = next((path for path in film.film_candidates(checkpoint_dir) if path.exists()), None)
    if path is None:
        return None, no_film_message(checkpoint_dir)
    frames, problem = read_optional_file(path, film.load_film)
    name = f"the {film.FILM_FILE} {public_place(path, checkpoint_dir)}"
    if problem:  # the file's name and what is wrong with it, never the server's path
        return None, no_film_message(checkpoint_dir, f"{name} cannot be read: {problem}")
    return (frames, "") if frames else (None, no_film_message(checkpoint_dir, f"{name} has no frames"))


def reading(probe: dict, weights, step: int, head: tuple[int, int]) -> str:
    """One plain sentence of what the model had learned by training step `step`: its translation of the probe, and
    whether the head (its weights (Tq, Tk) there) already looks somewhere in particular (its rows' largest weight,
    on average, FOCUSED or more)."""
    share = float(weights.max(-1).mean())
    looks = "already looks somewhere in particular" if share >= FOCUSED else "still spreads its attention"
    return (
        f"After {step:,} training steps the model translates the probe as “{probe['translation'] or '∅'}”, and "
        f"layer {head[0] + 1}, head {head[1] + 1} {looks}: each row gives {share:.0%} of its attention to one token "
        "on average."
    )


def film_views(
    frames: list[dict], summary: FilmSummary, frame: float | None, kind: str, layer: float | None, head: float | None
) -> tuple:
    """(facts HTML, heatmap plot, entropy multiples plot) at one frame (1-based) of one probe direction."""
    index = clamp(frame, len(frames))
    probe = frames[index]["probes"][summary.direction]
    spec = ATTENTION_KINDS[kind]
    weights = probe[spec.weights_field]  # (L, h, Tq, Tk)
    l, h = clamp(layer, weights.shape[0]), clamp(head, weights.shape[1])
    step = int(summary.steps[index])
    facts = (
        f'<p class="explain-reading">{html.escape(reading(probe, weights[l, h], step, (l, h)))}</p>'
        f'<div class="facts">Training step <b>{step}</b> (evaluation {index + 1} of {len(frames)}) · '
        f"val BLEU {summary.direction} <b>{summary.val_bleu[index]:.2f}</b><br>"
        f"{html.escape(probe['source_text'])} → <b>{html.escape(probe['translation']) or '∅'}</b></div>"
        f'<div class="token-row">{chips(probe["output_tokens"])}</div>'
    )
    heatmap = fluid(
        attention_heatmap(
            weights[l, h],
            probe[spec.queries_field],
            probe[spec.keys_field],
            title=f"Step {step}: {spec.label}, layer {l + 1}, head {h + 1}",
        )
    )
    multiples = entropy_multiples_figure(
        summary.steps,
        summary.entropy[kind],
        current=index,
        title=f"{spec.label}: every head's entropy (bits) over training",
    )
    return facts, plot(heatmap, f"film-step-{step}-{kind}-L{l + 1}-H{h + 1}"), plot(multiples, f"film-{kind}-entropy")


def build(page: Page, opener: HeadOpener, tab: gr.Tab) -> list[TabView]:
    frames, message = load(Path(page.checkpoint.path))
    if frames is None:
        gr.HTML(message, elem_id="film-missing")
        return []
    directions = list(frames[0]["probes"])
    summaries = {direction: film_summary(frames, direction) for direction in directions}
    layers = max(page.checkpoint.config.n_encoder_layers, page.checkpoint.config.n_decoder_layers)
    with gr.Row():
        direction = gr.Radio(directions, value=directions[0], label="Probe", elem_id="film-direction")
        kind = gr.Radio(
            KIND_CHOICES,
            value="cross",
            label="Attention",
            elem_id="film-kind",
        )
    frame = gr.Slider(
        1,
        len(frames),
        value=len(frames),
        step=1,
        label="Evaluation (training step in the text)",
        elem_id="film-frame",
    )
    with gr.Row():
        layer = gr.Radio(list(range(1, layers + 1)), value=1, label="Layer", elem_id="film-layer")
        head = gr.Radio(list(range(1, page.checkpoint.config.n_heads + 1)), value=1, label="Head", elem_id="film-head")
    facts = gr.HTML(elem_id=READING)
    heatmap = gr.Plot(elem_id="film-heatmap", show_label=False)
    multiples = gr.Plot(elem_id="film-entropy", show_label=False)
    controls, outputs = [direction, kind, frame, layer, head], [facts, heatmap, multiples]

    def draw(trace, step, values) -> dict:  # the film, not the trace: drawn with or without one
        direction_value, kind_value, frame_value, layer_value, head_value = (values[c] for c in controls)
        views = film_views(frames, summaries[direction_value], frame_value, kind_value, layer_value, head_value)
        return dict(zip(outputs, views))

    return [view(outputs, draw, controls=controls, follows_trace=False)]


PANEL = Panel(
    place=80,
    id="film",
    title="Heads forming",
    lead=LEAD,
    about=ABOUT,
    build=build,
    reading=READING,
    own_model_only=(
        "{model} has no training film here: this panel plays the training run this project recorded for its own "
        "model; open that model's page to watch its heads form."
    ),
)
