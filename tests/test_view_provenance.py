"""Provenance of each view (issue 12, view half): every number a figure shows is the model's own, in the
right kind, layer, head, row and column (sections 3.2-3.5).

A tiny model trained to copy (its sentence ends with [EOS]) is saved as a checkpoint and translated
through the app's own Translate path. At a step in the middle of the sentence, for layer 2 of 2 and
head 2 of 4 (so reversed layers or heads show other numbers), each view's Plotly JSON is parsed and
its data compared with the trace slice it claims to show AND with the independent float64 reference
forward pass of tests/provenance_fixtures.py. Rows and columns are read from the figure's own
category names and tick labels; the tokens expected on them come from `decoder_inputs`,
`expected_query_labels` and `expected_key_labels` only (the one place to change when the label
convention changes). Long sentences show a window of positions: the positions a figure shows are read
from its own "#i" categories, so the expected slice is the one the figure states; the sentence here
is short, so the default window must show every position and state no hidden ones.
"""

from __future__ import annotations

import html
import json
import re

import gradio as gr
import numpy as np
import pytest
import torch

import provenance_fixtures as ref
from helpers import decoder_inputs, expected_key_labels, expected_query_labels, position
from model import save_checkpoint
from model.analysis.readouts import is_special
from model.decoding.trace import ATTENTION_KINDS, TranslationTrace
from model.text.inputs import PADDING_EXAMPLES
from ui import attention, next_token, positions, redraw, session
from ui.common import Page
from ui.explain import ablation as ablation_panel, diagnostics, readouts

SENTENCE = "Ein Mann fährt Fahrrad."
LAYER, HEAD = 2, 2  # 1-based: the mirror layer is 1 and the mirror head 3, so reversals show
ATOL = 2e-5  # float32 model vs float64 reference


# --------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def model(tiny_tokenizer, pairs):
    return ref.train_copy_model(tiny_tokenizer, pairs)


@pytest.fixture(scope="module")
def checkpoint_dir(tmp_path_factory, model, tiny_tokenizer):
    directory = tmp_path_factory.mktemp("copy-checkpoint") / "copy"
    save_checkpoint(directory, model, tiny_tokenizer, {"note": "tiny copy model for view provenance"})
    return directory


@pytest.fixture(scope="module")
def trace(checkpoint_dir) -> TranslationTrace:
    trace, _, _ = session.translate_text(session.Runner(session.load_model(str(checkpoint_dir))), SENTENCE, "de-en")
    assert trace.stopped_by == "eos" and trace.output_tokens[-1] == "[EOS]"
    assert trace.num_steps >= 5  # a middle step exists
    return trace


@pytest.fixture(scope="module")
def reference(model, trace) -> ref.Reference:
    return ref.forward(model, trace.source_ids, [model.config.bos_id, *trace.output_ids[:-1]])


@pytest.fixture(scope="module")
def step(trace) -> int:
    """A 0-based step in the middle of the sentence (neither the first nor the last)."""
    return trace.num_steps // 2


def figure_of(value) -> dict:
    """A gr.Plot value -> the figure JSON the browser receives, numpy arrays decoded."""
    assert value.type == "plotly"
    return ref.decode_plotly(json.loads(value.plot))


def axis(figure: dict, ref_name: str) -> dict:
    """The layout axis of a series reference ("x", "y2")."""
    return figure["layout"][f"{ref_name[0]}axis{ref_name[1:]}"]


def cells(figure: dict, series: dict, trace, kind: str, step: int,
          labels: tuple[list[str], list[str]] | None = None) -> tuple[list[int], list[int]]:
    """(row positions, column positions) a heatmap series shows, checked against its tick labels.
    `labels` = (row labels, column labels) by position; None = those of a `kind` attention view."""
    rows = [position(y) for y in series["y"]]
    cols = [position(x) for x in series["x"]]
    queries, keys = labels or (expected_query_labels(trace, kind, step), expected_key_labels(trace, kind, step))
    assert [token for _, token in rows] == [queries[i] for i, _ in rows]
    assert [token for _, token in cols] == [keys[i] for i, _ in cols]
    for name, items, labels in (("y", rows, queries), ("x", cols, keys)):
        layout_axis = axis(figure, series.get(f"{name}axis", name))
        if layout_axis.get("showticklabels", True) and "ticktext" in layout_axis:
            by_value = dict(zip(np.asarray(layout_axis["tickvals"]).tolist(), layout_axis["ticktext"]))
            for index, (pos, _) in enumerate(items):  # tick i names category i
                if index in by_value:
                    assert html.unescape(by_value[index]) == labels[pos], f"{name} tick {index}"
    return [p for p, _ in rows], [p for p, _ in cols]


