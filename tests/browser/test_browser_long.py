"""A 100-token source in the browser: every view of every tab shows without clipping, on a
projector and a phone, and the page never scrolls sideways.

"Without clipping": each figure's whole width can be seen, because it either fits the box it sits in
or that box scrolls sideways (a wide figure scrolls inside its own box, never the page); its drawn
plot area lies inside the figure; no axis label is below 10 px. One app process for the module
(the `server` of tests/conftest.py); one page per viewport, translated once.
"""

from __future__ import annotations

import pytest

from model.text.limits import MAX_SOURCE_TOKENS
from browser_helpers import needs_chromium, open_tab, overflow, redrawn, show_tab, wait_last_step

# long enough to be cut at MAX_SOURCE_TOKENS subwords by any tokenizer (the tiny test one splits finely)
LONG = " ".join(["Ein Mann mit einem roten Hut fährt mit seinem Fahrrad die lange Straße entlang,"] * 12) + "."
VIEWPORTS = [(1280, 720), (390, 844)]  # a projector and a phone
pytestmark = [pytest.mark.browser, needs_chromium]

# Per visible figure: the drawn figure's width (Plotly's .svg-container, which can be wider than its graph
# div), the width of the nearest box around it that scrolls sideways or clips (or the window's), whether
# that box scrolls and lies on screen, the plot area's right edge, and the smallest tick-label font.
MEASURE = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).filter(g => g.offsetParent !== null
    && g.getBoundingClientRect().width > 0).map(g => {
  const drawn = g.querySelector('.svg-container') || g;
  let box = drawn.parentElement, scrolls = false;
  for (; box && box !== document.body; box = box.parentElement) {
    const style = getComputedStyle(box).overflowX;
    if (style === 'auto' || style === 'scroll') { scrolls = true; break; }
    if (style === 'hidden' || style === 'clip') break;
  }
  const host = box && box !== document.body ? box : document.documentElement;
  const hostRect = host.getBoundingClientRect();
  const l = g._fullLayout, fonts = [];
  for (const key of Object.keys(l)) {
    const axis = l[key];
    if (/^[xy]axis\\d*$/.test(key) && axis.showticklabels && axis.visible !== false) fonts.push(axis.tickfont.size);
  }
  const plotId = (g.closest('[id]') || {}).id;
  return {id: plotId, width: drawn.getBoundingClientRect().width, figure: l.width,
          plotRight: l._size.l + l._size.w, hostWidth: host.clientWidth, hostScrollWidth: host.scrollWidth,
          hostOnScreen: hostRect.left >= -1 && hostRect.right <= window.innerWidth + 1, scrolls, fonts};
})"""


@pytest.fixture(scope="module", params=VIEWPORTS, ids=lambda size: f"{size[0]}x{size[1]}")
def long_page(request, browser, server):
    from playwright.sync_api import expect

    width, height = request.param
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(server)
    page.wait_for_selector("#attention-plot .js-plotly-plot")  # the start-up example has landed
    expect(page.locator("#translation textarea")).not_to_have_value("")
    page.fill("#source textarea", LONG)
    page.click("#translate")
    wait_last_step(page)
    # the cut source: MAX_SOURCE_TOKENS subwords between the language tag and [EOS]
    expect(page.locator("#tokens")).to_contain_text(f"Source ({MAX_SOURCE_TOKENS + 2})")
    expect(page.locator("#notice")).to_contain_text(f"cut to its first {MAX_SOURCE_TOKENS} subword tokens")
    yield page
    page.close()


def check_figures(page, where: str) -> int:
    figures = page.evaluate(MEASURE)
    for figure in figures:
        label = f"{where}: {figure['id']}"
        assert figure["plotRight"] <= figure["figure"] + 1, label  # the plot area is inside the figure
        fits = figure["width"] <= figure["hostWidth"] + 1
        assert fits or (figure["scrolls"] and figure["hostScrollWidth"] >= figure["width"] - 1), (label, figure)
        assert figure["hostOnScreen"], (label, figure)  # the box it fits or scrolls in is not cut off itself
        assert all(size >= 10 for size in figure["fonts"]), (label, figure["fonts"])
    assert overflow(page) <= 0, where
    return len(figures)


@pytest.mark.parametrize("tab", ["Next token", "Attention", "Positional encoding", "Masks"])
def test_every_view_of_a_100_token_source_shows_without_clipping(long_page, tab):
    show_tab(long_page, tab)
    assert check_figures(long_page, tab) >= 1


NOTES = """() => { const plot = document.querySelector('#attention-plot .js-plotly-plot'), box = (e) => {
    const r = e.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
  return {notes: [...plot.querySelectorAll('.annotation')].filter((n) => n.textContent.startsWith('showing')).map(box),
          labels: [...plot.querySelectorAll('.xtick text, .ytick text')].map(box),
          rows: box(plot.querySelector('.nsewdrag'))}; }"""


def apart(a: dict, b: dict) -> bool:
    """Two boxes that do not overlap."""
    return a["right"] <= b["left"] or b["right"] <= a["left"] or a["bottom"] <= b["top"] or b["bottom"] <= a["top"]


def test_the_note_of_the_hidden_rows_and_keys_stands_under_the_rows_clear_of_every_label(long_page):
    """One head's heatmap of a long sentence shows a window and says so ("showing keys a–b of 0–n"): under the rows,
    since its keys' labels stand above them, touching no label."""
    show_tab(long_page, "Attention")
    drawn = long_page.evaluate(NOTES)
    assert len(drawn["notes"]) == 1, drawn["notes"]
    [note] = drawn["notes"]
    assert note["top"] >= drawn["rows"]["bottom"] - 1
    assert all(apart(note, label) for label in drawn["labels"])


def test_attention_variants_of_a_100_token_source(long_page):
    """All heads, the whole sentence ("Show all tokens"), and the opened "inside one head" pipeline."""
    from playwright.sync_api import expect

    open_tab(long_page, "Attention")
    long_page.locator("#attention-kind").get_by_text("Encoder self-attention").click()
    long_page.locator("#pipeline-box > button").first.click()  # open the accordion: the pipeline is drawn
    long_page.wait_for_selector("#pipeline-plot .js-plotly-plot")
    check_figures(long_page, "encoder, one head, pipeline open")
    with redrawn(long_page, "attention-plot"):
        long_page.locator("#attention-window-all input").check()
    check_figures(long_page, "encoder, all tokens")
    long_page.locator("#head").get_by_text("all heads", exact=True).click()
    expect(long_page.locator("#attention-plot .gtitle").first).to_contain_text("every head")
    check_figures(long_page, "encoder, all heads, all tokens")
    long_page.locator("#attention-window-all input").uncheck()
    long_page.locator("#head").get_by_text("head 1", exact=True).click()
