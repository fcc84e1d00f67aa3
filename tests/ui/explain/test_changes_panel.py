"""Explain panel "Step changes" (ui/explain/changes.py): the new and the previous rows, and the candidates that
entered and left."""

from __future__ import annotations


import numpy as np
import pytest

from model.analysis.step_changes import step_change
from helpers import array, figure_json
from ui.explain import changes as changes_panel
from visualizer import changes as change_figures
from visualizer.theme import ACCENT_COLOR, GRID_COLOR, PRIMARY_COLOR


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
