"""Figures: the visualizer turns trace arrays and tokens into Plotly figures (numpy + plotly only).

Hand-made numpy data, no model. Grouped by view: tokens, attention (3.2), pipeline (3.2.1),
candidates (3.4), masks (3.2.3), positional encoding (3.5), training logs, then invariants shared
by every figure (JSON, imports) and one browser check that an HTML-like token stays text.
"""

from __future__ import annotations

import ast
import html
import json
import shutil
import time
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest

import visualizer
from visualizer import explain
from visualizer.theme import ACCENT_COLOR, GRID_COLOR, MUTED_COLOR, PRIMARY_COLOR
from visualizer.tokens import token_chips

VISUALIZER_DIR = Path(__file__).resolve().parent.parent / "visualizer"

SOURCE = ["<2en>", "▁Ein", "▁Mann", "▁fährt", "▁Fahr", "rad", ".", "[EOS]"]
TARGET = ["[BOS]", "▁A", "▁man", "▁rides", "▁a", "▁bike", "."]
HOSTILE = "<img src=x onerror=alert(1)>"


def softmax_rows(shape: tuple[int, ...], seed: int = 0, mask: np.ndarray | None = None) -> np.ndarray:
    """Random attention weights: every row a distribution (masked keys get 0)."""
    scores = np.random.default_rng(seed).normal(size=shape) * 2
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (weights / weights.sum(axis=-1, keepdims=True)).astype(np.float32)


def heatmaps(fig: go.Figure) -> list[go.Heatmap]:
    return [trace for trace in fig.data if isinstance(trace, go.Heatmap)]


def highlight_shapes(fig: go.Figure) -> list:
    return [shape for shape in fig.layout.shapes if shape.name == "highlight"]


# ---- tokens ---------------------------------------------------------------------------------

def test_display_tokens_escape_markup_keep_word_marker_and_duplicates():
    tokens = ["▁a", "<script>alert(1)</script>", "▁a", "&amp;", HOSTILE, "[EOS]"]
    labels = visualizer.display_tokens(tokens)
    assert labels == [html.escape(token, quote=False) for token in tokens]
    assert labels[1] == "&lt;script&gt;alert(1)&lt;/script&gt;"
    assert labels[3] == "&amp;amp;"  # shown as the four characters "&amp;", not as "&"
    assert labels[0] == labels[2] == "▁a"


def test_display_tokens_cut_before_escaping_and_reject_non_lists():
    assert visualizer.display_tokens(["<abcdefgh>"], max_chars=4) == ["&lt;ab…"]
    assert visualizer.display_tokens([""]) == ["∅"]
    with pytest.raises(ValueError, match="list of strings"):
        visualizer.display_tokens("▁Mann")
    with pytest.raises(ValueError, match="token 1"):
        visualizer.display_tokens(["▁a", 3])


SPECIAL = {"[PAD]", "[BOS]", "[EOS]", "[UNK]", "<2de>", "<2en>"}  # as the caller (the tokenizer) names them


def test_token_chips_mark_the_special_tokens_the_caller_names():
    chips = token_chips(["<2en>", "▁A", "[EOS]"], {1: "chosen"}, special_tokens=SPECIAL)
    assert chips == ('<span class="tok special">&lt;2en&gt;</span><span class="tok chosen">▁A</span>'
                     '<span class="tok special">[EOS]</span>')
    assert "special" not in token_chips(["[EOS]", "<2en>"])  # the visualizer has no list of its own


def test_alignment_figure_mutes_the_special_tokens_the_caller_names():
    fig = explain.alignment_figure(SOURCE, TARGET, [(2, 2)], special_tokens=SPECIAL)
    for row, tokens in zip(fig.data, (SOURCE, TARGET)):
        expected = [GRID_COLOR if token in SPECIAL else PRIMARY_COLOR for token in tokens]
        assert list(row.marker.color) == expected, row.name
    muted = {a.text for a in fig.layout.annotations if a.font.color == MUTED_COLOR and a.xref != "paper"}
    assert muted == {"&lt;2en&gt;", "[EOS]", "[BOS]"}
    plain = explain.alignment_figure(SOURCE, TARGET, [(2, 2)])
    assert GRID_COLOR not in list(plain.data[0].marker.color) + list(plain.data[1].marker.color)


