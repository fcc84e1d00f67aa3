"""The page's "Download as a lesson" (ui/lesson.py): beside the share link, it zips the sentence on screen as a
lesson folder whose numbers are the kept trace's."""

from __future__ import annotations

from pathlib import Path

import zipfile

import gradio as gr
import numpy as np
import pytest
from page_driver import PageDriver

from lesson.arrays import unpacked
from lesson.writer import read_sentence
from serving.runner import Runner
from ui import build_demo, lesson


def test_the_zip_is_the_sentence_on_screen(checkpoint, trace, tmp_path):
    path = lesson.lesson_zip(Runner.start(checkpoint), trace)
    assert path.endswith(".zip") and "lesson-Ein-Mann" in path
    with zipfile.ZipFile(path) as archive:
        archive.extractall(tmp_path)
    [folder] = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert (folder / "index.html").is_file() and (folder / "plotly-cartesian.min.js").is_file()
    data = read_sentence(folder, 0)
    assert data["source"] == trace.source_text and data["steps"] == trace.num_steps
    assert np.array_equal(unpacked(data["arrays"]["cross_attention"]), trace.cross_attention)


@pytest.mark.parametrize("has_runner, has_trace", [(False, True), (True, False)])
def test_without_a_trace_or_a_model_it_says_so(checkpoint, trace, has_runner, has_trace):
    with pytest.raises(gr.Error, match="Translate a sentence first"):
        lesson.lesson_zip(Runner.start(checkpoint) if has_runner else None, trace if has_trace else None)


def test_the_page_has_the_button_beside_the_share_link(tiny_checkpoint, trace):
    demo = build_demo(tiny_checkpoint)
    [make] = [block._id for block in demo.blocks.values() if getattr(block, "elem_id", None) == "lesson-make"]
    [fn] = [f for f in demo.fns.values() if (make, "click") in f.targets]
    action = fn.fn.action  # the page's action (ui/redraw.py): the kept trace in, the save button out
    assert [c.elem_id for c in action.outputs] == ["lesson-save"] and action.inputs[0] is not None
    row = next(block for block in demo.blocks.values() if getattr(block, "elem_id", None) == "below-figure")
    ids = [getattr(child, "elem_id", None) for child in row.children]
    assert "share-row" in ids and "lesson-make" in ids
    [button] = action.fn(trace).values()  # as the page calls it with the kept trace
    args = button.constructor_args
    assert args["visible"] is True and Path(args["value"]).name == "lesson-Ein-Mann-fährt-Fahrrad.zip"


def test_another_sentence_hides_the_lesson_of_the_one_before(tiny_checkpoint):
    """The save button holds the lesson of the sentence on screen: a new translation hides it in the same answer."""
    driver = PageDriver(build_demo(tiny_checkpoint))
    driver.translate("Ein Mann fährt Fahrrad.")
    driver.click("lesson-make")
    assert driver.prop("lesson-save", "visible") is True
    driver.translate("Zwei Hunde spielen im Schnee.")
    assert driver.prop("lesson-save", "visible") is False
