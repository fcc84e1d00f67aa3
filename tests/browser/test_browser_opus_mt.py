"""OPUS-MT in headless Chromium, as a visitor reaches it, at 1280x720 and 390x844 in the dark theme: on the own
model's page, pick OPUS-MT in the model menu (#model-choice); its page opens in the same theme; translate, step,
all heads, lines; then the heatmap of one cross-attention head at a step, read back from Plotly's graph div, is
`transformers`' own attention (the peer, eager) for the same sentence and weights (tests/support/marian_hub_folder.py).
The app runs on the tiny checkpoint with the small OPUS-MT folders as its second page (tests/conftest.py
`opus_mt_server`). Screenshots go to the folder named by OPUS_MT_SHOTS, when set.
"""

from __future__ import annotations

import os
import re

import numpy as np
import pytest
import torch

import provenance_fixtures as ref
from browser_helpers import needs_chromium, overflow, wait_last_step, wait_step
from helpers import position
from marian_hub_folder import load_peer, load_peer_tokenizer, peer_greedy

pytestmark = [pytest.mark.browser, needs_chromium]

SCREENS = [((1280, 720), "dark"), ((390, 844), "dark")]
SENTENCE, DIRECTION = "Der Hund läuft über die nasse Straße.", "de-en"
LAYER, HEAD = 2, 3  # 1-based: cross-attention of decoder layer 2, head 3 (of the small folder's 2 x 4)

READ_HEATMAP = """() => {
    const graph = document.querySelector('#attention-plot .js-plotly-plot');
    const series = graph.data[0];
    const plain = a => (a && a.bdata) ? a : Array.from(a, row => (row && row.length !== undefined
                                                                  && typeof row !== 'string') ? Array.from(row) : row);
    return {z: plain(series.z), x: plain(series.x), y: plain(series.y), title: graph.layout.title.text};
}"""
LINES_DRAWN = """() => document.querySelector('#attention-plot .js-plotly-plot')._fullData
    .filter((s) => s.mode === 'lines' && s.x.length > 1).length > 0"""


def shoot(page, name: str) -> None:
    """The attention figure in view, saved as `name` into $OPUS_MT_SHOTS (when set)."""
    if os.environ.get("OPUS_MT_SHOTS"):
        page.locator("#attention-plot").scroll_into_view_if_needed()
        page.screenshot(path=os.path.join(os.environ["OPUS_MT_SHOTS"], name))


@pytest.fixture(scope="module")
def peer_run(opus_mt_folder):
    """What the page must show, from `transformers`: (translation, output tokens, cross-attention (L, h, T, S)) of
    greedy `generate` on SENTENCE with the app's length budget, and the eager forward over that output."""
    folder = opus_mt_folder / f"opus-mt-{DIRECTION}"
    peer, tokenizer = load_peer(folder), load_peer_tokenizer(folder)
    source_ids, generated = peer_greedy(peer, tokenizer, SENTENCE)  # (1, 1 + T): the start token <pad>, the output
    with torch.no_grad():
        out = peer(input_ids=torch.tensor([source_ids]), decoder_input_ids=generated[:, :-1], output_attentions=True)
    cross = torch.stack(out.cross_attentions)[:, 0].numpy()  # (L, h, T, S)
    output = tokenizer.convert_ids_to_tokens(generated[0, 1:].tolist())
    return tokenizer.decode(generated[0], skip_special_tokens=True), output, cross


@pytest.mark.parametrize("size, theme", SCREENS, ids=[f"{w}x{h}-{t}" for (w, h), t in SCREENS])
def test_pick_opus_mt_translate_step_and_see_the_peers_attention(browser, opus_mt_server, peer_run, size, theme):
    from playwright.sync_api import expect

    translation, output_tokens, cross = peer_run
    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    try:
        page.goto(opus_mt_server + f"?__theme={theme}")
        page.wait_for_selector("#attention-plot .js-plotly-plot")  # the own page's first view
        expect(page.locator("#model-choice input")).to_have_value("This project's model")
        page.locator("#model-choice input").click()
        page.get_by_role("option", name="OPUS-MT (Helsinki-NLP)", exact=True).click()
        page.wait_for_url(re.compile(r"/opus-mt(\?|$)"))
        expect(page.locator("body")).to_have_class(re.compile(r"\bdark\b"))  # the same theme on the other page
        expect(page.locator("#model-choice input")).to_have_value("OPUS-MT (Helsinki-NLP)")
        page.wait_for_selector("#attention-plot .js-plotly-plot")  # its first view has landed: ours replaces it
        expect(page.locator("#translation textarea")).not_to_have_value("")

        page.locator("#direction").get_by_text("German → English").click()
        page.fill("#source textarea", SENTENCE)
        page.click("#translate")
        expect(page.locator("#translation textarea")).to_have_value(translation)
        total = wait_last_step(page)
        assert total == len(output_tokens) >= 3
        expect(page.locator("#tokens .tok.special").first).to_have_text("</s>")  # the source's end token, marked

        page.click("#step-first")
        wait_step(page, 1)
        page.click("#step-next")
        wait_step(page, 2)
        expect(page.locator("#step-info")).to_contain_text(f"Step 2 of {total}")

        page.locator("#attention-kind").get_by_text("Cross-attention").click()
        page.locator("#head").get_by_text("all heads", exact=True).click()
        expect(page.locator("#attention-plot .gtitle").first).to_contain_text("every head")
        page.locator("#attention-view").get_by_text("lines", exact=True).click()
        page.wait_for_function(LINES_DRAWN)  # a layer's heads as lines
        assert overflow(page) == 0  # no sideways scroll, the phone included
        shoot(page, f"opus-mt-lines-{size[0]}-{theme}.png")

        page.locator("#attention-view").get_by_text("heatmap", exact=True).click()
        page.locator("#layer").get_by_text(str(LAYER), exact=True).click()
        page.locator("#head").get_by_text(f"head {HEAD}", exact=True).click()
        expect(page.locator("#attention-plot .gtitle")).to_contain_text(f"layer {LAYER}, head {HEAD}")
        page.wait_for_function("() => document.querySelector('#attention-plot .js-plotly-plot').data[0].y.length == 2")
        shown = ref.decode_plotly(page.evaluate(READ_HEATMAP))
        shoot(page, f"opus-mt-head-{size[0]}-{theme}.png")
        assert overflow(page) == 0
    finally:
        page.close()

    assert "Cross-attention" in shown["title"]
    rows, cols = [position(y)[0] for y in shown["y"]], [position(x)[0] for x in shown["x"]]
    assert rows == [0, 1]  # step 2: the queries that chose the first two output tokens
    assert [position(y)[1] for y in shown["y"]] == [
        f"<pad> → {output_tokens[0]}",
        f"{output_tokens[0]} → {output_tokens[1]}",
    ]
    z = np.asarray(shown["z"], dtype=np.float64).reshape(len(rows), len(cols))
    np.testing.assert_allclose(z, cross[LAYER - 1, HEAD - 1][np.ix_(rows, cols)], atol=1e-5)
    for wrong in (cross[0, HEAD - 1], cross[LAYER - 1, 0]):  # another layer or head holds other numbers
        assert not np.allclose(z, wrong[np.ix_(rows, cols)], atol=1e-3)