# ---- attention heatmap (3.2) ----------------------------------------------------------------

def test_attention_heatmap_draws_weights_on_token_axes():
    weights = softmax_rows((len(TARGET), len(SOURCE)))
    fig = visualizer.attention_heatmap(weights, TARGET, SOURCE, title="cross <b>attention</b>")
    assert isinstance(fig, go.Figure)
    (trace,) = fig.data
    assert isinstance(trace, go.Heatmap)
    np.testing.assert_allclose(trace.z, weights)
    assert (trace.zmin, trace.zmax) == (0, 1)
    assert list(fig.layout.xaxis.ticktext) == visualizer.display_tokens(SOURCE)
    assert list(fig.layout.yaxis.ticktext) == visualizer.display_tokens(TARGET)
    assert list(fig.layout.xaxis.tickvals) == list(range(len(SOURCE)))
    assert fig.layout.yaxis.autorange == "reversed"  # first query at the top
    assert fig.layout.title.text == "cross &lt;b&gt;attention&lt;/b&gt;"  # titles are plain text
    assert not highlight_shapes(fig)


def test_attention_heatmap_hover_names_query_key_and_exact_weight():
    weights = softmax_rows((len(TARGET), len(SOURCE)))
    trace = visualizer.attention_heatmap(weights, TARGET, SOURCE).data[0]
    assert (trace.y[3], trace.x[2]) == ("#3 ▁rides", "#2 ▁Mann")  # the hover of cell (3, 2)
    assert "query <b>%{y}</b>" in trace.hovertemplate and "key <b>%{x}</b>" in trace.hovertemplate
    assert "%{z:.4f}" in trace.hovertemplate


def test_attention_heatmap_highlights_the_query_row():
    weights = softmax_rows((len(TARGET), len(SOURCE)))
    fig = visualizer.attention_heatmap(weights, TARGET, SOURCE, highlight_query=4)
    (shape,) = highlight_shapes(fig)
    assert (shape.y0, shape.y1) == (3.5, 4.5)
    assert (shape.x0, shape.x1) == (-0.5, len(SOURCE) - 0.5)


def test_attention_heatmap_keeps_duplicate_tokens_apart_and_escapes_them():
    tokens = ["▁a", "<script>", "▁a", "▁a"]
    weights = softmax_rows((4, 4))
    fig = visualizer.attention_heatmap(weights, tokens, tokens)
    assert list(fig.layout.yaxis.ticktext) == ["▁a", "&lt;script&gt;", "▁a", "▁a"]
    # unique category per position: Plotly cannot merge the repeated rows
    assert list(fig.data[0].y) == ["#0 ▁a", "#1 &lt;script&gt;", "#2 ▁a", "#3 ▁a"]
    assert fig.data[0].z.shape == (4, 4)


def test_attention_heatmap_fills_its_container_until_its_columns_need_more_than_a_phone():
    small = visualizer.attention_heatmap(softmax_rows((5, 5)), ["▁x"] * 5, ["▁x"] * 5)
    big = visualizer.attention_heatmap(softmax_rows((80, 80)), ["▁x"] * 80, ["▁x"] * 80)
    assert small.layout.width is None  # Plotly sizes it to the page's column
    margin = big.layout.margin
    assert big.layout.width - margin.l - margin.r >= 80 * 14  # 14 px a column: rotated 10 px labels apart
    assert small.layout.height < big.layout.height <= 80 * 34 + margin.t + margin.b


