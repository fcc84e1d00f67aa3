"""What the Compare tab (ui/compare.py) shows of a comparison (`model.analysis.compare`): the ranked heads to
open, the table of where the token looks in every head, the one-line summary, the candidates at the step that
translates the token in each sentence, and each sentence's figure and caption.
"""

from __future__ import annotations

import html

from gradio.components.plot import PlotData

import visualizer
from model import TranslationTrace
from model.analysis.compare import Comparison, HeadDifference, TokenLooks

from .attention import attention_view, lines_view
from .common import plot, step_index

RANKED = 10  # heads offered to open, the largest difference first
KEYS_SHOWN = 3  # keys listed per head and sentence in the table of every head
KIND_NAMES = {"encoder": "encoder self", "cross": "cross"}  # the kinds a comparison ranks


def head_name(head: HeadDifference) -> str:
    return f"{KIND_NAMES[head.kind]} · layer {head.layer + 1} · head {head.head + 1}"


def head_value(head: HeadDifference) -> str:
    """A ranked head as the ranking's value, 1-based: "encoder/3/2"."""
    return f"{head.kind}/{head.layer + 1}/{head.head + 1}"


def opened(value: str | None) -> tuple[str, int, str] | None:
    """ "encoder/3/2" -> ("encoder", 3, "2") for the kind, layer and head controls; None for anything else."""
    kind, layer, head = (str(value or "").split("/") + ["", ""])[:3]
    return (kind, int(layer), head) if kind in KIND_NAMES and layer.isdigit() and head.isdigit() else None


def ranking_choices(result: Comparison) -> list[tuple[str, str]]:
    return [
        (f"{rank}. {head_name(head)}: {head.distance:.3f}", head_value(head))
        for rank, head in enumerate(result.ranking[:RANKED], 1)
    ]


def keys_html(looks: TokenLooks, head: HeadDifference) -> str:
    keys = looks.top_keys(head.kind, head.layer, head.head, KEYS_SHOWN)
    return " ".join(
        f'<span class="key"><span class="tok">{html.escape(key.token)}</span> {key.weight:.2f}</span>' for key in keys
    )


def looks_html(result: Comparison) -> str:
    """Every head, the largest difference first: how much the token's rows differ, and its top keys in each."""
    token = html.escape(result.token)
    rows = "".join(
        f'<tr data-head="{head_value(head)}"><td class="num">{rank}</td><td>{head_name(head)}</td>'
        f'<td class="num">{head.distance:.3f}</td><td>{keys_html(result.first, head)}</td>'
        f"<td>{keys_html(result.second, head)}</td></tr>"
        for rank, head in enumerate(result.ranking, 1)
    )
    return (
        f'<div class="compare-looks"><table class="beam-table"><thead><tr><th>#</th><th>head</th>'
        f"<th>differs by</th><th>sentence 1: {token} looks at</th><th>sentence 2: {token} looks at</th></tr>"
        f"</thead><tbody>{rows}</tbody></table></div>"
    )


def summary(result: Comparison) -> str:
    """One line: what the token became in each sentence, and the head that tells them apart most."""
    said = [
        f"**{html.escape(looks.translating.output_token)}** at step {looks.translating.step + 1} of sentence {n} "
        f"(p = {float(looks.translating.probabilities[0]):.3f} for its top candidate)"
        for n, looks in ((1, result.first), (2, result.second))
    ]
    top = result.ranking[0]
    return (
        f"**{html.escape(result.token)}** is translated as {said[0]} and as {said[1]}. The head that tells the "
        f"two apart most: {head_name(top)} ({top.distance:.3f})."
    )


def candidates_view(number: int, looks: TokenLooks) -> PlotData:
    step = looks.translating
    chosen = step.candidates.index(step.output_token) if step.output_token in step.candidates else None
    figure = visualizer.candidates_chart(
        step.candidates, step.probabilities, chosen, title=f"Sentence {number}, step {step.step + 1}"
    )
    return plot(figure, f"compare-candidates-{number}")


def side_view(
    trace: TranslationTrace,
    step: float | None,
    looks: TokenLooks | None,
    kind: str,
    layer,
    head: str,
    draw: str,
    at_token: bool,
) -> tuple[PlotData, int]:
    """One sentence's figure and the 1-based step drawn: the step that translates the token when at_token."""
    if looks is not None and at_token:
        step = looks.translating.step + 1
    step = step_index(trace, step) + 1
    if draw != "lines":
        return attention_view(trace, step, kind, layer, head), step
    keep = None  # the token's lines: its encoder row, or the decoder query that translates it
    if looks is not None and (kind == "encoder" or at_token):
        keep = f"query/{looks.position if kind == 'encoder' else looks.translating.step}"
    return lines_view(trace, step, kind, layer, head, False, keep), step


def caption(number: int, trace: TranslationTrace, step: int, looks: TokenLooks | None) -> str:
    where = (
        ""
        if looks is None
        else (
            f" · {html.escape(trace.source_tokens[looks.position])} is translated at step {looks.translating.step + 1}"
        )
    )
    return (
        f'<div class="compare-caption"><b>Sentence {number}</b> {html.escape(trace.source_text)}'
        f'<div class="translation">→ {html.escape(trace.translation)}</div>'
        f'<div class="facts">step {step} of {trace.num_steps}{where}</div></div>'
    )
