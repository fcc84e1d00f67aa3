"""The first screen is the figure: on load, before any click or scroll, at 1280x720 (a projector), 1400x1000
and a 390x844 phone, light and dark, the window shows the sentence box, Translate, the step player and a drawn
attention figure of the start-up example; a shared link opens with its view there too. And on that page: the
step slider's track lies inside its block, the keys step after a click on a tab, the step line keeps the
current token in view, the page's text shows no raw entity or Markdown asterisks and is drawn in one face (a
full bold file), and on a wide screen no text of the page or of the figure's labels across, titles and colour bar
is under 14 px (projector type).

One page per (viewport, theme), loaded once and reused by its checks (in the order below).
"""

from __future__ import annotations

import pytest

from browser_helpers import (
    VIEWPORTS,
    THEMES,
    figures_settled,
    needs_chromium,
    overflow,
    rects,
    show_tab,
    step_of,
    wait_step,
)

pytestmark = [pytest.mark.browser, needs_chromium]

PHONE_FIGURE_PX = 150  # a phone shows at least this much of the figure on load
WIDE_FIGURE_SHARE = 0.55  # a larger screen: more than half of the figure, or of 60% of the window for a taller one

VISIBLE = """(selector) => {
  const element = document.querySelector(selector);
  if (!element) return null;
  const box = element.getBoundingClientRect();
  return {top: box.top, bottom: box.bottom, height: box.height, left: box.left, right: box.right,
          visible: Math.max(0, Math.min(box.bottom, window.innerHeight) - Math.max(box.top, 0))};
}"""


@pytest.fixture(
    scope="module",
    params=[(size, theme) for size in VIEWPORTS for theme in THEMES],
    ids=lambda param: f"{param[0][0]}x{param[0][1]}-{param[1]}",
)
def loaded(request, browser, server):
    """The bare URL at one viewport and theme, the start-up example drawn; nothing clicked or scrolled."""
    (width, height), theme = request.param
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(server + f"?__theme={theme}")
    page.wait_for_selector("#attention-plot .js-plotly-plot .heatmaplayer")
    page.wait_for_function("() => /Step \\d+ of/.test(document.querySelector('#step-info').textContent)")
    page.wait_for_function("() => !!document.querySelector('#share-link textarea')?.value")  # loaded
    page.wait_for_function("() => document.body.dataset.figuresDrawing === '0'")  # no figure mid-draw (figures.js)
    page.size, page.theme = (width, height), theme
    yield page
    page.close()


def visible(page, selector: str) -> dict:
    box = page.evaluate(VISIBLE, selector)
    assert box is not None, selector
    return box


# visible text under 14 px: the page's, and the figures' except their row labels, notes and cell text (sized by the
# figure to its rows and cells) and Plotly's hover and toolbar
SMALL_TEXT = """() => {
  const small = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const element = node.parentElement;
    if (!node.textContent.trim() || !element) continue;
    if (element.closest('.ytick, .annotation, .textpoint, .hoverlayer, .modebar, script, style')) continue;
    const box = element.getBoundingClientRect();
    if (!box.width || !box.height) continue;
    const size = parseFloat(getComputedStyle(element).fontSize);
    if (size < 13.9) small.push([node.textContent.trim().slice(0, 30), size, (element.closest('[id]') || {}).id]);
  }
  return small;
}"""


def test_on_load_the_window_shows_the_form_the_player_and_the_figure(loaded):
    width, height = loaded.size
    assert loaded.evaluate("window.scrollY") == 0
    for control in ("#source textarea", "#translate", "#step-next", "#step-info"):
        box = visible(loaded, control)
        assert box["top"] >= 0 and box["bottom"] <= height, (control, box)
    figure = visible(loaded, "#attention-plot .js-plotly-plot .main-svg")
    if width < 640:
        assert figure["visible"] >= PHONE_FIGURE_PX, figure
        # the cells take most of the phone's width: the colour bar lies under the keys (visualizer.heatmap); its
        # gradient measured (the bar's group also holds an invisible background that Plotly may size far larger)
        plot = loaded.evaluate(
            "() => { const g = document.querySelector('#attention-plot .js-plotly-plot'); "
            "return {cells: g._fullLayout._size.w, box: g.clientWidth, bar: g.querySelector('.colorbar .cbfills')"
            ".getBoundingClientRect().top - g.querySelector('.nsewdrag').getBoundingClientRect().bottom}; }"
        )
        assert plot["cells"] >= 0.45 * plot["box"] and plot["bar"] > 0, plot
    else:
        assert figure["visible"] >= WIDE_FIGURE_SHARE * min(figure["height"], 0.6 * height), figure
    # what the first screen leaves out sits below the figure: the tokens, the download and the share link
    for later in ("#tokens", "#download-trace", "#share-link"):
        assert visible(loaded, later)["top"] >= figure["top"], later


