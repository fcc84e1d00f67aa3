"""The page's "Download as a lesson" (ui/lesson.py): beside the share link, it zips the sentence on screen as a
lesson folder whose numbers are the kept trace's, opening on the view on screen (its "start" record)."""

from __future__ import annotations

from pathlib import Path

import zipfile

import gradio as gr
import numpy as np
import pytest
from page_driver import PageDriver

from lesson.arrays import unpacked
from lesson.writer import read_lesson, read_sentence
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
    driver = PageDriver(demo)
    driver.translate(trace.source_text)
    driver.click("lesson-make")  # as the page calls it with the kept trace
    assert driver.prop("lesson-save", "visible") is True
    assert Path(driver.prop("lesson-save", "value")).name == "lesson-Ein-Mann-fährt-Fahrrad.zip"


def test_another_sentence_hides_the_lesson_of_the_one_before(tiny_checkpoint):
    """The save button holds the lesson of the sentence on screen: a new translation hides it in the same answer."""
    driver = PageDriver(build_demo(tiny_checkpoint))
    driver.translate("Ein Mann fährt Fahrrad.")
    driver.click("lesson-make")
    assert driver.prop("lesson-save", "visible") is True
    driver.translate("Zwei Hunde spielen im Schnee.")
    assert driver.prop("lesson-save", "visible") is False


@pytest.fixture(scope="module")
def demo(tiny_checkpoint):
    return build_demo(tiny_checkpoint)


def started(driver: PageDriver, tmp_path) -> dict:
    """The "start" record of the lesson the page's button makes now (its data/lesson.js)."""
    driver.click("lesson-make")
    with zipfile.ZipFile(driver.prop("lesson-save", "value")) as archive:
        archive.extractall(tmp_path)
    [folder] = [p for p in tmp_path.iterdir() if p.is_dir()]
    return read_lesson(folder)["start"]


def on_view(demo, tab: str, **controls) -> PageDriver:
    """A page with a translation, on `tab`, its controls ({elem_id: value}) set as the visitor set them."""
    driver = PageDriver(demo)
    driver.load()
    driver.translate("Ein Mann fährt Fahrrad.")
    driver.open_tab(tab if tab == "attention" else f"{tab}-tab")  # each tab's elem_id (Attention's: its id alone)
    for elem_id, value in controls.items():
        driver.set(elem_id, value)
    return driver


ATTENTION_CONTROLS = {"attention-kind": "decoder_self", "layer": 2, "head": "mean", "step": 3}


@pytest.mark.parametrize("tab", ["attention", "next", "positions", "masks"])
def test_the_lesson_opens_on_the_view_on_screen(demo, tab, tmp_path):
    driver = on_view(demo, tab, **ATTENTION_CONTROLS)
    assert started(driver, tmp_path) == {
        "sentence": 1,
        "view": tab,
        "kind": "decoder_self",
        "layer": 2,
        "head": "mean",
        "step": 3,
        "note": "",
    }


def test_a_lesson_from_the_compare_tab_opens_on_attention_at_its_kind_layer_and_head_and_says_so(demo, tmp_path):
    driver = on_view(demo, "compare", **ATTENTION_CONTROLS, **{"compare-kind": "encoder", "compare-layer": 2})
    driver.set("compare-head", "3")
    start = started(driver, tmp_path)
    assert {k: start[k] for k in ("view", "kind", "layer", "head", "step")} == {
        "view": "attention",
        "kind": "encoder",
        "layer": 2,
        "head": "3",
        "step": 3,
    }
    assert "Compare tab" in start["note"] and "opens on Attention" in start["note"]


@pytest.mark.parametrize("tab, label", [("explain", "Explain"), ("model", "Model")])
def test_a_tab_the_lesson_lacks_opens_on_attention_at_the_attention_tabs_controls(demo, tab, label, tmp_path):
    start = started(on_view(demo, tab, **ATTENTION_CONTROLS), tmp_path)
    assert {k: start[k] for k in ("view", "kind", "layer", "head", "step")} == {
        "view": "attention",
        "kind": "decoder_self",
        "layer": 2,
        "head": "mean",
        "step": 3,
    }
    assert f"the app's {label} tab" in start["note"] and "the Attention tab's" in start["note"]


def test_a_step_past_the_sentence_opens_on_its_last(demo, trace, tmp_path):
    driver = on_view(demo, "attention", step=99)
    assert started(driver, tmp_path)["step"] == driver.trace.num_steps
