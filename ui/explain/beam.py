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
    "runs the paper's beam search (beam 4) on your sentence and lists its hypotheses "
    "under the greedy output; the marked token is where each first differs."
)
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


def beam_html(comparison: readouts.BeamComparison) -> str:
    """A table: greedy, then the beam hypotheses best first, each with log P, score and where it parts."""
    best = comparison.beams[0]
    verdict = (
        "Beam search keeps the greedy translation."
        if best.diverges_at is None
        else f"Beam search prefers another translation (score {best.score:.3f} vs greedy "
        f"{comparison.greedy.score:.3f}); it leaves greedy at step {best.diverges_at + 1}."
    )
    rows = [beam_row("greedy", comparison.greedy)]
    rows += [beam_row(f"beam {rank}", beam) for rank, beam in enumerate(comparison.beams, start=1)]
    return (
        f"<p><b>{html.escape(verdict)}</b></p>"
        f'<table class="beam-table"><tr><th></th><th>hypothesis</th><th>log P</th>'
        f"<th>score (α = {comparison.length_penalty})</th><th>leaves greedy</th></tr>{''.join(rows)}</table>"
        f'<p class="facts">beam size {comparison.beam_size}; log P in nats; unfinished hypotheses (no [EOS]) '
        f"appear only when the step budget ran out.</p>"
    )


def build(page: Page, opener: HeadOpener, tab: gr.Tab) -> list[TabView]:
    checkpoint = page.checkpoint
    with gr.Row():
        run = gr.Button(
            "Run beam search (beam 4, α = 0.6)", variant="primary", elem_id="beam-run", scale=0, min_width=320
        )
    result = gr.HTML(elem_id="beam-result")
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
)
