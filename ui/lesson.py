"""The "Download as a lesson" button beside the share link: the sentence on screen as a lesson (lesson/: its
views, sections 3.2-3.5, as one static folder whose index.html plays offline), zipped for the visitor.

The button makes the zip from the kept trace (no model run: the positional-encoding rows and the padded batch
come from the runner, as the Positions and Masks tabs get them) and shows a second button that saves it. The lesson
opens on the view on screen (`lesson_start`): the tab, attention kind, layer, head and step the share link names
(ui/share.py `on_screen`); a tab the lesson has no view for opens on its Attention view, and the lesson's page says so.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import gradio as gr

from lesson import LessonSentence, Start, write_lesson, zipped
from lesson.sections import VIEWS
from model import TranslationTrace
from serving import Runner

from .common import Page
from .runner import TRACE_FILES
from .share import Targets, on_screen, screen_inputs

LABEL = "Download as a lesson"
LESSON_VIEWS = {view: label for view, label, *_ in VIEWS}  # a lesson's views, by id (the app's tab ids)
NEAREST_VIEW = "attention"  # where a tab the lesson has no view for opens


def lesson_name(trace: TranslationTrace) -> str:
    """lesson-<the sentence's first words>: a folder and file name of letters, digits and dashes."""
    words = re.findall(r"\w+", trace.source_text)[:5]
    return "-".join(["lesson", *words])[:60]


def lesson_start(trace: TranslationTrace, step, shown: dict, tab_labels: dict[str, str]) -> Start:
    """Where the lesson opens: the view `shown` (`on_screen`'s fields) at the page's 1-based `step`. A tab that is not
    a lesson view opens on NEAREST_VIEW at the kind, layer and head `shown` names, with a note that says so
    (`tab_labels`: the tabs' labels by id)."""
    tab, view = shown["tab"], shown["tab"] if shown["tab"] in LESSON_VIEWS else NEAREST_VIEW
    note = ""
    if view != tab:
        whose = "that tab's" if tab == "compare" else "the Attention tab's"
        note = (
            f"Downloaded on the app's {tab_labels.get(tab, tab)} tab, which a lesson does not have: it opens on "
            f"{LESSON_VIEWS[view]} instead, at {whose} attention kind, layer and head."
        )
    steps = min(max(int(step or 1), 1), trace.num_steps)
    return Start(1, view, shown["kind"], max(int(shown["layer"] or 1), 1), str(shown["head"]), steps, note)


def lesson_zip(runner: Runner | None, trace: TranslationTrace | None, start: Start = Start()) -> str:
    """The trace as a lesson opening at `start`, zipped into a fresh file -> its path; gr.Error without a trace or a
    model."""
    if trace is None or runner is None:
        raise gr.Error("Translate a sentence first: the lesson holds the sentence on screen.")
    sentence = LessonSentence.of(runner, trace)
    with tempfile.TemporaryDirectory(prefix="attention-explorer-lesson-") as folder:
        out = Path(folder) / lesson_name(trace)
        write_lesson([sentence], out, title="A lesson from Attention Explorer", start=start)
        return TRACE_FILES.write_bytes(zipped(out), f"{out.name}.zip")


def build() -> tuple[gr.Button, gr.DownloadButton]:
    """The button and its save button (place them where the page should show them; `wire` declares their action)."""
    make = gr.Button(LABEL, elem_id="lesson-make", size="sm", scale=1, min_width=160)
    save = gr.DownloadButton("Save the lesson (zip)", elem_id="lesson-save", visible=False, size="sm", scale=1)
    return make, save


def wire(page: Page, targets: Targets, make: gr.Button, save: gr.DownloadButton) -> None:
    """The button's action: the save button shows the lesson of the sentence on screen, opening on the view on
    screen; it hides when another sentence replaces it."""
    shown_by = screen_inputs(targets)
    tab_labels = {tab.id: tab.label for tab in targets.tabs.children if isinstance(tab, gr.Tab)}

    def make_lesson(trace: TranslationTrace | None, step, *shown) -> dict:
        start = (
            None
            if trace is None
            else lesson_start(trace, step, on_screen(targets, dict(zip(shown_by, shown))), tab_labels)
        )
        return {save: gr.DownloadButton(value=lesson_zip(page.runner, trace, start or Start()), visible=True)}

    page.listen(make.click, make_lesson, [page.trace, page.step, *shown_by], [save], show_progress_on=[make])
    page.follow([page.trace], [save], lambda values: {save: gr.update(value=None, visible=False)})
