"""The layout check of every screen, on the shipped checkpoint, at a projector's 1280x720 (light), 1400x1000 (light)
and a 390x844 phone (dark): the first screen, every tab after Translate, the Attention tab's ways of drawing (every
head, the mean, lines, step 1 where the figure has one row), Compare's pair and its way back, every Explain panel
after its run, and the lesson of a sentence in each of its views. On each screen every drawn figure is measured
(tests/support/layout_check.py: no two texts overlapping, none cut by its box or under the toolbar, no colour bar or
legend over cells) and a screenshot of the whole page is kept (test-artifacts/screens/, the run's artifacts).

One page per screen size, its checks in the order below (each test goes on from the screen the one before left).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from browser_helpers import figures_settled, needs_chromium, open_panel, redrawn, show_tab, wait_last_step, wait_step
from layout_check import check_screen
from ui.explain.panels import PANELS
from visualizer.theme import PHONE_WINDOW_PX

pytestmark = [pytest.mark.browser, needs_chromium]

SHIPPED = Path(__file__).resolve().parents[2] / "checkpoints" / "de-en-small"
SCREENS = [((1280, 720), "light"), ((1400, 1000), "light"), ((390, 844), "dark")]
SENTENCE = "Zwei Kinder spielen im Sand am Strand, während ihre Mutter ein Buch liest."
# the tabs whose figures come with the translation (Compare's wait for its second sentence, the Explain tab's for
# their panels)
TRANSLATION_TABS = ["Next token", "Attention", "Positional encoding", "Masks", "Model"]


@pytest.fixture(scope="module", params=SCREENS, ids=lambda screen: f"{screen[0][0]}x{screen[0][1]}-{screen[1]}")
def visitor(request, browser, shipped_server):
    """A page at one screen size and theme, on the start-up example; `visitor.screen` names the size in the
    screenshots."""
    (width, height), theme = request.param
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(shipped_server + f"?__theme={theme}")
    page.wait_for_selector("#attention-plot .js-plotly-plot")
    page.screen = f"{width}x{height}-{theme}"
    yield page
    page.close()


def checked(page, *screen: str) -> list[str]:
    """The problems of the screen on show once its figures are settled (its screenshot kept); at least one figure."""
    figures_settled(page)
    count, found = check_screen(page, page.screen, *screen)
    return found if count else [f"{' '.join(screen)}: no figure drawn"]


def assert_clean(found: list[str]) -> None:
    assert not found, f"{len(found)} layout problems:\n" + "\n".join(found)


def test_the_first_screen(visitor):
    assert_clean(checked(visitor, "first screen"))


def test_every_tab_after_translate(visitor):
    visitor.fill("#source textarea", SENTENCE)
    visitor.click("#translate")
    visitor.wait_for_function("() => document.querySelector('#tokens').textContent.includes('Kinder')")
    wait_last_step(visitor)
    found = []
    for tab in TRANSLATION_TABS:
        show_tab(visitor, tab)
        if tab == "Model":
            visitor.wait_for_selector("#curves-plot .js-plotly-plot .main-svg")
        found += checked(visitor, tab)
    assert_clean(found)


def pick(page, elem_id: str, label: str) -> None:
    """Pick `label` in the radio `elem_id` (where it is not picked yet) and wait until the attention figure is drawn
    again."""
    choice = page.locator(f"#{elem_id}").get_by_label(label, exact=True)
    if not choice.is_checked():
        with redrawn(page, "attention-plot"):
            choice.check()


def test_the_attention_views(visitor):
    show_tab(visitor, "Attention")
    found = []
    for head, view in (
        ("all heads", "heatmap"),
        ("all heads", "lines"),
        ("mean of heads", "lines"),
        ("mean of heads", "heatmap"),
    ):
        pick(visitor, "head", head)
        pick(visitor, "attention-view", view)
        found += checked(visitor, "attention", head, view)
    pick(visitor, "head", "head 1")
    with redrawn(visitor, "attention-plot"):
        visitor.click("#step-first")
    wait_step(visitor, 1)
    found += checked(visitor, "attention", "step 1")
    show_tab(visitor, "Masks")
    found += checked(visitor, "masks", "step 1")
    assert_clean(found)


def test_compare_and_back(visitor):
    show_tab(visitor, "Compare")
    visitor.click("#compare-example")
    visitor.wait_for_selector("#compare-back", state="visible")
    visitor.wait_for_selector("#compare-plot-2 .js-plotly-plot .main-svg")
    found = checked(visitor, "compare", "pair")
    visitor.click("#compare-back")
    visitor.wait_for_selector("#compare-back", state="hidden")
    figures_settled(visitor)
    found += check_screen(visitor, visitor.screen, "compare", "back")[1]
    assert_clean(found)


def run_panel(page, panel) -> None:
    """Open `panel` and, where it has a run button, run it; then wait until its reading (or result) has its text."""
    open_panel(page, panel.title)
    result = panel.reading or (panel.run and panel.run.replace("-run", "-result"))
    before = page.evaluate("(id) => document.getElementById(id)?.textContent ?? ''", result) if panel.run else None
    if panel.run:
        page.click(f"#{panel.run}")
    page.wait_for_function(
        "([id, before]) => { const e = document.getElementById(id);"
        " return !!e && e.textContent.trim() !== '' && (before === null || e.textContent !== before); }",
        arg=[result, before],
        timeout=120_000,
    )


def test_every_explain_panel_after_its_run(visitor):
    show_tab(visitor, "Explain")
    found = []
    for panel in PANELS:
        run_panel(visitor, panel)
        found += check_screen_after(visitor, "explain", panel.title)
    assert_clean(found)


def check_screen_after(page, *screen: str) -> list[str]:
    """The problems of a screen that may draw no figure (a panel whose result is words)."""
    figures_settled(page)
    return check_screen(page, page.screen, *screen)[1]


@pytest.fixture(scope="module")
def shipped_lesson(tmp_path_factory) -> str:
    """The file:// address of a lesson of SENTENCE on the shipped checkpoint."""
    from lesson_folder import lesson_folder
    from model import load_checkpoint

    if not (SHIPPED / "config.json").exists():
        pytest.skip("no shipped checkpoint")
    sentences = [("Children on the beach", "", SENTENCE)]
    index, _ = lesson_folder(load_checkpoint(SHIPPED), tmp_path_factory.mktemp("layout-lesson") / "lesson", sentences)
    return index.as_uri()


