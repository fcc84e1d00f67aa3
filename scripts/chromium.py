"""Headless Chromium as the browser tests, the screenshots and the browser benchmark drive it: Debian's
browser (Playwright downloads none), its flags, and the visitor's move between the page's top-level tabs.
"""

from __future__ import annotations

from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    # several pages open at once (two visitors in one test): none is throttled as a background tab
    "--disable-background-timer-throttling",
    "--disable-renderer-backgrounding",
    "--disable-backgrounding-occluded-windows",
]


def launch(playwright):
    """Headless Chromium from a started `sync_playwright()` (close it when done)."""
    return playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)


def open_tab(page, name: str) -> None:
    """Click a top-level tab; on a narrow screen Gradio moves some into its "More tabs" menu."""
    tab = page.locator("#views [role=tablist]").get_by_role("tab", name=name)
    if tab.count() == 0:
        page.locator("#views > .tab-wrapper .overflow-menu > button").click()
        tab = page.locator("#views .overflow-dropdown").get_by_role("button", name=name)
    tab.first.click()
