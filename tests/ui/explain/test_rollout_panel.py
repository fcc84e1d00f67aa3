"""Explain panel "Flow to the source" (ui/explain/rollout.py): the view shows the rollout and the raw
cross-attention it claims."""

from __future__ import annotations


import numpy as np

from model.analysis.rollout import trace_source_flow
from helpers import array, figure_json
from ui.explain import rollout


def test_rollout_view_shows_the_flow_and_the_raw_cross_attention(trace):
    value = figure_json(rollout.rollout_view(trace, 3))
    flow = trace_source_flow(trace)
    left, right = (array(series["z"]) for series in value["data"])
    np.testing.assert_allclose(left, flow.source_distribution, atol=1e-6)
    np.testing.assert_allclose(right, trace.cross_attention[-1].mean(0), atol=1e-6)
    np.testing.assert_allclose(left.sum(-1), 1.0, atol=1e-5)
    outlined = {round(shape["y0"] + 0.5) for shape in value["layout"]["shapes"]}
    assert outlined == {2}  # step 3, 0-based row 2, in both panels
    assert "width" not in value["layout"] and value["layout"]["height"] > 0  # width follows the page
