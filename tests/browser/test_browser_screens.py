"""Every screen: the player bar beside the figures, page-wide step keys, phones without a
horizontal page scroll, figures in the page's theme, and step controls that wait for a trace.

One app process for the run (tests/conftest.py's `server` and `browser` fixtures); one page per
screen of browser_helpers.SAMPLE_SCREENS, translated once and reused by the checks of that screen.
"""

from __future__ import annotations

import pytest

from browser_helpers import GERMAN, SAMPLE_SCREENS, needs_chromium, open_tab, overflow, show_tab
from visualizer.theme import DARK_BACKGROUND, DARK_COLORS, TEXT_COLOR

TABS = ["Next token", "Attention", "Compare", "Positional encoding", "Masks", "Model", "Explain"]
pytestmark = [pytest.mark.browser, needs_chromium]


def rgb(color: str) -> str:
    """'#1f2937', 'white' or 'rgb(31, 41, 55)' -> 'rgb(31, 41, 55)' (Plotly keeps colours as given)."""
    if color.startswith("rgb"):
        return color
    value = {"white": "ffffff"}.get(color, color.lstrip("#"))
    return "rgb(%d, %d, %d)" % tuple(int(value[i : i + 2], 16) for i in (0, 2, 4))


@pytest.fixture(
    scope="module",
    params=SAMPLE_SCREENS,
    ids=lambda param: f"{param[0][0]}x{param[0][1]}-{param[1]}",
)
def screen(request, browser, server):
    """A page at one viewport and theme, checked before and after translating GERMAN (module-scoped)."""
    from playwright.sync_api import expect

    (width, height), theme = request.param
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(server + f"?__theme={theme}")
    # the page opens on a translated example; a link with no sentence opens it with none, so the controls must
    # be disabled with no trace on the page
    page.wait_for_selector("#attention-plot .js-plotly-plot")
    page.goto(server + f"?text=&tab=attention&__theme={theme}")
    expect(page.locator("#step-info")).to_contain_text("Translate a sentence")
    expect(page.locator("#translation textarea")).to_have_value("")
    expect(page.locator("#step-next")).to_be_disabled()
    before = {
        elem_id: page.locator(f"#{elem_id}").is_disabled()
        for elem_id in ("step-first", "step-prev", "step-next", "step-last", "play")
    }
    before["step"] = page.locator("#step input[type=range]").is_disabled()
    open_tab(page, "Next token")
    page.fill("#source textarea", GERMAN)
    page.click("#translate")
    page.wait_for_selector("#candidates-plot .js-plotly-plot")
    expect(page.locator("#step-next")).to_be_enabled()
    page.before = before
    page.theme = theme
    yield page
    page.close()


def test_step_controls_wait_for_a_trace(screen):
    assert all(screen.before.values()), screen.before  # disabled before the first translation
    for elem_id in ("step-first", "step-prev", "step-next", "step-last", "play"):
        assert screen.locator(f"#{elem_id}").is_enabled()


def test_no_horizontal_page_overflow_on_any_tab(screen):
    for name in TABS:
        show_tab(screen, name)
        assert overflow(screen) <= 0, name


def test_player_bar_and_plot_in_view_after_a_step(screen):
    from playwright.sync_api import expect

    open_tab(screen, "Attention")
    plot = screen.locator("#attention-plot .js-plotly-plot")
    plot.wait_for()
    # the visitor scrolls the heatmap to the top of the window (scroll-margin keeps it clear of the bar)
    screen.evaluate("document.getElementById('attention-plot').scrollIntoView({block: 'start'})")
    step = screen.locator("#step input[type=number]")
    screen.click("#step-first")  # Translate left the last step on screen: step on from the first
    expect(step).to_have_value("1")
    screen.evaluate("document.getElementById('attention-plot').scrollIntoView({block: 'start'})")
    before = int(step.input_value())
    screen.click("#step-next")
    expect(step).to_have_value(str(before + 1))
    screen.wait_for_selector("#attention-plot .js-plotly-plot")
    height = screen.viewport_size["height"]
    bar = screen.locator("#player-bar").bounding_box()
    figure = screen.locator("#attention-plot").bounding_box()
    assert bar["y"] >= -1 and bar["y"] + bar["height"] <= height  # the sticky bar is on screen
    assert figure["y"] >= bar["y"] + bar["height"] - 2, (bar, figure)  # the plot is not under the bar
    assert figure["y"] < height - 100  # and on screen, not below the fold


def test_keys_step_but_not_while_typing(screen):
    from playwright.sync_api import expect

    step = screen.locator("#step input[type=number]")
    screen.click("#step-first")
    expect(step).to_have_value("1")
    screen.evaluate("document.activeElement && document.activeElement.blur()")
    screen.keyboard.press("ArrowRight")
    expect(step).to_have_value("2")
    screen.keyboard.press("End")
    expect(step).not_to_have_value("2")
    last = step.input_value()
    screen.keyboard.press("ArrowLeft")
    expect(step).to_have_value(str(int(last) - 1))
    screen.keyboard.press("Home")
    expect(step).to_have_value("1")
    screen.locator("#source textarea").press("ArrowRight")  # typing: the caret moves, the step does not
    screen.locator("#source textarea").press("End")
    screen.keyboard.press("Shift+ArrowRight")
    # two steps forward from the page: a step taken while typing would have gone to the last step (End), from
    # where no key reaches step 3
    assert int(last) > 3
    screen.evaluate("document.activeElement && document.activeElement.blur()")
    screen.keyboard.press("ArrowRight")
    expect(step).to_have_value("2")
    screen.keyboard.press("ArrowRight")
    expect(step).to_have_value("3")


def test_figures_follow_the_page_theme(screen):
    open_tab(screen, "Attention")
    screen.wait_for_selector("#attention-plot .js-plotly-plot")
    colors = screen.evaluate("""() => { const l = document.querySelector('#attention-plot .js-plotly-plot')._fullLayout;
                                       return [l.paper_bgcolor, l.plot_bgcolor, l.font.color]; }""")
    colors = [rgb(color) for color in colors]
    if screen.theme == "dark":
        assert colors == [rgb(DARK_BACKGROUND), rgb(DARK_BACKGROUND), rgb(DARK_COLORS[TEXT_COLOR])]
    else:
        assert colors == ["rgb(255, 255, 255)", "rgb(255, 255, 255)", rgb(TEXT_COLOR)]
