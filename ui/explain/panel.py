"""What the Explain tab's panels share: their declaration (`Panel`: each panel module ends with `PANEL = Panel(...)`,
and ui/explain/panels.py finds them), their opening (`lead`: one sentence saying what the panel shows and how to
read it; `more_about`: the rest of its prose, folded; a result's text opening on one plain sentence of what it
means for this sentence, `Panel.reading`), bringing a button's result into view (`show_result`), their views
(`view`, `cleared_view`), the results their buttons keep (`kept_for`, `sentence_matches`), interventions (a re-run
of the user's sentence with heads or positional encodings switched off, section 3.2.2 and 3.5) and the
side-by-side comparison of two outputs, opening on what changed (`outcome`, `branch_outcome`).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import gradio as gr
import numpy as np
from gradio.components.plot import PlotData

from model import Checkpoint, TranslationTrace
from model.checkpoints.catalogue import OWN, model_info
from model.analysis import readouts
from model.decoding.ablation import Ablation
from model.decoding.trace import ATTENTION_KINDS
from serving import Runner, jobs
from visualizer.explain import probability_change_figure

from ..attention import HeadOpener
from ..page_script import follow_result_js
from ..common import PRIVATE, Page, TabView, chips, plot
from ..runner import model_event

# A button that runs the model: in the runner's one group of model events, so a crowd pressing the
# buttons cannot start more model calls than the group has slots.
MODEL_RUN = model_event(**PRIVATE)


TAB_ID = "explain"
MORE_ABOUT = "More about this"
SURE_DROP = 0.05  # the original tokens' mean probability falling by this much reads as "less sure of its words"

# After a button's run, the result (`id`) is scrolled just into view once it has rendered: a watcher started by
# the click waits for the result's box to change and settle (a drawn figure, or text), then scrolls it the
# least distance that shows it (below the sticky player bar), and again if the box still changes within
# FOLLOW_MS (a figure fitted anew to its box); the visitor's own scrolling ends that. Nothing scrolls on page
# load, and a run that fails changes nothing in the box, so nothing scrolls; the watcher gives up after two
# minutes.


@dataclass(frozen=True)
class Panel:
    """One Explain panel, declared once at the end of its module (`PANEL = Panel(...)`). The tab lays out every
    declared panel in `place` order, each in its own sub-tab: the lead, what `build` makes, then `about` folded.
    Its text lives in its own module (LEAD, ABOUT): plain Markdown without bold, read as it is written."""

    place: int  # its place in the panel bar, ascending (tens, so a new panel fits between two)
    id: str  # the sub-tab's id
    title: str  # the sub-tab's label, and the lead's first words
    lead: str  # one sentence after "title: ": what the panel shows and how to read it
    about: str  # the rest of its prose (Markdown), folded under its figure
    # (page, the Attention tab's opener, the panel's own gr.Tab) -> its views; called inside its gr.Tab
    build: Callable[[Page, HeadOpener, gr.Tab], list[TabView]]
    # what only this project's own model has and the panel needs (its training film, its corpus file): on another
    # model's page the panel says so in one line, "{model} has no ...", instead of its controls; "": any model
    own_model_only: str = ""
    # the elem_id of the text that, once the panel has a result for this sentence, opens on one plain sentence of what
    # that result means, computed from it, the technical names after it; "": the panel's figure says it alone
    reading: str = ""
    # the elem_id of the button whose run makes that result; "": it comes with the translation (or the panel's file)
    run: str = ""

    @property
    def lead_text(self) -> str:
        return f"{self.title}: {self.lead}"

    def unavailable_on(self, checkpoint: Checkpoint) -> str:
        """The one line this panel shows on `checkpoint`'s page instead of its controls ("" where it works)."""
        if not self.own_model_only or checkpoint.kind == OWN.key:
            return ""
        return self.own_model_only.format(model=model_info(checkpoint.kind).label)


def code(token: str) -> str:
    """A token as a Markdown code span, shown as it is (a code span shows an entity such as &lt; literally, so
    nothing is escaped; Gradio sanitizes the HTML)."""
    return f"`` {token} ``" if "`" in token else f"`{token}`"


def lead(text: str) -> gr.Markdown:
    """A panel's first line: one sentence saying what it shows and how to read it."""
    return gr.Markdown(text, elem_classes="explain-lead")


def unavailable(panel: Panel, text: str) -> gr.Markdown:
    """A panel's one line on a page whose model lacks what it needs (`Panel.unavailable_on`)."""
    return gr.Markdown(text, elem_id=f"{panel.id}-unavailable", elem_classes="explain-unavailable")


def more_about(text: str) -> gr.Accordion:
    """The rest of a panel's prose, folded under its figure."""
    with gr.Accordion(MORE_ABOUT, open=False, elem_classes="explain-more") as folded:
        gr.Markdown(text)
    return folded


