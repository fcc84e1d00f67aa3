"""The lines view in headless Chromium at 1280x720 and 390x844, light and dark: choosing "lines" draws one
layer's heads as lines, keeping one token's lines leaves only lines from that token, and the page never
scrolls sideways. Screenshots go to the folder named by LINES_SHOTS, when set."""

from __future__ import annotations

import os

import pytest
from browser_helpers import GERMAN, needs_chromium, overflow, translate

pytestmark = [pytest.mark.browser, needs_chromium]

SCREENS = [((1280, 720), "light"), ((390, 844), "light"), ((1280, 720), "dark"), ((390, 844), "dark")]

LINE_ENDS = """() => {
  const plot = document.querySelector('#attention-plot .js-plotly-plot');
  const lines = plot._fullData.filter((s) => s.mode === 'lines' && s.x.length > 1);
  const ys = new Set();
  for (const s of lines) for (let i = 0; i < s.y.length; i += 4) ys.add(Math.round(s.y[i]));  // heads fanned out
  return {series: lines.length, queries: [...ys]};
}"""


@pytest.mark.parametrize("size, theme", SCREENS, ids=[f"{w}x{h}-{t}" for (w, h), t in SCREENS])
def test_lines_draw_and_a_token_keeps_only_its_lines(browser, server, size, theme):
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    page.goto(server + f"?__theme={theme}")
    page.wait_for_selector("#attention-plot .js-plotly-plot", timeout=120_000)  # the start-up example (a busy CPU)
    translate(page, GERMAN)
    page.wait_for_function("() => document.querySelector('#tokens').textContent.includes('Fahrrad')")
    page.locator("#attention-kind").get_by_text("Encoder self-attention").click()
    page.locator("#attention-view").get_by_text("lines", exact=True).click()
    expect(page.locator("#attention-plot .gtitle")).to_contain_text("Encoder self-attention, layer")
    page.locator("#head").get_by_text("all heads").click()
    expect(page.locator("#attention-plot .gtitle")).to_contain_text("every head")
    drawn = page.evaluate(LINE_ENDS)
    assert drawn["series"] > 0 and len(drawn["queries"]) > 1
    page.locator("#lines-token input").click()
    page.get_by_role("option", name="query #2 ", exact=False).first.click()
    page.wait_for_function(
        "() => document.querySelector('#attention-plot .js-plotly-plot')._fullData"
        ".some((s) => s.mode === 'markers+text' && (s.name || '').startsWith('head '))"
    )
    assert page.evaluate(LINE_ENDS)["queries"] == [2]  # every line starts at the selected query
    assert overflow(page) == 0
    if os.environ.get("LINES_SHOTS"):
        page.locator("#attention-plot").scroll_into_view_if_needed()
        page.screenshot(path=f"{os.environ['LINES_SHOTS']}/lines-{size[0]}x{size[1]}-{theme}.png", full_page=True)
    page.close()