def window_notes(figure: dict) -> list[str]:
    """The corner notes a windowed figure writes ("showing queries a–b of 0–n, keys ...")."""
    return [a["text"] for a in figure["layout"].get("annotations", []) if "showing" in a["text"]]


def shows_everything(figure: dict, rows: list[int], cols: list[int], trace, kind: str, step: int) -> None:
    """The short sentence fits the window: every row and column, in order, and no note of hidden ones."""
    assert rows == list(range(len(expected_query_labels(trace, kind, step))))
    assert cols == list(range(len(expected_key_labels(trace, kind, step))))
    assert not window_notes(figure)


def reference_attention(reference: ref.Reference, kind: str) -> np.ndarray:
    """(L, h, Tq, Tk) weights of the independent forward pass, whole sentence."""
    return torch.stack([a.weights for a in getattr(reference, kind)]).numpy()


# --------------------------------------------------------------------------- attention tab
@pytest.mark.parametrize("show_all", [False, True], ids=["window", "show-all"])
@pytest.mark.parametrize("kind", list(ATTENTION_KINDS))
def test_one_head_is_the_models_own_weights(trace, reference, step, kind, show_all):
    figure = figure_of(attention.attention_view(trace, step + 1, kind, LAYER, str(HEAD), show_all))
    (series,) = figure["data"]
    rows, cols = cells(figure, series, trace, kind, step)
    shows_everything(figure, rows, cols, trace, kind, step)
    z = np.asarray(series["z"], dtype=np.float64)
    traced = getattr(trace, ATTENTION_KINDS[kind].weights_field)[LAYER - 1, HEAD - 1]
    np.testing.assert_array_equal(z, traced[np.ix_(rows, cols)])
    np.testing.assert_allclose(z, reference_attention(reference, kind)[LAYER - 1, HEAD - 1][np.ix_(rows, cols)],
                               atol=ATOL)
    highlighted = [s for s in figure["layout"].get("shapes", []) if s.get("name") == "highlight"]
    if kind == "encoder":
        assert not highlighted
    else:  # the outlined row is the query of this step
        (outline,) = highlighted
        assert rows[int(round((outline["y0"] + outline["y1"]) / 2))] == step


@pytest.mark.parametrize("kind", list(ATTENTION_KINDS))
def test_mean_of_heads_is_the_mean_of_the_layers_heads(trace, reference, step, kind):
    figure = figure_of(attention.attention_view(trace, step + 1, kind, LAYER, "mean"))
    (series,) = figure["data"]
    rows, cols = cells(figure, series, trace, kind, step)
    shows_everything(figure, rows, cols, trace, kind, step)
    expected = reference_attention(reference, kind)[LAYER - 1].mean(axis=0)[np.ix_(rows, cols)]
    np.testing.assert_allclose(np.asarray(series["z"], dtype=np.float64), expected, atol=ATOL)


def grid_edge_labels(figure: dict) -> tuple[dict[float, int], dict[tuple[float, float], int]]:
    """The all-heads grid's edge labels: {column centre x: head} from the "head h" annotations above the
    columns, {row y domain: layer} from the "layer l" titles of the y axes left of the rows."""
    heads = {round(a["x"], 9): int(match.group(1)) for a in figure["layout"]["annotations"]
             if (match := re.fullmatch(r"head (\d+)", a["text"]))}
    layers = {}
    for name, value in figure["layout"].items():
        title = value.get("title", {}).get("text", "") if name.startswith("yaxis") else ""
        if match := re.fullmatch(r"layer (\d+)", title):
            layers[tuple(round(d, 9) for d in value["domain"])] = int(match.group(1))
    return heads, layers


