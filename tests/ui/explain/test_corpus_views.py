"""The corpus figures and panels: each figure shows exactly the numbers it is given (shapes, labels,
the highlighted sentence and step), and the panels' pure views work on the tiny checkpoint's corpus file,
say plainly when the file is missing or stale, and run the live parts through the runner's jobs; the
panels on the page (build_demo) draw only through the one redraw, and a number they show equals an independent
computation of the model.
"""

from __future__ import annotations

import copy
import html
import re
import shutil

import gradio as gr
import numpy as np
import pytest
import torch

from model import load_checkpoint
from model.analysis.corpus.batches import corpus_examples
from model.analysis.corpus.collect import CorpusSettings, compute_corpus_heads
from model.analysis.corpus.importance import KINDS
from model.analysis.corpus.roles import CROSS_STATS, ROLE_TEXT, role_labels
from model.analysis import readouts
from model.analysis.corpus.store import CORPUS_FILE, save_corpus
from model.decoding.greedy import translate
from serving.jobs import JOBS
from explain_page import ExplainPage, by_id, on
from helpers import array, figure_json
import provenance_fixtures as ref
from ui.explain import attribution
from ui.explain import corpus_figures, corpus_heads
from ui.explain.panel import sentence_matches
from serving import Runner, jobs
from visualizer import corpus as figures
from visualizer.attribution import attribution_figure
from visualizer.qk_map import qk_scatter

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
    loaded, message = corpus_figures.CorpusData(corpus_checkpoint).get()
    assert message == ""
    return loaded


@pytest.fixture(scope="module")
def trace(corpus_checkpoint):
    return translate(
        corpus_checkpoint.model, corpus_checkpoint.tokenizer, "Ein Mann fährt Fahrrad.", "de-en", max_new_tokens=6
    )


# --------------------------------------------------------------------------- figures
def test_role_grid_has_a_dot_per_head_coloured_by_role_and_sized_by_importance():
    roles = {"encoder": np.array([["previous", "mixed"], ["previous", "eos"]]), "cross": np.array([["rare", "mixed"]])}
    importance = {"encoder": np.array([[1.0, 0.0], [0.25, 0.5]]), "cross": np.array([[0.0, 1.0]])}
    fig = figures.head_role_grid(
        roles, importance, kind_labels={"encoder": "Encoder", "cross": "Cross"}, selected=("cross", 0, 1)
    ).to_plotly_json()
    dots = {
        s["customdata"][i][0]: (s["legendgroup"], s["marker"]["color"], array(s["marker"]["size"])[i])
        for s in fig["data"]
        for i in range(len(s["customdata"]))
    }
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
    fig = figures.pruning_curves_figure(
        np.array([0, 4, 8]),
        np.array([30.0, 28, 2]),
        np.array([2.0, 2.2, 5]),
        np.array([[30.0, 20, 2], [30.0, 18, 1]]),
        np.array([[2.0, 3, 5], [2.0, 3.2, 5.5]]),
        total_heads=8,
        current=4,
    ).to_plotly_json()
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
    fig = qk_scatter(
        coords,
        np.array([False, True, True]),
        ["▁a", "▁b", "[EOS]"],
        np.array([0, 0, 1]),
        current=np.array([[5.0, 5.0], [6.0, 6.0]]),
        current_is_key=np.array([False, True]),
        current_tokens=["▁x", "▁y"],
        current_positions=np.array([0, 0]),
        query_name="target query",
        key_name="source key",
    ).to_plotly_json()
    names = [s["name"] for s in fig["data"]]
    assert names == [
        "target queries (corpus)",
        "source keys (corpus)",
        "this sentence: target queries",
        "this sentence: source keys",
    ]
    np.testing.assert_array_equal(array(fig["data"][1]["x"]), [1.0, 2.0])
    assert (
        list(fig["data"][3]["text"]) == ["▁y"] and fig["data"][3]["marker"]["size"] > fig["data"][1]["marker"]["size"]
    )
    by_position = qk_scatter(
        coords, np.array([False, True, True]), ["a", "b", "c"], np.array([0, 0, 1]), color_by="position"
    ).to_plotly_json()
    np.testing.assert_array_equal(array(by_position["data"][1]["marker"]["color"]), [0, 1])
    with pytest.raises(ValueError, match="color_by"):
        qk_scatter(coords, np.zeros(3, bool), ["a", "b", "c"], np.zeros(3), color_by="token")


