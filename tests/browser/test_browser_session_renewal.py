"""A tab whose session the server dropped, in Chromium: the app served in this process keeping one session, a second
visitor's page drops the first's; the first tab's next action (opening a tab) says the session was renewed and
shows its own sentence, and its "Download as a lesson" is its own. Waits on the page's state (the share link, the
notice, the save button), never on the clock.
"""

from __future__ import annotations

import pytest
from browser_helpers import needs_chromium, show_tab
from playwright.sync_api import expect

from ui import build_demo, server

pytestmark = [pytest.mark.browser, needs_chromium]

OWN = "Der Hund schläft."
LINK_HAS_OWN = "() => document.querySelector('#share-link textarea').value.includes('Der+Hund')"
LINK_SHOWN = "() => !!document.querySelector('#share-link textarea')?.value"  # the page's load has answered


@pytest.fixture(scope="module")
def one_session_url(tiny_checkpoint):
    """The app on the tiny checkpoint, served here with room for one session's state."""
    demo = build_demo(tiny_checkpoint)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(server, "STATE_SESSIONS", 1)
        server.launch(demo, host="127.0.0.1", prevent_thread_lock=True)
    yield demo.local_url
    loopback = getattr(demo.mcp_server_obj, "_client_instance", None)  # Gradio's client for queued tool calls
    if loopback is not None:
        loopback.close()
    demo.close()


def test_a_dropped_tab_keeps_its_own_sentence_and_lesson(browser, one_session_url):
    assert browser  # opened before the server's first page
    first = browser.new_page(viewport={"width": 1280, "height": 720})
    try:
        first.goto(one_session_url)
        first.wait_for_function(LINK_SHOWN)
        first.fill("#source textarea", OWN)
        first.click("#translate")
        first.wait_for_function(LINK_HAS_OWN)
        translation = first.input_value("#translation textarea")
        second = browser.new_page()
        second.goto(one_session_url)  # its load takes the one session the server keeps
        second.wait_for_function(LINK_SHOWN)
        second.close()
        show_tab(first, "Positional encoding")
        expect(first.locator("#notice")).to_contain_text("translated again")
        first.wait_for_function(LINK_HAS_OWN)
        assert first.input_value("#translation textarea") == translation
        first.click("#lesson-make")
        expect(first.locator("#lesson-save")).to_be_visible()
        with first.expect_download() as saved:
            first.click("#lesson-save")
        assert saved.value.suggested_filename.startswith("lesson-Der-Hund"), saved.value.suggested_filename
    finally:
        first.close()
