"""Views at 100 source tokens: readable labels, a window around the current query with a
"show all", pipeline panels that fit, masks covering every position, an alignment matrix instead of a
hairball, grid edge labels, "input → predicted" rows, slow PE dimensions, the punctuation diagnostic.

Hand-made numpy data (no model) for the figures; the tiny checkpoint for the UI's row labels.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import visualizer
from model.analysis.readouts import head_diagnostics
from model.decoding.greedy import translate
from visualizer import alignment
from visualizer.heatmap import MIN_FONT, WINDOW_HALF, attention_window

N_SOURCE, N_TARGET = 100, 30
SOURCE = [f"▁w{i}" for i in range(N_SOURCE)]
TARGET = [f"▁t{i}" for i in range(N_TARGET)]


@pytest.fixture
def trace(tiny_model, tiny_tokenizer):
    return translate(tiny_model, tiny_tokenizer, "Ein Mann fährt Fahrrad.", "de-en", max_new_tokens=6)


def softmax_rows(shape, seed=0):
    scores = np.random.default_rng(seed).normal(size=shape) * 2
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (weights / weights.sum(axis=-1, keepdims=True)).astype(np.float32)


def tick_fonts(fig) -> list[float]:
    """Every tick font size the figure sets on its axes (the template default 12 where unset)."""
    layout = json.loads(fig.to_json())["layout"]
    return [
        axis.get("tickfont", {}).get("size", 12)
        for key, axis in layout.items()
        if key.startswith(("xaxis", "yaxis")) and axis.get("showticklabels", True)
    ]


def long_figures() -> dict:
    cross = softmax_rows((2, 4, N_TARGET, N_SOURCE))
    mask = np.ones((N_TARGET, N_SOURCE), bool)
    window = attention_window(cross[0, 0], N_TARGET - 1, rows=True)
    batch = [SOURCE, SOURCE[:20] + ["[PAD]"] * (N_SOURCE - 20)]
    padding = np.array([[True] * N_SOURCE, [True] * 20 + [False] * (N_SOURCE - 20)])
    causal = np.tril(np.ones((N_TARGET, N_TARGET), bool))
    return {
        "heatmap": visualizer.attention_heatmap(cross[0, 0], TARGET, SOURCE, window=window, highlight_query=29),
        "heatmap all": visualizer.attention_heatmap(cross[0, 0], TARGET, SOURCE),
        "grid": visualizer.attention_grid(cross, TARGET, SOURCE, window=window),
        "pipeline": visualizer.attention_pipeline(np.log(cross[0, 0]), mask, cross[0, 0], TARGET, SOURCE),
        "masks": visualizer.masks_figure(padding, batch, causal, causal, mask, SOURCE, TARGET, step=5),
        "alignment": alignment.alignment_figure(
            SOURCE, TARGET, [(3 * t, t) for t in range(N_TARGET)], np.linspace(0.2, 1, N_TARGET)
        ),
        "candidates": visualizer.candidates_chart(SOURCE[:10], np.linspace(0.2, 0.01, 10), 0),
    }


@pytest.mark.parametrize("name", list(long_figures()))
def test_no_tick_label_below_ten_px_at_100_tokens(name):
    fonts = tick_fonts(long_figures()[name])
    assert fonts and min(fonts) >= MIN_FONT, (name, fonts)


def test_window_holds_the_querys_best_attended_key_and_show_all_shows_every_key():
    weights = softmax_rows((N_TARGET, N_SOURCE), seed=3)
    query = N_TARGET - 1
    best = int(np.argmax(weights[query]))
    window = attention_window(weights, query, rows=True)
    fig = visualizer.attention_heatmap(weights, TARGET, SOURCE, window=window, highlight_query=query)
    shown = list(fig.data[0].x)
    assert f"#{best} {SOURCE[best]}" in shown
    assert len(shown) == 2 * WINDOW_HALF + 1
    np.testing.assert_array_equal(fig.data[0].z, weights[window.rows, window.cols])  # the trace slice it shows
    assert f"#{query} {TARGET[query]}" in list(fig.data[0].y)
    assert any("showing" in note.text for note in fig.layout.annotations)
    every = visualizer.attention_heatmap(weights, TARGET, SOURCE)
    assert len(every.data[0].x) == N_SOURCE and every.data[0].z.shape == (N_TARGET, N_SOURCE)
    assert not [note for note in every.layout.annotations if "showing" in note.text]


def test_pipeline_panels_never_overlap_and_fit_the_figure():
    for n_keys in (8, 46, 100):
        w = softmax_rows((12, n_keys))
        fig = visualizer.attention_pipeline(np.log(w), np.ones_like(w, bool), w, TARGET[:12], SOURCE[:n_keys])
        boxes = [(fig.layout[f"xaxis{s}"].domain, fig.layout[f"yaxis{s}"].domain) for s in ("", "2", "3")]
        for x, y in boxes:
            assert 0 <= x[0] < x[1] <= 1 and 0 <= y[0] < y[1] <= 1, n_keys
        for i in range(3):
            for j in range(i + 1, 3):
                (xa, ya), (xb, yb) = boxes[i], boxes[j]
                overlap_x = min(xa[1], xb[1]) > max(xa[0], xb[0])
                overlap_y = min(ya[1], yb[1]) > max(ya[0], yb[0])
                assert not (overlap_x and overlap_y), (n_keys, i, j)
        softmax = fig.data[3]
        np.testing.assert_array_equal(softmax.z, w)  # the whole softmax is drawn, no column cut


def test_masks_figure_covers_every_position_at_100_tokens():
    fig = long_figures()["masks"]
    batch, cross = fig.data[0], fig.data[3]
    assert batch.z.shape == (2, N_SOURCE) and list(batch.x) == list(range(N_SOURCE))
    assert cross.z.shape == (N_TARGET, N_SOURCE) and len(cross.x) == N_SOURCE
    assert fig.layout.xaxis.range is None or fig.layout.xaxis.range[1] >= N_SOURCE - 1
    last_tick = fig.layout.xaxis4.tickvals[-1]  # labels are thinned, but reach the end
    assert last_tick >= N_SOURCE - 2


def test_alignment_at_100_tokens_is_a_matrix_of_the_links():
    links = [(3 * t, t) for t in range(N_TARGET)]
    strengths = np.linspace(0.2, 1, N_TARGET)
    fig = alignment.alignment_figure(SOURCE, TARGET, links, strengths, input_tokens=["[BOS]"] + TARGET[:-1])
    assert not fig.layout.shapes  # no lines
    z = fig.data[0].z
    assert z.shape == (N_TARGET, N_SOURCE) and np.count_nonzero(z) == N_TARGET
    for (s, t), w in zip(links, strengths):
        assert z[t, s] == pytest.approx(w)
    assert fig.data[0].y[1] == "#1 ▁t0 → ▁t1"  # input → predicted
    short = alignment.alignment_figure(SOURCE[:8], TARGET[:6], [(i, i) for i in range(6)])
    assert len(short.layout.shapes) == 6  # short sentences keep their lines


def test_grid_has_edge_labels_at_100_tokens():
    fig = long_figures()["grid"]
    annotations = [a.text for a in fig.layout.annotations]
    assert [f"head {h}" for h in range(1, 5)] == annotations[:4]
    assert fig.layout.yaxis.title.text == "layer 1" and fig.layout.yaxis5.title.text == "layer 2"
    assert fig.layout.xaxis5.showticklabels and fig.layout.yaxis.showticklabels
    assert not fig.layout.xaxis.showticklabels and not fig.layout.yaxis2.showticklabels


def test_decoder_rows_read_input_then_predicted(trace):
    from ui.attention import attention_view, query_labels

    part = trace.attention("cross", trace.num_steps - 1)
    labels = query_labels(trace, part)
    assert labels == [f"{a} → {b}" for a, b in zip(trace.target_tokens, trace.output_tokens)]
    assert query_labels(trace, trace.attention("encoder")) == trace.source_tokens
    figure = json.loads(attention_view(trace, trace.num_steps, "decoder_self", 1, "1").plot)
    rows = figure["data"][0]["y"]
    assert rows[-1].endswith(
        f"{trace.target_tokens[-1]} → {trace.output_tokens[-1]}".replace("<", "&lt;").replace(">", "&gt;")
    )


def test_positional_waves_show_fast_and_slow_dimensions():
    d = 64
    position = np.arange(120)[:, None]
    rates = 1 / 10000 ** (np.arange(0, d, 2) / d)
    pe = np.zeros((120, d), np.float32)
    pe[:, 0::2], pe[:, 1::2] = np.sin(position * rates), np.cos(position * rates)
    fig = visualizer.positional_encoding_figure(pe, tokens=["▁a"] * 5)
    names = [s.name for s in fig.data if s.type == "scatter"]
    assert "dim 0 (sin)" in names and f"dim {d - 2} (sin)" in names and f"dim {d // 2} (sin)" in names
    slow = next(s for s in fig.data if s.name == f"dim {d - 2} (sin)")
    fast = next(s for s in fig.data if s.name == "dim 0 (sin)")
    np.testing.assert_allclose(fast.customdata[:, 1].astype(float), pe[:, 0], atol=1e-6)
    assert (
        np.abs(np.diff(fast.customdata[:, 1].astype(float))).mean()
        > 10 * np.abs(np.diff(slow.customdata[:, 1].astype(float))).mean()
    )


def test_punctuation_diagnostic_counts_glued_punctuation():
    tokens = ["<2en>", "▁Der", "▁Hund", "▁läuft", "▁entlang.", "[EOS]"]
    weights = np.zeros((1, 1, len(tokens), len(tokens)))
    weights[..., 4] = 1.0  # every query on "▁entlang."
    stats = head_diagnostics(weights, tokens, tokens)
    assert stats["punctuation"][0, 0] == pytest.approx(1.0)
    weights[...] = 0
    weights[..., 5] = 1.0  # on [EOS]: special, not punctuation
    assert head_diagnostics(weights, tokens, tokens)["punctuation"][0, 0] == 0


def test_one_rule_decides_a_steps_window():
    """visualizer.heatmap.step_window: a decoder's rows and keys around the step's query and its strongest key; an
    encoder's rows and keys around the source token the step reads most (its cross-attention summed over heads)."""
    from visualizer.heatmap import step_window

    rng = np.random.default_rng(0)
    decoder = rng.random((2, 3, 70, 90))
    window = step_window(decoder, 60)
    best = int(np.argmax(decoder[..., 60, :].sum(axis=(0, 1))))
    assert window.rows == slice(70 - (2 * WINDOW_HALF + 1), 70)  # around row 60, kept within the 70 rows
    assert window.cols.start <= best < window.cols.stop and window.cols.stop - window.cols.start == 2 * WINDOW_HALF + 1
    encoder, reads = rng.random((2, 3, 90, 90)), np.zeros((2, 3, 90))
    reads[1, 2, 75] = 1.0  # the step reads source token 75 most
    window = step_window(encoder, reads=reads)
    assert window.rows == window.cols == slice(90 - (2 * WINDOW_HALF + 1), 90)  # 75 inside, kept within the 90
    reads[:] = 0
    reads[0, 0, 30] = 1.0
    assert step_window(encoder, reads=reads).rows == slice(30 - WINDOW_HALF, 30 + WINDOW_HALF + 1)
