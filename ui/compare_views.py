"""What the Compare tab (ui/compare.py) shows of a comparison (`model.analysis.compare`): the ranked heads to
open, the table of where the token looks in every head, the summary with one plain sentence of what the heads do
with the token (computed from the numbers: `story`), the candidates at the step that translates the token in each
sentence, and each sentence's figure and caption at the page's step.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from gradio.components.plot import PlotData

import visualizer
from model import TranslationTrace
from model.analysis.compare import Comparison, HeadDifference, TokenLooks
from model.analysis.readouts import is_special
from model.text.tokenizer import WORD_BOUNDARY

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


def summary(result: Comparison, referents: Sequence[str] | None = None) -> str:
    """What the token became in each sentence, then the plain sentence of what the heads do with it (`story`)."""
    said = [
        f"**{html.escape(looks.translating.output_token)}** at step {looks.translating.step + 1} of sentence {n} "
        f"(p = {float(looks.translating.probabilities[0]):.3f} for its top candidate)"
        for n, looks in ((1, result.first), (2, result.second))
    ]
    return f"**{html.escape(result.token)}** is translated as {said[0]} and as {said[1]}. {story(result, referents)}"


LINK_WEIGHT = 0.25  # a head links the token to a word when it sends that word at least this share of its attention


@dataclass(frozen=True)
class Link:
    """The strongest weight an encoder head sends from the token to one candidate word (all its subword pieces)."""

    weight: float
    word: str
    sentence: int  # 1 or 2
    layer: int  # 0-based
    head: int  # 0-based


def source_words(tokens: Sequence[str]) -> list[tuple[str, list[int]]]:
    """The words of a source sentence as (text, positions of its subword pieces): a new word at each "▁"."""
    words: list[tuple[str, list[int]]] = []
    for i, token in enumerate(tokens):
        if is_special(token):
            continue
        if token.startswith(WORD_BOUNDARY) or not words:
            words.append(("", []))
        text, positions = words[-1]
        words[-1] = (text + token.replace(WORD_BOUNDARY, ""), [*positions, i])
    return words


def bare(text: str) -> str:
    """A word without its case and the punctuation around it ("Tired." -> "tired")."""
    return text.strip(".,;:!?\"'“”‘’()").lower()


def candidate_words(
    looks: TokenLooks, shared: set[str], referents: Sequence[str] | None
) -> list[tuple[str, list[int]]]:
    """Where the token's referent may be: the `referents` named (the blog pair's "animal" and "street"), else the
    words before the token that both sentences have."""
    words = [(text, positions) for text, positions in source_words(looks.source_tokens) if bare(text)]
    if referents:
        return [(text, positions) for text, positions in words if bare(text) in {bare(r) for r in referents}]
    return [(text, positions) for text, positions in words if positions[-1] < looks.position and bare(text) in shared]


def strongest_link(result: Comparison, referents: Sequence[str] | None = None) -> Link | None:
    """Over every encoder self-attention head of both sentences, the largest weight the token sends to one candidate
    word (`candidate_words`; a word's weight is the sum over its pieces). None where there is no candidate."""
    shared = [{bare(text) for text, _ in source_words(looks.source_tokens)} for looks in (result.first, result.second)]
    best = None
    for n, looks in ((1, result.first), (2, result.second)):
        for text, positions in candidate_words(looks, shared[0] & shared[1], referents):
            weights = looks.encoder_rows[..., positions].sum(-1)  # (L, h): the word's share in each head
            layer, head = np.unravel_index(int(np.argmax(weights)), weights.shape)
            if best is None or weights[layer, head] > best.weight:
                best = Link(float(weights[layer, head]), text, n, int(layer), int(head))
    return best


def word(token: str) -> str:
    """A token or word as a quoted word ("▁animal" -> “animal”)."""
    return f"“{html.escape(token.replace(WORD_BOUNDARY, ''))}”"


def story(result: Comparison, referents: Sequence[str] | None = None) -> str:
    """One plain sentence, from the numbers, of what this model's heads do with the token: whether any encoder head
    links it (LINK_WEIGHT or more) to a candidate referent (`candidate_words`), and through which keys the head that
    differs most tells the two sentences apart."""
    token, link, top = word(result.token), strongest_link(result, referents), result.ranking[0]
    where = " or ".join(word(r) for r in referents) if referents else "a word before it that both sentences have"
    if link is None:
        linked = f"Neither sentence has {where}."
    elif link.weight < LINK_WEIGHT:
        linked = (
            f"No encoder head of this model sends more than {link.weight:.2f} of {token} to {where} (the most: to "
            f"{word(link.word)} in sentence {link.sentence}, layer {link.layer + 1} · head {link.head + 1})."
        )
    else:
        linked = (
            f"Encoder layer {link.layer + 1} · head {link.head + 1} sends {link.weight:.2f} of {token} to "
            f"{word(link.word)} in sentence {link.sentence}."
        )
    [first], [second] = (looks.top_keys(top.kind, top.layer, top.head, 1) for looks in (result.first, result.second))
    return (
        f"{linked} The head that differs most, {head_name(top)} ({top.distance:.3f}), separates the two sentences "
        f"through {word(first.token)} / {word(second.token)} ({first.weight:.2f} / {second.weight:.2f})."
    )


def candidates_view(number: int, looks: TokenLooks) -> PlotData:
    step = looks.translating
    chosen = step.candidates.index(step.output_token) if step.output_token in step.candidates else None
    figure = visualizer.candidates_chart(
        step.candidates, step.probabilities, chosen, title=f"Sentence {number}, step {step.step + 1}"
    )
    return plot(figure, f"compare-candidates-{number}")


def side_view(
    trace: TranslationTrace, step: float | None, looks: TokenLooks | None, kind: str, layer, head: str, draw: str
) -> tuple[PlotData, int]:
    """One sentence's figure at the page's step (the player bar's, within this sentence's steps) and that 1-based
    step. As lines, the token's lines are kept: its encoder row, or the decoder query that translates it once the
    step has reached it."""
    step = step_index(trace, step) + 1
    if draw != "lines":
        return attention_view(trace, step, kind, layer, head), step
    keep = None
    if looks is not None and kind == "encoder":
        keep = f"query/{looks.position}"
    elif looks is not None and kind == "cross" and looks.translating.step < step:
        keep = f"query/{looks.translating.step}"
    return lines_view(trace, step, kind, layer, head, False, keep), step


def token_step(result: Comparison | None) -> int | None:
    """The 1-based step that translates the token in the first sentence (where the page goes to compare)."""
    return None if result is None else result.first.translating.step + 1


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
