"""What the browser tests share besides their fixtures (those are in conftest.py): Chromium, the sentence they
type, and the few moves a visitor makes (type and translate, open an Explain panel, read the page's overflow).
"""

from __future__ import annotations

import re

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


def served(checkpoint, tmp_path_factory, name: str = "server"):
    """Yield the app's URL (`python3 app.py` on `checkpoint`, its log in a fresh temporary folder `name`); the
    server stops after the fixture that yields from this; a server that does not start fails the test."""
    from scripts.app_process import started_app

    log_path = tmp_path_factory.mktemp(name) / "app.log"
    try:
        with started_app(checkpoint, log_path, START_TIMEOUT_S) as (url, _process):
            yield url
    except RuntimeError as error:
        pytest.fail(str(error))


# ---- one page per (viewport, theme), translated once, shared by a module's checks (issue 23) ----

VIEWPORTS = [(1280, 720), (1400, 1000), (390, 844)]
THEMES = ["light", "dark"]

RECTS = """(ids) => Object.fromEntries(ids.map((id) => {
  const element = document.querySelector(id);
  if (!element) return [id, null];
  const box = element.getBoundingClientRect();
  return [id, {top: box.top, bottom: box.bottom, left: box.left, right: box.right, width: box.width}];
}))"""
STEP = re.compile(r"Step (\d+) of (\d+)")


def rects(page, *selectors) -> dict:
    return page.evaluate(RECTS, list(selectors))


def step_of(page) -> tuple[int, int]:
    match = STEP.search(page.locator("#step-info").inner_text())
    assert match, page.locator("#step-info").inner_text()
    return int(match[1]), int(match[2])


def wait_step(page, number: int) -> None:
    page.wait_for_function("(n) => /Step (\\d+) of/.exec(document.querySelector('#step-info').textContent)?.[1] == n",
                           arg=number)


def settled_scroll(page) -> None:
    """The page has scrolled the view up after Translate (the script waits two frames and 30 ms)."""
    page.wait_for_function("() => document.querySelector('#player-bar').getBoundingClientRect().top <= 0.5 "
                           "&& window.scrollY > 100")


@pytest.fixture(scope="module", params=[(size, theme) for size in VIEWPORTS for theme in THEMES],
                ids=lambda param: f"{param[0][0]}x{param[0][1]}-{param[1]}")
def screen(request, browser, server):
    """A page at one viewport and theme, on the Attention tab, GERMAN translated by Enter in the sentence box;
    `page.after` holds where things were right after the translation."""
    from playwright.sync_api import expect

    (width, height), theme = request.param
    page = browser.new_page(viewport={"width": width, "height": height})
    page.set_default_timeout(30_000)
    page.goto(server + f"?__theme={theme}")
    page.wait_for_selector("#attention-plot .js-plotly-plot")  # the start-up example, on the Attention tab
    expect(page.locator("#translation textarea")).not_to_have_value("")
    page.fill("#source textarea", GERMAN)
    page.press("#source textarea", "Enter")
    expect(page.locator("#source textarea")).to_have_value(GERMAN)
    page.wait_for_function("(text) => document.querySelector('#translation textarea').value !== '' && "
                           "document.querySelector('#tokens').textContent.includes('Fahrrad')", arg=GERMAN)
    wait_step(page, 1)
    settled_scroll(page)
    page.wait_for_selector("#attention-plot .js-plotly-plot .heatmaplayer")
    page.after = rects(page, "#player-bar", "#step-next", "#attention-kind", "#layer", "#head",
                       "#attention-plot", "#attention-plot .js-plotly-plot .main-svg", "#step-info .step-output")
    page.size, page.theme = (width, height), theme
    yield page
    page.close()


def inside(box: dict, height: float) -> bool:
    return box is not None and box["top"] >= -0.5 and box["bottom"] <= height + 0.5
