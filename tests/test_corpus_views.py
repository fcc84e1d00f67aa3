"""Issue 25's figures and panels: each figure shows exactly the numbers it is given (shapes, labels,
the highlighted sentence and step), and the panels' pure views work on the tiny checkpoint's corpus file,
say plainly when the file is missing or stale, and run the live parts through the runner's jobs.
"""

from __future__ import annotations

import shutil

import gradio as gr
import numpy as np
import pytest
from helpers import array, figure_json

from model import load_checkpoint
from model.analysis.corpus.collect import CorpusSettings, compute_corpus_heads
from model.analysis.corpus.importance import KINDS
from model.analysis.corpus.store import CORPUS_FILE, save_corpus
from model.decoding.greedy import translate
from serving.jobs import JOBS
from ui.explain import corpus_heads as panel
from ui.runner import Runner
from visualizer import corpus as figures

SMALL = CorpusSettings(importance_sentences=3, prune_sentences=3, map_sentences=3, prune_points=3, batch_size=4)


@pytest.fixture(scope="module")
def corpus_checkpoint(tiny_checkpoint, pairs, tmp_path_factory):
    """A copy of the tiny checkpoint with its corpus file beside it."""
    directory = tmp_path_factory.mktemp("corpus") / "tiny"
    shutil.copytree(tiny_checkpoint, directory)
    checkpoint = load_checkpoint(directory)
    data = compute_corpus_heads(checkpoint.model, checkpoint.tokenizer, pairs, SMALL, log=lambda *_: None)
    save_corpus(directory / CORPUS_FILE, data)
    return checkpoint


@pytest.fixture(scope="module")
def data(corpus_checkpoint):
    loaded, message = panel.CorpusData(corpus_checkpoint).get()
    assert message == ""
    return loaded


@pytest.fixture(scope="module")
def trace(corpus_checkpoint):
    return translate(corpus_checkpoint.model, corpus_checkpoint.tokenizer, "Ein Mann fährt Fahrrad.", "de-en",
                     max_new_tokens=6)


# --------------------------------------------------------------------------- figures
def test_role_grid_has_a_dot_per_head_coloured_by_role_and_sized_by_importance():
    roles = {"encoder": np.array([["previous", "mixed"], ["previous", "eos"]]), "cross": np.array([["rare", "mixed"]])}
    importance = {"encoder": np.array([[1.0, 0.0], [0.25, 0.5]]), "cross": np.array([[0.0, 1.0]])}
    fig = figures.head_role_grid(roles, importance, kind_labels={"encoder": "Encoder", "cross": "Cross"},
                                 selected=("cross", 0, 1)).to_plotly_json()
    dots = {s["customdata"][i][0]: (s["legendgroup"], s["marker"]["color"], array(s["marker"]["size"])[i])
            for s in fig["data"] for i in range(len(s["customdata"]))}
    assert len(dots) == 6 and dots["encoder:1:1"][0] == "previous" and dots["cross:1:1"][0] == "rare"
    assert dots["encoder:1:1"][1] == dots["encoder:2:1"][1] != dots["encoder:2:2"][1]  # one colour per role
    assert dots["encoder:1:1"][2] > dots["encoder:2:2"][2] > dots["encoder:2:1"][2] > dots["encoder:1:2"][2]
    assert dots["encoder:1:1"][2] == dots["cross:1:2"][2]  # one size scale across kinds
    assert [s["name"] for s in fig["data"] if s["showlegend"]] == ["previous", "mixed", "eos", "rare"]
    assert [a["text"] for a in fig["layout"]["annotations"]] == ["Encoder", "Cross"]
    (circle,) = fig["layout"]["shapes"]
    assert (circle["x0"], circle["y0"], circle["xref"]) == (1.55, 0.55, "x2")  # head 2 of layer 1, cross panel
    with pytest.raises(ValueError, match="differ"):
        figures.head_role_grid({"cross": np.array([["rare"]])}, {"cross": np.ones((1, 2))})


