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
from ui.explain import lens

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


def settled_layer(lens, step: int, chosen: str) -> int | None:
    """1-based: the first layer from which every layer's top token is `chosen` (None: the last layer's is not)."""
    firsts = [layer[0] for layer in lens.tokens[step]]
    return next((index + 1 for index in range(len(firsts)) if all(top == chosen for top in firsts[index:])), None)


def test_the_lens_opens_on_the_layer_where_the_decoder_settles_on_its_word(checkpoint):
    trace = translate(checkpoint.model, checkpoint.tokenizer, SENTENCES[1], "de-en", max_new_tokens=6)
    read = logit_lens(checkpoint.model, checkpoint.tokenizer, trace)
    n_layers = checkpoint.config.n_decoder_layers
    layers = [settled_layer(read, step, trace.output_tokens[step]) for step in range(trace.num_steps)]
    assert 1 in layers and any(layer > 1 for layer in layers), layers  # both sentences said
    for step in range(trace.num_steps):
        said, chosen = lens.reading(trace, read, step + 1), trace.output_tokens[step]
        layer = settled_layer(read, step, chosen)
        assert said.startswith(f"At step {step + 1} ") and f"`{chosen}`" in said
        if layer == 1:
            assert f"every one of the {n_layers} decoder layers already puts" in said
        else:
            assert f"from layer {layer} of {n_layers} on" in said and f"`{read.tokens[step][0][0]}`" in said


def test_a_forced_token_is_said_to_be_imposed(checkpoint):
    plain = translate(checkpoint.model, checkpoint.tokenizer, SENTENCES[0], "de-en", max_new_tokens=4)
    other = int(plain.candidate_ids[0, -1])  # the least likely of the first step's candidates, forced there
    trace = translate(
        checkpoint.model, checkpoint.tokenizer, SENTENCES[0], "de-en", max_new_tokens=4, forced_prefix=[other]
    )
    read = logit_lens(checkpoint.model, checkpoint.tokenizer, trace)
    assert read.tokens[0][-1][0] != trace.output_tokens[0]
    assert "was imposed here, not chosen" in lens.reading(trace, read, 1)
