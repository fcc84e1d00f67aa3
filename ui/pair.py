"""The Compare tab's built-in example, the 2017 blog post's pair ("…too tired" / "…too wide"): one click translates
both sentences and opens the comparison on "it" (ui/share.py's `BLOG_VIEW`), the notice says that it replaced the
visitor's sentence (and the direction, where it changed), and "Back to your sentence" brings that sentence back, alone on
the Compare tab (the pair's second sentence goes with the pair).
"""

from __future__ import annotations

import gradio as gr

from model import TranslationTrace
from serving.translation import Translator

from .common import Page, markdown_text
from .page_script import SHOW_COMPARE_JS
from .runner import model_event
from .share import BLOG_VIEW, StartExample, Targets, answer_at, open_view
from .text import DIRECTION_LABELS


def pair_notice(before: TranslationTrace | None) -> str:
    """What opening the blog post's pair changed, and how to get the visitor's own sentence back."""
    pair = DIRECTION_LABELS[BLOG_VIEW.direction]
    if before is None or (before.source_text, before.direction) == (BLOG_VIEW.text, BLOG_VIEW.direction):
        return f"ℹ️ Opened the blog post's pair, translated {pair}."
    changed = "" if before.direction == BLOG_VIEW.direction else f" (the direction is now {pair})"
    return (
        f"ℹ️ Opened the blog post's pair in place of your sentence{changed}. "
        "**Back to your sentence** (on the Compare tab) brings yours back."
    )


def wire(page: Page, translator: Translator, example: StartExample, targets: Targets) -> None:
    """The blog post's pair (both sentences translated, compared on "it"), said in the notice, and the way back to
    the visitor's own sentence: each one action of the page."""
    back = targets.compare.back

    def on_pair(before: TranslationTrace | None, kept):
        shown = open_view(translator, example, targets, BLOG_VIEW)
        own = before is not None and (before.source_text, before.direction) != (BLOG_VIEW.text, BLOG_VIEW.direction)
        mine = (before.source_text, before.direction) if own else kept
        return {
            **shown,
            targets.header.notice: pair_notice(before),
            targets.compare.kept: mine,
            back: gr.Button(visible=mine is not None),
        }

    page.listen(
        targets.compare.example.click,
        on_pair,
        [targets.header.trace, targets.compare.kept],
        [*targets.outputs(), targets.compare.kept, back],
        then_js=SHOW_COMPARE_JS,  # its sentence and figures under the player bar
        **model_event(show_progress="minimal", show_progress_on=[targets.compare.example]),
    )

    def on_back(kept):
        if kept is None:
            return gr.skip()
        text, direction = kept
        translated = translator.translate(text, direction)
        if translated.refused:
            return {targets.header.notice: f"⚠️ {markdown_text(translated.refused)}"}
        return {
            **answer_at(targets, translated, translated.step),
            targets.header.source: text,
            targets.header.direction: direction,
            targets.compare.second_text: "",  # the pair's second sentence goes with the pair
            targets.compare.kept: None,
            back: gr.Button(visible=False),
        }

    page.listen(
        back.click,
        on_back,
        [targets.compare.kept],
        [
            targets.header.trace,
            targets.header.source,
            targets.header.direction,
            targets.header.notice,
            targets.slider,
            targets.compare.second_text,
            targets.compare.kept,
            back,
        ],
        **model_event(show_progress="minimal", show_progress_on=[back]),
    )