def test_pruning_curves_show_importance_and_random_orders():
    fig = figures.pruning_curves_figure(np.array([0, 4, 8]), np.array([30.0, 28, 2]), np.array([2.0, 2.2, 5]),
                                        np.array([[30.0, 20, 2], [30.0, 18, 1]]), np.array([[2.0, 3, 5], [2.0, 3.2, 5.5]]),
                                        total_heads=8, current=4).to_plotly_json()
    bleu = [s for s in fig["data"] if s["yaxis"] == "y"]
    assert [s["name"] for s in bleu] == ["least important first", "random order", "random order"]
    np.testing.assert_array_equal(array(bleu[0]["y"]), [30, 28, 2])
    np.testing.assert_array_equal(array(bleu[2]["y"]), [30, 18, 1])
    assert len([s for s in fig["data"] if s["yaxis"] == "y2"]) == 3
    assert [shape["x0"] for shape in fig["layout"]["shapes"]] == [4, 4]
    with pytest.raises(ValueError, match="points"):
        figures.pruning_curves_figure(np.arange(3), np.ones(2), np.ones(3), np.ones(3), np.ones(3), total_heads=2)


def test_qk_scatter_draws_queries_keys_and_the_highlighted_sentence():
    coords = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0]])
    fig = figures.qk_scatter(coords, np.array([False, True, True]), ["▁a", "▁b", "[EOS]"], np.array([0, 0, 1]),
                             current=np.array([[5.0, 5.0], [6.0, 6.0]]), current_is_key=np.array([False, True]),
                             current_tokens=["▁x", "▁y"], current_positions=np.array([0, 0]),
                             query_name="target query", key_name="source key").to_plotly_json()
    names = [s["name"] for s in fig["data"]]
    assert names == ["target queries (corpus)", "source keys (corpus)", "this sentence: target queries",
                     "this sentence: source keys"]
    np.testing.assert_array_equal(array(fig["data"][1]["x"]), [1.0, 2.0])
    assert list(fig["data"][3]["text"]) == ["▁y"] and fig["data"][3]["marker"]["size"] > fig["data"][1]["marker"]["size"]
    by_position = figures.qk_scatter(coords, np.array([False, True, True]), ["a", "b", "c"], np.array([0, 0, 1]),
                                     color_by="position").to_plotly_json()
    np.testing.assert_array_equal(array(by_position["data"][1]["marker"]["color"]), [0, 1])
    with pytest.raises(ValueError, match="color_by"):
        figures.qk_scatter(coords, np.zeros(3, bool), ["a", "b", "c"], np.zeros(3), color_by="token")


def test_attribution_figure_rows_and_correlation_per_step():
    tokens = ["<2en>", "▁Ein", "▁Mann", "[EOS]"]
    attention = np.array([[0.1, 0.6, 0.2, 0.1], [0.0, 0.2, 0.7, 0.1]])
    rho = np.array([[0.5, 1.0, np.nan], [-0.2, 0.3, 0.8]])
    fig = figures.attribution_figure(tokens, np.array([0.0, 2.0, -1.0, 0.5]), np.array([0.1, 0.4, 0.2, -0.8]),
                                     attention, rho, step=1, output_tokens=["▁A", "▁man", "[EOS]"],
                                     completeness=(1.5, 1.52)).to_plotly_json()
    heat = fig["data"][0]
    z = array(heat["z"]).reshape(4, 4)
    np.testing.assert_allclose(z[0], [0.0, 1.0, -0.5, 0.25])  # each row scaled by its largest |value|
    np.testing.assert_allclose(z[3], attention[1] / 0.7)
    assert list(heat["y"]) == ["#0 integrated gradients", "#1 input × gradient", "#2 attention, layer 1",
                               "#3 attention, layer 2"]
    assert np.asarray(heat["customdata"])[0, 1] == "+2.0000"  # the raw value in the hover
    lines = fig["data"][1:]
    assert [s["name"] for s in lines] == ["layer 1", "layer 2"]
    np.testing.assert_allclose(array(lines[1]["y"]), rho[1])
    assert fig["layout"]["shapes"][0]["x0"] == 1
    assert any("Σ IG +1.500" in a["text"] for a in fig["layout"]["annotations"])
    long = figures.attribution_figure([f"▁w{i}" for i in range(100)], np.ones(100), np.ones(100), np.ones((3, 100)) / 100,
                                      np.zeros((3, 5)), step=4).to_plotly_json()
    assert long["layout"]["width"] >= 100 * 14  # 100 source tokens: readable columns, scrolling in their box
    with pytest.raises(ValueError, match="step"):
        figures.attribution_figure(tokens, np.ones(4), np.ones(4), attention, rho, step=3)


