"""Explain panel "Beam vs greedy" (section 6.1: beam size 4, length penalty α = 0.6): the beam
hypotheses beside the greedy output, and where each first leaves it.
"""

from __future__ import annotations

import html

import gradio as gr

from model.analysis import readouts
from serving import jobs

from ..attention import HeadOpener
from ..common import Page, TabView, chips
from .panel import MODEL_RUN, Panel, cleared_view, require, show_result

LEAD = (
    "keeps the 4 likeliest partial translations open at every step, as the paper does, and lists where each ends "
    "under yours; the marked token is where each first parts from it."
)
RUN, READING = "beam-run", "beam-result"  # the button, and the result that opens on what it means
ABOUT = """
Section 6.1: "beam search with a beam size of 4 and length penalty α = 0.6". Hypotheses are ranked by
`log P(Y) / lp(Y)` with `lp(Y) = ((5 + |Y|) / 6)^α` (|Y| counts [EOS]); greedy is scored the same way.
"""


def beam_row(name: str, output: readouts.RankedOutput) -> str:
    marks = {} if output.diverges_at is None else {output.diverges_at: "forced"}
    where = "—" if output.diverges_at is None else f"step {output.diverges_at + 1}"
    if name != "greedy" and output.diverges_at is None:
        where = "same as greedy"
    return (
        f"<tr><td>{name}</td><td><div>{html.escape(output.text) or '∅'}</div>"
        f'<div class="token-row">{chips(output.tokens, marks)}</div></td>'
        f'<td class="num">{output.log_prob:.2f}</td><td class="num">{output.score:.3f}</td>'
        f'<td class="num">{where}</td></tr>'
    )


def beam_reading(comparison: readouts.BeamComparison) -> str:
    """What the search means for this sentence: one plain sentence (whether keeping several partial translations
    open ends in the same translation as taking the likeliest token at each step), then the technical names."""
    best, greedy, width = comparison.beams[0], comparison.greedy, comparison.beam_size
    keeping = (
        f"Keeping the {width} likeliest partial translations open at every step, instead of only the likeliest token,"
    )
    if best.diverges_at is None:
        return f"{keeping} ends in the same translation. Beam search (section 6.1) keeps the greedy translation."
    return (
        f"{keeping} ends in another translation, one the model rates higher, which parts from the one shown at step "
        f"{best.diverges_at + 1}: “{best.text}”. Beam search (section 6.1) prefers it: score {best.score:.3f} vs "
        f"greedy {greedy.score:.3f}."
    )


def beam_html(comparison: readouts.BeamComparison) -> str:
    """What the search means (`beam_reading`), then a table: greedy, then the beam hypotheses best first, each with
    log P, score and where it parts."""
    rows = [beam_row("greedy", comparison.greedy)]
    rows += [beam_row(f"beam {rank}", beam) for rank, beam in enumerate(comparison.beams, start=1)]
    return (
        f'<p class="explain-reading">{html.escape(beam_reading(comparison))}</p>'
        f'<table class="beam-table"><tr><th></th><th>hypothesis</th><th>log P</th>'
        f"<th>score (α = {comparison.length_penalty})</th><th>leaves greedy</th></tr>{''.join(rows)}</table>"
        f'<p class="facts">beam size {comparison.beam_size}; log P in nats; unfinished hypotheses (no [EOS]) '
        f"appear only when the step budget ran out.</p>"
    )


def build(page: Page, opener: HeadOpener, tab: gr.Tab) -> list[TabView]:
    checkpoint = page.checkpoint
    with gr.Row():
        run = gr.Button("Run beam search (beam 4, α = 0.6)", variant="primary", elem_id=RUN, scale=0, min_width=320)
    result = gr.HTML(elem_id=READING)
    show_result(run, result)

    def on_beam(trace, progress=gr.Progress()):
        require(checkpoint, trace)
        progress((0, 1), desc=f"Beam search, 4 beams over up to {jobs.most_steps(trace)} steps", unit="searches")
        return {result: beam_html(jobs.beam_versus_greedy(page.runner, trace))}

    page.listen(run.click, on_beam, page.trace, [result], **MODEL_RUN)
    return [cleared_view({result: ""})]


PANEL = Panel(
    place=40,
    id="beam",
    title="Beam vs greedy",
    lead=LEAD,
    about=ABOUT,
    build=build,
    reading=READING,
    run=RUN,
)