# a click in the lesson, then its figure drawn again (<body data-drawn> counts the draws)
LESSON_DRAWN = "(n) => Number(document.body.dataset.drawn) > n && document.body.dataset.figuresDrawing === '0'"


def test_the_lesson_in_each_of_its_views(visitor, browser, shipped_lesson):
    (width, height), theme = visitor.viewport_size.values(), "dark" if "dark" in visitor.screen else "light"
    page = browser.new_page(viewport={"width": width, "height": height})
    try:
        page.goto(f"{shipped_lesson}?theme={theme}")
        page.wait_for_function(LESSON_DRAWN, arg=0)
        page.screen = visitor.screen
        found = checked(page, "lesson", "attention")
        views = page.evaluate(
            "() => Array.from(document.querySelectorAll('#view-tabs button'), (b) => b.dataset.choice)"
        )
        choices = [("head-choices", "all"), ("kind-choices", "decoder_self"), ("head-choices", "mean")]
        choices += [("view-tabs", view) for view in views if view != "attention"]
        for box, choice in choices:
            drawn = int(page.evaluate("document.body.dataset.drawn"))
            page.click(f"#{box} button[data-choice='{choice}']")
            page.wait_for_function(LESSON_DRAWN, arg=drawn)
            found += checked(page, "lesson", choice)
    finally:
        page.close()
    if width < PHONE_WINDOW_PX:
        # the lesson draws its figures' wide layouts on a phone too (its player does not give figures.js a phone's
        # width; given it, its Masks view drew an empty panel above the others): titles under the toolbar, the
        # every-head grid's and the masks' labels over each other. Known and open; the day it passes, this goes.
        assert found, "the lesson passes the layout check on a phone: drop this known failure"
        pytest.xfail(f"the lesson's figures have no phone layouts yet: {len(found)} problems, {found[0]}")
    assert_clean(found)
