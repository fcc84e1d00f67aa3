"""The Explain tab's "Paper's figures" on a projector, a laptop and a phone, light and dark: the
lines and the heatmap stand one above the other at the panel's full width, and the ~50 subwords of the
paper's sentence are not squeezed into overlapping labels: on a laptop or projector every one is named, on a
phone the figure fits the screen with fewer labels and every column is reachable by hover; the page never
scrolls sideways.

The tiny test tokenizer cannot spell the paper's sentence, so this module runs the app on the shipped
checkpoint (`shipped_server` of tests/browser/conftest.py).
"""

from __future__ import annotations

import pytest

from browser_helpers import SAMPLE_SCREENS, needs_chromium, open_panel, open_tab, overflow

pytestmark = [pytest.mark.browser, needs_chromium]

# each drawn key label of the heatmap: where it meets its tick and its font size. A 45° label is anchored at its
# tick by one end: its end below the rows, its start above them (one head's heatmap draws the keys above the rows,
# visualizer/attention.py), so the labels stand apart as far as those ends do
KEYS = """() => Array.from(document.querySelectorAll('#paper-heatmap .js-plotly-plot .xtick text')).map((t) => {
  const b = t.getBoundingClientRect(), anchor = t.getAttribute('text-anchor');
  return {text: t.textContent, x: anchor === 'start' ? b.left : anchor === 'end' ? b.right : (b.left + b.right) / 2,
  font: parseFloat(getComputedStyle(t).fontSize)}; })"""


@pytest.mark.parametrize("size, theme", SAMPLE_SCREENS, ids=[f"{w}x{h}-{t}" for (w, h), t in SAMPLE_SCREENS])
def test_the_papers_sentence_is_not_squeezed(browser, shipped_server, size, theme):
    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    try:
        page.goto(shipped_server + f"?__theme={theme}")
        page.wait_for_selector("#attention-plot .js-plotly-plot")
        open_tab(page, "Explain")
        open_panel(page, "Paper's figures")
        page.click("#paper-run")
        page.wait_for_selector("#paper-heatmap .js-plotly-plot .xtick text", timeout=120_000)
        page.wait_for_selector("#paper-lines .js-plotly-plot")
        try:  # the figure settles at its final width a few frames after it is drawn (ui/js/figures.js)
            page.wait_for_function(
                f"() => {{ const keys = ({KEYS})().sort((a, b) => a.x - b.x); return keys.length "
                "> 1 && keys.slice(1).every((key, i) => key.x - keys[i].x >= 1.4 * keys[i].font - 1); }",
                timeout=10_000,
            )
        except Exception:  # noqa: BLE001  the assertions below say what is squeezed
            pass
        keys = sorted(page.evaluate(KEYS), key=lambda key: key["x"])
        columns = page.evaluate("() => document.querySelector('#paper-heatmap .js-plotly-plot').data[0].x.length")
        assert columns >= 40, columns  # the paper's sentence: about 50 subwords, each a column with its hover
        assert len(keys) >= (40 if size[0] >= 1280 else 10), keys  # every one named where the screen is wide
        for left, right in zip(keys, keys[1:]):  # 45° labels stand apart by at least their own height
            assert right["x"] - left["x"] >= 1.4 * left["font"] - 1, (left, right)
        assert min(key["font"] for key in keys) >= 10, keys
        boxes = page.evaluate("""() => ['#paper-lines', '#paper-heatmap'].map((id) => {
          const b = document.querySelector(id).getBoundingClientRect(); return [b.top, b.bottom, b.width]; })""")
        (lines_top, lines_bottom, lines_width), (heatmap_top, _, heatmap_width) = boxes
        assert heatmap_top >= lines_bottom - 1 and abs(lines_width - heatmap_width) <= 1, boxes  # stacked
        panel = page.evaluate("() => document.querySelector('#explain-panels').getBoundingClientRect().width")
        assert heatmap_width >= 0.9 * panel - 40, (heatmap_width, panel)  # the panel's full width
        assert overflow(page) <= 1
    finally:
        page.close()