def show_result(button: gr.Button, result: gr.components.Component) -> None:
    """After `button`'s run, scroll `result` (its figure, or its text) just into view once it has rendered."""
    button.click(None, None, None, js=follow_result_js(result.elem_id), **PRIVATE)


def view(
    outputs: Sequence,
    render: Callable[[TranslationTrace | None, float | None, dict], dict],
    *,
    controls: Sequence = (),
    inputs: Sequence = (),
    follows_step: bool = False,
    follows_trace: bool = True,
) -> TabView:
    """A panel's view on the Explain tab, drawn by the page's one redraw (ui/redraw.py); `inputs` are read, not
    followed as controls are (TabView)."""
    return TabView(
        TAB_ID,
        list(outputs),
        render,
        controls=list(controls),
        inputs=list(inputs),
        follows_step=follows_step,
        follows_trace=follows_trace,
    )


def cleared_view(cleared: dict) -> TabView:
    """The results of a panel's model runs (`cleared`: {component: value when empty}), reset for a new trace."""
    return view(list(cleared), lambda trace, step, values: dict(cleared))


def require(checkpoint: Checkpoint | None, trace: TranslationTrace | None) -> None:
    if checkpoint is None:
        raise gr.Error("No model is loaded.")
    if trace is None:
        raise gr.Error("Translate a sentence first.")


def kept_for(trace: TranslationTrace, **result) -> dict:
    """A button's result to keep in gr.State, tagged with the sentence it was computed for."""
    return {"source_ids": list(trace.source_ids), "output_ids": list(trace.output_ids), **result}


def sentence_matches(trace: TranslationTrace | None, kept: dict | None) -> bool:
    """Whether a kept result (`kept_for`) was computed for this trace."""
    return (
        trace is not None
        and kept is not None
        and kept["source_ids"] == list(trace.source_ids)
        and kept["output_ids"] == list(trace.output_ids)
    )


def describe_ablation(ablation: Ablation) -> str:
    if not ablation.positional_encoding:
        return "no positional encodings"
    parts = []
    for name, kind in ATTENTION_KINDS.items():
        heads = sorted(getattr(ablation, f"{name}_heads"))
        if heads:
            parts.append(f"{kind.label} " + ", ".join(f"L{l + 1} H{h + 1}" for l, h in heads))
    return "; ".join(parts) or "nothing switched off"


@dataclass
class Intervention:
    """An intervened re-run of the user's sentence, and the original output scored under it."""

    trace: TranslationTrace  # greedy decoding under the intervention
    original_probs: np.ndarray  # (T,) the original trace's chosen_probs
    changed_probs: np.ndarray  # (T,) the same original tokens, teacher-forced under the intervention
    label: str  # what was done, for titles


def intervene(runner: Runner, trace: TranslationTrace, ablation: Ablation) -> Intervention:
    """Decode the same sentence again under `ablation` and score the original output under it."""
    changed = jobs.translate(runner, trace.source_text, trace.direction, ablation=ablation)
    probs = jobs.token_probabilities(runner, trace.source_ids, trace.output_ids, ablation, direction=trace.direction)
    return Intervention(changed, trace.chosen_probs, probs, describe_ablation(ablation))


def output_card(heading: str, trace: TranslationTrace, classes: dict[int, str], facts: str) -> str:
    """One output's card: its text, its token chips (a marked chip's tooltip names its mark) and `facts`."""
    tips = [
        f"step {t + 1}: p = {p:.3f}" + (f" · {classes[t]}" if t in classes else "")
        for t, p in enumerate(trace.chosen_probs)
    ]
    return (
        f'<div><h4>{html.escape(heading)}</h4><div class="text">{html.escape(trace.translation) or "∅"}</div>'
        f'<div class="token-row">{chips(trace.output_tokens, classes, tips)}</div>'
        f'<div class="facts">{facts}</div></div>'
    )


def changed_tokens(original: Sequence[int], changed: Sequence[int]) -> int:
    """How many of the original's tokens the changed output does not keep (removed or replaced), aligned as
    `readouts.aligned_edits` aligns them: the same tokens one place later are kept."""
    return sum(len(edit.original) for edit in readouts.aligned_edits(original, changed))


def outcome(original: TranslationTrace, result: Intervention, doing: str) -> str:
    """One plain sentence, counted from the run: what ``doing`` ("Without the word positions") did to the translation
    and to the original tokens' probabilities, and what that means for this sentence."""
    n, changed = len(original.output_ids), changed_tokens(original.output_ids, result.trace.output_ids)
    before, after = float(np.mean(result.original_probs)), float(np.mean(result.changed_probs))
    same = list(result.trace.output_ids) == list(original.output_ids)
    added = len(result.trace.output_ids) - (n - changed)  # the changed output's tokens that are not the original's
    if same:
        writes = "the same translation"
    elif changed:
        writes = f"another translation ({changed} of its {n} tokens change)"
    else:
        writes = f"another translation (its {n} tokens all kept, {added} added)"
    if not same:
        meaning = "what was taken away matters for this sentence"
    elif before - after < SURE_DROP:
        meaning = "it hardly needs what was taken away here"
    else:
        meaning = "it still gets there, less sure of its words"
    return (
        f"{doing}, the model writes {writes}, and the original tokens' mean probability goes from {before:.2f} to "
        f"{after:.2f}: {meaning}."
    )


