"""Explain panel "KV cache" (ui/explain/cache.py): the recorded rows grow with the step and equal an independent
recording, and a recording kept for another translation is not shown."""

from __future__ import annotations


import numpy as np
import pytest

from model.analysis.kv_cache import record_trace_cache
from helpers import array, figure_json, translated_trace
from serving import Runner
from serving import jobs
from ui.explain import cache as cache_panel
from ui.explain.panel import kept_for, sentence_matches
from visualizer import cache as cache_figures
from visualizer.theme import ACCENT_COLOR


def test_cache_view_rows_grow_with_the_step(checkpoint, trace):
    recording = jobs.record_cache(Runner(checkpoint), trace)
    independent = record_trace_cache(checkpoint.model, trace)
    for step in (1, 3):
        value, facts = cache_panel.cache_views(trace, recording, step, 2, 3)
        data = figure_json(value)["data"]
        self_keys, self_values, self_read, cross_keys = (array(data[i]["z" if i != 2 else "x"]) for i in range(4))
        assert self_keys.shape[0] == step  # rows = step index + 1
        np.testing.assert_allclose(self_keys, independent.self_keys[1, 2, :step, :16], atol=1e-6)
        np.testing.assert_allclose(self_values, independent.self_values[1, 2, :step, :16], atol=1e-6)
        np.testing.assert_allclose(self_read, independent.self_read[1, 2, step - 1, :step], atol=1e-6)
        np.testing.assert_allclose(cross_keys, independent.cross_keys[1, 2, :, :16], atol=1e-6)
        # the step's read equals the trace's own decoder self-attention row (cached == uncached)
        np.testing.assert_allclose(self_read, trace.decoder_self_attention[1, 2, step - 1, :step], atol=1e-5)
        assert data[2]["marker"]["color"][-1] == ACCENT_COLOR  # the row this step wrote
        assert f"holds {step} row" in facts and "reused at every step" in facts


def test_a_kept_cache_of_another_translation_is_not_shown(checkpoint, trace):
    other = translated_trace(checkpoint, "Zwei Hunde spielen im Schnee.", "de-en")
    kept = kept_for(trace, recording=jobs.record_cache(Runner(checkpoint), trace))
    assert sentence_matches(trace, kept) and not sentence_matches(other, kept) and not sentence_matches(trace, None)
    with pytest.raises(ValueError, match="cached rows"):
        cache_figures.cache_figure(
            np.zeros((3, 4)),
            np.zeros((3, 4)),
            np.zeros(2),
            np.zeros((5, 4)),
            np.zeros((5, 4)),
            np.zeros(5),
            ["a"] * 3,
            ["b"] * 5,
        )