def grid_ticks(layout_axis: dict, items: list[tuple[int, str]], labels: list[str]) -> int:
    """Check a grid axis's thinned ticks ("i token" at category index) name the positions there; the count."""
    if not layout_axis.get("showticklabels", True) or "ticktext" not in layout_axis:
        return 0
    for index, text in zip(np.asarray(layout_axis["tickvals"]).tolist(), layout_axis["ticktext"]):
        pos = items[index][0]
        assert html.unescape(text) == f"{pos} {labels[pos]}", f"tick {index}"
    return len(layout_axis["ticktext"])


@pytest.mark.parametrize("kind", list(ATTENTION_KINDS))
def test_every_panel_of_the_all_heads_grid_is_its_titled_head(trace, reference, step, kind):
    figure = figure_of(attention.attention_view(trace, step + 1, kind, LAYER, "all"))
    weights = reference_attention(reference, kind)
    traced = getattr(trace, ATTENTION_KINDS[kind].weights_field)
    n_layers, n_heads = weights.shape[:2]
    assert len(figure["data"]) == n_layers * n_heads
    heads, layers = grid_edge_labels(figure)
    assert sorted(heads.values()) == list(range(1, n_heads + 1))
    assert sorted(layers.values()) == list(range(1, n_layers + 1))
    assert not window_notes(figure)  # the short sentence fits the window
    queries, keys = expected_query_labels(trace, kind, step), expected_key_labels(trace, kind, step)
    seen, ticks = set(), {"x": 0, "y": 0}
    for series in figure["data"]:
        x_axis, y_axis = axis(figure, series["xaxis"]), axis(figure, series["yaxis"])
        head = heads[round(sum(x_axis["domain"]) / 2, 9)]  # the "head h" above this panel's column
        layer = layers[tuple(round(d, 9) for d in y_axis["domain"])]  # the "layer l" left of its row
        assert f"layer {layer} · head {head}" in series["hovertemplate"]
        rows, cols = [position(y) for y in series["y"]], [position(x) for x in series["x"]]
        assert [token for _, token in rows] == [queries[i] for i, _ in rows]
        assert [token for _, token in cols] == [keys[i] for i, _ in cols]
        ticks["y"] += grid_ticks(y_axis, rows, queries)
        ticks["x"] += grid_ticks(x_axis, cols, keys)
        rows, cols = [p for p, _ in rows], [p for p, _ in cols]
        assert rows == list(range(len(queries))) and cols == list(range(len(keys)))
        z = np.asarray(series["z"], dtype=np.float64)
        np.testing.assert_array_equal(z, traced[layer - 1, head - 1][np.ix_(rows, cols)])
        np.testing.assert_allclose(z, weights[layer - 1, head - 1][np.ix_(rows, cols)], atol=ATOL,
                                   err_msg=f"layer {layer} head {head}")
        seen.add((layer, head))
    assert len(seen) == n_layers * n_heads
    assert ticks["x"] and ticks["y"]  # the edges name tokens at all


@pytest.mark.parametrize("kind", list(ATTENTION_KINDS))
def test_inside_one_head_scores_mask_and_softmax(trace, reference, step, kind):
    figure = figure_of(attention.pipeline_view(trace, step + 1, kind, LAYER, str(HEAD)))
    scores_series, masked_series, overlay, softmax_series = figure["data"]
    rows, cols = cells(figure, scores_series, trace, kind, step)
    shows_everything(figure, rows, cols, trace, kind, step)
    attention_ref = getattr(reference, kind)[LAYER - 1]
    scores = attention_ref.scores[HEAD - 1].numpy()[np.ix_(rows, cols)]
    weights = attention_ref.weights[HEAD - 1].numpy()[np.ix_(rows, cols)]
    # independent mask: no padding in one sentence; decoder self-attention is causal
    allowed = np.greater_equal.outer(rows, cols) if kind == "decoder_self" else np.ones((len(rows), len(cols)), bool)
    np.testing.assert_allclose(np.asarray(scores_series["z"], dtype=np.float64), scores, atol=1e-4)
    masked = np.asarray(masked_series["z"], dtype=np.float64)
    np.testing.assert_array_equal(np.isnan(masked), ~allowed)
    np.testing.assert_allclose(masked[allowed], scores[allowed], atol=1e-4)
    np.testing.assert_array_equal(np.isnan(np.asarray(overlay["z"], dtype=np.float64)), allowed)
    np.testing.assert_allclose(np.asarray(softmax_series["z"], dtype=np.float64), weights, atol=ATOL)
    for series in (masked_series, overlay, softmax_series):
        assert cells(figure, series, trace, kind, step) == (rows, cols)


