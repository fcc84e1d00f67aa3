"""Five Explain views show exactly the numbers of the computations they claim (flow to the source by rollout,
the paper's figures by a head search, the training film, the KV cache, the step changes), and their panels'
handlers work on the tiny checkpoint, a tiny CPU training run's film, and say so when there is no film.
"""

from __future__ import annotations

import dataclasses

import gradio as gr
import numpy as np
import pytest

from model.training import film
from model.analysis.heads_forming import film_summary
from model.analysis.kv_cache import record_trace_cache
from model.analysis.paper_figures import PAPER_FIGURES
from model.analysis.rollout import trace_source_flow
from model.analysis.step_changes import step_change
from helpers import array, figure_json
from ui import session
from serving import jobs
from ui.explain.panels import PANELS
from ui.explain import cache as cache_panel, changes as changes_panel, film_view, paper as paper_panel, rollout
from ui.explain.panel import kept_for, sentence_matches
from visualizer import cache as cache_figures, changes as change_figures, film as film_figures, paper as paper_figures
from visualizer.theme import ACCENT_COLOR, GRID_COLOR, PRIMARY_COLOR

SHORT_SENTENCES = {  # the figures' words in sentences short enough for the tiny byte-level tokenizer
    "figure-3": "laws making the process more difficult.",
    "figures-4-5": "The Law is fine, but its application is not.",
}


# --------------------------------------------------------------------------- rollout
def test_rollout_view_shows_the_flow_and_the_raw_cross_attention(trace):
    value = figure_json(rollout.rollout_view(trace, 3))
    flow = trace_source_flow(trace)
    left, right = (array(series["z"]) for series in value["data"])
    np.testing.assert_allclose(left, flow.source_distribution, atol=1e-6)
    np.testing.assert_allclose(right, trace.cross_attention[-1].mean(0), atol=1e-6)
    np.testing.assert_allclose(left.sum(-1), 1.0, atol=1e-5)
    outlined = {round(shape["y0"] + 0.5) for shape in value["layout"]["shapes"]}
    assert outlined == {2}  # step 3, 0-based row 2, in both panels
    assert "width" not in value["layout"] and value["layout"]["height"] > 0  # width follows the page


# --------------------------------------------------------------------------- paper figures
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
    store = paper_panel.PaperResults(session.Runner(checkpoint))
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
    store = paper_panel.PaperResults(
        session.Runner(checkpoint)
    )  # the paper's full sentences: the tiny tokenizer cuts them
    with pytest.raises(gr.Error, match="cannot be searched"):
        store.get()


# --------------------------------------------------------------------------- training film
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


# --------------------------------------------------------------------------- KV cache
def test_cache_view_rows_grow_with_the_step(checkpoint, trace):
    recording = jobs.record_cache(session.Runner(checkpoint), trace)
    independent = record_trace_cache(checkpoint.model, trace)
    for step in (1, 3):
        value, facts = cache_panel.cache_views(trace, recording, step, 2, 3)
        data = figure_json(value)["data"]
        self_keys, self_values, self_read, cross_keys = (array(data[i]["z" if i != 2 else "x"]) for i in range(4))
        assert self_keys.shape[0] == step  # rows = step index + 1
        np.testing.assert_allclose(self_keys, independent.self_keys[1, 2, :step, :16], atol=1e-6)
        np.testing.assert_allclose(self_values, independent.self_values[1, 2, :step, :16], atol=1e-6)
        np.testing.assert_allclose(self_read, independent.self_read[1, 2, step - 1, :step], atol=1e-6)
        np.testing.assert_allclose(cross_keys, independent.cross_keys[1, 2, :, :16], atol=1e-6)
        # the step's read equals the trace's own decoder self-attention row (cached == uncached)
        np.testing.assert_allclose(self_read, trace.decoder_self_attention[1, 2, step - 1, :step], atol=1e-5)
        assert data[2]["marker"]["color"][-1] == ACCENT_COLOR  # the row this step wrote
        assert f"holds {step} row" in facts and "reused at every step" in facts


