"""What the browser tests share besides their fixtures (those are in conftest.py): Chromium, the sentence they
type, and the few moves a visitor makes (type and translate, open an Explain panel, read the page's overflow).
"""

from __future__ import annotations

import pytest

from benchmarks.browser_speed import CHROMIUM, CHROMIUM_ARGS  # noqa: F401  (one Chromium set-up for all)
from scripts.screenshots import open_tab  # noqa: F401  (clicks a top-level tab as a visitor does)

GERMAN = "Ein Mann fährt mit dem Fahrrad die Straße entlang."
XSS = "<img src=x onerror=alert(1)>"
START_TIMEOUT_S = 120  # importing torch and gradio on a busy 2-core machine is slow
needs_chromium = pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is not installed")


def to_empty_page(page) -> None:
    """The page opens on a translated example (issue 14); a refused input (too long) clears it, so these tests
    start on an empty page with the "Next token" tab open, as they did before the first view existed."""
    from playwright.sync_api import expect

    page.wait_for_selector("#attention-plot .js-plotly-plot")  # the first view has been drawn
    expect(page.locator("#translation textarea")).not_to_have_value("")
    page.fill("#source textarea", "x" * 5001)
    page.click("#translate")
    expect(page.locator("#step-info")).to_contain_text("Translate a sentence")
    page.get_by_role("tab", name="Next token").click()


def translate(page, text: str) -> None:
    page.fill("#source textarea", text)
    page.click("#translate")


def detokenize(tokens: list[str]) -> str:
    """Subwords as displayed ("▁on", "<0x3C>") -> text; only ASCII byte tokens are needed here."""
    text = "".join(chr(int(t[3:5], 16)) if t.startswith("<0x") and len(t) == 6 else t for t in tokens)
    return text.replace("\u2581", " ").strip()


def open_panel(page, name: str) -> None:
    """Click an Explain panel's tab (the tab bar wraps on every screen: no "More tabs" menu, issue 23);
    Playwright waits until the tab is visible."""
    page.locator("#explain-panels").get_by_role("tab", name=name, exact=True).first.click()


def overflow(page) -> int:
    """How far the page is wider than the window (0 = no horizontal page scroll)."""
    return page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
