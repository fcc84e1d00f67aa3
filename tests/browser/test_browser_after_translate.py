"""After Translate, as a visitor meets it: the player bar's strip shows the current token and its numbers at every
step of a long output; a menu dismissed with Tab, Escape or a click elsewhere leaves its controls as they were and
the server logs no exception; Space plays whatever has the focus; a refused input says so once; the lines view's
text reaches 4.5:1 contrast in both themes (computed from the page's own colours). Every wait is on the page's
state (a step shown, a button's label, a notice), never on a scroll or an animation.
"""

from __future__ import annotations

import pytest
from browser_helpers import GERMAN, needs_chromium, open_tab, shown_view, step_of, wait_last_step, wait_step

pytestmark = [pytest.mark.browser, needs_chromium]

LONG = f"{GERMAN} {GERMAN}"  # the tiny model's output: well over 30 tokens

# the current token inside the strip's visible box; the chosen token and p / entropy never cut
STRIP_SHOWS_THE_STEP = """() => {
  const strip = document.querySelector('#step-info .step-prefix');
  const query = strip && strip.querySelector('.tok.query');
  if (!query) return 'no current token';
  const a = strip.getBoundingClientRect(), b = query.getBoundingClientRect();
  if (b.left < a.left - 1 || b.right > a.right + 1 || b.right > window.innerWidth) return 'current token cut';
  const chosen = document.querySelector('#step-info .tok.chosen').getBoundingClientRect();
  if (chosen.right > window.innerWidth || chosen.width < 4) return 'next token cut';
  const facts = document.querySelector('#step-info .step-facts');
  if (facts.offsetParent !== null && (facts.scrollWidth > facts.clientWidth + 1
      || facts.getBoundingClientRect().right > window.innerWidth)) return 'numbers cut';
  return 'ok';
}"""


def translated(browser, server, size, text: str = LONG, theme: str = "light"):
    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    page.goto(server + f"?__theme={theme}")
    page.wait_for_function("() => !!document.querySelector('#share-link textarea')?.value")  # the page has loaded
    page.fill("#source textarea", text)
    page.click("#translate")
    total = wait_last_step(page)
    shown_view(page)
    return page, total


@pytest.mark.parametrize("size", [(1280, 720), (390, 844)], ids=["1280x720", "390x844"])
def test_the_strip_shows_the_current_token_at_every_step_of_a_long_output(browser, server, size):
    page, total = translated(browser, server, size)
    try:
        assert total >= 30, total
        assert page.evaluate(STRIP_SHOWS_THE_STEP) == "ok"  # the last step, where Translate lands
        page.click("#step-first")
        for step in range(1, 31):
            wait_step(page, step)
            assert page.evaluate(STRIP_SHOWS_THE_STEP) == "ok", step
            page.keyboard.press("ArrowRight")
    finally:
        page.close()


def server_log(tmp_path_factory):
    """The served app's log (tests/conftest.py `served` writes it in a folder named after the fixture)."""
    logs = sorted(tmp_path_factory.getbasetemp().glob("server*/app.log"))
    assert logs, "the app's log was not found"
    return logs[0]


ERROR_BADGES = "() => document.querySelectorAll('.error, [data-testid=\"status-tracker\"].error').length"


def test_menus_dismissed_without_a_choice_leave_no_error(browser, server, tmp_path_factory):
    log = server_log(tmp_path_factory)
    logged = len(log.read_text(errors="replace"))
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(server)
        page.wait_for_function("() => !!document.querySelector('#share-link textarea')?.value")
        open_tab(page, "Attention")
        page.locator("#head label", has_text="all heads").click()
        page.wait_for_selector("#attention-plot .js-plotly-plot .heatmaplayer")
        step = step_of(page)[0]
        for menu in ("#grid-open-head", "#examples"):
            for dismiss in ("Tab", "Escape", "outside"):
                page.locator(f"{menu} input").click()
                page.wait_for_selector("[role=listbox] [role=option]")  # the menu is open
                if dismiss == "outside":
                    page.click("#intro")
                else:
                    page.keyboard.press(dismiss)
                page.wait_for_selector("[role=listbox] [role=option]", state="detached")  # the list has closed
                # a later event has been answered: the step keys still work, so the dismissal was processed
                page.click("#step-first")
                wait_step(page, 1)
                page.click("#step-next")
                wait_step(page, 2)
                assert page.evaluate(ERROR_BADGES) == 0, (menu, dismiss)
        for group in ("#layer", "#head"):  # the radios still answer
            page.locator(f"{group} label").first.click()
        page.locator("#head label", has_text="head 2").click()
        page.wait_for_function("() => document.querySelector('#attention-plot .gtitle').textContent.includes('head 2')")
        assert step >= 1
    finally:
        page.close()
    new = log.read_text(errors="replace")[logged:]
    assert "Traceback" not in new and "Error" not in new, new[-2000:]