def test_attribution_figure_rows_and_correlation_per_step():
    tokens = ["<2en>", "▁Ein", "▁Mann", "[EOS]"]
    attention = np.array([[0.1, 0.6, 0.2, 0.1], [0.0, 0.2, 0.7, 0.1]])
    rho = np.array([[0.5, 1.0, np.nan], [-0.2, 0.3, 0.8]])
    fig = attribution_figure(
        tokens,
        np.array([0.0, 2.0, -1.0, 0.5]),
        np.array([0.1, 0.4, 0.2, -0.8]),
        attention,
        rho,
        step=1,
        output_tokens=["▁A", "▁man", "[EOS]"],
        completeness=(1.5, 1.52),
    ).to_plotly_json()
    heat = fig["data"][0]
    z = array(heat["z"]).reshape(4, 4)
    np.testing.assert_allclose(z[0], [0.0, 1.0, -0.5, 0.25])  # each row scaled by its largest |value|
    np.testing.assert_allclose(z[3], attention[1] / 0.7)
    assert list(heat["y"]) == [
        "#0 integrated gradients",
        "#1 input × gradient",
        "#2 attention, layer 1",
        "#3 attention, layer 2",
    ]
    assert np.asarray(heat["customdata"])[0, 1] == "+2.0000"  # the raw value in the hover
    lines = fig["data"][1:]
    assert [s["name"] for s in lines] == ["layer 1", "layer 2"]
    np.testing.assert_allclose(array(lines[1]["y"]), rho[1])
    assert fig["layout"]["shapes"][0]["x0"] == 1
    assert any("Σ IG +1.500" in a["text"] for a in fig["layout"]["annotations"])
    long = attribution_figure(
        [f"▁w{i}" for i in range(100)], np.ones(100), np.ones(100), np.ones((3, 100)) / 100, np.zeros((3, 5)), step=4
    ).to_plotly_json()
    assert long["layout"]["width"] >= 100 * 14  # 100 source tokens: readable columns, scrolling in their box
    with pytest.raises(ValueError, match="step"):
        attribution_figure(tokens, np.ones(4), np.ones(4), attention, rho, step=3)


def test_attribution_figure_on_a_phone_gives_the_cells_the_width():
    """meta.narrow (drawn in a phone's box by ui/js/figures.js): short row labels in the rows' order, no colour
    bar and a narrow right margin, the layers' legend across under the rho panel, a short rho title."""
    tokens = ["<2en>", "▁Ein", "▁Mann", "[EOS]"]
    fig = attribution_figure(
        tokens, np.ones(4), np.ones(4), np.ones((2, 4)) / 4, np.zeros((2, 3)), step=1, title="Why"
    ).to_plotly_json()
    layout, narrow = fig["layout"], fig["layout"]["meta"]["narrow"]
    assert narrow["yaxis"]["ticktext"] == ["IG", "input × grad", "layer 1", "layer 2"]
    assert list(fig["data"][0]["y"])[0] == "#0 integrated gradients"  # the hover keeps the whole name
    assert narrow["traces"][0] == {"showscale": False} and len(narrow["traces"]) == 1
    assert narrow["margin"]["r"] < layout["margin"]["r"] and narrow["margin"]["l"] <= layout["margin"]["l"]
    legend = narrow["legend"]
    assert legend["orientation"] == "h" and legend["y"] < 0 and legend["yanchor"] == "top"
    assert narrow["height"] - narrow["margin"]["b"] == layout["height"] - layout["margin"]["b"]  # plot area kept
    titles = [note["text"] for note in narrow["annotations"]]
    assert "ρ(|IG|, attention) per step" in titles and len(titles) == len(layout["annotations"])


