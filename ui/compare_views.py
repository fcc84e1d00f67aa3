"""What the Compare tab (ui/compare.py) shows of a comparison (`model.analysis.compare`): the ranked heads to
open, the table of where the token looks in every head, the summary with one plain sentence of what the heads do
with the token (computed from the numbers of both sentences: `summary`, `story`), the candidates at the step that translates the token in each
sentence, and each sentence's figure and caption at the page's step (its grid of every head always names what the
summary names: `named_positions`).
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from gradio.components.plot import PlotData

import visualizer
from model import TranslationTrace
from model.analysis.compare import (
    Comparison,
    HeadDifference,
    TokenLooks,
    WordDifference,
    bare,
    referent_link,
    source_words,
    word_differences,
)
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


def word(token: str) -> str:
    """A token or word as a quoted word ("▁animal" -> “animal”)."""
    return f"“{html.escape(token.replace(WORD_BOUNDARY, ''))}”"


def both(first: float | None, second: float | None, digits: int = 2) -> str:
    """Two numbers side by side, sentence 1's first ("0.32 / 0.34"); "–" where a sentence has no such key."""
    return " / ".join("–" if value is None else f"{value:.{digits}f}" for value in (first, second))


def chosen_probability(looks: TokenLooks) -> float:
    """The probability of the token the decoder chose at the step that translates the token."""
    step = looks.translating
    return float(
        step.probabilities[step.candidates.index(step.output_token)] if step.output_token in step.candidates else 0.0
    )


def summary(result: Comparison, referents: Sequence[str] | None = None) -> str:
    """What the token became in each sentence and whether the model's output therefore tells the two apart, then what
    the heads do with it (`story`); every number for both sentences side by side, sentence 1's first."""
    first, second = result.first.translating, result.second.translating
    token = word(result.token)
    steps = f"step {first.step + 1}" if first.step == second.step else f"steps {first.step + 1} / {second.step + 1}"
    numbers = f"({steps}, p = {both(chosen_probability(result.first), chosen_probability(result.second), 3)})"
    if result.same_output:
        said = (
            f"**{token} becomes {word(first.output_token)} in both sentences** {numbers}: the model translates it the "
            f"same way in both, so its output does not tell the two {token}s apart."
        )
    else:
        said = (
            f"**{token} becomes {word(first.output_token)} in sentence 1 and {word(second.output_token)} in sentence "
            f"2** {numbers}: the model translates it differently, so its output tells the two apart."
        )
    return f"{said} {story(result, referents)}"


LINK_WEIGHT = 0.25  # a head links the token to a word when it sends that word at least this share of its attention
SAME_WEIGHT = 0.05  # two weights of one head this close read as "about the same in both sentences"
WORDS_SAID = 2  # words named where the head that differs most differs


def story(result: Comparison, referents: Sequence[str] | None = None) -> str:
    """Plain sentences, from the numbers of both sentences, of what the heads do with the token: the encoder head that
    sends it most to a candidate referent (`model.analysis.compare.referent_link`), that head's weight in both
    sentences and whether it links them (LINK_WEIGHT) and separates them (SAME_WEIGHT); then the head whose weights
    differ most and the words (subword pieces joined, `word_differences`) where its two rows differ most, with both
    weights."""
    token, link, top = word(result.token), referent_link(result, referents), result.ranking[0]
    where = " or ".join(word(r) for r in referents) if referents else "a word before it that both sentences have"
    if link is None:
        linked = f"Neither sentence has {where}."
    else:
        head = f"encoder layer {link.layer + 1} · head {link.head + 1}"
        weights = f"{both(link.first, link.second)} of its attention (sentence 1 / sentence 2)"
        if link.strongest < LINK_WEIGHT:
            linked = (
                f"No encoder head links {token} to {where}: the most any sends is {head}, to {word(link.word)}, "
                f"{weights}."
            )
        else:
            linked = (
                f"The encoder head that links {token} most to {where} is {head}: it sends {word(link.word)} {weights}"
            )
            if link.first is None or link.second is None:
                linked += "; only one sentence has that word."
            elif abs(link.first - link.second) < SAME_WEIGHT:
                linked += ", about the same in both, so this head does not separate the sentences either."
            else:
                linked += f", more in sentence {1 if link.first > link.second else 2}."
    differs = " and ".join(f"{word(key.word)} ({key_weights(key)})" for key in said_words(result))
    return (
        f"{linked} The head whose weights differ most between the sentences is {head_name(top)} (by "
        f"{top.distance:.2f} of 1), most at {differs or 'no word'}."
    )


def said_words(result: Comparison) -> list[WordDifference]:
    """The words where the two rows of the head whose weights differ most differ most (up to WORDS_SAID, each with a
    gap): the words `story` names."""
    (first_row, second_row), sentences = result.rows(result.ranking[0]), (result.first, result.second)
    words = word_differences(first_row, sentences[0].source_tokens, second_row, sentences[1].source_tokens)
    return [said for said in words[:WORDS_SAID] if said.gap > 0]


def named_positions(
    result: Comparison, number: int, kind: str, referents: Sequence[str] | None = None
) -> tuple[list[int], list[int]]:
    """(query rows, key columns) of sentence `number`'s figure of `kind` whose labels the all-heads grid always draws,
    the first first where two are too close for both: the source tokens the summary names (the token, the pieces of
    the words where the head that differs most differs most, of the word its referent head links it to) and, as the
    decoder's query rows, the step that translates the token."""
    looks = (result.first, result.second)[number - 1]
    link = referent_link(result, referents)
    source = [looks.position, *(i for said in said_words(result) for i in said.pieces[number - 1])]
    if link is not None:
        words = source_words(looks.source_tokens)
        source += [i for text, pieces in words if bare(text) == bare(link.word) for i in pieces]
    source, step = list(dict.fromkeys(source)), [looks.translating.step]
    return {"encoder": (source, source), "cross": (step, source)}.get(kind, (step, []))


def key_weights(key: WordDifference) -> str:
    """A word's weights in words: "0.12 / 0.37" (sentence 1 / sentence 2), or "0.40, sentence 1 only"."""
    if key.first is None or key.second is None:
        return f"{key.first if key.second is None else key.second:.2f}, sentence {1 if key.second is None else 2} only"
    return both(key.first, key.second)


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
    named: tuple[Sequence[int], Sequence[int]] = ((), ()),
) -> tuple[PlotData, int]:
    """One sentence's figure at the page's step (the player bar's, within this sentence's steps) and that 1-based
    step. As a heatmap of every head, the `named` positions (`named_positions`) are always labelled; as lines, the
    token's lines are kept: its encoder row, or the decoder query that translates it once the step has reached it."""
    step = step_index(trace, step) + 1
    if draw != "lines":
        return attention_view(trace, step, kind, layer, head, named=named), step
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