def test_before_a_tour_the_tour_is_one_button_out_of_the_figures_way(loaded):
    """Before a tour starts its row shows "Start the tour" and no Back; on a wide screen (>= 1024 px) that button
    sits at the right end of the tab bar, clear of the tabs, so the figure starts a row higher; on a phone the
    direction choice fills the form's width (no strip of the form's background beside it)."""
    start, back = visible(loaded, "#tour-next"), loaded.locator("#tour-back")
    assert not back.is_visible()
    assert loaded.locator("#tour-next").inner_text().startswith("Start the tour")
    tab_list = visible(loaded, "#views [role=tablist]")
    last_tab = loaded.evaluate(
        "() => Math.max(...Array.from(document.querySelectorAll('#views [role=tablist] [role=tab]'))"
        ".map((tab) => tab.getBoundingClientRect().right))"
    )
    if loaded.size[0] >= 1024:
        assert start["top"] < tab_list["bottom"] and start["bottom"] > tab_list["top"], (start, tab_list)
        assert start["left"] > last_tab, (start, last_tab)
    else:
        assert start["bottom"] <= tab_list["top"], (start, tab_list)
    if loaded.size[0] < 640:
        direction, form = visible(loaded, "#direction"), visible(loaded, "#input-row .form")
        assert abs(direction["right"] - form["right"]) <= 2, (direction, form)


def test_projector_type_on_a_wide_screen(loaded):
    if loaded.size[0] < 640:
        pytest.skip("a phone keeps Gradio's sizes")
    small = loaded.evaluate(SMALL_TEXT)
    assert small == [], small[:12]
    ticks = loaded.evaluate(
        "() => Array.from(document.querySelectorAll('#attention-plot .xtick text, #attention-plot .cbaxis text'))"
        ".map((t) => parseFloat(getComputedStyle(t).fontSize))"
    )
    assert ticks and min(ticks) >= 14, ticks


# the families of the page's visible text (outside figures and monospace token chips) and the faces they loaded
FACES = """() => { const families = new Set();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const element = node.parentElement;
    if (!node.textContent.trim() || !element || element.closest('svg, script, style, code, kbd, .tok')) continue;
    if (!element.getBoundingClientRect().width) continue;
    const style = getComputedStyle(element);
    if (!/mono/i.test(style.fontFamily)) families.add(style.fontFamily.split(',')[0].replace(/["']/g, '').trim());
  }
  const faces = Array.from(document.fonts).filter((face) => face.status === 'loaded')
    .map((face) => [face.family.replace(/["']/g, ''), face.weight]);
  return {families: Array.from(families), faces};
}"""


def test_the_page_draws_its_text_in_one_face(loaded):
    """Regular and bold text (headings, buttons, labels) in the page's own family, whose bold face is Gradio's full
    Bold file: the theme's semibold file holds a handful of glyphs, and a button drawn with it mixed two faces."""
    found = loaded.evaluate(FACES)
    assert found["families"] == ["Explorer Sans"], found
    weights = {weight for family, weight in found["faces"] if family == "Explorer Sans"}
    assert {"400", "500 900"} <= weights, found["faces"]


# the drawn text of the open tab's figures under 14 px, but a heatmap's text in its cells (sized to its cells)
FIGURE_SMALL_TEXT = """() => Array.from(document.querySelectorAll('#views .js-plotly-plot text'))
  .filter((t) => t.textContent.trim() && t.getBoundingClientRect().width && t.closest('.js-plotly-plot').offsetParent)
  .filter((t) => !t.closest('.hoverlayer, .modebar, .heatmaplayer'))
  .map((t) => [t.textContent.trim().slice(0, 20), parseFloat(getComputedStyle(t).fontSize)])
  .filter(([, size]) => size < 13.9)"""


@pytest.mark.parametrize("tab", ["Next token", "Positional encoding", "Masks", "Model"])
def test_projector_type_in_every_tabs_figures(loaded, tab):
    """On a wide screen every text of a tab's figures is 14 px or more: ticks down and across, titles, colour
    bars, legends, notes and bar values (the figures draw smaller type; the page lifts it)."""
    if loaded.size[0] < 640:
        pytest.skip("a phone keeps the figures' sizes")
    show_tab(loaded, tab)
    figures_settled(loaded)  # Plotly draws after the figure's data lands: every draw done
    small = loaded.evaluate(FIGURE_SMALL_TEXT)
    show_tab(loaded, "Attention")
    assert small == [], small[:12]