# --------------------------------------------------------------------------- masks, PE, candidates
@pytest.fixture(scope="module")
def runner(checkpoint_dir):
    return session.Runner(session.load_model(str(checkpoint_dir)))


def test_masks_view_shows_the_masks_of_this_sentence_at_this_step(runner, trace, tiny_tokenizer, step):
    figure = figure_of(positions.masks_view(runner, trace, step + 1))
    batch, causal, decoder, cross = figure["data"]
    shown = [[html.unescape(str(label).split(" ", 1)[1]) for label in row]  # "#j token" -> token
             for row in np.asarray(batch["customdata"], dtype=object)[..., 1]]
    # (a): this sentence (its real keys are the trace's source_mask, all True) beside the longer example
    # sentence, tokenized here, right-padded with [PAD] to the longer; the mask is False exactly on [PAD]
    example = ["<2en>", *tiny_tokenizer.tokens(tiny_tokenizer.encode(PADDING_EXAMPLES["de"])), "[EOS]"]
    width = max(len(trace.source_tokens), len(example))
    assert shown == [row + ["[PAD]"] * (width - len(row)) for row in (list(trace.source_tokens), example)]
    real = np.asarray(batch["z"]) > 0.5
    np.testing.assert_array_equal(real, [[token != "[PAD]" for token in row] for row in shown])
    np.testing.assert_array_equal(real[0, : len(trace.source_tokens)], trace.source_mask)
    assert not real.all()  # a padded batch: the panel has [PAD] keys to show
    n_target = trace.num_steps
    inputs = decoder_inputs(trace, n_target - 1)  # the masks name decoder positions by the token read there
    rows, cols = cells(figure, causal, trace, "decoder_self", n_target - 1, (inputs, inputs))
    assert rows == list(range(step + 1))  # panel (b) stops at the step
    np.testing.assert_array_equal(np.asarray(causal["z"]) > 0.5, np.tri(n_target, dtype=bool)[: step + 1])
    rows, cols = cells(figure, decoder, trace, "decoder_self", n_target - 1, (inputs, inputs))
    np.testing.assert_array_equal(np.asarray(decoder["z"]) > 0.5, np.tri(n_target, dtype=bool))
    rows, cols = cells(figure, cross, trace, "cross", n_target - 1, (inputs, list(trace.source_tokens)))
    assert cols == list(range(len(trace.source_tokens)))
    np.testing.assert_array_equal(np.asarray(cross["z"]) > 0.5, np.ones((n_target, len(cols)), bool))


def test_positional_encoding_view_is_the_sinusoid_table(runner, trace, model):
    figure = figure_of(positions.positions_view(runner, trace))
    matrix = figure["data"][0]
    z = np.asarray(matrix["z"], dtype=np.float64)
    assert z.shape[0] == min(max(len(trace.source_tokens), trace.num_steps, positions.MIN_PE_ROWS),
                             model.config.max_positions)
    np.testing.assert_allclose(z, ref.sinusoid_table(z.shape[0], model.config.d_model).numpy(), atol=1e-5)
    np.testing.assert_allclose(z, model.positional_encoding[: z.shape[0]].numpy(), atol=1e-6)  # the rows the model adds
    for p, label in enumerate(matrix["y"]):  # row p names position p and the source token there
        expected = f"{p} {trace.source_tokens[p]}" if p < len(trace.source_tokens) else str(p)
        assert html.unescape(label) == expected
    waves = [s for s in figure["data"] if s["type"] == "scatter"]
    assert waves
    for wave in waves:
        dim, kind = re.fullmatch(r"dim (\d+) \((sin|cos)\)", wave["name"]).groups()
        assert kind == ("sin" if int(dim) % 2 == 0 else "cos")
        shifted = np.asarray(wave["y"], dtype=np.float64) - z[:, int(dim)]
        np.testing.assert_allclose(shifted, shifted[0], atol=1e-5)  # the column itself, offset for stacking
    similarity = np.asarray(figure["data"][-1]["z"], dtype=np.float64)
    np.testing.assert_allclose(similarity, z @ z.T, atol=1e-3)