# --------------------------------------------------------------------------- panels
def test_corpus_panel_views_read_the_file(data, corpus_checkpoint):
    roles = figure_json(corpus_figures.roles_view(data, ("cross", 1, 2)))
    n_heads = sum(len(np.ravel(s["x"] if not isinstance(s["x"], dict) else array(s["x"]))) for s in roles["data"])
    assert n_heads == 3 * 2 * 4
    assert len(corpus_figures.head_choices(data)) == 24 and corpus_figures.parse_head("cross:2:3") == ("cross", 2, 3)
    with pytest.raises(gr.Error, match="Not a head"):
        corpus_figures.parse_head("attention:2:x")
    pruning = figure_json(corpus_figures.pruning_view(data, 5))
    np.testing.assert_allclose(array(pruning["data"][0]["y"]), data.pruning.bleu_importance)
    ablation = corpus_figures.pruned_ablation(data, 5)
    off = [(k, l, h) for k, kind in enumerate(KINDS) for l, h in getattr(ablation, f"{kind}_heads")]
    assert sorted(off) == sorted(map(tuple, data.pruning.order[:5].tolist()))
    qk = figure_json(corpus_figures.qk_view(data, "cross", 2, 3))
    n_points = data.maps["cross"].coords.shape[2]
    assert sum(len(array(s["x"])) for s in qk["data"]) == n_points
    head_map = data.maps["cross"]  # layer 2, head 3: the stored coordinates of that head, queries then keys
    np.testing.assert_allclose(array(qk["data"][0]["x"]), head_map.coords[1, 2, : head_map.n_queries, 0], rtol=1e-6)
    np.testing.assert_allclose(array(qk["data"][1]["y"]), head_map.coords[1, 2, head_map.n_queries :, 1], rtol=1e-6)


