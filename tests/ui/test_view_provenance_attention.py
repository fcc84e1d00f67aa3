"""Provenance of the Attention tab's views: one head, the mean of heads, the grid
of every head and inside one head (sections 3.2-3.2.2) show the model's own weights and scores, in the right
kind, layer, head, row and column.

A tiny model trained to copy (its sentence ends with [EOS]; conftest's copy_* fixtures) is saved as a
checkpoint and translated through the app's own Translate path. At a step in the middle of the sentence, for
layer 2 of 2 and head 2 of 4 (so reversed layers or heads show other numbers), each view's Plotly JSON is
parsed and its data compared with the trace slice it claims to show AND with the independent float64
reference forward pass of tests/support/provenance_fixtures.py. Rows and columns are read from the figure's own
category names and tick labels; the tokens expected on them come from helpers.py's `decoder_inputs`,
`expected_query_labels` and `expected_key_labels` only (the one place to change when the label convention
changes). Long sentences show a window of positions: the positions a figure shows are
read from its own "#i" categories, so the expected slice is the one the figure states; the sentence here is
short, so the default window must show every position and state no hidden ones.
"""

from __future__ import annotations

import html
import re

import numpy as np
import pytest
from helpers import (
    VIEW_ATOL,
    VIEW_HEAD,
    VIEW_LAYER,
    axis,
    cells,
    expected_key_labels,
    expected_query_labels,
    figure_of,
    position,
    reference_attention,
)

from model.decoding.trace import ATTENTION_KINDS
from ui import attention


def window_notes(figure: dict) -> list[str]:
    """The corner notes a windowed figure writes ("showing queries a–b of 0–n, keys ...")."""
    return [a["text"] for a in figure["layout"].get("annotations", []) if "showing" in a["text"]]


def shows_everything(figure: dict, rows: list[int], cols: list[int], trace, kind: str, step: int) -> None:
    """The short sentence fits the window: every row and column, in order, and no note of hidden ones."""
    assert rows == list(range(len(expected_query_labels(trace, kind, step))))
    assert cols == list(range(len(expected_key_labels(trace, kind, step))))
    assert not window_notes(figure)


# --------------------------------------------------------------------------- attention tab
@pytest.mark.parametrize("show_all", [False, True], ids=["window", "show-all"])
@pytest.mark.parametrize("kind", list(ATTENTION_KINDS))
def test_one_head_is_the_models_own_weights(copy_trace, copy_reference, copy_step, kind, show_all):
    figure = figure_of(attention.attention_view(copy_trace, copy_step + 1, kind, VIEW_LAYER, str(VIEW_HEAD), show_all))
    (series,) = figure["data"]
    rows, cols = cells(figure, series, copy_trace, kind, copy_step)
    shows_everything(figure, rows, cols, copy_trace, kind, copy_step)
    z = np.asarray(series["z"], dtype=np.float64)
    traced = getattr(copy_trace, ATTENTION_KINDS[kind].weights_field)[VIEW_LAYER - 1, VIEW_HEAD - 1]
    np.testing.assert_array_equal(z, traced[np.ix_(rows, cols)])
    np.testing.assert_allclose(
        z, reference_attention(copy_reference, kind)[VIEW_LAYER - 1, VIEW_HEAD - 1][np.ix_(rows, cols)], atol=VIEW_ATOL
    )
    highlighted = [s for s in figure["layout"].get("shapes", []) if s.get("name") == "highlight"]
    if kind == "encoder":
        assert not highlighted
    else:  # the outlined row is the query of this step
        (outline,) = highlighted
        assert rows[int(round((outline["y0"] + outline["y1"]) / 2))] == copy_step


@pytest.mark.parametrize("kind", list(ATTENTION_KINDS))
def test_mean_of_heads_is_the_mean_of_the_layers_heads(copy_trace, copy_reference, copy_step, kind):
    figure = figure_of(attention.attention_view(copy_trace, copy_step + 1, kind, VIEW_LAYER, "mean"))
    (series,) = figure["data"]
    rows, cols = cells(figure, series, copy_trace, kind, copy_step)
    shows_everything(figure, rows, cols, copy_trace, kind, copy_step)
    expected = reference_attention(copy_reference, kind)[VIEW_LAYER - 1].mean(axis=0)[np.ix_(rows, cols)]
    np.testing.assert_allclose(np.asarray(series["z"], dtype=np.float64), expected, atol=VIEW_ATOL)


