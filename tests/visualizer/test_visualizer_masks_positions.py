"""Figures of the Masks (section 3.2.3), Positional-encoding (3.5) and Model tabs (training log, metrics).
Hand-made numpy data, no model: each figure shows exactly what it is given and refuses what does not fit.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest
from helpers import HOSTILE, SOURCE, TARGET, full_log, heatmaps, highlight_shapes, mask_inputs, sinusoids

import visualizer


# ---- masks (3.2.3) ----------------------------------------------------------------------------


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


def test_masks_figure_on_a_phone_stacks_its_four_panels_in_order():
    """meta.narrow (ui/js/figures.js applies it in a box under 640 px): the panels one above the other, each the
    box's width, (a) at the top and (d) at the foot, apart; the step still in (b)'s title; the key across the top."""
    padding, batch, causal, decoder, cross = mask_inputs()
    fig = visualizer.masks_figure(padding, batch, causal, decoder, cross, SOURCE, TARGET, step=3)
    narrow = fig.layout.meta["narrow"]
    xs = [narrow[name]["domain"] for name in ("xaxis", "xaxis2", "xaxis3", "xaxis4")]
    ys = [narrow[name]["domain"] for name in ("yaxis", "yaxis2", "yaxis3", "yaxis4")]
    assert all(x == [0.0, 1.0] or tuple(x) == (0, 1) for x in xs), xs
    assert all(upper[0] > lower[1] for upper, lower in zip(ys, ys[1:])), ys  # top to bottom, no overlap
    titles = [note["text"] for note in narrow["annotations"]]
    assert titles[1] == "(b) look-ahead mask at step 4" and len(titles) == 4
    assert narrow["coloraxis"]["colorbar"]["orientation"] == "h"
    assert narrow["height"] > fig.layout.height  # one column: taller
    turned = narrow["traces"][0]  # panel (a) turned: positions down, a column per sentence, tokens whole
    np.testing.assert_array_equal(np.array(turned["z"]), np.transpose(padding))
    assert [row[0] for row in turned["text"]] == visualizer.display_tokens(batch[0])
    assert turned["customdata"][-1][0] == list(heatmaps(fig)[0].customdata[0, -1])  # the hover follows its cell


def rows_px(layout: dict, axis: str, rows: int) -> float:
    """The height of one of `rows` rows of `axis`'s panel in a layout with that height and margins (px)."""
    bottom, top = layout[axis]["domain"]
    return (top - bottom) * (layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]) / rows


def assert_labels_apart(axis: dict, row_px: float) -> None:
    """Consecutive labelled rows stand a line of their type apart (heatmap.LABEL_LINE_EM), never under MIN_FONT."""
    font = axis["tickfont"]["size"]
    assert font >= visualizer.heatmap.MIN_FONT
    assert min(np.diff(axis["tickvals"]), default=np.inf) * row_px >= visualizer.heatmap.LABEL_LINE_EM * font