def independent_map(queries: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """(Nq + Nk, 2): AttentionViz's map written out from its definition, apart from model/analysis/corpus/qk_map.py.

    Keys moved onto the queries' centroid, queries x a and keys / a with a^2 = mean |k| / mean |q|, then the two
    leading eigenvectors of the covariance (eigh, not an SVD), each signed so its largest entry is positive.
    """
    keys = keys + queries.mean(0) - keys.mean(0)
    a = np.sqrt(np.linalg.norm(keys, axis=1).mean() / np.linalg.norm(queries, axis=1).mean())
    stacked = np.concatenate([queries * a, keys / a])
    centred = stacked - stacked.mean(0)
    _, vectors = np.linalg.eigh(centred.T @ centred)  # ascending eigenvalues
    axes = vectors[:, ::-1][:, :2].T  # (2, d)
    axes *= np.sign(axes[np.arange(2), np.abs(axes).argmax(1)])[:, None]
    return centred @ axes.T


@pytest.mark.parametrize("kind", KINDS)
def test_the_maps_plotted_points_are_an_independent_projection_of_the_models_queries_and_keys(
    data, corpus_checkpoint, pairs, kind
):
    """Every plotted query and key of one head equals the map computed from the reference forward pass's own
    queries and keys (tests/support/provenance_fixtures.py, float64): a shifted key cloud is caught."""
    model, (layer, head) = corpus_checkpoint.model, (1, 2)
    examples, _ = corpus_examples(pairs, corpus_checkpoint.tokenizer, SMALL.map_sentences)
    sides = {"query": [], "key": []}
    for example in examples:
        reference = getattr(ref.forward(model, list(example.source), list(example.target[:-1])), kind)[layer]
        sides["query"].append(reference.queries[head].numpy())
        sides["key"].append(reference.keys[head].numpy())
    head_map = data.maps[kind]
    # the map lists its points sentence by sentence in its own order: follow its (sentence, position) labels
    queries = np.stack([sides["query"][s][p] for s, p in zip(head_map.query_sentences, head_map.query_positions)])
    keys = np.stack([sides["key"][s][p] for s, p in zip(head_map.key_sentences, head_map.key_positions)])
    expected = independent_map(queries, keys)
    plotted = figure_json(corpus_figures.qk_view(data, kind, layer + 1, head + 1))["data"]
    n_q = head_map.n_queries
    assert [len(array(s["x"])) for s in plotted] == [n_q, len(expected) - n_q]
    for trace, points in ((plotted[0], expected[:n_q]), (plotted[1], expected[n_q:])):
        shown = np.stack([array(trace["x"]), array(trace["y"])], 1)
        np.testing.assert_allclose(shown, points, atol=2e-3 * np.abs(expected).max())


def test_the_sentence_and_the_attribution_run_through_the_runner(data, corpus_checkpoint, trace):
    runner = Runner(corpus_checkpoint)
    queries, keys = jobs.corpus_sentence_vectors(runner, trace.source_ids, trace.output_ids, "cross", 1, 2)
    assert queries.shape[0] == trace.num_steps and keys.shape[0] == len(trace.source_tokens)
    query_tokens, key_tokens = corpus_figures.sentence_tokens(trace, "cross")
    sentence = {"queries": queries, "keys": keys, "query_tokens": query_tokens, "key_tokens": key_tokens}
    qk = figure_json(corpus_figures.qk_view(data, "cross", 2, 3, sentence=sentence))
    mine = [s for s in qk["data"] if s["name"].startswith("this sentence")]
    assert [len(array(s["x"])) for s in mine] == [trace.num_steps, len(trace.source_tokens)]
    result = jobs.corpus_attribution(runner, trace.source_ids, trace.output_ids, steps=8)
    assert result.integrated_gradients.shape == (trace.num_steps, len(trace.source_tokens))
    kept = {"source_ids": list(trace.source_ids), "output_ids": list(trace.output_ids), "result": result}
    assert sentence_matches(trace, kept) and not sentence_matches(trace, {**kept, "output_ids": []})
    view = figure_json(attribution.attribution_view(trace, result, 2))
    np.testing.assert_allclose(
        array(view["data"][0]["z"]).reshape(-1, len(trace.source_tokens))[0],
        result.integrated_gradients[1] / np.abs(result.integrated_gradients[1]).max(),
        rtol=1e-5,
    )


def test_a_missing_or_stale_corpus_file_says_how_to_make_it(tiny_checkpoint, corpus_checkpoint, tmp_path):
    missing = corpus_figures.CorpusData(load_checkpoint(tiny_checkpoint)).get()
    assert missing[0] is None and "there is no" in missing[1]
    # the checkpoint named by its folder (it lies outside the repository), never by the server's path
    assert f"python3 -m scripts.corpus_heads --checkpoint {tiny_checkpoint.name}" in missing[1]
    assert str(tiny_checkpoint.parent) not in missing[1]
    stale_dir = tmp_path / "stale"
    shutil.copytree(corpus_checkpoint.path, stale_dir)
    stale = load_checkpoint(stale_dir)
    with torch.no_grad():
        stale.model.embedding.weight[5, 0] += 0.5
    data, message = corpus_figures.CorpusData(stale).get()
    assert data is None and "other weights" in message


# --------------------------------------------------------------------------- the panels on the page
def elem_ids(demo) -> set[str]:
    return {block.elem_id for block in demo.blocks.values() if getattr(block, "elem_id", None)}


@pytest.fixture(scope="module")
def demo(corpus_checkpoint):
    from ui.app import build_demo

    return build_demo(corpus_checkpoint.path)


def test_the_explain_tab_holds_the_corpus_panels(demo, tiny_checkpoint):
    from ui.app import build_demo

    with_file = elem_ids(demo)
    assert {
        "corpus-roles",
        "corpus-pruning",
        "corpus-qk",
        "corpus-prune-run",
        "attribution-run",
        "attribution-plot",
    } <= with_file and "corpus-missing" not in with_file
    without = build_demo(tiny_checkpoint)
    assert "corpus-missing" in elem_ids(without) and "corpus-roles" not in elem_ids(without)
    assert "attribution-run" in elem_ids(without)
    [message] = [b.value for b in without.blocks.values() if getattr(b, "elem_id", None) == "corpus-missing"]
    assert (
        f"python3 -m scripts.corpus_heads --checkpoint {tiny_checkpoint.name}" in message and "there is no" in message
    )
    assert {"corpus_attribution", "corpus_sentence_vectors"} <= set(JOBS)
    # no action of the panels draws: their plots are drawn by the views (ui/redraw.py), from what the actions keep
    plots = {"corpus-roles", "corpus-pruning", "corpus-qk", "corpus-prune-plot", "attribution-plot"}
    actions = [fn.fn.action for fn in demo.fns.values() if hasattr(fn.fn, "action")]
    assert len(actions) > 20
    for action in actions:
        drawn = {getattr(c, "elem_id", None) for c in action.outputs} & plots
        assert not drawn, action.fn


def test_the_corpus_panel_draws_when_opened_and_redraws_only_what_its_controls_change(demo, data, trace):
    page = ExplainPage(demo, trace)
    first = page.draw()
    assert "attribution-facts" in first and not {"corpus-roles", "corpus-pruning", "corpus-qk"} & set(first)
    opened = page.set(on(demo, "corpus-heads", "select").fn.action.fn())  # the visitor opens the sub-tab
    assert {"corpus-roles", "corpus-pruning", "corpus-qk"} <= set(opened)
    assert figure_json(opened["corpus-roles"]) == figure_json(corpus_figures.roles_view(data))
    assert figure_json(opened["corpus-qk"]) == figure_json(corpus_figures.qk_view(data, "cross", 1, 1, "side"))
    assert page.draw() == {}  # nothing changed, nothing sent
    stepped = page.set({page.step: 2})  # the corpus figures do not follow the step; the attribution does
    assert not {"corpus-roles", "corpus-pruning", "corpus-qk", "corpus-prune-plot"} & set(stepped)
    assert "attribution-facts" in stepped
    moved = page.set({page.component("corpus-qk-kind"): "encoder", page.component("corpus-qk-head"): 3})
    assert set(moved) & {"corpus-roles", "corpus-pruning", "corpus-qk"} == {"corpus-qk"}
    assert figure_json(moved["corpus-qk"]) == figure_json(corpus_figures.qk_view(data, "encoder", 1, 3, "side"))
    k = page.set({page.component("corpus-prune-k"): 5})
    assert set(k) & {"corpus-roles", "corpus-pruning", "corpus-qk"} == {"corpus-pruning"}
    assert [s["x0"] for s in figure_json(k["corpus-pruning"])["layout"]["shapes"]] == [5, 5]
    # the sentence on the map: the runner's job, kept, drawn by the redraw (and gone for another head)
    placed = page.set(on(demo, "corpus-qk-place", "click").fn.action.fn(trace, "encoder", 1, 3))
    mine = [s for s in figure_json(placed["corpus-qk"])["data"] if s["name"].startswith("this sentence")]
    assert [len(array(s["x"])) for s in mine] == [len(trace.source_tokens)] * 2
    other = page.set({page.component("corpus-qk-head"): 2})
    assert not [s for s in figure_json(other["corpus-qk"])["data"] if s["name"].startswith("this sentence")]
    # a new trace empties what the buttons kept
    assert page.set({page.trace_state: None})["corpus-prune-plot"] is None


def test_pruning_the_least_important_heads_goes_through_the_intervention_path(demo, data, trace, corpus_checkpoint):
    page = ExplainPage(demo, trace)
    page.set(on(demo, "corpus-heads", "select").fn.action.fn())
    shown = page.set(on(demo, "corpus-prune-run", "click").fn.action.fn(trace, 4))
    ablation = corpus_figures.pruned_ablation(data, 4)
    again = translate(
        corpus_checkpoint.model, corpus_checkpoint.tokenizer, trace.source_text, trace.direction, ablation=ablation
    )
    assert "4 least important heads off" in shown["corpus-prune-result"]
    assert html.escape(again.translation) in shown["corpus-prune-result"]  # the re-decoded sentence
    expected = readouts.token_probabilities(corpus_checkpoint.model, trace.source_ids, trace.output_ids, ablation)
    (bars,) = figure_json(shown["corpus-prune-plot"])["data"]  # p(original token) under the ablation - before
    np.testing.assert_allclose(array(bars["y"]), expected - trace.chosen_probs, atol=1e-6)
    assert sum(len(getattr(ablation, f"{kind}_heads")) for kind in KINDS) == 4


def test_opening_a_head_sets_the_attention_tabs_controls(demo, trace):
    fn = on(demo, "corpus-open-head", "input")
    updates = by_id(fn.fn.action.fn(trace, "decoder_self:2:3"))
    assert updates["attention-kind"] == "decoder_self" and updates["head"] == "3"
    assert updates["layer"].value == 2
    assert [v for k, v in updates.items() if isinstance(k, gr.State)] == ["attention"]  # the open tab
    assert (updates["corpus-qk-kind"], updates["corpus-qk-layer"], updates["corpus-qk-head"]) == ("decoder_self", 2, 3)
    without_trace = by_id(
        fn.fn.action.fn(None, "cross:1:2")
    )  # no sentence: the corpus map shows the head, no tab change
    assert without_trace == {"corpus-qk-kind": "cross", "corpus-qk-layer": 1, "corpus-qk-head": 2}
    page = ExplainPage(demo, trace)
    page.set(on(demo, "corpus-heads", "select").fn.action.fn())
    roles = page.set({page.component("corpus-open-head"): "decoder_self:2:3"})["corpus-roles"]
    (circle,) = figure_json(roles)["layout"]["shapes"]  # the opened head outlined in the grid
    assert (circle["x0"], circle["y0"]) == (2.55, 1.55)


def test_the_attribution_panel_follows_the_step_once_computed(demo, trace):
    page = ExplainPage(demo, trace)
    assert page.draw()["attribution-facts"] == attribution.WAITING
    kept = on(demo, "attribution-run", "click").fn.action.fn(trace)
    first = page.set(kept)
    assert first["attribution-plot"] is not None and "Step 1" in first["attribution-facts"]
    stepped = page.set({page.step: 2})
    assert "Step 2" in stepped["attribution-facts"] and stepped["attribution-plot"] is not None
    assert page.set({page.trace_state: None})["attribution-plot"] is None


def scaled_source_log_probs(model, source_ids, output_ids, token: int, factors) -> np.ndarray:
    """(len(factors), T) log P of the output, teacher-forced through the model's own forward, with source
    token `token`'s embedding multiplied by each factor (a hook on the embedding's source call)."""
    source = torch.tensor([source_ids])
    rows = []
    for factor in factors:

        def scale(module, inputs, output, factor=factor):
            if inputs[0].shape == source.shape and torch.equal(inputs[0], source):
                output = output.clone()
                output[:, token] *= factor if token >= 0 else 1.0
                if token < 0:  # every source token: the all-zero baseline of integrated gradients
                    output = output * factor
                return output
            return output

        handle = model.embedding.register_forward_hook(scale)
        try:
            with torch.no_grad():
                logits = model(source, torch.tensor([[model.config.bos_id, *output_ids[:-1]]]))  # (1, T, V)
            chosen = torch.log_softmax(logits[0], -1).gather(1, torch.tensor(output_ids)[:, None])[:, 0]
            rows.append(chosen.numpy())
        finally:
            handle.remove()
    return np.array(rows)


def test_provenance_the_attribution_shown_is_the_derivative_of_the_models_log_probability(
    demo, trace, corpus_checkpoint
):
    """Input x gradient of source token s is d/da log P(y_t) with e_s scaled by a, at a = 1: a central finite
    difference through the model's own forward (not the attribution code's path), in float64, against the
    number the panel shows.
    The corner's f(x) - f(0) is the same scoring with every source embedding zeroed."""
    page = ExplainPage(demo, trace)
    page.draw()  # the Explain tab showing the translation
    page.set(on(demo, "attribution-run", "click").fn.action.fn(trace))
    step = 2
    shown = page.set({page.step: step})
    model = copy.deepcopy(corpus_checkpoint.model).double()
    t, eps = step - 1, 1e-5
    expected = np.array(
        [
            np.diff(scaled_source_log_probs(model, trace.source_ids, trace.output_ids, s, [1 - eps, 1 + eps])[:, t])[0]
            / (2 * eps)
            for s in range(len(trace.source_ids))
        ]
    )
    figure = figure_json(shown["attribution-plot"])
    hover = np.asarray(figure["data"][0]["customdata"])  # the raw values, one row per heatmap row
    assert figure["data"][0]["y"][1].endswith("input × gradient")
    np.testing.assert_allclose(hover[1].astype(float), expected, atol=2e-4)
    s = int(np.argmax(np.abs(expected)))
    value = float(re.search(r"input × gradient to `[^`]*` \(([-+]\d+\.\d+)\)", shown["attribution-facts"]).group(1))
    assert value == pytest.approx(expected[s], abs=2e-4)
    zero, one = scaled_source_log_probs(model, trace.source_ids, trace.output_ids, -1, [0.0, 1.0])[:, t]
    corner = next(a["text"] for a in figure["layout"]["annotations"] if a["text"].startswith("Σ IG"))
    assert float(corner.split("f(x) − f(0)")[1]) == pytest.approx(one - zero, abs=2e-3)


def test_the_roles_summary_says_what_the_roles_mean_for_this_model(corpus_checkpoint):
    """Counted here from the corpus file's roles: per kind, the heads with one role and the rest ("no single role"),
    and how many heads have none in all."""
    data, _ = corpus_figures.CorpusData(corpus_checkpoint).get()
    said = corpus_figures.roles_summary(data, corpus_checkpoint.path)
    none = 0
    for kind, label in (
        ("encoder", "Encoder self-attention"),
        ("decoder_self", "Masked decoder self-attention"),
        ("cross", "Cross-attention"),
    ):
        roles = list(np.asarray(data.roles[kind]).ravel())
        mixed = sum(role == "mixed" for role in roles)
        none += mixed
        if mixed == len(roles):
            assert f"{label}: none of its {len(roles)} heads does one job on most sentences." in said
        else:
            assert f"{label}: {len(roles) - mixed} of its {len(roles)} heads have one role (" in said
    assert f"In all, {none} of the 24 heads ha" in said
    assert "A head of “no single role” does none of these fixed jobs" in said
    assert "made before" not in said  # a file of today's command lacks nothing


def cross_hovers(figure: dict) -> dict[str, str]:
    """{"cross:layer:head": hover text} of the roles grid's cross-attention dots."""
    return {
        key: hover
        for trace in figure["data"]
        for key, hover in (trace.get("customdata") or [])
        if str(key).startswith("cross:")
    }


def test_the_roles_grid_gives_every_cross_head_its_aligned_share_and_rho_from_the_file(data):
    """The hover of each cross-attention head shows the file's aligned share and monotone rho (the file's own numbers
    are checked against the model in tests/model/analysis/corpus/test_roles.py), and a head the file labels aligned
    or monotone is drawn in that role's legend entry."""
    figure = figure_json(corpus_figures.roles_view(data))
    hovers = cross_hovers(figure)
    assert len(hovers) == data.roles["cross"].size
    for (l, h), role in np.ndenumerate(data.roles["cross"]):
        aligned = 100 * data.stats["cross"]["aligned"][l, h]
        rho = data.stats["cross"]["monotone"][l, h]
        hover = hovers[f"cross:{l + 1}:{h + 1}"]
        assert f"aligned {aligned:.0f}% · monotone ρ {rho:+.2f}" in hover, hover
        assert f"role <b>{ROLE_TEXT[role]}</b>" in hover
    named = {trace["legendgroup"]: trace["name"] for trace in figure["data"]}
    for role in set(np.ravel(data.roles["cross"])) & {"aligned", "monotone"}:
        assert named[role] == ROLE_TEXT[role]


def older_file(data):
    """The corpus data as a file made before the cross-attention roles: no aligned or monotone stats, roles labelled
    without them."""
    older = copy.deepcopy(data)
    for name in CROSS_STATS:
        del older.stats["cross"][name]
    older.roles = {kind: role_labels(older.stats[kind]) for kind in KINDS}
    return older


def test_an_older_corpus_file_without_the_alignment_roles_opens_and_says_in_one_line_what_it_lacks(
    data, corpus_checkpoint, tmp_path
):
    from ui.app import build_demo

    directory = tmp_path / "older"
    shutil.copytree(corpus_checkpoint.path, directory)
    save_corpus(directory / CORPUS_FILE, older_file(data))
    checkpoint = load_checkpoint(directory)
    loaded, message = corpus_figures.CorpusData(checkpoint).get()
    assert message == "" and loaded.lacking == {"cross": ["aligned", "monotone"]}
    assert "aligned" not in "".join(cross_hovers(figure_json(corpus_figures.roles_view(loaded))).values())
    demo = build_demo(directory)
    [said] = [b.value for b in demo.blocks.values() if getattr(b, "elem_id", None) == corpus_heads.READING]
    first, *rest = said.split("\n\n")
    assert first == (
        "This corpus file was made before some roles were measured (cross-attention: aligned and monotone): its "
        "heads are labelled without them; `python3 -m scripts.corpus_heads --checkpoint older` adds them."
    )
    assert rest and rest[0].startswith("What the roles say about this model:")
    assert "corpus-roles" in elem_ids(demo) and "corpus-missing" not in elem_ids(demo)
    assert corpus_figures.lacking_line(data, corpus_checkpoint.path) == ""
