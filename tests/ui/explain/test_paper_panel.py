"""Explain panel "Paper's figures" (ui/explain/paper.py): the lines' opacity is the head's weight, the panel runs
the paper's sentences once and draws the best head, and a sentence too long for the tokenizer gets a clear message."""

from __future__ import annotations

import dataclasses

import gradio as gr
import numpy as np
import pytest

from model.analysis.paper_figures import PAPER_FIGURES
from helpers import array, figure_json
from serving import Runner
from ui.explain import paper as paper_panel
from visualizer import paper as paper_figures
from visualizer.theme import ACCENT_COLOR, PRIMARY_COLOR


SHORT_SENTENCES = {  # the figures' words in sentences short enough for the tiny byte-level tokenizer
    "figure-3": "laws making the process more difficult.",
    "figures-4-5": "The Law is fine, but its application is not.",
}


def test_paper_lines_opacity_is_the_heads_weight():
    rng = np.random.default_rng(0)
    weights = rng.dirichlet(np.full(6, 0.5), size=6)  # (6, 6) rows sum to 1
    tokens = ["▁It", "▁is", "▁making", "▁more", "▁difficult", "."]
    fig = paper_figures.paper_lines_figure(weights, tokens, query_tokens=[2], target_tokens=[3, 4])
    drawn = {tuple(map(int, shape.name.split("-"))): shape for shape in fig.layout.shapes}
    expected = {(i, j) for i in range(6) for j in range(6) if weights[i, j] >= paper_figures.MIN_WEIGHT}
    assert set(drawn) == expected
    for (i, j), shape in drawn.items():
        assert shape.opacity == pytest.approx(weights[i, j])
        assert shape.line.color == (ACCENT_COLOR if i == 2 else PRIMARY_COLOR)
        assert shape.y0 == -i and shape.y1 == -j and (shape.x0, shape.x1) == (0, 1)  # left queries, right keys
    only = paper_figures.paper_lines_figure(weights, tokens, query_tokens=[2], only_queries=True)
    assert {int(shape.name.split("-")[0]) for shape in only.layout.shapes} == {2}
    with pytest.raises(ValueError, match="square"):
        paper_figures.paper_lines_figure(weights[:3], tokens)
    with pytest.raises(ValueError, match="query_tokens must lie"):
        paper_figures.paper_lines_figure(weights, tokens, query_tokens=[9])


def test_paper_panel_runs_once_and_draws_the_best_head(checkpoint, monkeypatch):
    short = tuple(dataclasses.replace(f, sentence=SHORT_SENTENCES[f.name]) for f in PAPER_FIGURES)
    monkeypatch.setattr(paper_panel, "FIGURES", short)
    store = paper_panel.PaperResults(Runner(checkpoint))
    results = store.get()
    assert store.get() is results  # computed once, then reused
    result = results[1]  # figures 4-5
    best = result.search.best
    text, lines, heatmap, scores = paper_panel.paper_views(results, "figures-4-5", None, None, False)
    head = result.encoder_attention[best.layer, best.head]
    shapes = figure_json(lines)["layout"]["shapes"]
    assert shapes and {int(s["name"].split("-")[0]) for s in shapes} <= set(result.search.query_tokens)
    for shape in shapes:
        i, j = map(int, shape["name"].split("-"))
        assert shape["opacity"] == pytest.approx(float(head[i, j]), rel=1e-6)
    np.testing.assert_allclose(array(figure_json(heatmap)["data"][0]["z"]), head, atol=1e-6)
    np.testing.assert_allclose(array(figure_json(scores)["data"][0]["z"]), result.search.scores, atol=1e-6)
    assert f"layer {best.layer + 1} of 2, head {best.head + 1}" in text
    assert f"{best.score:.0%}" in text and f"{result.search.best_over_chance:.1f}× chance" in text
    assert "layer 5 of 6" in text
    chosen_text = paper_panel.paper_views(results, "figures-4-5", 1, 2, False)[0]
    assert f"Shown: layer 1, head 2 ({result.search.scores[0, 1]:.0%})" in chosen_text


def test_paper_sentences_too_long_for_the_tokenizer_get_a_clear_message(checkpoint):
    store = paper_panel.PaperResults(Runner(checkpoint))  # the paper's full sentences: the tiny tokenizer cuts them
    with pytest.raises(gr.Error, match="cannot be searched"):
        store.get()
