"""On a 390x844 phone, light and dark, the figures of the screen after Translate show every text whole and apart
and no panel mostly empty: the Model tab's training curves, the positional encoding, the masks (at the last step,
where Translate lands, and at step 1, where the look-ahead mask has one row) and the Explain tab's head diagnostics;
and the positional encoding at 1280x720 too (projector type), where the masks and the attention figure, their rows
thinned for a long output, name the step's query at every step.

Measured from the drawn SVG of each figure (tests/support/layout_check.py's MEASURE):
- its texts (tick labels, titles, notes, colour-bar and legend labels; not a heatmap's text in its cells, which the
  page cuts to its cell, nor the hover and the toolbar), each as the box of its ink turned with it (a 45° label is a
  turned box): no two overlap by more than OVERLAP_PX, and none reaches past the figure's box (a clipped title read
  "oss (label-smoothed cross-entropy)");
- its heatmap panels: the drawn cells fill at least FILLED_SHARE of the height the layout gives the panel; below
  that most of the panel is empty space (a look-ahead mask of one row in the height of all of them).

The shipped checkpoint (`shipped_server`): its training log draws the curves, and its translation of SENTENCE has
16 target tokens, so the cross-attention mask's rows on a phone are under 12 px (a label every row would overlap).
One page per theme, its checks in the order below.
"""

from __future__ import annotations

import pytest

from browser_helpers import needs_chromium, open_panel, redrawn, show_tab, step_of, wait_last_step, wait_step
from layout_check import MEASURE, OVERLAP_PX

pytestmark = [pytest.mark.browser, needs_chromium]

SENTENCE = "Zwei Kinder spielen im Sand am Strand, während ihre Mutter ein Buch liest."
LONG_SENTENCE = (  # 25 target tokens from the shipped checkpoint: the masks' strip (d) names every other row at 1280x720
    "Zwei Kinder spielen im Sand am Strand, während ihre Mutter ein Buch liest und der Vater im Wasser schwimmt, "
    "weil es heute sehr heiß ist."
)
FILLED_SHARE = 0.5  # a heatmap panel's cells fill at least this share of its height
THIN_ROW_PX = 12  # rows under this are too short for a label each: the sentence must give the masks some

# the figure drawn at its box's width (ui/js/figures.js fits it to the width it notes), no figure still being drawn
FITTED = """(id) => { const g = document.querySelector(`#${id} .js-plotly-plot`);
  const box = g && (g.closest('.block') || g.parentElement);
  return !!(g && g._fullLayout && g.querySelector('.main-svg') && box && g.__fittedWidth === box.clientWidth)
    && document.body.dataset.figuresDrawing === '0'; }"""


@pytest.fixture(scope="module", params=["light", "dark"])
def phone(request, browser, shipped_server):
    """A 390x844 page in one theme with SENTENCE translated (at its last step, where Translate lands)."""
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(shipped_server + f"?__theme={request.param}")
    page.wait_for_selector("#attention-plot .js-plotly-plot")  # the start-up example has landed
    page.fill("#source textarea", SENTENCE)
    page.press("#source textarea", "Enter")
    page.wait_for_function("() => document.querySelector('#tokens').textContent.includes('Kinder')")
    page.total = wait_last_step(page)
    yield page
    page.close()


def measured(page, elem_id: str) -> dict:
    """The figure `elem_id` once drawn at its box's width and settled (FITTED), measured (MEASURE)."""
    page.wait_for_function(FITTED, arg=elem_id)
    page.locator(f"#{elem_id}").scroll_into_view_if_needed()
    return page.evaluate(MEASURE, elem_id)


def assert_readable(figure: dict) -> None:
    """Texts apart and inside the box; every heatmap panel at least FILLED_SHARE filled."""
    assert figure["texts"] > 5, figure  # the figure is drawn with its labels
    overlaps = [pair for pair in figure["overlaps"] if pair[2] > OVERLAP_PX]
    assert overlaps == [], overlaps[:12]
    assert figure["outside"] == [], (figure["box"], figure["outside"][:12])
    for panel in figure["panels"]:
        assert panel["cells"] >= FILLED_SHARE * panel["height"], panel


def test_the_training_curves(phone):
    show_tab(phone, "Model")
    phone.wait_for_selector("#curves-plot .js-plotly-plot .main-svg")
    assert_readable(measured(phone, "curves-plot"))