def test_candidates_view_is_a_softmax_of_the_models_logits(trace, reference, step, tiny_tokenizer):
    figure = figure_of(next_token.candidates_view(trace, step + 1))
    (bars,) = figure["data"]
    probs = torch.softmax(reference.logits[step], dim=-1)  # (V,)
    top = torch.topk(probs, len(bars["x"]))
    np.testing.assert_allclose(np.asarray(bars["x"], dtype=np.float64), top.values.numpy(), atol=1e-5)
    ticks = [html.unescape(re.sub(r"</?b>", "", text)) for text in figure["layout"]["yaxis"]["ticktext"]]
    assert ticks == tiny_tokenizer.tokens(top.indices.tolist())
    bold = [html.unescape(re.sub(r"</?b>", "", t)) for t in figure["layout"]["yaxis"]["ticktext"] if t.startswith("<b>")]
    assert bold == [trace.output_tokens[step]]  # greedy: the chosen token is the top one, marked
    assert f"Step {step + 1}" in figure["layout"]["title"]["text"]


# --------------------------------------------------------------------------- explain views
def test_logit_lens_reads_each_decoder_layer_through_the_tied_projection(trace, reference, model, step, tiny_tokenizer):
    figure = figure_of(readouts.lens_view(trace, step + 1))
    (cells_series,) = figure["data"]
    z = np.asarray(cells_series["z"], dtype=np.float64)  # (L, k)
    labels = figure["layout"]["yaxis"]["ticktext"]
    embedding = model.embedding.weight.detach().double()
    for layer, hidden in enumerate(reference.layer_hiddens):
        assert labels[layer].startswith(f"layer {layer + 1}")
        top = torch.topk(torch.softmax(hidden[step] @ embedding.T, dim=-1), z.shape[1])
        np.testing.assert_allclose(z[layer], top.values.numpy(), atol=1e-4, err_msg=f"layer {layer + 1}")
        assert trace.logit_lens_tokens[step][layer] == tiny_tokenizer.tokens(top.indices.tolist())


def test_alignment_links_each_output_to_its_strongest_real_source_token(trace, reference):
    plot, pharaoh = readouts.alignment_views(trace, [LAYER], "subword")
    figure = figure_of(plot)
    source_row, target_row = figure["data"]
    xs, xt = np.asarray(source_row["x"], dtype=float), np.asarray(target_row["x"], dtype=float)
    assert [position(c[0])[1] for c in source_row["customdata"]] == trace.source_tokens
    assert [position(c[0])[1] for c in target_row["customdata"]] == expected_query_labels(trace, "cross",
                                                                                          trace.num_steps - 1)
    links = sorted((int(np.argmin(abs(xs - s["x0"]))), int(np.argmin(abs(xt - s["x1"]))))
                   for s in figure["layout"]["shapes"] if s["type"] == "line")
    mean = reference.cross[LAYER - 1].weights.mean(0).numpy()  # (T, S), only the chosen layer
    real = [k for k, token in enumerate(trace.source_tokens) if not is_special(token)]
    expected = sorted((real[int(np.argmax(mean[t, real]))], t)
                      for t, token in enumerate(trace.output_tokens) if not is_special(token))
    assert links == expected
    real_target = [t for t, token in enumerate(trace.output_tokens) if not is_special(token)]
    numbered = sorted((real.index(s), real_target.index(t)) for s, t in expected)  # Pharaoh: specials not counted
    assert sorted(tuple(int(n) for n in pair.split("-")) for pair in pharaoh.split()) == numbered
    assert f"decoder layer(s) {LAYER}" in figure["layout"]["title"]["text"]