def grid_edge_labels(figure: dict) -> tuple[dict[tuple[float, float], int], set[int]]:
    """The all-heads grid's edge labels: {(panel centre x, panel top y): head} from the "head h" annotations above
    the panels, and the layers named by the "layer l" titles of the y axes left of the rows."""
    heads = {
        (round(a["x"], 9), round(a["y"], 9)): int(match.group(1))
        for a in figure["layout"]["annotations"]
        if (match := re.fullmatch(r"head (\d+)", a["text"]))
    }
    layers = set()
    for name, value in figure["layout"].items():
        title = value.get("title", {}).get("text", "") if name.startswith("yaxis") else ""
        if match := re.fullmatch(r"layer (\d+)", title):
            layers.add(int(match.group(1)))
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
def test_every_panel_of_the_all_heads_grid_is_its_titled_head(copy_trace, copy_reference, copy_step, kind):
    """ "All heads" draws the chosen layer's heads: each panel holds the head titled above it."""
    figure = figure_of(attention.attention_view(copy_trace, copy_step + 1, kind, VIEW_LAYER, "all"))
    weights = reference_attention(copy_reference, kind)
    traced = getattr(copy_trace, ATTENTION_KINDS[kind].weights_field)
    n_heads = weights.shape[1]
    assert len(figure["data"]) == n_heads
    heads, layers = grid_edge_labels(figure)
    assert sorted(heads.values()) == list(range(1, n_heads + 1))
    assert layers == {VIEW_LAYER} and f"layer {VIEW_LAYER}" in figure["layout"]["title"]["text"]
    assert not window_notes(figure)  # the short sentence fits the window
    queries, keys = expected_query_labels(copy_trace, kind, copy_step), expected_key_labels(copy_trace, kind, copy_step)
    seen, ticks = set(), {"x": 0, "y": 0}
    for series in figure["data"]:
        x_axis, y_axis = axis(figure, series["xaxis"]), axis(figure, series["yaxis"])
        head = heads[round(sum(x_axis["domain"]) / 2, 9), round(y_axis["domain"][1], 9)]  # the title above it
        assert f"layer {VIEW_LAYER} · head {head}" in series["hovertemplate"]
        rows, cols = [position(y) for y in series["y"]], [position(x) for x in series["x"]]
        assert [token for _, token in rows] == [queries[i] for i, _ in rows]
        assert [token for _, token in cols] == [keys[i] for i, _ in cols]
        ticks["y"] += grid_ticks(y_axis, rows, queries)
        ticks["x"] += grid_ticks(x_axis, cols, keys)
        rows, cols = [p for p, _ in rows], [p for p, _ in cols]
        assert rows == list(range(len(queries))) and cols == list(range(len(keys)))
        z = np.asarray(series["z"], dtype=np.float64)
        np.testing.assert_array_equal(z, traced[VIEW_LAYER - 1, head - 1][np.ix_(rows, cols)])
        np.testing.assert_allclose(
            z,
            weights[VIEW_LAYER - 1, head - 1][np.ix_(rows, cols)],
            atol=VIEW_ATOL,
            err_msg=f"layer {VIEW_LAYER} head {head}",
        )
        seen.add(head)
    assert len(seen) == n_heads
    assert ticks["x"] and ticks["y"]  # the edges name tokens at all


@pytest.mark.parametrize("kind", list(ATTENTION_KINDS))
def test_inside_one_head_scores_mask_and_softmax(copy_trace, copy_reference, copy_step, kind):
    figure = figure_of(attention.pipeline_view(copy_trace, copy_step + 1, kind, VIEW_LAYER, str(VIEW_HEAD)))
    scores_series, masked_series, overlay, softmax_series = figure["data"]
    rows, cols = cells(figure, scores_series, copy_trace, kind, copy_step)
    shows_everything(figure, rows, cols, copy_trace, kind, copy_step)
    attention_ref = getattr(copy_reference, kind)[VIEW_LAYER - 1]
    scores = attention_ref.scores[VIEW_HEAD - 1].numpy()[np.ix_(rows, cols)]
    weights = attention_ref.weights[VIEW_HEAD - 1].numpy()[np.ix_(rows, cols)]
    # independent mask: no padding in one sentence; decoder self-attention is causal
    allowed = np.greater_equal.outer(rows, cols) if kind == "decoder_self" else np.ones((len(rows), len(cols)), bool)
    np.testing.assert_allclose(np.asarray(scores_series["z"], dtype=np.float64), scores, atol=1e-4)
    masked = np.asarray(masked_series["z"], dtype=np.float64)
    np.testing.assert_array_equal(np.isnan(masked), ~allowed)
    np.testing.assert_allclose(masked[allowed], scores[allowed], atol=1e-4)
    np.testing.assert_array_equal(np.isnan(np.asarray(overlay["z"], dtype=np.float64)), allowed)
    np.testing.assert_allclose(np.asarray(softmax_series["z"], dtype=np.float64), weights, atol=VIEW_ATOL)
    for series in (masked_series, overlay, softmax_series):
        assert cells(figure, series, copy_trace, kind, copy_step) == (rows, cols)
