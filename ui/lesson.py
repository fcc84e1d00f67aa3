"""The "Download as a lesson" button beside the share link: the sentence on screen as a lesson (lesson/: its
views, sections 3.2-3.5, as one static folder whose index.html plays offline), zipped for the visitor.

The button makes the zip from the kept trace (no model run: the positional-encoding rows and the padded batch
come from the runner, as the Positions and Masks tabs get them) and shows a second button that saves it.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import gradio as gr

from lesson import LessonSentence, write_lesson, zipped
from model import TranslationTrace
from serving import Runner

from .common import Page
from .runner import TRACE_FILES

LABEL = "Download as a lesson"


def lesson_name(trace: TranslationTrace) -> str:
    """lesson-<the sentence's first words>: a folder and file name of letters, digits and dashes."""
    words = re.findall(r"\w+", trace.source_text)[:5]
    return "-".join(["lesson", *words])[:60]


def lesson_zip(runner: Runner | None, trace: TranslationTrace | None) -> str:
    """The trace as a lesson, zipped into a fresh file -> its path; gr.Error without a trace or a model."""
    if trace is None or runner is None:
        raise gr.Error("Translate a sentence first: the lesson holds the sentence on screen.")
    sentence = LessonSentence.of(runner, trace)
    with tempfile.TemporaryDirectory(prefix="attention-explorer-lesson-") as folder:
        out = Path(folder) / lesson_name(trace)
        write_lesson([sentence], out, title="A lesson from Attention Explorer")
        return TRACE_FILES.write_bytes(zipped(out), f"{out.name}.zip")


def build(page: Page) -> gr.DownloadButton:
    """The button and its save button (place them where the page should show them), declared on the page: the
    save button shows the lesson of the sentence on screen, and hides when another sentence replaces it."""
    make = gr.Button(LABEL, elem_id="lesson-make", size="sm", scale=1, min_width=160)
    save = gr.DownloadButton("Save the lesson (zip)", elem_id="lesson-save", visible=False, size="sm", scale=1)

    def make_lesson(trace: TranslationTrace | None) -> dict:
        return {save: gr.DownloadButton(value=lesson_zip(page.runner, trace), visible=True)}

    page.listen(make.click, make_lesson, [page.trace], [save], show_progress_on=[make])
    page.follow([page.trace], [save], lambda values: {save: gr.update(value=None, visible=False)})
    return save
