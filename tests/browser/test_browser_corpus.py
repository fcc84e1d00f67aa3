"""End to end: the corpus Explain panels of `python3 app.py` in headless Chromium, on a 1280x720 projector in
dark and a 390 px phone in light: "Heads across the corpus" draws its three figures when opened (in the page's
theme, no horizontal page scroll), re-decodes the sentence with the k least important heads off and opens a
head in the Attention tab; "Attribution vs attention" attributes once and then follows the step.

The app runs on a copy of the tiny checkpoint with a corpus file that `scripts/corpus_heads.py` writes here
from a handful of sentences (`corpus_server` of tests/browser/conftest.py).
"""

from __future__ import annotations

import pytest

from browser_helpers import (
    GERMAN,
    SAMPLE_SCREENS,
    needs_chromium,
    open_panel,
    open_tab,
    overflow,
    translate,
    wait_last_step,
    wait_step,
)
from visualizer.theme import DARK_BACKGROUND

CORPUS_PLOTS = ("corpus-roles", "corpus-pruning", "corpus-qk")
pytestmark = [pytest.mark.browser, needs_chromium]


@pytest.fixture(
    params=SAMPLE_SCREENS,
    ids=lambda param: f"{param[0][0]}x{param[0][1]}-{param[1]}",
)
def screen(request, browser, corpus_server):
    """A page at one viewport and theme with GERMAN translated and the Explain tab open."""
    from playwright.sync_api import expect

    (width, height), theme = request.param
    page = browser.new_page(viewport={"width": width, "height": height})
    page.dialogs = []
    page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(corpus_server + f"?__theme={theme}")
    page.wait_for_selector("#attention-plot .js-plotly-plot")  # the start-up example is drawn
    translate(page, GERMAN)
    expect(page.locator("#translation textarea")).not_to_have_value("")
    expect(page.locator("#step-next")).to_be_enabled()
    wait_last_step(page)  # Translate lands on the last step; the panels' checks step from the first
    page.click("#step-first")
    wait_step(page, 1)
    open_tab(page, "Explain")
    page.theme = theme
    yield page
    page.close()


def dark_figure(page, elem_id: str) -> bool:
    """Whether the figure in `elem_id` is drawn on the dark theme's background."""
    color = page.evaluate(f"document.querySelector('#{elem_id} .js-plotly-plot')._fullLayout.paper_bgcolor")
    return color.lower() in (DARK_BACKGROUND.lower(), "rgb(31, 41, 55)")


def test_heads_across_the_corpus(screen):
    from playwright.sync_api import expect

    open_panel(screen, "Heads across the corpus")
    for elem_id in CORPUS_PLOTS:
        screen.wait_for_selector(f"#{elem_id} .js-plotly-plot")
    expect(screen.locator("#corpus-roles .gtitle")).to_contain_text("role and importance")
    expect(screen.locator("#corpus-qk .gtitle")).to_contain_text("(encoder → decoder), layer 1, head 1")
    dark = screen.theme == "dark"
    for elem_id in CORPUS_PLOTS:
        assert dark_figure(screen, elem_id) == dark, elem_id
    assert overflow(screen) <= 0

    screen.locator("#corpus-qk-head").get_by_text("2", exact=True).click()  # a control: the map redraws
    expect(screen.locator("#corpus-qk .gtitle")).to_contain_text("layer 1, head 2")
    screen.click("#corpus-qk-place")  # the user's sentence on this head's map
    expect(screen.locator("#corpus-qk .legendtext", has_text="this sentence").first).to_be_visible()

    screen.click("#corpus-prune-run")
    expect(screen.locator("#corpus-prune-result")).to_contain_text("least important heads off")
    screen.wait_for_selector("#corpus-prune-plot .js-plotly-plot")
    assert overflow(screen) <= 0
    assert screen.dialogs == []


def test_attribution_vs_attention(screen):
    from playwright.sync_api import expect

    open_panel(screen, "Attribution vs attention")
    expect(screen.locator("#attribution-facts")).to_contain_text("Press")
    screen.click("#attribution-run")
    expect(screen.locator("#attribution-facts")).to_contain_text("Step 1")
    screen.wait_for_selector("#attribution-plot .js-plotly-plot")
    assert dark_figure(screen, "attribution-plot") == (screen.theme == "dark")
    screen.click("#step-next")
    expect(screen.locator("#attribution-facts")).to_contain_text("Step 2")
    expect(screen.locator("#attribution-plot .gtitle")).to_contain_text("at step 2")
    assert overflow(screen) <= 0
    assert screen.dialogs == []


@pytest.mark.parametrize("screen", [((1400, 1000), "light")], indirect=True, ids=["1400x1000-light"])
def test_opening_a_head_shows_it_in_the_attention_tab(screen):
    from playwright.sync_api import expect

    open_panel(screen, "Heads across the corpus")
    screen.wait_for_selector("#corpus-roles .js-plotly-plot")
    screen.locator("#corpus-open-head input").click()
    screen.get_by_role("option", name="Masked decoder self-attention · layer 2 · head 3", exact=False).first.click()
    expect(screen.locator("#attention-plot .gtitle")).to_contain_text("layer 2, head 3")
    expect(screen.get_by_role("tab", name="Attention", exact=True)).to_have_attribute("aria-selected", "true")
