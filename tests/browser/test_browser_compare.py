"""The Compare tab in headless Chromium at 1280x720 and 390x844, light and dark: the blog post's pair opens with
one click and shows both sentences, each with its figure (side by side on a wide screen, stacked on a phone);
the token picked shows the ranked heads; choosing a ranked head draws that head in both figures; the page never
scrolls sideways. Screenshots go to the folder named by COMPARE_SHOTS, when set."""

from __future__ import annotations

import html
import os
import re

import pytest
from browser_helpers import figures_settled, needs_chromium, open_tab, overflow, rects, show_tab

from ui.text import BLOG_PAIR

pytestmark = [pytest.mark.browser, needs_chromium]

SCREENS = [((1280, 720), "light"), ((390, 844), "light"), ((1280, 720), "dark"), ((390, 844), "dark")]
TITLES = """() => [1, 2].map((n) => document.querySelector(`#compare-plot-${n} .gtitle`)?.textContent || '')"""
# the player bar's step and both captions' steps ("Step 57 of 96", "step 57 of 96 · ...") all the same
AGREED_STEP = """() => { const step = (selector, pattern) => pattern.exec(document.querySelector(selector)?.textContent || '')?.[1];
  const shown = [step('#step-info', /Step (\\d+) of/), step('#compare-caption-1 .facts', /step (\\d+) of/),
                 step('#compare-caption-2 .facts', /step (\\d+) of/)];
  return !!shown[0] && shown.every((value) => value === shown[0]); }"""


@pytest.mark.parametrize("size, theme", SCREENS, ids=[f"{w}x{h}-{t}" for (w, h), t in SCREENS])
def test_the_blog_pair_compares_and_a_ranked_head_draws_in_both(browser, server, size, theme):
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    page.goto(server + f"?__theme={theme}")
    page.wait_for_selector("#attention-plot .js-plotly-plot", timeout=120_000)  # the start-up example (a busy CPU)
    open_tab(page, "Compare")
    page.click("#compare-example")
    expect(page.locator("#source textarea")).to_have_value(BLOG_PAIR[0])
    ranked = page.locator("#compare-ranking label")
    expect(ranked.first).to_contain_text("1. ")
    kind, layer, head = re.search(
        r"\d+\. (encoder self|cross) · layer (\d+) · head (\d+)", ranked.first.inner_text()
    ).groups()
    for n, sentence in ((1, BLOG_PAIR[0]), (2, BLOG_PAIR[1])):  # the pair opens on the top-ranked head
        expect(page.locator(f"#compare-caption-{n}")).to_contain_text(sentence)
        expect(page.locator(f"#compare-plot-{n} .gtitle")).to_contain_text(f"layer {layer}, head {head}")
    expect(page.locator("#compare-second textarea")).to_have_value(BLOG_PAIR[1])
    # the step shown agrees everywhere: the player bar and both captions, once the player bar has taken the view's
    # step (for a moment it may show the new trace at the step it was on; a page that never agrees times out here)
    page.wait_for_function(AGREED_STEP)
    step, total = re.search(r"Step (\d+) of (\d+)", page.locator("#step-info").inner_text()).groups()
    for n in (1, 2):
        expect(page.locator(f"#compare-caption-{n} .facts")).to_contain_text(f"step {step} of ")
    expect(page.locator("#compare-message")).to_contain_text("The head whose weights differ most between the sentences")
    page.wait_for_function("(n) => Number(document.body.dataset.shownView || 0) >= n", arg=1)  # placed
    figure = rects(page, "#compare-plot-1")["#compare-plot-1"]
    assert figure["top"] < size[1] - 200, figure  # above the fold: the first figure starts in the window
    assert page.locator("#compare-looks tr[data-head]").count() > ranked.count() > 1
    token = page.locator("#compare-token input").input_value()
    expect(page.locator("#compare-message")).to_contain_text(f"“{token.replace('▁', '')}” becomes")

    boxes = rects(page, "#compare-plot-1", "#compare-plot-2")
    side_by_side = abs(boxes["#compare-plot-1"]["top"] - boxes["#compare-plot-2"]["top"]) < 1
    assert side_by_side == (size[0] >= 1000), boxes  # stacked on a phone

    label = ranked.nth(1).inner_text()  # the second head of the ranking: not what is drawn now
    kind, layer, head = re.search(r"\d+\. (encoder self|cross) · layer (\d+) · head (\d+)", label).groups()
    ranked.nth(1).click()
    name = {"encoder self": "Encoder self-attention", "cross": "Cross-attention"}[kind]
    for n in (1, 2):
        expect(page.locator(f"#compare-plot-{n} .gtitle")).to_contain_text(f"layer {layer}, head {head}")
    titles = page.evaluate(TITLES)
    assert all(html.unescape(title).startswith(name) for title in titles), titles
    assert overflow(page) == 0
    if os.environ.get("COMPARE_SHOTS"):
        page.locator("#compare-pair").scroll_into_view_if_needed()
        page.screenshot(path=f"{os.environ['COMPARE_SHOTS']}/compare-{size[0]}x{size[1]}-{theme}.png", full_page=True)
    page.close()


def test_figures_hidden_with_their_tab_are_not_redrawn_into_no_width(browser, shipped_server):
    """On a phone, the Compare tab's figures drawn, then hidden when the visitor goes back to Attention: the page
    redraws nothing into a box of no width (Plotly throws "Something went wrong with axis scaling" there)."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 390, "height": 844})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(shipped_server + "?__theme=dark")
    page.wait_for_selector("#attention-plot .js-plotly-plot")
    page.fill("#source textarea", "Eine Frau liest ein Buch im Park.")
    page.click("#translate")
    expect(page.locator("#translation textarea")).not_to_have_value(re.compile("bicycle"))
    figures_settled(page)  # the new sentence's figures drawn
    show_tab(page, "Compare")
    figures_settled(page)
    page.locator("#compare-example").click()
    expect(page.locator("#compare-back")).to_be_visible()
    page.wait_for_selector("#compare-plot-2 .js-plotly-plot")
    figures_settled(page)  # both of the pair's figures drawn in their boxes
    page.locator("#compare-back").click()
    expect(page.locator("#compare-back")).to_be_hidden()
    show_tab(page, "Attention")  # the Compare tab, and its figures' boxes, hidden: no width
    figures_settled(page)
    page.locator("#direction").get_by_text("English → German").click()
    expect(page.locator("#direction").get_by_label("English → German")).to_be_checked()
    figures_settled(page)  # the boxes' new sizes seen by the page's ResizeObservers, and what they redrew drawn
    assert errors == []
    page.close()