@pytest.mark.parametrize("n_target", [7, 16, 30])
def test_masks_figure_on_a_phone_fits_its_query_labels_and_its_look_ahead_rows(n_target):
    """The narrow layout's (b) is as tall as its rows up to the step (not a row over the empty height of all of
    them), and (b)'s and (d)'s query labels stand apart in their rows (every k-th where rows are short)."""
    padding, batch, *_ = mask_inputs()
    target = [f"▁w{i}" for i in range(n_target)]
    causal = np.tril(np.ones((n_target, n_target), dtype=bool))
    cross = np.ones((n_target, len(SOURCE)), dtype=bool)
    for step in (0, n_target // 2, n_target - 1):
        fig = visualizer.masks_figure(padding, batch, causal, causal, cross, SOURCE, target, step=step)
        narrow = fig.layout.meta["narrow"]
        look_ahead, decoder = rows_px(narrow, "yaxis2", step + 1), rows_px(narrow, "yaxis3", n_target)
        assert look_ahead == pytest.approx(decoder) and narrow["yaxis2"]["range"] == [step + 0.5, -0.5]
        assert_labels_apart(narrow["yaxis2"], look_ahead)
        assert narrow["yaxis2"]["ticktext"][0] == "▁w0" and narrow["yaxis2"]["tickvals"][-1] <= step
        assert_labels_apart(narrow["yaxis4"], rows_px(narrow, "yaxis4", n_target))
        assert target[step] in narrow["yaxis4"]["ticktext"]  # the step's query named


@pytest.mark.parametrize("n_target", [30, 45])
def test_masks_figure_names_the_steps_query_in_its_cross_attention_strip(n_target):
    """The wide layout's (d) is a strip shorter than its rows: every k-th query named, apart, and at every step the
    step's own query among them (the row its outline marks; ui/js/figures.js keeps that row in projector type)."""
    padding, batch, *_ = mask_inputs()
    target = [f"▁w{i}" for i in range(n_target)]
    causal = np.tril(np.ones((n_target, n_target), dtype=bool))
    cross = np.ones((n_target, len(SOURCE)), dtype=bool)
    for step in range(n_target):
        fig = visualizer.masks_figure(padding, batch, causal, causal, cross, SOURCE, target, step=step)
        strip = fig.layout.to_plotly_json()["yaxis4"]
        assert_labels_apart(strip, rows_px(fig.layout.to_plotly_json(), "yaxis4", n_target))
        assert len(strip["tickvals"]) < n_target  # thinned: the strip's rows are too short for a label each
        assert target[step] in strip["ticktext"] and step in list(strip["tickvals"])
        outlined = [shape for shape in highlight_shapes(fig) if shape.yref == "y4"]
        assert [(shape.y0 + shape.y1) / 2 for shape in outlined] == [step]


def test_masks_figure_without_a_step_shows_the_whole_look_ahead_mask():
    padding, batch, causal, decoder, cross = mask_inputs()
    fig = visualizer.masks_figure(padding, batch, causal, decoder, cross, SOURCE, TARGET)
    assert heatmaps(fig)[1].z.shape == causal.shape
    assert not highlight_shapes(fig)


@pytest.mark.parametrize(
    "broken, message",
    [
        ("cross", "cross_mask has shape"),
        ("batch_tokens", r"batch_tokens\[1\] has 3 tokens"),
        ("causal", "causal_mask must have 2 dimensions"),
        ("step", "step=7 is out of range"),
    ],
)
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
    fig = visualizer.mask_heatmap(causal, ["▁a", "▁b", "▁c"], ["▁a", "▁b", "▁c"], title="look-ahead", highlight_row=1)
    (trace,) = fig.data
    assert trace.customdata[0, 2] == "masked" and trace.customdata[2, 0] == "attend"
    assert len(highlight_shapes(fig)) == 1
    with pytest.raises(ValueError, match="row labels"):
        visualizer.mask_heatmap(causal, ["▁a", "▁b"], ["▁a", "▁b", "▁c"])


# ---- positional encoding (3.5) ----------------------------------------------------------------


def test_positional_encoding_figure_three_panels():
    pe = sinusoids(64, 32)
    tokens = ["<2en>", "▁Ein", HOSTILE]
    fig = visualizer.positional_encoding_figure(pe, tokens=tokens, dims=(0, 1, 4, 5, 31, 64))
    matrix, similarity = heatmaps(fig)
    np.testing.assert_allclose(matrix.z, pe)
    assert (matrix.zmin, matrix.zmax) == (-1, 1)
    np.testing.assert_allclose(similarity.z, pe @ pe.T, rtol=1e-4, atol=1e-3)
    lines = [trace for trace in fig.data if isinstance(trace, go.Scatter)]
    assert [line.name for line in lines] == [
        "dim 0 (sin)",
        "dim 1 (cos)",
        "dim 4 (sin)",
        "dim 5 (cos)",
        "dim 31 (cos)",
    ]  # 64 >= d_model is dropped
    np.testing.assert_allclose(lines[2].customdata[:, 1].astype(float), pe[:, 4])
    assert list(fig.layout.yaxis.ticktext[:3]) == visualizer.display_tokens(tokens)
    assert list(fig.layout.yaxis.tickvals[:3]) == [0, 1, 2]
    (sentence,) = [shape for shape in fig.layout.shapes if shape.name == "sentence"]
    assert (sentence.y0, sentence.y1) == (-0.5, 2.5)


def test_positional_encoding_figure_on_a_phone_thins_the_matrixs_labels():
    """The narrow layout's matrix gives 64 positions about 8 px each: every other token is named there, apart."""
    tokens = [f"▁w{i}" for i in range(12)]
    narrow = visualizer.positional_encoding_figure(sinusoids(64, 32), tokens=tokens).layout.meta["narrow"]
    row_px = rows_px(narrow, "yaxis", 64)
    assert row_px < 10 and narrow["yaxis"]["ticktext"][:6] == tokens[::2]
    assert min(np.diff(narrow["yaxis"]["tickvals"])) * row_px >= visualizer.positional.TICK_GAP_PX


def test_positional_encoding_figure_without_tokens_and_with_too_many():
    pe = sinusoids(8, 16)
    fig = visualizer.positional_encoding_figure(pe)
    assert len(heatmaps(fig)) == 2
    with pytest.raises(ValueError, match="only 8 positions"):
        visualizer.positional_encoding_figure(pe, tokens=["▁a"] * 9)
    with pytest.raises(ValueError, match="2 dimensions"):
        visualizer.positional_encoding_figure(pe[0])


# ---- training log and metrics ----------------------------------------------------------------


def no_data_annotations(fig: go.Figure) -> list:
    return [annotation for annotation in fig.layout.annotations if annotation.text == "no data"]


def test_training_curves_figure_draws_loss_learning_rate_and_bleu():
    fig = visualizer.training_curves_figure(full_log())
    names = [trace.name for trace in fig.data]
    assert names == ["training loss", "validation loss", "learning rate", "BLEU de→en", "BLEU en→de"]
    assert [trace.xaxis for trace in fig.data] == ["x", "x", "x2", "x3", "x3"]
    np.testing.assert_allclose(fig.data[3].y, [10.0, 20.0])
    assert not no_data_annotations(fig)


def test_training_curves_figure_on_a_phone_stacks_its_panels():
    """The narrow layout: the three panels one above the other, each the box's width, titled above its middle, an
    empty panel saying so in its middle."""
    narrow = visualizer.training_curves_figure({"train": full_log()["train"]}).layout.meta["narrow"]
    assert all(narrow[f"xaxis{n}"]["domain"] == [0.0, 1.0] for n in ("", "2", "3"))
    tops = [narrow[f"yaxis{n}"]["domain"] for n in ("", "2", "3")]
    assert all(upper[0] > lower[1] for upper, lower in zip(tops, tops[1:])), tops
    titles = [note["text"] for note in narrow["annotations"] if note.get("name") != "no data"]
    assert titles == list(visualizer.training.PANEL_TITLES)
    assert [note["y"] for note in narrow["annotations"] if note.get("name") == "no data"] == [sum(tops[2]) / 2]


@pytest.mark.parametrize(
    "log, empty_panels",
    [
        ({}, 3),
        (None, 3),
        ({"train": {"step": [], "loss": [], "learning_rate": []}, "validation": {}}, 3),
        ({"train": {"step": [1, 2, 3], "loss": [3.0, None, 2.0], "learning_rate": [1e-4]}}, 1),
        ({"validation": {"step": [1, 2], "bleu_de_en": [1.0, float("nan")]}, "train": "broken"}, 2),
    ],
)
def test_training_curves_figure_tolerates_missing_parts(log, empty_panels):
    fig = visualizer.training_curves_figure(log)
    assert len(no_data_annotations(fig)) == empty_panels
    for trace in fig.data:
        assert np.isfinite(trace.y).all() and len(trace.x) == len(trace.y)
    with pytest.raises(ValueError, match="training_log.json"):
        visualizer.training_curves_figure([1, 2])


def test_metrics_table_markdown():
    metrics = {
        "step": 10,
        "scores": {
            "val": {"de-en": {"greedy": {"bleu": 30.123, "chrf": 55.5}, "beam4": {"bleu": 31}}},
            "test_2016_flickr": {"en-de": {"greedy": {"bleu": 20, "chrf": 50}}},
        },
    }
    lines = visualizer.metrics_table_markdown(metrics).splitlines()
    assert lines[0] == "| split | direction | decoding | BLEU | chrF |"
    assert lines[2] == "| val | de-en | greedy | 30.12 | 55.50 |"
    assert lines[3] == "| val | de-en | beam4 | 31.00 | – |"
    assert lines[4] == r"| test\_2016\_flickr | en-de | greedy | 20.00 | 50.00 |"
    assert len(lines) == 5
    for absent in (None, {}, {"scores": {}}, {"scores": "n/a"}):
        note = visualizer.metrics_table_markdown(absent)
        assert "|" not in note and "No evaluation scores" in note
