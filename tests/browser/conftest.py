"""The browser lane's fixtures: pages (on the run's one headless Chromium, tests/conftest.py `browser`) on the served apps of tests/conftest.py
(one app per checkpoint per run: `server`, `corpus_server`, `copy_server`, `shipped_server`), and the screens a
module's checks share. Tests open their own pages, so their sessions never cross (each page is a Gradio session
with its own gr.State).
"""

from __future__ import annotations

import pytest

from visualizer.heatmap import WINDOW_HALF

from browser_helpers import GERMAN, SAMPLE_SCREENS, rects, shown_view, to_empty_page, wait_last_step


@pytest.fixture
def page(browser, server):
    """A 1400x1000 page on the app, emptied (browser_helpers.to_empty_page); any alert() lands in page.dialogs."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.dialogs = []  # any alert() would land here
    page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(server)
    to_empty_page(page)
    yield page
    page.close()


@pytest.fixture(
    scope="module",
    params=SAMPLE_SCREENS,
    ids=lambda param: f"{param[0][0]}x{param[0][1]}-{param[1]}",
)
def screen(request, browser, server):
    """A page at one viewport and theme, on the Attention tab, GERMAN translated by Enter in the sentence box;
    `page.after` holds where things were right after the translation, `page.total` its steps (one page per module
    and screen)."""
    from playwright.sync_api import expect

    (width, height), theme = request.param
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(server + f"?__theme={theme}")
    page.wait_for_selector("#attention-plot .js-plotly-plot")  # the start-up example, on the Attention tab
    expect(page.locator("#translation textarea")).not_to_have_value("")
    page.fill("#source textarea", GERMAN)
    page.press("#source textarea", "Enter")
    expect(page.locator("#source textarea")).to_have_value(GERMAN)
    page.wait_for_function(
        "(text) => document.querySelector('#translation textarea').value !== '' && "
        "document.querySelector('#tokens').textContent.includes('Fahrrad')",
        arg=GERMAN,
    )
    page.total = wait_last_step(page)  # the whole translation: a row per output token
    shown_view(page)
    page.rows = min(page.total, 2 * WINDOW_HALF + 1)  # a row per output token (a long output: a window of them)
    page.wait_for_function(  # the figure of the new trace: its rows
        "(n) => { const gd = document.querySelector('#attention-plot .js-plotly-plot');"
        " return gd && gd.data && gd.data[0].y.length === n; }",
        arg=page.rows,
    )
    page.after = rects(
        page,
        "#source",
        "#translation",
        "#player-bar",
        "#step-next",
        "#attention-kind",
        "#layer",
        "#head",
        "#attention-plot",
        "#attention-plot .js-plotly-plot .main-svg",
        "#step-info .step-output",
    )
    page.size, page.theme = (width, height), theme
    yield page
    page.close()
