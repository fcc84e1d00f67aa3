"""The Explain panels as a newcomer meets them, at 1280x720 (a projector) and a 390x844 phone, light and dark:
a panel opens with its one sentence, the rest of its text folded; after its button's run, the panel's figure is
in the window (below the sticky player bar), and nothing on the page shows an HTML entity or Markdown's
asterisks. The start-up example is the sentence; one page per screen.

Every panel ui/explain/panels.py lists, on the shipped checkpoint (its training film and corpus file give every
panel its result), at 1280x720 and 390x844, both dark: its lead says in plain words what it shows, and its result
(`Panel.reading`, after its button's run where it has one) opens on one plain sentence of what this result means,
the technical names after it (tests/support/helpers.py: JARGON).
"""

from __future__ import annotations

import contextlib
import os

import pytest

from browser_helpers import THEMES, needs_chromium, open_panel, open_tab
from helpers import first_sentence, plain_words
from ui.explain.panels import PANELS

pytestmark = [pytest.mark.browser, needs_chromium]

SCREENS = [((1280, 720), theme) for theme in THEMES] + [((390, 844), theme) for theme in THEMES]
SHOTS = os.environ.get("EXPLAIN_SHOTS")  # a folder: each screen's window after the run is saved there

# where the figure is: its box, and the window's room under the sticky player bar
BOX = """(selector) => {
  const box = document.querySelector(selector).getBoundingClientRect();
  const under = Math.max(document.getElementById('player-bar').getBoundingClientRect().bottom, 0);
  return {top: box.top, bottom: box.bottom, height: box.height, under, window: window.innerHeight};
}"""
# in view: a figure that fits the room under the bar lies wholly inside it; a taller one starts right under the bar
IN_VIEW = """(box) => box.height > 100 && box.top >= box.under - 0.5 &&
  (box.height <= box.window - box.under ? box.bottom <= box.window + 0.5 : box.top <= box.under + 16)"""


def in_view(page, selector: str) -> bool:
    return page.evaluate(f"(selector) => ({IN_VIEW})(({BOX})(selector))", selector)


@contextlib.contextmanager
def explain_page(browser, url: str, size: tuple[int, int], theme: str):
    """A page of `url` at `size` in `theme`, the start-up example translated and drawn, on the Explain tab."""
    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    try:
        page.goto(url + f"?__theme={theme}")
        page.wait_for_selector("#attention-plot .js-plotly-plot .heatmaplayer")  # the start-up example, translated
        page.wait_for_function("() => /Step \\d+ of/.test(document.querySelector('#step-info').textContent)")
        open_tab(page, "Explain")
        yield page
    finally:
        page.close()


@pytest.mark.parametrize("size, theme", SCREENS, ids=[f"{w}x{h}-{theme}" for (w, h), theme in SCREENS])
def test_a_panel_opens_with_its_sentence_and_its_figure_is_in_view_after_run(browser, server, size, theme):
    from playwright.sync_api import TimeoutError, expect

    width, height = size
    with explain_page(browser, server, size, theme) as page:
        open_panel(page, "Paper's figures")  # a first panel: its sentence, its prose folded
        panel = page.locator("#explain-panels [role=tabpanel]:visible")
        expect(panel.locator(".explain-lead").first).to_contain_text("Paper's figures: runs the sentences")
        expect(panel.get_by_text("More about this")).to_be_visible()
        expect(panel.get_by_text("The paper's appendix shows")).to_be_hidden()
        if SHOTS:
            panel.locator(".explain-lead").first.scroll_into_view_if_needed()
            page.screenshot(path=os.path.join(SHOTS, f"explain-open-{width}x{height}-{theme}.png"))

        open_panel(page, "Attribution vs attention")  # a second: press its button
        expect(page.locator("#explain-panels .explain-lead:visible").first).to_contain_text("Attribution vs attention:")
        page.click("#attribution-run")  # Playwright scrolls the button into view; the result lands below it
        page.wait_for_selector("#attribution-plot .js-plotly-plot .main-svg")
        with contextlib.suppress(TimeoutError):  # the script scrolls once the figure has settled; else the box says why
            page.wait_for_function(
                f"(selector) => ({IN_VIEW})(({BOX})(selector))", arg="#attribution-plot", timeout=60_000
            )
        box = page.evaluate(BOX, "#attribution-plot")
        assert in_view(page, "#attribution-plot"), box
        expect(page.locator("#attribution-facts")).to_contain_text("Step ")
        if SHOTS:
            page.screenshot(path=os.path.join(SHOTS, f"explain-run-{width}x{height}-{theme}.png"))

        text = page.evaluate("document.body.innerText")
        for raw in ("&#x", "&lt;", "&gt;", "**"):
            assert raw not in text, (raw, text[max(text.find(raw) - 80, 0) : text.find(raw) + 80])


# the text a panel's result shows: the content of its Markdown or HTML (not the progress note beside it)
SHOWN = """(id) => { const content = document.querySelector(`#${id} .prose`);
  return content ? content.innerText.trim() : ''; }"""
# a panel's first checkbox, ticked where none is (a run that needs a choice: the heads to switch off)
TICK_ONE = """() => { const boxes = Array.from(document.querySelectorAll(
    '#explain-panels [role=tabpanel]:not([hidden]) input[type=checkbox]')).filter((box) => box.offsetParent);
  if (boxes.length && !boxes.some((box) => box.checked)) boxes[0].click(); }"""
DARK_SCREENS = [((1280, 720), "dark"), ((390, 844), "dark")]


@pytest.mark.parametrize("size, theme", DARK_SCREENS, ids=[f"{w}x{h}-{theme}" for (w, h), theme in DARK_SCREENS])
def test_every_panel_opens_on_a_plain_sentence_and_its_result_on_what_it_means(browser, shipped_server, size, theme):
    with explain_page(browser, shipped_server, size, theme) as page:
        read = []
        for panel in PANELS:
            open_panel(page, panel.title)
            lead = page.locator("#explain-panels [role=tabpanel]:visible .explain-lead").first.inner_text().strip()
            said = lead.removeprefix(f"{panel.title}: ")
            assert said != lead and first_sentence(said) == said and plain_words(said), (panel.title, lead)
            if not panel.reading:
                continue  # its figure says it alone
            before = page.evaluate(SHOWN, panel.reading)
            if panel.run:
                page.evaluate(TICK_ONE)
                page.click(f"#{panel.run}")
                page.wait_for_function(
                    f"(before) => {{ const now = ({SHOWN})('{panel.reading}'); return now && now !== before; }}",
                    arg=before,
                    timeout=180_000,
                )
            else:
                page.wait_for_function(f"() => !!({SHOWN})('{panel.reading}')")
            opening = first_sentence(page.evaluate(SHOWN, panel.reading))
            assert plain_words(opening) and opening[0].isupper() and len(opening) > 40, (panel.title, opening)
            read.append(panel.title)
        assert len(read) == sum(bool(panel.reading) for panel in PANELS)