EDIT_SHOWN = 3  # a branch's opening names this many edits, then counts the rest


def quoted(tokens: Sequence[str]) -> str:
    return f"“{' '.join(tokens)}”"


def edit_words(edit: readouts.Edit, original: Sequence[str], changed: Sequence[str]) -> str:
    """One edit in words: 'adds “x”', 'drops “y”', 'writes “x” for “y”'."""
    was, now = quoted([original[t] for t in edit.original]), quoted([changed[t] for t in edit.changed])
    return {"inserted": f"adds {now}", "removed": f"drops {was}", "replaced": f"writes {now} for {was}"}[edit.kind]


def tokens(n: int) -> str:
    return f"{n} token" if n == 1 else f"{n} tokens"


def branch_outcome(original: TranslationTrace, branched: TranslationTrace, step: int) -> str:
    """One plain sentence, counted from the run: what forcing the branch's token at ``step`` did to the rest, in
    words: the original's tokens from the step on aligned with the branch's (`readouts.aligned_edits`), so the
    same words one place later read as kept, and only what was added, dropped or replaced is named."""
    forced, was = branched.output_tokens[step], original.output_tokens[step]
    edits = readouts.aligned_edits(original.output_ids, branched.output_ids, step)
    n = len(original.output_ids) - step  # the original's tokens from the forced step on
    kept = n - sum(len(edit.original) for edit in edits)
    if not edits:
        return f"Forcing “{forced}” (the model's own choice) at step {step + 1}, the model goes on as before."
    said = [edit_words(edit, original.output_tokens, branched.output_tokens) for edit in edits[:EDIT_SHOWN]]
    if len(edits) > EDIT_SHOWN:
        more = len(edits) - EDIT_SHOWN
        said.append(f"{more} more {'change' if more == 1 else 'changes'}")
    words = said[0] if len(said) == 1 else f"{', '.join(said[:-1])} and {said[-1]}"
    return (
        f"Forcing “{forced}” instead of “{was}” at step {step + 1}, the model {words}: it keeps {kept} of the "
        f"original's {tokens(n)} from step {step + 1} on."
    )


def edit_marks(original: Sequence[int], changed: Sequence[int], start: int = 0) -> tuple[dict, dict]:
    """The chips' marks of an aligned comparison (`readouts.aligned_edits` from `start` on): ({original position:
    "removed" or "replaced"}, {changed position: "inserted" or "replaced"}); a kept token is unmarked."""
    was, now = {}, {}
    for edit in readouts.aligned_edits(original, changed, start):
        was |= dict.fromkeys(edit.original, edit.kind)
        now |= dict.fromkeys(edit.changed, edit.kind)
    return was, now


def comparison_html(
    original: TranslationTrace, changed: TranslationTrace, heading: str, forced_step: int | None = None, said: str = ""
) -> str:
    """The original and the changed output side by side, under `said` (a plain sentence of what changed): the two
    aligned (`edit_marks`; a branch from its forced step on), only what differs marked (removed or replaced in
    the original, inserted or replaced in the changed output), and a forced token marked as forced."""
    differs = readouts.first_difference(original.output_ids, changed.output_ids)
    start = forced_step if forced_step is not None else 0
    was, now = edit_marks(original.output_ids, changed.output_ids, start)
    if forced_step is not None:
        now[forced_step] = "forced"
    verdict = "same output" if differs is None else f"outputs part at step {differs + 1}"

    def facts(trace: TranslationTrace) -> str:
        return (
            f"{trace.num_steps} tokens · log P = {readouts.sequence_log_prob(trace.chosen_probs):.2f} · "
            f"mean p = {float(trace.chosen_probs.mean()):.2f} · {verdict}"
        )

    opening = f'<p class="explain-reading">{html.escape(said)}</p>' if said else ""
    return (
        f'{opening}<div class="explain-compare">{output_card("Original (greedy)", original, was, facts(original))}'
        f"{output_card(heading, changed, now, facts(changed))}</div>"
    )


def intervention_views(
    original: TranslationTrace, result: Intervention, heading: str, name: str, doing: str
) -> tuple[str, PlotData]:
    """(comparison HTML opening on what `doing` changed, `outcome`; per-step probability-change plot) for an
    Intervention."""
    figure = probability_change_figure(
        original.output_tokens,
        result.original_probs,
        result.changed_probs,
        changed_name=heading,
        title=f"Probability of each original token: {result.label} vs the intact model",
    )
    return comparison_html(original, result.trace, heading, said=outcome(original, result, doing)), plot(figure, name)