def test_the_positional_encoding(phone):
    show_tab(phone, "Positional encoding")
    assert_readable(measured(phone, "pe-plot"))


def test_the_masks_at_the_last_step(phone):
    show_tab(phone, "Masks")
    figure = measured(phone, "mask-plot")
    cross = figure["panels"][-1]  # (d): the target's rows in a strip
    assert cross["rows"] == phone.total and cross["cells"] / cross["rows"] < THIN_ROW_PX, cross
    assert_readable(figure)


def test_the_masks_at_step_1(phone):
    """The look-ahead mask has one row: its panel one row high, not a row above empty space."""
    show_tab(phone, "Masks")
    with redrawn(phone, "mask-plot"):
        phone.click("#step-first")
    wait_step(phone, 1)
    figure = measured(phone, "mask-plot")
    assert figure["panels"][1]["rows"] == 1, figure["panels"]
    assert_readable(figure)


def test_the_head_diagnostics(phone):
    show_tab(phone, "Explain")
    open_panel(phone, "Head diagnostics")
    phone.wait_for_selector("#diag-plot .js-plotly-plot .main-svg")
    assert_readable(measured(phone, "diag-plot"))


def test_the_positional_encoding_on_a_projector(browser, shipped_server):
    """At 1280x720 the same checks of the positional encoding, drawn in projector type (ui/js/figures.js): its
    position labels thinned by the rows they stand on (tokens, then every 8th position), the waves' names clear
    of the matrix's colour bar."""
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    try:
        page.goto(shipped_server)
        page.wait_for_selector("#attention-plot .js-plotly-plot")
        show_tab(page, "Positional encoding")
        assert_readable(measured(page, "pe-plot"))
    finally:
        page.close()


# each row a figure outlines (visualizer.heatmap.highlight_rows: the step's query) on an axis that names its rows:
# [axis, row, whether the drawn axis names that row, how many rows the axis names]
OUTLINED_ROWS = """(id) => { const g = document.querySelector(`#${id} .js-plotly-plot`);
  return (g.layout.shapes || []).filter((shape) => shape.name === 'highlight').map((shape) => {
    const ref = shape.yref || 'y', axis = g._fullLayout['yaxis' + ref.slice(1)], row = (shape.y0 + shape.y1) / 2;
    const named = axis.showticklabels !== false && Array.isArray(axis.ticktext) && axis.ticktext.length > 0;
    const ticks = Array.from(axis.tickvals || []);
    return [ref, row, named ? ticks.some((value) => Math.abs(value - row) < 0.01) : null,
            named ? g.querySelectorAll(`.${ref}tick text`).length : 0];
  }); }"""


def test_the_steps_query_named_on_a_projector(browser, shipped_server):
    """At 1280x720 a 25-token output's rows are too short for a label each in the masks' strip (d): every k-th
    query is named there, and at every step the one its outline marks among them; the same of the attention
    figure (one head, then all heads)."""
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    try:
        page.goto(shipped_server)
        page.wait_for_selector("#attention-plot .js-plotly-plot")
        page.wait_for_function("() => !!document.querySelector('#share-link textarea')?.value")
        page.fill("#source textarea", LONG_SENTENCE)
        page.click("#translate")
        page.wait_for_function("() => document.querySelector('#tokens').textContent.includes('Kinder')")
        total = wait_last_step(page)
        thinned = set()
        for tab, elem_id, steps, button in (  # Masks from the last step back 5, Attention forward again
            ("Masks", "mask-plot", range(total, total - 6, -1), "#step-prev"),
            ("Attention", "attention-plot", range(total - 5, total + 1), "#step-next"),
        ):
            show_tab(page, tab)
            for index, step in enumerate(steps):
                wait_step(page, step)
                page.wait_for_function(FITTED, arg=elem_id)
                outlined = page.evaluate(OUTLINED_ROWS, elem_id)
                assert outlined, (tab, step)  # the figure marks the step's query
                for ref, row, named, labels in outlined:
                    assert row == step - 1 and named in (True, None), (tab, step, ref, row, labels)
                    if named and labels < total:
                        thinned.add((tab, ref))
                if index < len(steps) - 1:
                    with redrawn(page, elem_id):
                        page.click(button)
        assert ("Masks", "y4") in thinned  # the strip is thinned, so the check above could fail
        assert step_of(page)[0] == total
    finally:
        page.close()
