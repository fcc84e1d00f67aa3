"""In the browser: typed HTML is shown as text and never runs; two users' traces stay apart.

app.py runs on the tiny checkpoint in a subprocess and headless Chromium drives it (fixtures from
test_browser.py). Each payload would set window.__xss or open a dialog if it ever ran.
"""

from __future__ import annotations


import pytest

from browser_helpers import detokenize, needs_chromium, show_tab, to_empty_page, translate, wait_last_step

PAYLOADS = [
    "<script>window.__xss = 1; alert(1)</script>",
    '<img src=x onerror="window.__xss = 1; alert(1)">',
    '"><svg onload="window.__xss = 1"><b>bold</b>',
]
# Places where tokens and the translation are shown: chips, the step panel, the plots' labels.
SHOWN = "#tokens, #step-info, #candidates-plot, #attention-plot, #pipeline-plot, #translation"


@pytest.mark.browser
@needs_chromium
@pytest.mark.parametrize("payload", PAYLOADS)
def test_typed_html_never_runs(page, payload):

    translate(page, payload)
    page.wait_for_selector("#candidates-plot .js-plotly-plot")
    wait_last_step(page)  # the new trace is shown
    chips = page.locator("#tokens .token-row").first.locator(".tok").all_inner_texts()
    assert detokenize(chips[1:-1]) == payload  # shown as the characters typed
    show_tab(page, "Attention")  # tokens become axis labels there
    injected = page.locator(
        ", ".join(f"{area} {tag}" for area in SHOWN.split(", ") for tag in ("script", "img", "svg[onload]", "b"))
    )
    assert injected.count() == 0
    assert page.locator("[onerror], [onload]").count() == 0  # no handler anywhere on the page to run
    assert page.evaluate("window.__xss") is None
    assert page.dialogs == []


@pytest.mark.browser
@needs_chromium
def test_two_users_step_through_their_own_traces(browser, server):
    """Two tabs (two sessions) translate sentences of different lengths; each steps through its own."""
    from playwright.sync_api import expect

    pages = [browser.new_page(viewport={"width": 1400, "height": 1000}) for _ in range(2)]
    sentences = ["Hund.", "Zwei Hunde spielen im Schnee."]  # outputs of different lengths
    steps = []
    try:
        for user, text in zip(pages, sentences):
            user.goto(server)
            to_empty_page(user)
            translate(user, text)
            steps.append(wait_last_step(user))  # Translate lands on the last step
        assert steps[0] != steps[1]  # so a crossed-over trace would show
        for user, text, total in zip(pages, sentences, steps):
            user.click("#step-first")  # drawn on the server from this session's gr.State
            expect(user.locator("#step-info")).to_contain_text(f"Step 1 of {total}")
            chips = user.locator("#tokens .token-row").first.locator(".tok").all_inner_texts()
            assert detokenize(chips[1:-1]) == text
    finally:
        for user in pages:
            user.close()