@pytest.mark.parametrize("weights, queries, keys, kwargs, message", [
    (np.zeros((3, 4, 1)), 3, 4, {}, "2 dimensions"),
    (np.zeros((3, 4)), 2, 4, {}, "query_tokens has 2 tokens"),
    (np.zeros((3, 4)), 3, 5, {}, "key_tokens has 5 tokens"),
    (np.zeros((3, 4)), 3, 4, {"highlight_query": 3}, "out of range"),
    (np.zeros((3, 4)), 3, 4, {"highlight_query": 1.0}, "integer"),
    (np.zeros((0, 4)), 0, 4, {}, "empty"),
])
def test_attention_heatmap_rejects_mismatched_inputs(weights, queries, keys, kwargs, message):
    with pytest.raises(ValueError, match=message):
        visualizer.attention_heatmap(weights, ["▁q"] * queries, ["▁k"] * keys, **kwargs)


# ---- grid of layers x heads (3.2.2) ----------------------------------------------------------

def test_attention_grid_has_one_cell_per_layer_and_head():
    layers, heads = 2, 3
    weights = softmax_rows((layers, heads, len(TARGET), len(SOURCE)))
    fig = visualizer.attention_grid(weights, TARGET, SOURCE, title="model view", highlight_query=2)
    cells = heatmaps(fig)
    assert len(cells) == layers * heads
    titles = [annotation.text for annotation in fig.layout.annotations]
    assert titles == ["head 1", "head 2", "head 3"]  # column titles on the top edge
    # layer names on the rows' left edge, token ticks only on the outer edge (first column, bottom row)
    assert [fig.layout[f"yaxis{'' if i == 1 else i}"].title.text for i in (1, 4)] == ["layer 1", "layer 2"]
    shown_y = [fig.layout[f"yaxis{'' if i == 1 else i}"].showticklabels for i in range(1, 7)]
    shown_x = [fig.layout[f"xaxis{'' if i == 1 else i}"].showticklabels for i in range(1, 7)]
    assert shown_y == [True, False, False, True, False, False]
    assert shown_x == [False, False, False, True, True, True]
    assert list(fig.layout.xaxis4.ticktext) == [f"{i} {token}" for i, token in enumerate(visualizer.display_tokens(SOURCE))]
    np.testing.assert_allclose(cells[4].z, weights[1, 1])  # row-major: layer 2, head 2
    assert {cell.coloraxis for cell in cells} == {"coloraxis"}
    assert (fig.layout.coloraxis.cmin, fig.layout.coloraxis.cmax) == (0, 1)
    assert len(highlight_shapes(fig)) == layers * heads
    assert {shape.xref for shape in highlight_shapes(fig)} == {"x", *(f"x{i}" for i in range(2, 7))}


def test_attention_grid_hover_names_tokens_layer_head_and_weight():
    tokens = ["▁a", "<b>", "▁a"]
    fig = visualizer.attention_grid(softmax_rows((1, 2, 3, 3)), tokens, tokens)
    cell = heatmaps(fig)[1]
    assert list(cell.x) == ["#0 ▁a", "#1 &lt;b&gt;", "#2 ▁a"]  # unique per position, escaped
    assert list(cell.y) == list(cell.x)
    assert "layer 1 · head 2" in cell.hovertemplate and "%{z:.4f}" in cell.hovertemplate
    assert fig.layout.yaxis.autorange == "reversed"


def test_attention_grid_rejects_a_single_head():
    with pytest.raises(ValueError, match="4 dimensions"):
        visualizer.attention_grid(softmax_rows((3, 3)), ["▁a"] * 3, ["▁a"] * 3)
    with pytest.raises(ValueError, match="key_tokens"):
        visualizer.attention_grid(softmax_rows((1, 1, 3, 3)), ["▁a"] * 3, ["▁a"] * 2)


def test_large_figures_build_quickly():
    """Not a timing assertion (shared CPUs): the numbers are printed for the record (-s)."""
    tokens80, tokens40 = [f"▁w{i}" for i in range(80)], [f"▁w{i}" for i in range(40)]
    start = time.perf_counter()
    heatmap = visualizer.attention_heatmap(softmax_rows((80, 80)), tokens80, tokens80, highlight_query=5)
    heatmap_json = heatmap.to_json()
    middle = time.perf_counter()
    grid = visualizer.attention_grid(softmax_rows((6, 8, 40, 40)), tokens40, tokens40, highlight_query=5)
    grid_json = grid.to_json()
    end = time.perf_counter()
    print(f"\n80x80 heatmap: {middle - start:.2f} s, {len(heatmap_json) / 1e6:.2f} MB JSON; "
          f"6x8 grid of 40x40: {end - middle:.2f} s, {len(grid_json) / 1e6:.2f} MB JSON")
    assert len(heatmaps(grid)) == 48


