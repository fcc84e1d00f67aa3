"""In the browser: the attention heatmap on the page is the model's own attention.

`python3 app.py` runs on a tiny checkpoint trained to copy (its sentence ends with [EOS]); Chromium
translates, steps to the middle of the sentence, picks cross-attention, layer 2, head 2, and reads
the plotted data and tick labels back from Plotly's graph div. The test process loads the same
checkpoint and runs `model.decoding.greedy.translate` on the same sentence (deterministic): the page's
numbers, rows and columns must be that trace's, for that step, layer and head.
"""

from __future__ import annotations

import html
import re

import numpy as np
import pytest

import provenance_fixtures as ref
from model.checkpoints.checkpoint import load_checkpoint
from model.decoding.greedy import translate
from browser_helpers import needs_chromium, wait_last_step
from helpers import expected_key_labels, expected_query_labels, position


SENTENCE = "Ein Mann fährt Fahrrad."
KIND, LAYER, HEAD = "cross", 2, 2  # 1-based; mirror layer 1 and head 3 hold other numbers

# Plotly keeps arrays as sent: typed-array specs {dtype, bdata, shape} (decoded here by decode_plotly),
# or arrays (typed rows are made plain).
READ_PLOT = """() => {
    const graph = document.querySelector('#attention-plot .js-plotly-plot');
    const series = graph.data[0];
    const plain = a => (a && a.bdata) ? a : Array.from(a, row => (row && row.length !== undefined
                                                                  && typeof row !== 'string') ? Array.from(row) : row);
    return {z: plain(series.z), x: plain(series.x), y: plain(series.y), title: graph.layout.title.text,
            xticks: graph.layout.xaxis.ticktext, yticks: graph.layout.yaxis.ticktext,
            xvals: plain(graph.layout.xaxis.tickvals), yvals: plain(graph.layout.yaxis.tickvals)};
}"""


@pytest.fixture(scope="module")
def greedy_trace(copy_checkpoint_dir):
    """The trace the page must show: `model.decoding.greedy.translate` of SENTENCE here, on the same checkpoint."""
    loaded = load_checkpoint(copy_checkpoint_dir)
    return translate(loaded.model, loaded.tokenizer, SENTENCE, "de-en")


def translated_page(browser, url: str, trace):
    """A 1400x1000 page that has translated SENTENCE and shows `trace`'s translation (close it after)."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(url)
    # the page opens by translating an example: let it land first, or it overwrites ours
    page.wait_for_selector("#attention-plot .js-plotly-plot")
    expect(page.locator("#translation textarea")).not_to_have_value("")
    page.fill("#source textarea", SENTENCE)
    page.click("#translate")
    expect(page.locator("#translation textarea")).to_have_value(trace.translation)
    wait_last_step(page)  # Translate lands on the last step: every output row
    return page


@pytest.mark.browser
@needs_chromium
def test_the_plotted_head_is_the_traces_head_at_a_middle_step(browser, copy_server, greedy_trace):
    from playwright.sync_api import expect

    trace = greedy_trace
    assert trace.stopped_by == "eos" and trace.num_steps >= 5
    step = trace.num_steps // 2  # 0-based, the middle of the sentence

    page = translated_page(browser, copy_server, trace)
    try:
        assert wait_last_step(page) == trace.num_steps  # Translate lands on the last step
        page.click("#step-first")
        expect(page.locator("#step-info")).to_contain_text(f"Step 1 of {trace.num_steps}")
        for number in range(2, step + 2):
            page.click("#step-next")
            expect(page.locator("#step-info")).to_contain_text(f"Step {number} of {trace.num_steps}")
        page.get_by_role("tab", name="Attention").click()
        page.locator("#attention-kind").get_by_text("Cross-attention").click()
        page.locator("#layer").get_by_text(str(LAYER), exact=True).click()
        page.locator("#head").get_by_text(f"head {HEAD}", exact=True).click()
        expect(page.locator("#attention-plot .gtitle")).to_contain_text(f"layer {LAYER}, head {HEAD}")
        page.wait_for_function(
            "n => document.querySelector('#attention-plot .js-plotly-plot').data[0].y.length == n", arg=step + 1
        )
        shown = ref.decode_plotly(page.evaluate(READ_PLOT))
    finally:
        page.close()

    assert "Cross-attention" in shown["title"]
    rows, cols = [position(y)[0] for y in shown["y"]], [position(x)[0] for x in shown["x"]]
    assert rows == list(range(step + 1))
    queries, keys = expected_query_labels(trace, KIND, step), expected_key_labels(trace, KIND, step)
    assert [position(y)[1] for y in shown["y"]] == [queries[i] for i in rows]
    assert [position(x)[1] for x in shown["x"]] == [keys[i] for i in cols]
    # the tick labels on screen: tick at value i names row (column) i
    for values, texts, positions_, labels in (
        (shown["yvals"], shown["yticks"], rows, queries),
        (shown["xvals"], shown["xticks"], cols, keys),
    ):
        assert len(values) == len(texts) == len(positions_)
        for value, text in zip(values, texts):
            assert html.unescape(re.sub(r"<[^>]+>", "", text)) == labels[positions_[int(value)]]
    z = np.asarray(shown["z"], dtype=np.float64).reshape(len(rows), len(cols))
    expected = trace.cross_attention[LAYER - 1, HEAD - 1][np.ix_(rows, cols)]
    np.testing.assert_allclose(z, expected, atol=1e-6)
    for wrong in (trace.cross_attention[0, HEAD - 1], trace.cross_attention[LAYER - 1, 2]):  # the test can tell
        assert not np.allclose(z, wrong[np.ix_(rows, cols)], atol=1e-3)


@pytest.mark.browser
@needs_chromium
def test_opening_a_grid_head_shows_that_heads_weights(browser, copy_server, greedy_trace):
    """The all-heads grid's "Open a head" control (gr.Plot has no click event) sets the Layer and Head
    controls and draws that head: the plotted numbers are the trace's layer 2, head 2 at the last step (where
    Translate lands: every output row)."""
    from playwright.sync_api import expect

    trace = greedy_trace
    page = translated_page(browser, copy_server, trace)
    try:
        page.get_by_role("tab", name="Attention").click()
        page.locator("#attention-kind").get_by_text("Cross-attention").click()
        page.locator("#head").get_by_text("all heads", exact=True).click()
        expect(page.locator("#attention-plot .gtitle").first).to_contain_text("every head")
        page.locator("#grid-open-head input").click()
        page.get_by_role("option", name=f"layer {LAYER} · head {HEAD}", exact=True).click()
        expect(page.locator("#layer input[type=radio]:checked")).to_have_value(str(LAYER))
        expect(page.locator("#head input[type=radio]:checked")).to_have_value(str(HEAD))
        expect(page.locator("#attention-plot .gtitle")).to_contain_text(f"layer {LAYER}, head {HEAD}")
        shown = ref.decode_plotly(page.evaluate(READ_PLOT))
    finally:
        page.close()
    rows, cols = [position(y)[0] for y in shown["y"]], [position(x)[0] for x in shown["x"]]
    assert rows == list(range(trace.num_steps))
    z = np.asarray(shown["z"], dtype=np.float64).reshape(len(rows), len(cols))
    np.testing.assert_allclose(z, trace.cross_attention[LAYER - 1, HEAD - 1][np.ix_(rows, cols)], atol=1e-6)
    assert not np.allclose(z, trace.cross_attention[0, 0][np.ix_(rows, cols)], atol=1e-3)
