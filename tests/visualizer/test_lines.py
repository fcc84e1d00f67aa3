"""The lines view (visualizer/lines.py) read back from its own figure JSON: every drawn line joins the query
and key its weight belongs to, in its head's colour, and the lines drawn are exactly the trace's weights
above the threshold; a selected token keeps only its lines; decoder rows stop at the step; windows keep
the sentence's positions."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest
from lines_figure import column, drawn_lines, head_of, strongest_per_query
from provenance_fixtures import decode_plotly

from visualizer.heatmap import Window, attention_window
from visualizer.lines import LINE_THRESHOLD, attention_lines
from visualizer.line_styles import HEAD_COLORS

LAYER = 1  # 0-based: the tiny model's second layer


def full_weights(trace, kind: str) -> np.ndarray:
    """(L, h, Tq, Tk) of the trace's own field for `kind`, whole sentence."""
    return {
        "encoder": trace.encoder_attention,
        "decoder_self": trace.decoder_self_attention,
        "cross": trace.cross_attention,
    }[kind]


def test_one_head_draws_every_line_over_the_threshold(trace):
    part = trace.attention("encoder")
    lines = drawn_lines(as_json(attention_lines(part.weights[LAYER], part.queries, part.keys, heads=[3])))
    weights = part.weights[LAYER, 3]
    assert set(lines) == {
        (3, q, k) for q in range(weights.shape[0]) for k in range(weights.shape[1]) if weights[q, k] >= LINE_THRESHOLD
    }


def as_json(figure: go.Figure) -> dict:
    return decode_plotly(json.loads(figure.to_json()))


@pytest.mark.parametrize("kind", ["encoder", "decoder_self", "cross"])
def test_every_line_is_the_traces_weight_and_every_weight_above_the_threshold_is_a_line(trace, kind):
    step = trace.num_steps // 2
    part = trace.attention(kind, step)
    fig = as_json(attention_lines(part.weights[LAYER], part.queries, part.keys))
    lines = drawn_lines(fig)
    expected = full_weights(trace, kind)[LAYER]  # (h, T, S) of the whole sentence
    n_queries = len(trace.source_tokens) if kind == "encoder" else step + 1  # decoder rows stop at the step
    n_keys = step + 1 if kind == "decoder_self" else len(trace.source_tokens)
    above = strongest_per_query(expected, n_queries, n_keys)  # several heads: each head's strongest line per query
    assert set(lines) == above and lines
    for (h, q, k), weight in lines.items():
        assert weight == float(expected[h, q, k])
    total = expected.shape[0] * n_queries * n_keys
    assert f"{len(above)} of {total} lines drawn (each head's strongest" in fig["layout"]["annotations"][-1]["text"]


def test_each_head_keeps_its_colour_in_the_lines_the_legend_and_the_weights(trace):
    part = trace.attention("encoder")
    everything = as_json(attention_lines(part.weights[LAYER], part.queries, part.keys, selected=("query", 2)))
    alone = as_json(attention_lines(part.weights[LAYER], part.queries, part.keys, heads=[2]))
    for fig in (everything, alone):
        heads = [s for s in fig["data"] if s.get("name", "").startswith("head ")]
        assert heads
        for series in heads:
            color = series["marker"]["color"] if series["mode"] == "markers+text" else series["line"]["color"]
            assert color == HEAD_COLORS[head_of(series)], series["name"]
    assert {head for head, _, _ in drawn_lines(alone)} == {2}
    legend = [s["name"] for s in everything["data"] if s.get("showlegend", True) and s["name"].startswith("head")]
    assert legend == [f"head {h + 1}" for h in range(part.weights.shape[1])]


def test_a_selected_token_keeps_only_its_lines_and_writes_their_weights(trace):
    part = trace.attention("encoder")
    weights = trace.encoder_attention[LAYER]
    for side, index in (("query", 3), ("key", 1)):
        fig = as_json(attention_lines(part.weights[LAYER], part.queries, part.keys, selected=(side, index)))
        lines = drawn_lines(fig)
        mine = {
            (h, q, k)
            for h in range(weights.shape[0])
            for q in range(weights.shape[1])
            for k in range(weights.shape[2])
            if (q if side == "query" else k) == index and weights[h, q, k] >= LINE_THRESHOLD
        }
        assert set(lines) == mine and lines
        _, other_at = column(fig, "key" if side == "query" else "query")
        for series in fig["data"]:
            if series.get("mode") != "markers+text" or not series.get("name", "").startswith("head "):
                continue
            head = head_of(series)
            for y, text in zip(np.asarray(series["y"], dtype=float).tolist(), series["text"]):
                other = other_at[y]
                weight = weights[head, index, other] if side == "query" else weights[head, other, index]
                assert float(text) == pytest.approx(float(weight), abs=0.005)  # ".41": two decimals


