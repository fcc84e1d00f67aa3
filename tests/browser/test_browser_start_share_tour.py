"""The first minute in headless Chromium: the bare URL shows a translated example, a shared link
restores its view in a fresh browser context, the tour's stops show their views, the guard-rail notices
appear, and a refused input leaves no stale result. The app runs on the tiny checkpoint (test_browser.py).
"""

from __future__ import annotations

import re
import time

import pytest

from model.text import limits
from browser_helpers import needs_chromium, shown_view
from ui.text import EXAMPLES, example_label

pytestmark = [pytest.mark.browser, needs_chromium]


def open_page(browser, url: str):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.goto(url)
    return context, page


def selected_value(page, elem_id: str) -> str:
    return page.locator(f"#{elem_id} input:checked").first.get_attribute("value")


def test_bare_url_shows_a_translated_example_with_its_plots(browser, server):
    from playwright.sync_api import expect

    started = time.monotonic()
    context, page = open_page(browser, server)
    page.wait_for_selector("#attention-plot .js-plotly-plot")
    page.locator("#pipeline-box").get_by_text("Inside one head").click()  # drawn only while open
    page.wait_for_selector("#pipeline-plot .js-plotly-plot")
    print(f"plots after {time.monotonic() - started:.1f} s")
    expect(page.locator("#source textarea")).to_have_value(EXAMPLES[0][0])
    expect(page.locator("#translation textarea")).not_to_have_value("")
    expect(page.locator("#attention-plot .gtitle")).to_contain_text("Cross-attention")
    expect(page.locator("#share-link textarea")).to_have_value(containing("tab=attention"))
    assert "Type a German sentence" in page.locator("#source textarea").get_attribute("placeholder")
    context.close()


def containing(part: str):
    """A pattern for Playwright's to_have_value: any value with `part` in it."""
    return re.compile(".*" + re.escape(part) + ".*")


def test_shared_link_restores_the_view_in_a_fresh_context(browser, server):
    from playwright.sync_api import expect

    context, page = open_page(browser, server)
    page.wait_for_selector("#attention-plot .js-plotly-plot")
    page.locator("#attention-kind").get_by_text("Encoder self-attention").click()
    page.locator("#layer").get_by_text("2", exact=True).click()
    page.locator("#head").get_by_text("head 3").click()
    page.click("#step-first")
    page.click("#step-next")
    expect(page.locator("#attention-plot .gtitle")).to_contain_text("Encoder self-attention, layer 2, head 3")
    link = page.locator("#share-link textarea")
    expect(link).to_have_value(containing("head=3"))
    expect(link).to_have_value(containing("step=2"))
    url = link.input_value()
    context.close()

    context, page = open_page(browser, url)
    expect(page.locator("#attention-plot .gtitle")).to_contain_text("Encoder self-attention, layer 2, head 3")
    expect(page.locator("#step input[type=number]")).to_have_value("2")
    assert (selected_value(page, "attention-kind"), selected_value(page, "layer"), selected_value(page, "head")) == (
        "encoder",
        "2",
        "3",
    )
    context.close()


def test_the_tour_stops_show_their_views(browser, server):
    from playwright.sync_api import expect

    context, page = open_page(browser, server)
    page.wait_for_selector("#attention-plot .js-plotly-plot")
    expected = [
        ("Next token", "#candidates-plot"),
        ("Attention", "#attention-plot"),
        ("Attention", "#pipeline-plot"),
        ("Masks", "#mask-plot"),
        ("Explain", "#branch-candidate"),
    ]
    for number, (tab, selector) in enumerate(expected, start=1):
        page.click("#tour-next")
        expect(page.locator("#tour-text")).to_contain_text(f"Stop {number} of 5")
        expect(page.get_by_role("tab", name=tab, exact=True)).to_have_attribute("aria-selected", "true")
        expect(page.locator(selector).first).to_be_visible()
    expect(page.get_by_role("tab", name="Branch")).to_have_attribute("aria-selected", "true")
    page.click("#tour-back")
    expect(page.locator("#tour-text")).to_contain_text("Stop 4 of 5")
    context.close()


def test_wrong_language_and_long_input_notices(browser, server):
    from playwright.sync_api import expect

    context, page = open_page(browser, server)
    page.wait_for_selector("#attention-plot .js-plotly-plot")
    page.fill("#source textarea", "A little girl is climbing into a wooden playhouse.")
    page.locator("#source textarea").press("Enter")  # Enter translates
    expect(page.locator("#notice")).to_contain_text("looks like English")
    page.click("#switch-direction")
    expect(page.locator("#direction").get_by_label("English → German")).to_be_checked()
    expect(page.locator("#tokens")).to_contain_text("<2de>")
    expect(page.locator("#notice")).not_to_contain_text("looks like")
    page.fill("#source textarea", "Der Hund läuft schnell über die große grüne Wiese. " * 6)
    page.click("#translate")
    expect(page.locator("#notice")).to_contain_text("99.9 % of the training sentences")
    shown_view(page, 3)  # the page has placed the third translation's view: the menu stays where it is now
    page.locator("#examples input").click()  # an example translates when picked from the menu
    page.get_by_role("option", name=example_label("This is my house.", "en-de"), exact=True).click()
    expect(page.locator("#tokens")).to_contain_text("house")
    expect(page.locator("#notice")).not_to_contain_text("99.9 %")
    expect(page.locator("#translation textarea")).not_to_have_value("")
    context.close()


def test_a_refused_input_loses_nothing_on_screen(browser, server):
    """A too long input gives one notice and leaves the translation, its tokens, the figure and the step as they
    were; the next accepted sentence replaces them."""
    from playwright.sync_api import expect

    context, page = open_page(browser, server)
    page.wait_for_selector("#attention-plot .js-plotly-plot")
    page.wait_for_function("() => !!document.querySelector('#share-link textarea')?.value")
    translation = page.locator("#translation textarea").input_value()
    step = page.locator("#step-info .label").inner_text()
    rows = page.evaluate("() => document.querySelector('#attention-plot .js-plotly-plot').data[0].y.length")
    page.fill("#source textarea", "x" * (limits.MAX_INPUT_CHARS + 1))
    page.click("#translate")
    expect(page.locator("#notice")).to_contain_text("the limit is")
    expect(page.locator("#translation textarea")).to_have_value(translation)
    expect(page.locator("#tokens")).to_contain_text("Source")
    expect(page.locator("#step-info .label")).to_have_text(step)
    assert page.evaluate("() => document.querySelector('#attention-plot .js-plotly-plot').data[0].y.length") == rows
    expect(page.locator("#download-trace")).to_be_enabled()
    page.fill("#source textarea", "Zwei Hunde spielen im Schnee.")
    page.click("#translate")
    expect(page.locator("#attention-plot .js-plotly-plot")).to_have_count(1)
    expect(page.locator("#notice")).not_to_contain_text("the limit is")
    context.close()
