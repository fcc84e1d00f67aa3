"""End to end: five Explain panels of `python3 app.py` on the tiny checkpoint, in headless Chromium: flow to the source and step changes follow the step, the KV cache records once and then follows
the step, the paper's figures say why the tiny tokenizer cannot run them, and the missing film is explained.
Reuses the server and browser fixtures of tests/conftest.py.
"""

from __future__ import annotations

import pytest

from browser_helpers import GERMAN, needs_chromium, open_panel, translate, wait_last_step


@pytest.mark.browser
@needs_chromium
def test_rollout_changes_cache_paper_and_film_panels(page):
    from playwright.sync_api import expect

    translate(page, GERMAN)
    page.wait_for_selector("#candidates-plot .js-plotly-plot")
    wait_last_step(page)  # Translate shows the whole translation; step from the first
    page.click("#step-first")
    expect(page.locator("#step input[type=number]")).to_have_value("1")
    page.click("#step-next")
    expect(page.locator("#step input[type=number]")).to_have_value("2")
    page.get_by_role("tab", name="Explain").click()

    open_panel(page, "Heads forming")
    expect(page.locator("#film-missing")).to_contain_text("no training film")
    expect(page.locator("#film-missing")).to_contain_text("--film on")

    open_panel(page, "Flow to the source")
    expect(page.locator("#rollout-plot .gtitle")).to_contain_text("step 2 outlined")
    page.click("#step-next")
    expect(page.locator("#rollout-plot .gtitle")).to_contain_text("step 3 outlined")

    open_panel(page, "KV cache")
    expect(page.locator("#cache-facts")).to_contain_text("Record the cache")
    page.click("#cache-run")
    expect(page.locator("#cache-facts")).to_contain_text("holds 3 rows")
    page.click("#step-prev")
    expect(page.locator("#cache-facts")).to_contain_text("holds 2 rows")
    expect(page.locator("#cache-plot .gtitle")).to_contain_text("Step 2")

    open_panel(page, "Step changes")
    expect(page.locator("#changes-rows .gtitle")).to_contain_text("Step 2")
    expect(page.locator("#changes-summary .token-row")).to_have_count(4)

    open_panel(page, "Paper's figures")
    page.click("#paper-run")
    expect(page.get_by_text("cannot be searched with this model").first).to_be_visible()
    assert page.dialogs == []
