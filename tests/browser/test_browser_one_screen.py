"""The figure and its controls on one screen, on a 1280x720 projector in dark and a 390x844 phone in light
(browser_helpers.SAMPLE_SCREENS): after Translate the sentence, its translation, the player bar and at least 8 rows
of the whole figure (a row per output token) are in the window, on a phone the figure's title under the bar;
a tour stop's text sits by the figure; every tab and Explain panel is one click away; the keys step after
Enter in the sentence box and after a click on a radio, and the page says so; text typed while the start-up
example is on its way is kept; a figure wider than the phone says it scrolls and keeps its row labels;
"Step N of M" is never cut; the bar is not sticky on the Model tab; Copy link answers.

One page per (viewport, theme), translated once (by Enter in the sentence box) and reused by its checks.
"""

from __future__ import annotations

import re

import pytest

from browser_helpers import (
    GERMAN,
    STEP,
    inside,
    needs_chromium,
    open_panel,
    open_tab,
    rects,
    step_of,
    wait_last_step,
    wait_step,
)

TABS = ["Next token", "Attention", "Compare", "Positional encoding", "Masks", "Model", "Explain"]
pytestmark = [pytest.mark.browser, needs_chromium]


# the rows of the attention figure inside the window: (rows in the window, rows in the figure)
ROWS_IN_WINDOW = """() => {
  const gd = document.querySelector('#attention-plot .js-plotly-plot'), axis = gd._fullLayout.yaxis;
  const rows = gd.data[0].y.length, top = gd.getBoundingClientRect().top + axis._offset, pitch = axis._length / rows;
  let shown = 0;
  for (let i = 0; i < rows; i++) if (top + i * pitch >= 0 && top + (i + 1) * pitch <= window.innerHeight + 0.5) shown++;
  return [shown, rows];
}"""


def test_after_translate_the_sentence_the_translation_the_bar_and_the_figure_share_the_window(screen):
    width, height = screen.size
    after = screen.after
    bar = after["#player-bar"]
    assert inside(bar, height) and inside(after["#step-next"], height), after
    shown, rows = screen.evaluate(ROWS_IN_WINDOW)
    assert rows == screen.rows, (rows, screen.rows)  # the whole translation: a row per output token (or a window)
    if width >= 1000:  # a laptop or projector: nothing scrolled away from the sentence
        for part in ("#source", "#translation", "#attention-kind"):
            assert inside(after[part], height), (part, after)
        assert shown >= min(8, rows), (shown, rows, after)
    else:  # a phone: the bar is slim, says the whole translation, and the figure's title comes up right under it
        figure = after["#attention-plot"]
        assert bar["top"] <= 0.5 and bar["bottom"] - bar["top"] <= 200, bar
        assert bar["bottom"] - 1 <= figure["top"] <= bar["bottom"] + 16, after
        assert after["#step-info .step-output"]["bottom"] <= bar["bottom"], after
        translation = " ".join(screen.locator("#translation textarea").input_value().split())
        assert " ".join(screen.locator("#step-info .step-output").inner_text().split()) == f"“{translation}”"
        assert shown >= min(8, rows), (shown, rows)
    if width >= 1000:
        assert not screen.locator("#step-info .step-output").is_visible()  # the box with it is in the window


def test_every_tab_and_explain_panel_is_one_click_away(screen):
    from playwright.sync_api import expect

    tablist = screen.locator("#views > .tab-wrapper")
    for name in TABS:
        expect(tablist.get_by_role("tab", name=name, exact=True)).to_be_visible()
    assert not screen.locator("#views > .tab-wrapper .overflow-menu:visible").count()
    open_tab(screen, "Explain")
    panels = screen.locator("#explain-panels > .tab-wrapper [role=tab]")
    expect(panels.first).to_be_visible()
    names = [name.strip() for name in panels.all_inner_texts()]
    assert len(names) >= 12, names
    for index in range(panels.count()):
        expect(panels.nth(index)).to_be_visible()
    assert not screen.locator("#explain-panels > .tab-wrapper .overflow-menu:visible").count()
    open_tab(screen, "Attention")


def test_keys_step_after_enter_and_after_a_radio_click_not_while_typing(screen):
    from playwright.sync_api import expect

    open_tab(screen, "Attention")
    screen.click("#step-first")
    wait_step(screen, 1)
    screen.click("#step-next")
    wait_step(screen, 2)
    screen.click("#source textarea")
    screen.keyboard.press("Enter")  # translates again: the last step, the focus still in the box
    total = wait_last_step(screen)
    assert total >= 3
    screen.keyboard.press("Home")
    wait_step(screen, 1)
    screen.keyboard.press("ArrowRight")
    wait_step(screen, 2)
    expect(screen.locator("#source textarea")).to_have_value(GERMAN)  # the caret did not edit the text
    screen.locator("#head label", has_text="head 2").click()
    expect(screen.locator("#head input[value='2']")).to_be_checked()
    screen.keyboard.press("ArrowRight")
    wait_step(screen, 3)
    expect(screen.locator("#head input[value='2']")).to_be_checked()  # the key stepped, the head stayed
    screen.keyboard.press("End")
    wait_step(screen, total)
    screen.keyboard.press("Home")
    wait_step(screen, 1)
    # typing in the sentence box: the arrows move the caret, not the step
    screen.click("#source textarea")
    screen.keyboard.press("End")
    screen.keyboard.type(" x")
    screen.keyboard.press("ArrowLeft")
    expect(screen.locator("#source textarea")).to_have_value(GERMAN + " x")
    assert step_of(screen)[0] == 1
    screen.fill("#source textarea", GERMAN)
    hint = screen.locator("#step-keys")
    if screen.size[0] >= 1000:  # said on the page where there is a keyboard
        expect(hint).to_be_visible()
        expect(hint).to_contain_text("step")
        expect(hint).to_contain_text("Space")
    else:
        expect(hint).to_be_attached()