# ---- inside one head: scores, mask, softmax (3.2.1) ------------------------------------------

def test_attention_pipeline_shows_scores_masked_scores_and_softmax():
    n = len(TARGET)
    mask = np.tril(np.ones((n, n), dtype=bool))
    scores = np.random.default_rng(1).normal(size=(n, n)).astype(np.float32) * 3
    weights = softmax_rows((n, n), mask=mask)
    fig = visualizer.attention_pipeline(scores, mask, weights, TARGET, TARGET, title="head 1")
    raw, masked, overlay, soft = heatmaps(fig)
    assert [a.text for a in fig.layout.annotations] == ["QKᵀ/√d_k", "+ mask", "softmax"]
    np.testing.assert_allclose(raw.z, scores)
    assert np.isnan(masked.z[~mask]).all()  # −∞ is not a colour: the cell is left to the overlay
    np.testing.assert_allclose(masked.z[mask], scores[mask])
    assert np.isnan(overlay.z[mask]).all() and not np.isnan(overlay.z[~mask]).any()
    assert "score <b>−∞ (masked)</b>" in overlay.hovertemplate
    assert masked.hoverongaps is False and overlay.hoverongaps is False
    np.testing.assert_allclose(soft.z, weights)
    # scores diverge around 0 on a shared axis; the softmax has its own fixed 0-1 axis
    assert raw.coloraxis == masked.coloraxis == "coloraxis" and soft.coloraxis == "coloraxis2"
    assert fig.layout.coloraxis.cmin == -fig.layout.coloraxis.cmax == -np.abs(scores).max()
    assert (fig.layout.coloraxis2.cmin, fig.layout.coloraxis2.cmax) == (0, 1)
    assert all("query <b>%{y}</b>" in trace.hovertemplate for trace in fig.data)


def test_attention_pipeline_rejects_a_mask_of_another_shape():
    n = len(TARGET)
    with pytest.raises(ValueError, match="mask has shape"):
        visualizer.attention_pipeline(np.zeros((n, n)), np.ones((n, n - 1), bool), softmax_rows((n, n)),
                                      TARGET, TARGET)


# ---- next-token candidates (3.4) --------------------------------------------------------------

def test_candidates_chart_ranks_bars_and_highlights_the_chosen_one():
    tokens = ["▁man", "▁woman", "<b>x", "▁person"]
    probs = np.array([0.05, 0.71, 0.0004, 0.2])
    fig = visualizer.candidates_chart(tokens, probs, 1, entropy_bits=1.234, title="step 3")
    (bar,) = fig.data
    assert bar.orientation == "h"
    np.testing.assert_allclose(bar.x, [0.71, 0.2, 0.05, 0.0004])  # most probable first = on top
    assert fig.layout.yaxis.autorange == "reversed"
    assert list(fig.layout.yaxis.ticktext) == ["<b>▁woman</b>", "▁person", "▁man", "&lt;b&gt;x"]
    assert list(bar.marker.color) == [ACCENT_COLOR, PRIMARY_COLOR, PRIMARY_COLOR, PRIMARY_COLOR]
    assert list(bar.text) == ["71.0%", "20.0%", "5.0%", "&lt;0.1%"]
    assert tuple(fig.layout.xaxis.range) == (0, 1)
    assert any("1.23 bits" in annotation.text for annotation in fig.layout.annotations)


def test_candidates_chart_without_a_chosen_token():
    fig = visualizer.candidates_chart(["▁a", "▁b"], np.array([0.5, 0.5]), None)
    assert list(fig.data[0].marker.color) == [PRIMARY_COLOR, PRIMARY_COLOR]