def test_the_step_slider_has_its_track_inside_its_block(loaded):
    track = visible(loaded, "#step input[type=range]")
    block = visible(loaded, "#step")
    assert track["right"] - track["left"] >= 60, track
    assert block["left"] - 0.5 <= track["left"] and track["right"] <= block["right"] + 0.5, (track, block)


QUERY_IN_VIEW = """() => {
  const strip = document.querySelector('#step-info .step-prefix');
  const token = strip && strip.querySelector('.tok.query');
  if (!token) return false;
  const a = strip.getBoundingClientRect(), b = token.getBoundingClientRect();
  return b.left >= a.left - 1 && b.right <= a.right + 1 && b.right <= window.innerWidth;
}"""


def test_the_step_line_keeps_the_current_token_in_view(loaded):
    """At the first steps, the last and a step back from it, the highlighted query token lies inside the prefix
    strip's visible box (the strip scrolls to it)."""
    loaded.click("#step-first")
    wait_step(loaded, 1)
    total = step_of(loaded)[1]
    for key, step in (("ArrowRight", 2), ("ArrowRight", 3), ("End", total), ("ArrowLeft", total - 1)):
        loaded.keyboard.press(key)
        wait_step(loaded, min(max(step, 1), total))
        assert loaded.wait_for_function(QUERY_IN_VIEW)


def test_keys_step_after_a_click_on_a_tab(loaded):
    tabs = loaded.locator("#views > .tab-wrapper")
    loaded.click("#step-first")
    wait_step(loaded, 1)
    tabs.get_by_role("tab", name="Next token", exact=True).click()
    loaded.keyboard.press("ArrowRight")
    wait_step(loaded, 2)
    tabs.get_by_role("tab", name="Attention", exact=True).click()
    loaded.keyboard.press("ArrowRight")
    wait_step(loaded, 3)
    loaded.keyboard.press("ArrowLeft")
    wait_step(loaded, 2)


def test_the_page_text_has_no_raw_entities_or_markdown_asterisks(loaded):
    text = loaded.evaluate("document.body.innerText")
    for raw in ("&#x", "&lt;", "&gt;", "&amp;", "**"):
        assert raw not in text, raw


FIGURE_FIT = """(id) => { const block = document.querySelector('#' + id);
  const svg = block && block.querySelector('.js-plotly-plot .main-svg');
  if (!svg) return null;
  return {figure: svg.getBoundingClientRect().width, box: block.clientWidth,
          scrolls: block.scrollWidth > block.clientWidth + 2};
}"""


@pytest.mark.parametrize(
    "tab, elem_id", [("Attention", "attention-plot"), ("Positional encoding", "pe-plot"), ("Masks", "mask-plot")]
)
def test_each_figure_fits_its_box_without_sideways_scroll(loaded, tab, elem_id):
    """The figure of each view (one head's heatmap on the Attention tab) is no wider than its box, nothing in the
    box or the page scrolls sideways; a narrow box (the phone) draws the positional encoding's and the masks'
    panels stacked."""
    show_tab(loaded, tab)
    loaded.wait_for_function("(id) => !!document.querySelector('#' + id + ' .js-plotly-plot .main-svg')", arg=elem_id)
    fit = loaded.evaluate(FIGURE_FIT, elem_id)
    assert fit["figure"] <= fit["box"] + 1 and not fit["scrolls"], fit
    assert overflow(loaded) == 0
    if elem_id in ("pe-plot", "mask-plot"):  # panels side by side on a wide screen, one above the other on a phone
        domains = loaded.evaluate(
            "(id) => { const l = document.querySelector('#' + id + ' .js-plotly-plot').layout;"
            " return [l.xaxis.domain, l.xaxis2.domain, l.xaxis3.domain]; }",
            elem_id,
        )
        stacked = all(domain[1] - domain[0] > 0.6 for domain in domains)  # side by side: each under half
        assert stacked == (loaded.size[0] < 640), domains
    show_tab(loaded, "Attention")


def test_a_shared_link_opens_with_its_view_on_the_first_screen(browser, server):
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    try:
        page.goto(server + "?text=Zwei+Hunde+spielen+im+Schnee.&dir=de-en&step=2&tab=masks")
        page.wait_for_selector("#mask-plot .js-plotly-plot .main-svg")
        page.wait_for_function("() => /Step 2 of/.test(document.querySelector('#step-info').textContent)")
        figure = visible(page, "#mask-plot .js-plotly-plot .main-svg")
        assert figure["visible"] >= 200, figure
        assert rects(page, "#step-next")["#step-next"]["bottom"] <= 720
    finally:
        page.close()
