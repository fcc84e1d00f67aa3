"""Explain panel "Logit lens" (ui/explain/lens.py) on the page: the figure is the lens read for the trace on screen
(model/analysis/logit_lens.py, computed here independently), read once per translation through the page's runner
when the Explain tab opens, and kept while the step moves; another translation is read anew."""

from __future__ import annotations

import numpy as np
import pytest
from explain_page import ExplainPage
from helpers import array, figure_json

from model import load_checkpoint
from model.analysis.logit_lens import logit_lens
from model.decoding.greedy import translate
from serving import jobs

SENTENCES = ("Ein Mann fährt Fahrrad.", "Zwei Hunde spielen im Schnee.")


@pytest.fixture(scope="module")
def demo(tiny_checkpoint):
    from ui.app import build_demo

    return build_demo(tiny_checkpoint)


@pytest.fixture(scope="module")
def checkpoint(tiny_checkpoint):
    return load_checkpoint(tiny_checkpoint)


@pytest.fixture
def reads(monkeypatch) -> list:
    """The traces the lens job was called for, in order."""
    called, function = [], jobs.logit_lens.function

    def counted(checkpoint, trace):
        called.append(trace)
        return function(checkpoint, trace)

    monkeypatch.setattr(jobs.logit_lens, "function", counted)
    return called


def drawn_lens(page: ExplainPage) -> tuple[np.ndarray, list[str]]:
    """(the cells' probabilities (L, k), the row labels) of the lens figure on screen."""
    figure = figure_json(page.shown("lens-plot"))
    return array(figure["data"][0]["z"]), figure["layout"]["yaxis"]["ticktext"]


def test_the_lens_on_screen_is_the_traces_read_once_per_translation(demo, checkpoint, reads):
    first, second = (translate(checkpoint.model, checkpoint.tokenizer, s, "de-en", max_new_tokens=6) for s in SENTENCES)
    page = ExplainPage(demo, first)
    page.draw()
    expected = logit_lens(checkpoint.model, checkpoint.tokenizer, first)
    for step in (1, 4, 2):
        page.set({page.step: step})
        cells, rows = drawn_lens(page)
        np.testing.assert_allclose(cells, expected.probs[step - 1], atol=1e-6, err_msg=f"step {step}")
        assert len(rows) == checkpoint.config.n_decoder_layers
    assert reads == [first]  # one read for the translation, kept while the step moves

    page.set({page.trace_state: second, page.step: 1})
    cells, _ = drawn_lens(page)
    np.testing.assert_allclose(cells, logit_lens(checkpoint.model, checkpoint.tokenizer, second).probs[0], atol=1e-6)
    assert reads == [first, second]
    assert not np.allclose(cells, expected.probs[0])  # the two sentences' lenses differ: a stale one would show


def test_no_lens_is_read_until_the_explain_tab_opens(demo, checkpoint, reads):
    trace = translate(checkpoint.model, checkpoint.tokenizer, SENTENCES[0], "de-en", max_new_tokens=6)
    page = ExplainPage(demo, trace)
    page.values[page.tab] = "attention"
    page.draw()
    assert reads == []