@pytest.mark.parametrize("tokens, probs, chosen, message", [
    (["▁a", "▁b"], [0.5, 0.3, 0.2], 0, "tokens has 2 tokens"),
    (["▁a", "▁b"], [0.5, 0.5], 2, "out of range"),
    (["▁a", "▁b"], [1.5, -0.5], 0, "probabilities"),
    (["▁a", "▁b"], [[0.5, 0.5]], 0, "1 dimensions"),
])
def test_candidates_chart_rejects_bad_inputs(tokens, probs, chosen, message):
    with pytest.raises(ValueError, match=message):
        visualizer.candidates_chart(tokens, np.array(probs), chosen)


# ---- masks (3.2.3) ----------------------------------------------------------------------------

def mask_inputs():
    longer = ["<2en>", "▁Zwei", "▁Hunde", "▁spielen", "▁im", "▁Schnee", "▁vor", "▁dem", "▁Haus", ".", "[EOS]"]
    batch = [SOURCE + ["[PAD]"] * (len(longer) - len(SOURCE)), longer]
    padding = np.array([[token != "[PAD]" for token in row] for row in batch])
    causal = np.tril(np.ones((len(TARGET), len(TARGET)), dtype=bool))
    cross = np.ones((len(TARGET), len(SOURCE)), dtype=bool)
    return padding, batch, causal, causal.copy(), cross


def test_masks_figure_has_four_panels_with_attend_and_masked():
    padding, batch, causal, decoder, cross = mask_inputs()
    fig = visualizer.masks_figure(padding, batch, causal, decoder, cross, SOURCE, TARGET, step=3)
    batch_panel, lookahead, self_mask, cross_panel = heatmaps(fig)
    np.testing.assert_array_equal(batch_panel.z, padding)
    assert batch_panel.text[0][-1] == "[PAD]" and batch_panel.text[1][1] == "▁Zwei"
    assert batch_panel.customdata[0, -1, 2] == "masked" and batch_panel.customdata[1, -1, 2] == "attend"
    np.testing.assert_array_equal(lookahead.z, causal[:4])  # rows 0..step
    np.testing.assert_array_equal(self_mask.z, decoder)
    np.testing.assert_array_equal(cross_panel.z, cross)
    assert self_mask.customdata[1, 5] == "masked" and self_mask.customdata[5, 1] == "attend"
    assert list(fig.layout.coloraxis.colorbar.ticktext) == ["masked", "attend"]
    assert {trace.coloraxis for trace in heatmaps(fig)} == {"coloraxis"}
    assert [shape.y0 for shape in highlight_shapes(fig)] == [2.5, 2.5, 2.5]
    assert list(fig.layout.xaxis4.ticktext) == visualizer.display_tokens(SOURCE)


def test_masks_figure_without_a_step_shows_the_whole_look_ahead_mask():
    padding, batch, causal, decoder, cross = mask_inputs()
    fig = visualizer.masks_figure(padding, batch, causal, decoder, cross, SOURCE, TARGET)
    assert heatmaps(fig)[1].z.shape == causal.shape
    assert not highlight_shapes(fig)


@pytest.mark.parametrize("broken, message", [
    ("cross", "cross_mask has shape"),
    ("batch_tokens", r"batch_tokens\[1\] has 3 tokens"),
    ("causal", "causal_mask must have 2 dimensions"),
    ("step", "step=7 is out of range"),
])
def test_masks_figure_rejects_mismatches(broken, message):
    padding, batch, causal, decoder, cross = mask_inputs()
    step = 3
    if broken == "cross":
        cross = cross[:, :-1]
    elif broken == "batch_tokens":
        batch = [batch[0], batch[1][:3]]
    elif broken == "causal":
        causal = causal[0]
    else:
        step = len(TARGET)
    with pytest.raises(ValueError, match=message):
        visualizer.masks_figure(padding, batch, causal, decoder, cross, SOURCE, TARGET, step=step)


