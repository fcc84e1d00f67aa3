"""What the browser tests share besides their fixtures (those are in tests/browser/conftest.py): Chromium, the
sentence they type, the few moves a visitor makes (type and translate, open a tab or an Explain panel, read the
page's overflow) and the waits on the page's own state (a tab's figures drawn, a figure redrawn, no figure mid-draw,
a step shown).
"""

from __future__ import annotations

import contextlib
import itertools
import re

import pytest

from scripts.chromium import CHROMIUM, open_tab

GERMAN = "Ein Mann fährt mit dem Fahrrad die Straße entlang."
XSS = "<img src=x onerror=alert(1)>"
needs_chromium = pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is not installed")


def to_empty_page(page) -> None:
    """The page opens on a translated example; a link with an empty sentence (`?text=&tab=next`) opens it with
    none, so these tests start on an empty page with the "Next token" tab open (in the page's theme)."""
    from playwright.sync_api import expect

    page.wait_for_selector("#attention-plot .js-plotly-plot")  # the first view has been drawn
    dark = page.evaluate("() => document.body.classList.contains('dark')")
    page.goto(page.url.split("?")[0] + "?text=&tab=next" + ("&__theme=dark" if dark else ""))
    expect(page.locator("#step-info")).to_contain_text("Translate a sentence")
    # the load answer has placed the empty sentence box: typed now, nothing of the load replaces it
    page.wait_for_function("() => document.querySelector('#source textarea') !== null")
    expect(page.get_by_role("tab", name="Next token", selected=True)).to_be_visible()


def translate(page, text: str) -> None:
    page.fill("#source textarea", text)
    page.click("#translate")


def detokenize(tokens: list[str]) -> str:
    """Subwords as displayed ("▁on", "<0x3C>") -> text; only ASCII byte tokens are needed here."""
    text = "".join(chr(int(t[3:5], 16)) if t.startswith("<0x") and len(t) == 6 else t for t in tokens)
    return text.replace("\u2581", " ").strip()


def open_panel(page, name: str) -> None:
    """Click an Explain panel's tab (the tab bar wraps on every screen: no "More tabs" menu);
    Playwright waits until the tab is visible."""
    page.locator("#explain-panels").get_by_role("tab", name=name, exact=True).first.click()


def overflow(page) -> int:
    """How far the page is wider than the window (0 = no horizontal page scroll)."""
    return page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")


# ---- one page per (viewport, theme), translated once, shared by a module's checks ----

VIEWPORTS = [(1280, 720), (1400, 1000), (390, 844)]
THEMES = ["light", "dark"]
# the two screens the layout checks of most modules run on: a projector in dark, a phone in light (every
# viewport and theme together: test_browser_first_screen.py)
SAMPLE_SCREENS = [((1280, 720), "dark"), ((390, 844), "light")]

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
    page.wait_for_function(
        "(n) => /Step (\\d+) of/.exec(document.querySelector('#step-info').textContent)?.[1] == n", arg=number
    )


def shown_view(page, count: int = 1) -> None:
    """The page has placed the view after its `count`-th translation (ui/js/scroll.js counts each in
    <body data-shown-view>): a state to wait on, not the timing of a scroll."""
    page.wait_for_function("(n) => Number(document.body.dataset.shownView || 0) >= n", arg=count)


def wait_last_step(page) -> int:
    """Wait until the page shows a trace's last step ("Step N of N", where Translate lands) -> N."""
    page.wait_for_function(
        "() => { const m = /Step (\\d+) of (\\d+)/.exec(document.querySelector('#step-info').textContent);"
        " return m && m[1] === m[2]; }"
    )
    return step_of(page)[1]


def inside(box: dict, height: float) -> bool:
    return box is not None and box["top"] >= -0.5 and box["bottom"] <= height + 0.5


# ---- waits on the page's own state ----

# top-level tab label -> (its id in the share link's `tab=`, the figures it draws whenever a trace is shown)
TABS = {
    "Next token": ("next", ["candidates-plot"]),
    "Attention": ("attention", ["attention-plot"]),
    "Compare": ("compare", []),  # its figures wait for a second sentence
    "Positional encoding": ("positions", ["pe-plot"]),
    "Masks": ("masks", ["mask-plot"]),
    "Model": ("model", []),
    "Explain": ("explain", []),
}


def show_tab(page, name: str) -> None:
    """Open the top-level tab `name` and wait until its views are drawn (with a trace on the page).

    The page's one redraw listener draws a tab's views and the share link (`tab=<id>`) in one response, so the
    link naming the tab means that response has landed; each of the tab's figures is then drawn by Plotly.
    """
    tab_id, figures = TABS[name]
    open_tab(page, name)
    page.wait_for_function(
        "(tab) => document.querySelector('#share-link textarea').value.includes('tab=' + tab)", arg=tab_id
    )
    for elem_id in figures:
        page.wait_for_selector(f"#{elem_id} .js-plotly-plot")


MARK_PLOT = (
    "(id) => { const g = document.querySelector(`#${id} .js-plotly-plot`); "
    "(window.__shown = window.__shown || {})[id] = g ? g.data : null; }"
)
NEW_PLOT = (
    "(id) => { const g = document.querySelector(`#${id} .js-plotly-plot`); "
    "return !!(g && g.data && g.data !== window.__shown[id]); }"
)


# no figure is being drawn (ui/js/figures.js counts the draws in flight in <body data-figures-drawing>) on `frames`
# animation frames in a row: a box whose size changed is seen by the page's ResizeObservers before the next frame is
# painted, and a redraw they start counts as a draw in flight; the count of frames starts anew on every call (`token`)
STILL_FIGURES = """([token, frames]) => {
  const still = (window.__stillFigures && window.__stillFigures.token === token) ? window.__stillFigures : {token, count: 0};
  still.count = (document.body.dataset.figuresDrawing || '0') === '0' ? still.count + 1 : 0;
  window.__stillFigures = still;
  return still.count >= frames;
}"""
_TOKENS = itertools.count()  # one per wait: each counts its own frames


def figures_settled(page, frames: int = 3) -> None:
    """Wait until no figure of the page is being drawn, on `frames` animation frames in a row (the page's layout and
    its ResizeObservers have run, and no redraw they started is in flight): a state, not a time."""
    page.wait_for_function(STILL_FIGURES, arg=[next(_TOKENS), frames], polling="raf")


@contextlib.contextmanager
def redrawn(page, elem_id: str):
    """Wait, after the block, until the figure `elem_id` shows new data (gr.Plot redraws with Plotly.react,
    which replaces the graph div's `data`): the block must cause a redraw."""
    page.evaluate(MARK_PLOT, elem_id)
    yield
    page.wait_for_function(NEW_PLOT, arg=elem_id)
