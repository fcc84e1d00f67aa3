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