def test_mask_heatmap_labels_cells_and_highlights_a_row():
    causal = np.tril(np.ones((3, 3), dtype=bool))
    fig = visualizer.mask_heatmap(causal, ["▁a", "▁b", "▁c"], ["▁a", "▁b", "▁c"], title="look-ahead",
                                  highlight_row=1)
    (trace,) = fig.data
    assert trace.customdata[0, 2] == "masked" and trace.customdata[2, 0] == "attend"
    assert len(highlight_shapes(fig)) == 1
    with pytest.raises(ValueError, match="row labels"):
        visualizer.mask_heatmap(causal, ["▁a", "▁b"], ["▁a", "▁b", "▁c"])


# ---- positional encoding (3.5) ----------------------------------------------------------------

def sinusoids(positions: int, d_model: int) -> np.ndarray:
    angles = np.arange(positions)[:, None] / 10000 ** (np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((positions, d_model), dtype=np.float32)
    pe[:, 0::2], pe[:, 1::2] = np.sin(angles), np.cos(angles)
    return pe


def test_positional_encoding_figure_three_panels():
    pe = sinusoids(64, 32)
    tokens = ["<2en>", "▁Ein", HOSTILE]
    fig = visualizer.positional_encoding_figure(pe, tokens=tokens, dims=(0, 1, 4, 5, 31, 64))
    matrix, similarity = heatmaps(fig)
    np.testing.assert_allclose(matrix.z, pe)
    assert (matrix.zmin, matrix.zmax) == (-1, 1)
    np.testing.assert_allclose(similarity.z, pe @ pe.T, rtol=1e-4, atol=1e-3)
    lines = [trace for trace in fig.data if isinstance(trace, go.Scatter)]
    assert [line.name for line in lines] == ["dim 0 (sin)", "dim 1 (cos)", "dim 4 (sin)", "dim 5 (cos)",
                                             "dim 31 (cos)"]  # 64 >= d_model is dropped
    np.testing.assert_allclose(lines[2].customdata[:, 1].astype(float), pe[:, 4])
    assert list(fig.layout.yaxis.ticktext[:3]) == visualizer.display_tokens(tokens)
    assert list(fig.layout.yaxis.tickvals[:3]) == [0, 1, 2]
    (sentence,) = [shape for shape in fig.layout.shapes if shape.name == "sentence"]
    assert (sentence.y0, sentence.y1) == (-0.5, 2.5)


def test_positional_encoding_figure_without_tokens_and_with_too_many():
    pe = sinusoids(8, 16)
    fig = visualizer.positional_encoding_figure(pe)
    assert len(heatmaps(fig)) == 2
    with pytest.raises(ValueError, match="only 8 positions"):
        visualizer.positional_encoding_figure(pe, tokens=["▁a"] * 9)
    with pytest.raises(ValueError, match="2 dimensions"):
        visualizer.positional_encoding_figure(pe[0])


# ---- training log and metrics ----------------------------------------------------------------

def full_log() -> dict:
    steps = list(range(0, 1000, 100))
    return {"train": {"step": steps, "loss": [9 - i * 0.5 for i in range(10)],
                      "learning_rate": [1e-4 * i for i in range(10)], "tokens_per_second": [1000.0] * 10},
            "validation": {"step": [500, 1000], "loss": [5.0, 4.0], "bleu_de_en": [10.0, 20.0],
                           "bleu_en_de": [8.0, 15.0]}}


def no_data_annotations(fig: go.Figure) -> list:
    return [annotation for annotation in fig.layout.annotations if annotation.text == "no data"]


def test_training_curves_figure_draws_loss_learning_rate_and_bleu():
    fig = visualizer.training_curves_figure(full_log())
    names = [trace.name for trace in fig.data]
    assert names == ["training loss", "validation loss", "learning rate", "BLEU de→en", "BLEU en→de"]
    assert [trace.xaxis for trace in fig.data] == ["x", "x", "x2", "x3", "x3"]
    np.testing.assert_allclose(fig.data[3].y, [10.0, 20.0])
    assert not no_data_annotations(fig)


@pytest.mark.parametrize("log, empty_panels", [
    ({}, 3),
    (None, 3),
    ({"train": {"step": [], "loss": [], "learning_rate": []}, "validation": {}}, 3),
    ({"train": {"step": [1, 2, 3], "loss": [3.0, None, 2.0], "learning_rate": [1e-4]}}, 1),
    ({"validation": {"step": [1, 2], "bleu_de_en": [1.0, float("nan")]}, "train": "broken"}, 2),
])
def test_training_curves_figure_tolerates_missing_parts(log, empty_panels):
    fig = visualizer.training_curves_figure(log)
    assert len(no_data_annotations(fig)) == empty_panels
    for trace in fig.data:
        assert np.isfinite(trace.y).all() and len(trace.x) == len(trace.y)
    with pytest.raises(ValueError, match="training_log.json"):
        visualizer.training_curves_figure([1, 2])


def test_metrics_table_markdown():
    metrics = {"step": 10, "scores": {
        "val": {"de-en": {"greedy": {"bleu": 30.123, "chrf": 55.5}, "beam4": {"bleu": 31}}},
        "test_2016_flickr": {"en-de": {"greedy": {"bleu": 20, "chrf": 50}}}}}
    lines = visualizer.metrics_table_markdown(metrics).splitlines()
    assert lines[0] == "| split | direction | decoding | BLEU | chrF |"
    assert lines[2] == "| val | de-en | greedy | 30.12 | 55.50 |"
    assert lines[3] == "| val | de-en | beam4 | 31.00 | – |"
    assert lines[4] == r"| test\_2016\_flickr | en-de | greedy | 20.00 | 50.00 |"
    assert len(lines) == 5
    for absent in (None, {}, {"scores": {}}, {"scores": "n/a"}):
        note = visualizer.metrics_table_markdown(absent)
        assert "|" not in note and "No evaluation scores" in note


# ---- every figure ---------------------------------------------------------------------------

def every_figure() -> dict[str, go.Figure]:
    """One of each public figure, the Explain tab's included."""
    n = len(TARGET)
    weights = softmax_rows((n, len(SOURCE)))
    mask = np.tril(np.ones((n, n), dtype=bool))
    rng = np.random.default_rng(1)
    return {
        "heatmap": visualizer.attention_heatmap(weights, TARGET, SOURCE, highlight_query=2),
        "grid": visualizer.attention_grid(softmax_rows((2, 2, n, n)), TARGET, TARGET),
        "pipeline": visualizer.attention_pipeline(np.zeros((n, n)), mask, softmax_rows((n, n), mask=mask),
                                                  TARGET, TARGET),
        "candidates": visualizer.candidates_chart(["▁a", "▁b"], np.array([0.9, 0.1]), 0, entropy_bits=0.5),
        "masks": visualizer.masks_figure(*mask_inputs(), SOURCE, TARGET, step=1),
        "positional": visualizer.positional_encoding_figure(sinusoids(16, 8), tokens=SOURCE),
        "mask": visualizer.mask_heatmap(mask, TARGET, TARGET, highlight_row=3, title="mask"),
        "training": visualizer.training_curves_figure(full_log()),
        "probability change": explain.probability_change_figure(TARGET, rng.random(n), rng.random(n), title="t"),
        "logit lens": explain.logit_lens_figure([TARGET[:3], TARGET[2:5]], rng.random((2, 3)), TARGET[2], title="t"),
        # strongest link 0.4: 0.2 + 0.8 * 0.4 / 0.4 is 1.0000000000000002, an opacity Plotly rejects
        "alignment": explain.alignment_figure(SOURCE, TARGET, [(i, i - 1) for i in range(1, n)],
                                              [0.4, 0.1, 0.2, 0.3, 0.2, 0.1][: n - 1],
                                              special_tokens={"<2en>", "[EOS]", "[BOS]"}, title="t"),
        "head diagnostics": explain.head_diagnostics_figure(
            {"entropy": 3 * rng.random((2, 4)), "diagonal": rng.random((2, 4))}, selected=(1, 2), title="t"),
        "attention comparison": explain.attention_comparison(weights, softmax_rows(weights.shape, seed=2), TARGET,
                                                             SOURCE, names=("a", "b"), title="t"),
    }


def test_every_figure_serializes_to_json_with_a_bounded_size():
    for name, fig in every_figure().items():
        data = json.loads(fig.to_json())
        assert data["data"], name
        assert fig.layout.width is None or 200 <= fig.layout.width <= 1400, name
        assert 180 <= fig.layout.height <= 1400, name


def test_every_figure_validates_as_plotly_json():
    """Figures are built unvalidated (fast); what they hold must still pass Plotly's full validation."""
    empty = {"training, no log": visualizer.training_curves_figure(None)}  # no series, only "no data" notes
    for name, fig in {**every_figure(), **empty}.items():
        try:
            go.Figure(fig.to_dict())
        except ValueError as error:
            pytest.fail(f"{name}: {error}")


def test_visualizer_imports_only_numpy_and_plotly():
    allowed = {"__future__", "collections", "html", "math", "numpy", "plotly"}
    for path in VISUALIZER_DIR.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                roots = {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                roots = {node.module.split(".")[0]}
            else:
                continue
            assert roots <= allowed, f"{path.name} imports {roots - allowed}"
        assert ".show(" not in path.read_text(encoding="utf-8"), path.name


# ---- in a browser ------------------------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.mark.browser
def test_hostile_token_is_shown_as_text_in_ticks_and_hover(tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip("no Chromium")
    tokens = ["▁a", HOSTILE, "<script>alert(2)</script>"]
    fig = visualizer.attention_heatmap(softmax_rows((3, 3)), tokens, tokens)
    page_path = tmp_path / "figure.html"
    fig.write_html(page_path, include_plotlyjs=True, div_id="figure")
    dialogs = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page()
            page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
            page.goto(page_path.as_uri())
            page.wait_for_selector(".xtick text")
            ticks = page.locator(".xtick text").all_text_contents()
            box = page.locator(".nsewdrag").first.bounding_box()  # the plot area: 3 x 3 cells
            page.mouse.move(box["x"] + box["width"] * 2.5 / 3, box["y"] + box["height"] * 1.5 / 3)  # row 1, col 2
            page.wait_for_selector(".hovertext")
            hover = page.locator(".hovertext").text_content()
            images = page.evaluate("document.querySelectorAll('img').length")
        finally:
            browser.close()
    assert ticks == tokens
    assert images == 0
    assert HOSTILE in hover and "<script>alert(2)</script>" in hover
    assert f"{fig.data[0].z[1, 2]:.4f}" in hover
    assert dialogs == []


@pytest.mark.parametrize("rows", range(1, 9))
@pytest.mark.parametrize("cols", range(1, 13))
def test_subplot_domains_stay_inside_the_unit_interval(rows, cols):
    """Rounding in the cumulative sums must never push a domain past 1 (Plotly rejects 1.0000000000000002)."""
    from visualizer.grid import subplot_grid

    layout, _ = subplot_grid(rows, cols, horizontal_spacing=0.07 / cols, vertical_spacing=0.09 / rows)
    for name, axis in layout.items():
        if name.startswith(("xaxis", "yaxis")):
            assert 0.0 <= axis["domain"][0] <= axis["domain"][1] <= 1.0, (name, axis["domain"])


def test_pipeline_builds_for_every_size():
    """The three-panel figure builds (and validates) for any number of queries and keys."""
    rng = np.random.default_rng(0)
    for queries, keys in [(t, s) for t in range(1, 41, 3) for s in range(1, 41, 7)]:
        scores = rng.normal(size=(queries, keys)).astype(np.float32)
        weights = np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)
        figure = visualizer.attention_pipeline(scores, np.ones((queries, keys), bool), weights,
                                               [f"q{i}" for i in range(queries)], [f"k{j}" for j in range(keys)])
        go.Figure(figure.to_dict())  # full validation, as a client loading the JSON would need