def test_a_kept_cache_of_another_translation_is_not_shown(checkpoint, trace):
    other = session.translate_text(session.Runner(checkpoint), "Zwei Hunde spielen im Schnee.", "de-en")[0]
    kept = kept_for(trace, recording=jobs.record_cache(session.Runner(checkpoint), trace))
    assert sentence_matches(trace, kept) and not sentence_matches(other, kept) and not sentence_matches(trace, None)
    with pytest.raises(ValueError, match="cached rows"):
        cache_figures.cache_figure(
            np.zeros((3, 4)),
            np.zeros((3, 4)),
            np.zeros(2),
            np.zeros((5, 4)),
            np.zeros((5, 4)),
            np.zeros(5),
            ["a"] * 3,
            ["b"] * 5,
        )


# --------------------------------------------------------------------------- step changes
def test_changes_view_shows_the_new_and_previous_rows(trace):
    step = 3
    views = changes_panel.changes_views(trace, step, 2, 0)  # decoder layer 2, mean of heads
    change = step_change(trace, step - 1)
    data = figure_json(views["rows"])["data"]
    previous_self, new_self, previous_cross, new_cross = (array(series["y"]) for series in data)
    np.testing.assert_allclose(new_self, trace.decoder_self_attention[1, :, step - 1, :step].mean(0), atol=1e-6)
    np.testing.assert_allclose(
        previous_self, trace.decoder_self_attention[1, :, step - 2, : step - 1].mean(0), atol=1e-6
    )
    np.testing.assert_allclose(new_cross, trace.cross_attention[1, :, step - 1].mean(0), atol=1e-6)
    np.testing.assert_allclose(previous_cross, trace.cross_attention[1, :, step - 2].mean(0), atol=1e-6)
    assert data[1]["marker"]["color"][-1] == ACCENT_COLOR  # the key that just appeared
    moved = figure_json(views["moved"])["data"]
    np.testing.assert_allclose(array(moved[0]["z"]), change.rows["decoder_self"].moved, atol=1e-6)
    bars = figure_json(views["candidates"])["data"][0]
    k = trace.candidate_probs.shape[1]
    np.testing.assert_allclose(array(bars["x"])[:k], trace.candidate_probs[step - 1], atol=1e-6)
    assert len(array(bars["x"])) == k + len(change.candidates.left)
    assert changes_panel.changes_views(trace, 1, 1, 1)["moved"] is None  # no step before the first


def test_candidate_change_marks_entered_and_left():
    fig = change_figures.candidate_change_figure(["▁a", "▁b", "▁c"], [0.5, 0.3, 0.1], [1, None, 0], ["▁d"], [0.2])
    (bars,) = fig.data
    assert list(bars.text) == ["↑1", "new", "↓2", "left"]
    assert list(bars.marker.color) == [PRIMARY_COLOR, ACCENT_COLOR, PRIMARY_COLOR, GRID_COLOR]
    np.testing.assert_allclose(bars.x, [0.5, 0.3, 0.1, 0.2])
    with pytest.raises(ValueError, match="ranks_before"):
        change_figures.candidate_change_figure(["▁a"], [0.5], [])


# --------------------------------------------------------------------------- the tab
def elem_ids(demo) -> set[str]:
    return {block.elem_id for block in demo.blocks.values() if getattr(block, "elem_id", None)}


def test_the_tab_holds_the_five_panels_and_the_film_controls_only_with_a_film(film_run, tiny_checkpoint):
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


def test_the_panel_bar_holds_only_tabs(tiny_checkpoint):
    """Gradio's tab bar numbers a tab by its place among *all* the children of gr.Tabs: a gr.State built
    between two panels shifted every later tab by one, so opening "Flow to the source" drew its button over
    "KV cache" (two "Flow to the source", no "KV cache"). Anything a panel keeps goes inside its gr.Tab."""
    from ui.app import build_demo

    demo = build_demo(tiny_checkpoint)
    panels = next(block for block in demo.blocks.values() if getattr(block, "elem_id", None) == "explain-panels")
    assert [type(child).__name__ for child in panels.children] == ["Tab"] * len(panels.children)
    assert len(panels.children) == len(PANELS)