# --------------------------------------------------------------------------- panels
def test_corpus_panel_views_read_the_file(data, corpus_checkpoint):
    roles = figure_json(panel.roles_view(data, ("cross", 1, 2)))
    n_heads = sum(len(np.ravel(s["x"] if not isinstance(s["x"], dict) else array(s["x"]))) for s in roles["data"])
    assert n_heads == 3 * 2 * 4
    assert len(panel.head_choices(data)) == 24 and panel.parse_head("cross:2:3") == ("cross", 2, 3)
    with pytest.raises(gr.Error, match="Not a head"):
        panel.parse_head("attention:2:x")
    pruning = figure_json(panel.pruning_view(data, 5))
    np.testing.assert_allclose(array(pruning["data"][0]["y"]), data.pruning.bleu_importance)
    ablation = panel.pruned_ablation(data, 5)
    off = [(k, l, h) for k, kind in enumerate(KINDS) for l, h in getattr(ablation, f"{kind}_heads")]
    assert sorted(off) == sorted(map(tuple, data.pruning.order[:5].tolist()))
    qk = figure_json(panel.qk_view(data, "cross", 2, 3))
    n_points = data.maps["cross"].coords.shape[2]
    assert sum(len(array(s["x"])) for s in qk["data"]) == n_points


def test_the_sentence_and_the_attribution_run_through_the_runner(data, corpus_checkpoint, trace):
    runner = Runner(corpus_checkpoint)
    queries, keys = runner.run("corpus_sentence_vectors", source_ids=trace.source_ids, output_ids=trace.output_ids,
                               kind="cross", layer=1, head=2)
    assert queries.shape[0] == trace.num_steps and keys.shape[0] == len(trace.source_tokens)
    query_tokens, key_tokens = panel.sentence_tokens(trace, "cross")
    sentence = {"queries": queries, "keys": keys, "query_tokens": query_tokens, "key_tokens": key_tokens}
    qk = figure_json(panel.qk_view(data, "cross", 2, 3, sentence=sentence))
    mine = [s for s in qk["data"] if s["name"].startswith("this sentence")]
    assert [len(array(s["x"])) for s in mine] == [trace.num_steps, len(trace.source_tokens)]
    result = runner.run("corpus_attribution", source_ids=trace.source_ids, output_ids=trace.output_ids, steps=8)
    assert result.integrated_gradients.shape == (trace.num_steps, len(trace.source_tokens))
    kept = {"source_ids": list(trace.source_ids), "output_ids": list(trace.output_ids), "result": result}
    assert panel.attribution_matches(trace, kept) and not panel.attribution_matches(trace, {**kept, "output_ids": []})
    view = figure_json(panel.attribution_view(trace, result, 2))
    np.testing.assert_allclose(array(view["data"][0]["z"]).reshape(-1, len(trace.source_tokens))[0],
                               result.integrated_gradients[1] / np.abs(result.integrated_gradients[1]).max(), rtol=1e-5)


def test_a_missing_or_stale_corpus_file_says_how_to_make_it(tiny_checkpoint, corpus_checkpoint, tmp_path):
    missing = panel.CorpusData(load_checkpoint(tiny_checkpoint)).get()
    assert missing[0] is None and "there is no" in missing[1]
    assert f"python3 -m scripts.corpus_heads --checkpoint {tiny_checkpoint}" in missing[1]
    stale_dir = tmp_path / "stale"
    shutil.copytree(corpus_checkpoint.path, stale_dir)
    stale = load_checkpoint(stale_dir)
    import torch

    with torch.no_grad():
        stale.model.embedding.weight[5, 0] += 0.5
    data, message = panel.CorpusData(stale).get()
    assert data is None and "other weights" in message


def test_the_explain_tab_holds_the_corpus_panels(corpus_checkpoint, tiny_checkpoint):
    from test_explain_views2 import elem_ids
    from ui.app import build_demo

    with_file = elem_ids(build_demo(corpus_checkpoint.path))
    assert {"corpus-roles", "corpus-pruning", "corpus-qk", "corpus-prune-run", "attribution-run",
            "attribution-plot"} <= with_file and "corpus-missing" not in with_file
    without = elem_ids(build_demo(tiny_checkpoint))
    assert "corpus-missing" in without and "corpus-roles" not in without and "attribution-run" in without
    assert {"corpus_attribution", "corpus_sentence_vectors"} <= set(JOBS)
