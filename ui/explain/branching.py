"""Explain panel "Branch" (section 3, greedy decoding): force another candidate at the current step
(the original tokens before it) and continue greedily, beside the original output.
"""

from __future__ import annotations

import gradio as gr

from model import TranslationTrace
from serving import Runner, jobs

from ..attention import HeadOpener
from ..common import Page, TabView, step_index
from .panel import MODEL_RUN, Panel, branch_outcome, cleared_view, comparison_html, require, show_result, view

LEAD = (
    "force another candidate at the current step and let the model go on greedily; the new output beside the "
    "original, aligned word by word, marks only what it added, dropped or replaced."
)
RUN, READING = "branch-run", "branch-result"  # the button, and the result that opens on what it changed
ABOUT = """
The candidate is forced at the step of the step slider above (the steps before it keep the original tokens)
and greedy decoding continues from there. Greedy decoding never revisits a choice; this shows what one
different choice does to the rest. The two outputs are aligned from the forced step on by the most tokens they
share in the same order, so the same words one place later count as kept: green marks a word the branch added, red one it
replaced, and a struck-through word in the original is one the branch dropped.
"""


def branch_choices(trace: TranslationTrace | None, step: float | None) -> gr.Dropdown:
    """The step's candidates as a dropdown (label "token · p"), the best unchosen one selected."""
    if trace is None:
        return gr.Dropdown(choices=[], value=None, label="Candidate to force")
    t = step_index(trace, step)
    ids = [int(i) for i in trace.candidate_ids[t]]
    choices = [
        (f"{token}  ·  {100 * float(p):.1f}%" + ("  (chosen)" if i == trace.output_ids[t] else ""), i)
        for token, p, i in zip(trace.candidate_tokens[t], trace.candidate_probs[t], ids)
    ]
    value = next((i for i in ids if i != trace.output_ids[t]), ids[0])
    return gr.Dropdown(choices=choices, value=value, label=f"Candidate to force at step {t + 1}")


def branch(
    runner: Runner, trace: TranslationTrace, step: float | None, candidate: int | None
) -> tuple[TranslationTrace, int]:
    """Force `candidate` at the step (the original tokens before it), continue greedily -> (branch, step)."""
    if candidate is None:
        raise gr.Error("Choose a candidate to force.")
    t = step_index(trace, step)
    forced = [*trace.output_ids[:t], int(candidate)]
    return jobs.translate(runner, trace.source_text, trace.direction, forced_prefix=forced), t


def build(page: Page, opener: HeadOpener, tab: gr.Tab) -> list[TabView]:
    checkpoint = page.checkpoint
    with gr.Row(equal_height=True):
        candidate = gr.Dropdown([], label="Candidate to force", elem_id="branch-candidate", scale=3)
        run = gr.Button("Force it and continue", variant="primary", elem_id=RUN, scale=1)
    result = gr.HTML(elem_id=READING)
    show_result(run, result)

    def on_branch(trace, step, candidate_id):
        require(checkpoint, trace)
        branched, t = branch(page.runner, trace, step, candidate_id)
        heading = f"Branch: “{branched.output_tokens[t]}” forced at step {t + 1}"
        said = branch_outcome(trace, branched, t)
        return {result: comparison_html(trace, branched, heading, forced_step=t, said=said)}

    page.listen(run.click, on_branch, [page.trace, page.step, candidate], [result], **MODEL_RUN)
    return [
        cleared_view({result: ""}),
        view([candidate], lambda trace, step, values: {candidate: branch_choices(trace, step)}, follows_step=True),
    ]


PANEL = Panel(
    place=20,
    id="branch",
    title="Branch",
    lead=LEAD,
    about=ABOUT,
    build=build,
    reading=READING,
    run=RUN,
)
