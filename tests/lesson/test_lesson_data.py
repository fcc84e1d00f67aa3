"""The lesson's numbers are the trace's: the exported attention arrays, the figures per step (candidates, masks),
the positional encoding, and the references the page resolves (lesson/figures.py, lesson/writer.py); the "start"
record the page opens on (lesson/start.py)."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import array
from lesson.arrays import packed, unpacked
from lesson.figures import MEAN
from lesson import Start, write_lesson
from lesson.writer import read_lesson, read_sentence
from lesson_folder import lesson_folder
from model.decoding.trace import ATTENTION_KINDS


@pytest.fixture(scope="module")
def lesson(checkpoint, tmp_path_factory):
    index, sentences = lesson_folder(checkpoint, tmp_path_factory.mktemp("lesson") / "lesson")
    return index.parent, sentences


@pytest.fixture(scope="module", params=[0, 1], ids=["sentence-1", "sentence-2"])
def exported(request, lesson):
    """(the page's data of one sentence, its LessonSentence)."""
    folder, sentences = lesson
    return read_sentence(folder, request.param), sentences[request.param]


def test_packing_keeps_every_bit(trace):
    for kind in ATTENTION_KINDS.values():
        weights = getattr(trace, kind.weights_field)
        assert np.array_equal(unpacked(packed(weights)), weights)
    assert unpacked(packed(np.array([[True, False]]))).tolist() == [[1, 0]]


def test_the_attention_arrays_are_the_traces_in_its_order(exported):
    data, sentence = exported
    trace = sentence.trace
    for kind in ATTENTION_KINDS.values():
        weights = getattr(trace, kind.weights_field)  # (L, h, Tq, Tk)
        shown = unpacked(data["arrays"][kind.weights_field])
        assert shown.shape == weights.shape and shown.dtype == np.float32
        assert np.array_equal(shown, weights)  # bit for bit, every layer and head in place
        assert np.array_equal(unpacked(data["arrays"][kind.weights_field + MEAN]), weights.mean(axis=1))
    assert data["layers"] == {
        name: getattr(trace, kind.weights_field).shape[0] for name, kind in ATTENTION_KINDS.items()
    }
    assert data["steps"] == trace.num_steps and data["translation"] == trace.translation


def test_every_heatmap_refers_to_its_layer_and_head(exported):
    data, _ = exported
    for name, kind in ATTENTION_KINDS.items():
        figures = data["figures"]["attention"][name]
        assert figures["head"]["data"][0]["z"] == {"ref": kind.weights_field, "index": ["layer", "head"]}
        assert figures["mean"]["data"][0]["z"] == {"ref": kind.weights_field + MEAN, "index": ["layer"]}
        for l, grid in enumerate(figures["all"]):
            for panel in grid["data"]:
                layer, head = panel["z"]["index"]
                assert panel["z"]["ref"] == kind.weights_field and layer == l
                assert panel["hovertemplate"].startswith(f"layer {layer + 1} · head {head + 1}<br>")
        assert figures["grows"] == (None if name == "encoder" else "rows+keys" if name == "decoder_self" else "rows")


def test_the_candidates_of_each_step_are_the_traces(exported):
    data, sentence = exported
    trace = sentence.trace
    assert len(data["figures"]["next"]) == trace.num_steps
    for t, figure in enumerate(data["figures"]["next"]):
        bars = figure["data"][0]
        assert np.array_equal(array(bars["x"]), trace.candidate_probs[t])
        assert figure["layout"]["title"]["text"].startswith(f"Step {t + 1}:")


def test_the_masks_of_each_step_are_the_traces(exported):
    data, sentence = exported
    trace = sentence.trace
    for t, figure in enumerate(data["figures"]["masks"]):
        batch, causal, decoder, cross = (array(series["z"]) for series in figure["data"])
        assert np.array_equal(batch, sentence.batch.mask)
        assert np.array_equal(causal, trace.causal_mask[: t + 1])  # panel (b) grows with the step
        assert np.array_equal(decoder, trace.decoder_mask)
        assert np.array_equal(cross, trace.cross_mask)
        outlined = [shape for shape in figure["layout"]["shapes"] if shape.get("name") == "highlight"]
        assert outlined and all(shape["y0"] == t - 0.5 for shape in outlined)


def test_the_positional_encoding_is_the_runners_table(exported):
    data, sentence = exported
    table = array(data["figures"]["positions"]["data"][0]["z"])
    assert np.array_equal(table, sentence.positions)
    assert table.shape[0] >= max(len(sentence.trace.source_tokens), sentence.trace.num_steps)


def test_the_template_is_held_once(lesson):
    folder, _ = lesson
    data = read_sentence(folder, 0)
    layouts = [data["figures"]["positions"]["layout"], *(f["layout"] for f in data["figures"]["next"])]
    assert all("template" not in layout for layout in layouts)
    assert '"template":{"data"' in (folder / "data" / "lesson.js").read_text("utf-8")


def test_the_lesson_carries_the_start_it_was_written_with(lesson, tmp_path):
    """The start record in data/lesson.js is the one written (1-based, as <body data-step data-layer> show it); by
    default the first sentence's last step, cross-attention, layer 1, head 1."""
    _, sentences = lesson
    assert read_lesson(write_lesson(sentences, tmp_path / "default").parent)["start"] == {
        "sentence": 1,
        "view": "attention",
        "kind": "cross",
        "layer": 1,
        "head": "1",
        "step": None,
        "note": "",
    }
    start = Start(2, "masks", "decoder_self", 2, "mean", 3, "Opened on Masks.")
    data = read_lesson(write_lesson(sentences, tmp_path / "start", start=start).parent)
    assert data["start"] == {
        "sentence": 2,
        "view": "masks",
        "kind": "decoder_self",
        "layer": 2,
        "head": "mean",
        "step": 3,
        "note": "Opened on Masks.",
    }
    assert start.view in [view["id"] for view in data["views"]] and start.kind in [k["id"] for k in data["kinds"]]


@pytest.mark.parametrize(
    "fields",
    [{"view": "compare"}, {"kind": "self"}, {"head": "0"}, {"head": "2.5"}, {"layer": 0}, {"step": 0}, {"sentence": 0}],
)
def test_a_start_the_page_cannot_open_is_refused(fields):
    with pytest.raises(ValueError):
        Start(**fields)


def test_a_start_past_the_last_sentence_is_refused(lesson, tmp_path):
    _, sentences = lesson
    with pytest.raises(ValueError, match="sentence 3 of 2"):
        write_lesson(sentences, tmp_path / "past", start=Start(sentence=3))