def test_the_tour_stop_text_sits_by_its_figure(screen):
    width, height = screen.size
    screen.click("#tour-next")  # stop 1: the next-token chart
    screen.wait_for_function("() => document.querySelector('#tour-text').textContent.includes('Stop 1 of')")
    screen.click("#tour-next")  # stop 2: cross-attention
    screen.wait_for_function("() => document.querySelector('#tour-text').textContent.includes('Stop 2 of')")
    screen.wait_for_function("() => document.querySelector('#tour-row').getBoundingClientRect().top < 300")
    screen.wait_for_selector("#attention-plot .js-plotly-plot .heatmaplayer")
    where = rects(screen, "#player-bar", "#tour-text", "#tour-next", "#attention-plot")
    bar = where["#player-bar"]
    for part in ("#tour-text", "#tour-next"):
        assert where[part]["top"] >= bar["bottom"] - 1 and where[part]["top"] < height, (part, where)
    if width >= 1000:  # the figure starts in the same window as the stop's text
        assert where["#attention-plot"]["top"] < height - 150, where
    else:
        assert where["#attention-plot"]["top"] - where["#tour-next"]["bottom"] < 2.5 * height, where
    screen.click("#tour-back")  # leave the tour's view as the other checks expect it (stop 1, then Attention)
    screen.wait_for_function("() => document.querySelector('#tour-text').textContent.includes('Stop 1 of')")
    open_tab(screen, "Attention")


def test_the_bar_is_not_sticky_on_the_model_tab(screen):
    open_tab(screen, "Model")
    screen.wait_for_selector("#model-tab", state="visible")
    position = "() => getComputedStyle(document.querySelector('#player-bar')).position"
    screen.wait_for_function(position + " === 'static'")  # it scrolls away with the page
    open_tab(screen, "Attention")
    screen.wait_for_function(position + " === 'sticky'")


def test_copy_link_answers(screen):
    from playwright.sync_api import expect

    button = screen.locator("#share-copy")
    button.scroll_into_view_if_needed()
    button.click()
    expect(button).to_have_text(re.compile("Copied|Selected"))


def test_rollout_states_its_own_scale_and_heads_forming_names_no_server_path(screen):
    open_tab(screen, "Explain")
    open_panel(screen, "Flow to the source")
    screen.wait_for_selector("#rollout-plot .js-plotly-plot .heatmaplayer")
    bars = screen.evaluate(
        "() => { const layout = document.querySelector('#rollout-plot .js-plotly-plot').layout;"
        " return [layout.coloraxis2.cmax, layout.coloraxis2.colorbar.title.text, layout.coloraxis.cmax]; }"
    )
    assert bars[0] < 1 and bars[1].startswith("rollout share (0–") and bars[2] == 1, bars
    open_panel(screen, "Heads forming")
    text = screen.locator("#film-missing").inner_text()
    assert "film.npz" in text and "/tmp" not in text and "/work" not in text, text
    open_tab(screen, "Attention")


@pytest.mark.parametrize("width", [640, 800, 1000])
def test_step_n_of_m_is_never_cut(browser, server, width):
    page = browser.new_page(viewport={"width": width, "height": 800})
    try:
        page.goto(server)
        page.wait_for_selector("#attention-plot .js-plotly-plot")
        page.fill("#source textarea", GERMAN + " " + GERMAN)  # a long prefix at the last step
        page.click("#translate")
        wait_last_step(page)  # Translate lands on the last step: the longest prefix
        label = page.locator("#step-info .step-line .label")
        assert label.evaluate("(l) => l.scrollWidth <= l.clientWidth + 0.5"), label.inner_text()
        assert STEP.fullmatch(label.inner_text().strip()), label.inner_text()
    finally:
        page.close()


def test_text_typed_before_the_page_has_loaded_is_kept(browser, server):
    """The start-up example arrives with the page (in its config); its load event, held back until the visitor has
    typed, leaves the typed text as it is."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1280, "height": 720})
    held = []
    try:
        released = []

        def hold(route):  # every queued event waits until the text is typed
            if released:
                route.continue_()
            else:
                held.append(route)

        page.route("**/queue/join*", hold)
        page.goto(server)
        page.wait_for_function("() => !!window.attentionExplorer")  # the page script is running
        expect(page.locator("#translation textarea")).not_to_have_value("")  # the example came with the page
        page.locator("#source textarea").fill("Hallo Welt")
        released.append(True)
        for route in held:
            route.continue_()
        assert held, "the page's load event was not requested"
        expect(page.locator("#share-link textarea")).not_to_have_value("")  # the load event has answered...
        expect(page.locator("#source textarea")).to_have_value("Hallo Welt")  # ...and the typed text is kept
    finally:
        page.close()