def test_a_window_shows_its_part_under_the_sentences_positions(trace):
    part = trace.attention("cross", trace.num_steps - 1)
    window = Window(slice(1, 3), slice(2, 5))
    fig = as_json(attention_lines(part.weights[LAYER], part.queries, part.keys, window=window, threshold=0.0))
    lines = drawn_lines(fig)
    assert {(q, k) for _, q, k in lines} == {(q, k) for q in range(1, 3) for k in range(2, 5)}
    for (h, q, k), weight in lines.items():
        assert weight == float(trace.cross_attention[LAYER, h, q, k])
    assert "queries 1–2" in fig["layout"]["annotations"][-1]["text"]


def test_a_long_sentence_is_windowed_and_stays_light():
    rng = np.random.default_rng(0)
    weights = rng.random((8, 100, 100)) ** 8
    weights /= weights.sum(-1, keepdims=True)
    tokens = [f"▁w{i}" for i in range(100)]
    window = attention_window(weights, 60, rows=True)
    figure = attention_lines(weights, tokens, tokens, window=window)
    assert len(figure.to_json()) < 1_500_000
    lines = drawn_lines(as_json(figure))
    assert all(
        window.rows.start <= q < window.rows.stop and window.cols.start <= k < window.cols.stop for _, q, k in lines
    )
    go.Figure(figure.to_dict())  # what it holds passes Plotly's validation


@pytest.mark.parametrize(
    "arguments, message",
    [
        (dict(heads=[4]), "heads"),
        (dict(heads=[]), "heads"),
        (dict(selected=("row", 1)), "selected"),
        (dict(selected=("key", 9)), "selected key"),
        (dict(head_names=["a"]), "head_names"),
        (dict(window=Window(slice(0, 9), slice(0, 2))), "window"),
    ],
)
def test_wrong_arguments_are_named(arguments, message):
    weights = np.full((4, 3, 3), 1 / 3)
    with pytest.raises(ValueError, match=message):
        attention_lines(weights, list("abc"), list("xyz"), **arguments)


def linear(channel: float) -> float:
    channel /= 255
    return channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4


# Machado, Oliveira and Fernandes (2009), severity 1: linear RGB as a viewer with the deficiency sees it
DEFICIENCIES = {
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
}


def test_every_head_of_a_layer_differs_in_colour_and_pattern_under_colour_vision_deficiencies(trace):
    """Each head's lines: its own dash pattern (distinct whatever colours a viewer sees), and colours apart by at
    least 0.03 in linear RGB under each simulated deficiency for heads next in the legend; one head alone is solid."""
    part = trace.attention("encoder")
    fig = as_json(attention_lines(part.weights[LAYER], part.queries, part.keys))
    legend = {s["name"]: s["line"] for s in fig["data"] if s.get("mode") == "lines" and s["x"][0] is None}
    assert len({line["dash"] for line in legend.values()}) == len(legend) == part.weights.shape[1]
    colors = [tuple(int(c[i : i + 2], 16) for i in (1, 3, 5)) for c in HEAD_COLORS]
    for name, matrix in DEFICIENCIES.items():
        seen = [np.asarray(matrix) @ np.array([linear(c) for c in rgb]) for rgb in colors]
        for a in range(len(seen)):
            for b in range(a + 1, len(seen)):
                assert np.abs(seen[a] - seen[b]).max() >= 0.03, (name, HEAD_COLORS[a], HEAD_COLORS[b])
    alone = as_json(attention_lines(part.weights[LAYER], part.queries, part.keys, heads=[2]))
    assert {s["line"].get("dash") for s in alone["data"] if s.get("mode") == "lines"} == {"solid"}


def test_heads_drawing_the_same_line_lie_side_by_side_and_the_legend_has_no_empty_rows(trace):
    """Every head's strongest line per query, several heads on one query and key: side by side (fanned out), not
    one over the other; the legend in one row where the box is 640 px or more, its phone rows in `meta.narrow`."""
    part = trace.attention("encoder")
    weights = np.zeros_like(part.weights[LAYER])
    weights[..., 0] = 1.0  # every head of every query on the first key
    fig = as_json(attention_lines(weights, part.queries, part.keys))
    ends = {}
    for s in fig["data"]:
        if s.get("mode") == "lines" and s["x"][0] is not None:
            ends.setdefault(s["name"], set()).update(np.asarray(s["y"], dtype=float)[0::4].tolist())
    heads = weights.shape[0]
    assert len(ends) == heads and len({frozenset(e) for e in ends.values()}) == heads  # no two heads on one path
    layout = fig["layout"]
    assert layout["margin"]["b"] <= 12 + 30 * int(np.ceil(heads / 8))  # one legend row per 8 heads, no empty band
    assert layout["meta"]["narrow"]["margin"]["b"] >= layout["margin"]["b"]