def test_space_plays_after_a_click_on_next(browser, server):
    page, total = translated(browser, server, (1280, 720), GERMAN)
    try:
        page.click("#step-first")
        wait_step(page, 1)
        page.click("#step-next")  # the focus stays on the button
        wait_step(page, 2)
        page.keyboard.press(" ")
        page.wait_for_function("() => document.querySelector('#play').textContent.includes('Pause')")
        page.keyboard.press(" ")
        page.wait_for_function("() => document.querySelector('#play').textContent.includes('Play')")
        assert step_of(page)[0] >= 2  # it played from step 2, not stepped back or forward once
    finally:
        page.close()


def test_a_refused_input_says_so_once(browser, server):
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1280, "height": 720})
    try:
        page.goto(server)
        page.wait_for_function("() => !!document.querySelector('#share-link textarea')?.value")
        translation = page.locator("#translation textarea").input_value()
        page.fill("#source textarea", "   ")
        page.click("#translate")
        expect(page.locator("#notice")).to_contain_text("The text box is empty")
        expect(page.locator("#translation textarea")).to_have_value(translation)  # what was on screen stays
        page.click("#step-keys") if page.locator("#step-keys").is_visible() else None  # an event after it
        assert page.evaluate(ERROR_BADGES) == 0  # no red "Error" pill beside the notice
        expect(page.locator(".toast-body")).to_have_count(0)  # and no toast
    finally:
        page.close()


# every visible text of the Attention tab's side column and of its lines figure: (text, contrast ratio) under 4.5
LOW_CONTRAST = """() => {
  const rgb = (value) => (value.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map((c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; })
    .reduce((sum, c, i) => sum + c * [0.2126, 0.7152, 0.0722][i], 0);
  const over = (fg, bg) => { const a = fg.length > 3 ? fg[3] : 1; return [0, 1, 2].map((i) => a * fg[i] + (1 - a) * bg[i]); };
  const ratio = (fg, bg) => { const [x, y] = [lum(over(fg, bg)), lum(bg)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const background = (element) => {
    for (let node = element; node; node = node.parentElement) {
      const color = rgb(getComputedStyle(node).backgroundColor);
      if (color.length === 3 || (color.length > 3 && color[3] > 0.5)) return color.slice(0, 3);
    }
    return [255, 255, 255];
  };
  const low = [];
  const side = document.querySelector('#attention-view').closest('.view-side');
  const walker = document.createTreeWalker(side, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const element = node.parentElement;
    if (!node.textContent.trim() || !element || element.offsetParent === null) continue;
    const r = ratio(rgb(getComputedStyle(element).color), background(element));
    if (r < 4.5) low.push([node.textContent.trim().slice(0, 30), +r.toFixed(2)]);
  }
  const gd = document.querySelector('#attention-plot .js-plotly-plot');
  const paper = rgb(gd._fullLayout.paper_bgcolor);
  gd.querySelectorAll('.main-svg text').forEach((text) => {
    if (!text.textContent.trim() || text.closest('.modebar, .hoverlayer')) return;
    const style = getComputedStyle(text), fill = rgb(style.fill);
    const alpha = (fill.length > 3 ? fill[3] : 1) * Number(style.fillOpacity || 1) * Number(style.opacity || 1);
    const r = ratio([...fill.slice(0, 3), alpha], paper);
    if (r < 4.5) low.push([text.textContent.trim().slice(0, 30), +r.toFixed(2)]);
  });
  return low;
}"""


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_lines_view_reads_at_4_5_to_1(browser, server, theme):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(server + f"?__theme={theme}")
        page.wait_for_function("() => !!document.querySelector('#share-link textarea')?.value")
        open_tab(page, "Attention")
        page.locator("#attention-view label", has_text="lines").click()
        page.wait_for_function(
            "() => document.querySelector('#attention-plot .gtitle')?.textContent.includes('head')"
            " && document.querySelectorAll('#attention-plot .scatterlayer .trace').length > 2"
        )
        page.locator("#lines-token input").click()
        page.get_by_role("option").nth(3).click()  # one token's lines: its weights written beside the keys
        page.wait_for_function("() => [...document.querySelectorAll('#attention-plot .textpoint')].length > 0")
        assert page.evaluate(LOW_CONTRAST) == []
        sizes = page.evaluate(
            "() => [...document.querySelectorAll('#attention-plot .scatterlayer .textpoint text')]"
            ".map((t) => parseFloat(getComputedStyle(t).fontSize))"
        )
        assert sizes and min(sizes) >= 14, sizes  # every token and weight in projector type on a wide screen
    finally:
        page.close()