@pytest.mark.parametrize("kind", list(ATTENTION_KINDS))
def test_head_diagnostics_panels_are_per_layer_and_head(trace, reference, kind):
    plot, dropdown = diagnostics.diagnostics_views(trace, kind)
    figure = figure_of(plot)
    w = reference_attention(reference, kind).astype(np.float64)  # (L, h, Tq, Tk), whole sentence
    keys = expected_key_labels(trace, kind, trace.num_steps - 1)
    special = np.array([is_special(token) for token in keys])
    expected = {"entropy": -(w * np.log2(np.clip(w, 1e-12, None))).sum(-1).mean(-1),
                "special": w[..., special].sum(-1).mean(-1)}
    by_title = {a["text"]: a for a in figure["layout"]["annotations"]}
    for name, values in expected.items():
        title = by_title[diagnostics.TITLES[name]]
        series = next(s for s in figure["data"]
                      if abs(sum(axis(figure, s["xaxis"])["domain"]) / 2 - title["x"]) < 1e-9)
        assert list(series["y"]) == list(range(1, w.shape[0] + 1)) and list(series["x"]) == list(range(1, w.shape[1] + 1))
        assert axis(figure, series["xaxis"])["ticktext"] == [f"H{h}" for h in range(1, w.shape[1] + 1)]
        np.testing.assert_allclose(np.asarray(series["z"], dtype=np.float64), values, atol=1e-4, err_msg=name)
    for label, value in dropdown.choices:  # each entry opens the head it names, with that head's numbers
        layer, head = diagnostics.parse_head(value)
        assert label.startswith(f"layer {layer}, head {head}")
        assert f"{expected['entropy'][layer - 1, head - 1]:.1f} bits" in label


# --------------------------------------------------------------------------- the redraw listener
def test_redraw_draws_the_view_of_the_open_tab_and_controls(runner, trace, step):
    with gr.Blocks():
        page = Page(runner.checkpoint, gr.State(), gr.Slider(1, 10), gr.State(), gr.Tabs(), None, runner)
        with page.tabs:
            candidates = next_token.build(page)
            attention_tab = attention.build(page)
            tabs = [candidates, attention_tab.view, *positions.build(page)]
    kind, layer, head, show_all, pipeline_open = attention_tab.view.controls
    plot_component, pipeline_component = attention_tab.view.outputs
    for kind_value in ATTENTION_KINDS:
        for all_value in (False, True):
            values = {kind: kind_value, layer: LAYER, head: str(HEAD), show_all: all_value, pipeline_open: True}
            drawn = redraw.render_views(tabs, "attention", trace, step + 1, values)
            args = (trace, step + 1, kind_value, LAYER, str(HEAD), all_value)
            assert drawn[plot_component].plot == attention.attention_view(*args).plot
            assert drawn[pipeline_component].plot == attention.pipeline_view(*args).plot
        values = {kind: kind_value, layer: LAYER, head: str(HEAD), show_all: False, pipeline_open: False}
        drawn = redraw.render_views(tabs, "attention", trace, step + 1, values)  # closed pipeline: not drawn
        assert pipeline_component not in drawn
        assert drawn[plot_component].plot == attention.attention_view(*args[:-1], False).plot
    drawn = redraw.render_views(tabs, next_token.TAB_ID, trace, step + 1, {})
    assert drawn[candidates.outputs[0]].plot == next_token.candidates_view(trace, step + 1).plot
    drawn = redraw.render_views(tabs, "masks", trace, step + 1, {})
    assert drawn[tabs[3].outputs[0]].plot == positions.masks_view(runner, trace, step + 1).plot
    assert redraw.render_views(tabs, "model", trace, step + 1, {}) == {}
    emptied = redraw.render_views(tabs, "attention", None, step + 1, {})  # no trace: every view emptied
    assert emptied == {output: None for view in tabs for output in view.outputs}


def test_ablation_boxes_switch_off_the_heads_they_name(model):
    """Ticked 1-based boxes, per layer of each kind in the registry's order -> those 0-based heads."""
    config = model.config
    counts = [ATTENTION_KINDS[kind].num_layers(config) for kind in ATTENTION_KINDS]
    choices = [[] for _ in range(sum(counts))]
    choices[1] = [2]  # encoder layer 2, head 2
    choices[counts[0]] = [1, 4]  # decoder self-attention layer 1, heads 1 and 4
    choices[counts[0] + counts[1] + 1] = [3]  # cross-attention layer 2, head 3
    ablation = ablation_panel.ablation_from_choices(choices, config)
    assert set(ablation.encoder_heads) == {(1, 1)}
    assert set(ablation.decoder_self_heads) == {(0, 0), (0, 3)}
    assert set(ablation.cross_heads) == {(1, 2)}
