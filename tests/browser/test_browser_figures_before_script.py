"""A figure Plotly draws before the page's script runs is drawn again through it: the first view comes in the
page's config and Plotly is fetched from the start, so on a slow machine the first figure can be drawn before
the page's load event installs ui/js/figures.js. Here that order is forced: the script is held back (its
run-once flag set before the page loads) until the first figure is on screen in Plotly's own form, then run as
the load event runs it. The figure must then be in the page's theme, fitted to its box (projector type and
thinned labels on a wide screen), with the toolbar config it was drawn with.
"""

from __future__ import annotations

import pytest

from browser_helpers import needs_chromium
from ui.page_script import page_script
from visualizer.heatmap import PROJECTOR_FONT
from visualizer.theme import DARK_BACKGROUND

pytestmark = [pytest.mark.browser, needs_chromium]

FIGURE = "#attention-plot .js-plotly-plot"

STATE = """(selector) => {
  const gd = document.querySelector(selector);
  const ticks = Array.from(gd.querySelectorAll('.xtick text')).map((t) => parseFloat(getComputedStyle(t).fontSize));
  return {wrapped: !!gd.__lightFigure, ticks, labels: (gd.__lightFigure || gd).layout.xaxis.ticktext.length,
          paper: gd._fullLayout.paper_bgcolor,
          modebar: gd._context.displayModeBar, filename: (gd._context.toImageButtonOptions || {}).filename};
}"""


def hex_of(rgb: str) -> str:
    """'rgb(31, 41, 55)' as '#1f2937'; any other colour ('#1f2937', 'white') as written, in lower case."""
    if not rgb.startswith("rgb"):
        return rgb.lower()
    return "#" + "".join(f"{int(part):02x}" for part in rgb[rgb.index("(") + 1 : -1].split(",")[:3])


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_a_figure_drawn_before_the_script_is_drawn_again_through_it(browser, server, theme):
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.add_init_script("window.__attentionExplorer = true;")  # the load event's script returns at once
    page.goto(server + f"?__theme={theme}")
    page.wait_for_selector(f"{FIGURE} .heatmaplayer")
    before = page.evaluate(STATE, FIGURE)
    assert not before["wrapped"]
    # the untouched draw: every label, at the figure's own size (the tiny sentence is long: below projector type)
    assert len(before["ticks"]) == before["labels"] and max(before["ticks"]) < PROJECTOR_FONT, before
    page.evaluate(f"() => {{ delete window.__attentionExplorer; ({page_script()})(); }}")
    page.wait_for_function(f"() => !!document.querySelector('{FIGURE}').__lightFigure")
    page.wait_for_function(
        f"() => Array.from(document.querySelectorAll('{FIGURE} .xtick text'))"
        f".every((t) => parseFloat(getComputedStyle(t).fontSize) >= {PROJECTOR_FONT})"
    )
    after = page.evaluate(STATE, FIGURE)
    assert min(after["ticks"]) >= PROJECTOR_FONT and len(after["ticks"]) < after["labels"], after  # thinned
    assert (hex_of(after["paper"]) == DARK_BACKGROUND) == (theme == "dark"), after
    assert (after["modebar"], after["filename"]) == (before["modebar"], before["filename"]), (before, after)
    page.close()
