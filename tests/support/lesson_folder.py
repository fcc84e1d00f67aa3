"""A lesson folder for the lesson tests (tests/lesson/, tests/browser/test_browser_lesson.py): sentences translated
on a checkpoint through the app's runner (serving/), written by lesson.write_lesson, with their traces."""

from __future__ import annotations

from pathlib import Path

from lesson import LessonSentence, write_lesson
from serving import jobs
from serving.runner import Runner

SENTENCES = [  # (title, note, text): de -> en
    ("A cyclist", "Where does each English word look in the German?", "Ein Mann fährt Fahrrad."),
    ("", "", "Zwei Hunde spielen im Schnee."),
]


def lesson_folder(checkpoint, out: Path, sentences=SENTENCES) -> tuple[Path, list[LessonSentence]]:
    """(the folder's index.html, its sentences) of a lesson of ``sentences`` on ``checkpoint``."""
    runner = Runner.start(checkpoint)
    lesson = [
        LessonSentence.of(runner, jobs.translate(runner, text, "de-en"), title, note) for title, note, text in sentences
    ]
    return write_lesson(lesson, out, title="Test lesson"), lesson
