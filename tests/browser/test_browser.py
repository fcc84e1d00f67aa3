"""End to end: `python3 app.py` on the tiny checkpoint, driven by headless Chromium and by gradio_client.

The server runs in a subprocess on a free 127.0.0.1 port and is always stopped. Browser tests
need Debian's /usr/bin/chromium (Playwright downloads no browser) and are skipped without it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from browser_helpers import GERMAN, XSS, detokenize, needs_chromium, translate, wait_last_step
from ui.stepping import PLAY_SECONDS

ROOT = Path(__file__).resolve().parents[2]


def plot_title(page, elem_id: str) -> str:
    return page.locator(f"#{elem_id} .js-plotly-plot .gtitle").first.text_content()


@pytest.mark.browser
@needs_chromium
def test_translate_step_and_switch_views(page):
    from playwright.sync_api import expect

    translate(page, GERMAN)
    page.wait_for_selector("#candidates-plot .js-plotly-plot")
    expect(page.locator("#translation textarea")).not_to_have_value("")
    expect(page.locator("#tokens")).to_contain_text("Mann")
    step = page.locator("#step input[type=number]")
    total = wait_last_step(page)  # the last step: the whole translation
    expect(step).to_have_value(str(total))
    page.click("#step-first")
    expect(step).to_have_value("1")
    page.click("#step-next")
    expect(step).to_have_value("2")
    page.click("#step-next")
    expect(step).to_have_value("3")
    expect(page.locator("#step-info")).to_contain_text("Step 3 of")
    expect(page.locator("#candidates-plot .gtitle")).to_contain_text("Step 3")
    page.click("#step-prev")
    expect(step).to_have_value("2")
    page.click("#step-first")
    expect(step).to_have_value("1")
    page.click("#step-prev")  # clamps at the first step
    expect(page.locator("#step-info")).to_contain_text("Step 1 of")
    page.click("#step-last")
    expect(step).not_to_have_value("1")

    page.get_by_role("tab", name="Attention").click()
    page.wait_for_selector("#attention-plot .js-plotly-plot")
    expect(page.locator("#pipeline-plot .js-plotly-plot")).to_have_count(0)  # closed: not drawn
    page.locator("#pipeline-box").get_by_text("Inside one head").click()
    page.wait_for_selector("#pipeline-plot .js-plotly-plot")
    page.locator("#attention-kind").get_by_text("Masked decoder self-attention").click()
    expect(page.locator("#attention-plot .gtitle")).to_contain_text("Masked decoder self-attention")
    page.locator("#attention-kind").get_by_text("Cross-attention").click()
    expect(page.locator("#attention-plot .gtitle")).to_contain_text("Cross-attention")
    page.locator("#head").get_by_text("all heads").click()
    expect(page.locator("#attention-plot .gtitle")).to_contain_text("every head")
    expect(page.locator("#pipeline-plot .gtitle")).to_contain_text("head 1 stands in")
    expect(page.locator("#attention-plot .modebar").first).to_be_visible()  # the PNG download toolbar

    for tab, elem_id in (("Positional encoding", "pe-plot"), ("Masks", "mask-plot")):
        page.get_by_role("tab", name=tab).click()
        page.wait_for_selector(f"#{elem_id} .js-plotly-plot")
    page.get_by_role("tab", name="Model").click()
    expect(page.get_by_text("post-LN", exact=False).first).to_be_visible()


@pytest.mark.browser
@needs_chromium
def test_play_advances_and_pauses(page):
    from playwright.sync_api import expect

    translate(page, GERMAN)
    page.wait_for_selector("#candidates-plot .js-plotly-plot")
    step = page.locator("#step input[type=number]")
    page.click("#play")
    expect(page.locator("#play")).to_contain_text("Pause")
    expect(step).not_to_have_value("1", timeout=20_000)
    page.click("#play")
    expect(page.locator("#play")).to_contain_text("Play")
    paused_at = step.input_value()
    # the one timed window of the browser tests (docs/testing.md): a negative check of a timer. While playing, the
    # step moves once per PLAY_SECONDS; paused, it stays put for one and a half play periods (no state to wait on)
    page.wait_for_timeout(1500 * PLAY_SECONDS)
    assert step.input_value() == paused_at


@pytest.mark.browser
@needs_chromium
def test_typed_html_is_shown_not_run(page):
    from playwright.sync_api import expect

    translate(page, XSS)
    page.wait_for_selector("#candidates-plot .js-plotly-plot")
    expect(page.locator("#tokens")).to_contain_text("Source")
    # the source chips, read back as text, spell the typed HTML: it was shown, not parsed
    chips = page.locator("#tokens .token-row").first.locator(".tok").all_inner_texts()
    assert chips[0] == "<2en>" and chips[-1] == "[EOS]"
    assert detokenize(chips[1:-1]) == XSS
    assert page.locator("#tokens img, #step-info img, #candidates-plot img").count() == 0
    assert page.locator("[onerror]").count() == 0  # no element anywhere on the page could run the handler
    assert page.dialogs == []


@pytest.mark.browser
@needs_chromium
def test_empty_input_shows_a_notice(page):
    from playwright.sync_api import expect

    translate(page, "   ")
    expect(page.get_by_text("The text box is empty").first).to_be_visible()
    expect(page.locator("#source textarea")).to_be_visible()  # the page still works


@pytest.mark.slow
def test_translate_endpoint_from_gradio_client(server, tmp_path):
    from gradio_client import Client
    from gradio_client.exceptions import AppError

    client = Client(server, verbose=False, download_files=str(tmp_path), analytics_enabled=False)
    for direction in ("de-en", "German → English"):
        answer = client.predict(GERMAN, direction, api_name="/translate")  # the translation and its notices
        trace = json.loads(client.predict(GERMAN, direction, api_name="/translation_trace"))
        assert trace["translation"] == answer["translation"] and trace["direction"] == "de-en"
        assert isinstance(answer["notices"], list)
        assert trace["source_tokens"][0] == "<2en>"
    with pytest.raises(AppError, match="empty"):
        client.predict("", "en-de", api_name="/translate")


@pytest.mark.browser
@needs_chromium
def test_clicking_an_example_fills_text_and_direction(page):
    from playwright.sync_api import expect

    from ui.text import example_label

    page.locator("#examples input").click()  # the examples menu
    page.get_by_role("option", name=example_label("This is my house.", "en-de"), exact=True).click()
    expect(page.locator("#source textarea")).to_have_value("This is my house.")
    expect(page.locator("#direction").get_by_label("English → German")).to_be_checked()
    page.locator("#examples input").click()
    page.get_by_role("option", name=example_label("Wo wohnst du?", "de-en"), exact=True).click()
    expect(page.locator("#direction").get_by_label("German → English")).to_be_checked()
