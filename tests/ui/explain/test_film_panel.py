"""Explain panel "Heads forming" (ui/explain/film_view.py): a tiny CPU run's film is found and drawn, the entropy
multiples mark the current frame, and a checkpoint without a film says how to record one."""

from __future__ import annotations


import numpy as np
import pytest

from model.training import film
from model.analysis.heads_forming import film_summary
from helpers import array, figure_json
from ui.explain import film_view
from visualizer import film as film_figures


def test_film_is_found_in_the_run_directory_and_drawn(film_run):
    frames, message = film_view.load(film_run / "best")
    assert message == "" and [frame["step"] for frame in frames] == [10, 20]
    assert film.find_film(film_run / "last") == film_run / film.FILM_FILE
    summary = film_summary(frames, "en-de")
    facts, heatmap, multiples = film_view.film_views(frames, summary, 1, "cross", 1, 3)
    probe = frames[0]["probes"]["en-de"]
    np.testing.assert_allclose(array(figure_json(heatmap)["data"][0]["z"]), probe["cross_attention"][0, 2], atol=1e-6)
    assert "Training step <b>10</b>" in facts and f"{frames[0]['val_bleu']['en-de']:.2f}" in facts
    lines = [s for s in figure_json(multiples)["data"] if s["mode"] == "lines"]
    assert len(lines) == 1 * 4  # 1 decoder layer x 4 heads
    for series in lines:
        layer, head = (int(part[1:]) - 1 for part in series["name"].split())
        expected = []  # an independent entropy in bits; T may differ from frame to frame
        for frame in frames:
            w = frame["probes"]["en-de"]["cross_attention"][layer, head].astype(float)  # (T, S)
            expected.append(-(w * np.log2(np.clip(w, 1e-12, None))).sum(-1).mean())
        np.testing.assert_allclose(array(series["y"]), expected, atol=1e-4)


def test_entropy_multiples_mark_the_current_frame():
    entropy = np.arange(2 * 2 * 3, dtype=float).reshape(2, 2, 3)
    fig = film_figures.entropy_multiples_figure(np.array([100, 200]), entropy, current=1)
    markers = [s for s in fig.data if s.mode == "markers"]
    assert len(markers) == 6 and sorted(m.y[0] for m in markers) == sorted(entropy[1].ravel())
    assert all(m.x[0] == 200 for m in markers)
    with pytest.raises(ValueError, match="frames"):
        film_figures.entropy_multiples_figure(np.array([100]), entropy)


def test_a_checkpoint_without_film_says_how_to_record_one(tiny_checkpoint):
    frames, message = film_view.load(tiny_checkpoint)
    assert frames is None
    assert "no training film" in message and "--film on" in message and "film.npz" in message
    assert str(tiny_checkpoint) not in message and "/tmp" not in message  # no server path on the page


def elem_ids(demo) -> set[str]:
    return {block.elem_id for block in demo.blocks.values() if getattr(block, "elem_id", None)}


def test_the_film_controls_are_built_only_with_a_film(film_run, tiny_checkpoint):
    from ui.app import build_demo

    with_film = elem_ids(build_demo(film_run / "best"))
    assert {
        "film-frame",
        "film-heatmap",
        "film-entropy",
        "paper-run",
        "paper-lines",
        "rollout-plot",
        "cache-run",
        "cache-plot",
        "changes-rows",
        "changes-candidates",
    } <= with_film
    assert "film-missing" not in with_film
    without = elem_ids(build_demo(tiny_checkpoint))
    assert "film-missing" in without and "film-frame" not in without and "rollout-plot" in without
