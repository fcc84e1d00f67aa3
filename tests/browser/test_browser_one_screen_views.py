"""The views' own details on one screen, on a 1280x720 projector in dark and a 390x844 phone in light: a tour stop's figure of 19 rows ends inside a projector's window under the stop's text; a one-row
heatmap's colour bar keeps its labels apart and lies clear of the cells; the Masks look-ahead panel names only the rows that exist at
the step; step-change candidate ranks start at #1; a short sentence's figure stands where the long one's stood, in projector type; the
all-heads grid names every key of a short sentence, its panels two a row on a phone.

One page per (viewport, theme) (browser_helpers.screen), its checks in this order.
"""

from __future__ import annotations

import html

import pytest

from browser_helpers import (
    needs_chromium,
    open_panel,
    open_tab,
    rects,
    step_of,
    wait_last_step,
    wait_step,
)

pytestmark = [pytest.mark.browser, needs_chromium]
SHORT = "Ein Hund."  # six keys of the tiny tokenizer (tests/conftest.py): <2en> ▁Ein ▁Hun d . [EOS]
TOUR_ROWS = 19  # rows of one head's heatmap that still fit under a tour stop at 1280x720 (visualizer ROWS_PX)

# the figure's first heatmap: its rows (the data's y: Plotly may hold z as packed binary) and its drawn row height
HEATMAP = """(id) => { const g = document.querySelector(id + ' .js-plotly-plot');
  const area = g.querySelector('.nsewdrag').getBoundingClientRect();
  return {rows: g.data[0].y.length, cell: area.height / g.data[0].y.length}; }"""
# the drawn text of a selector inside a figure: content, box, font size
TEXTS = """([id, selector]) => Array.from(document.querySelectorAll(id + ' .js-plotly-plot ' + selector))
  .map((t) => { const b = t.getBoundingClientRect();
    return {text: t.textContent, x: b.left + b.width / 2, y: b.top + b.height / 2, height: b.height, width: b.width,
            font: parseFloat(getComputedStyle(t).fontSize)}; })"""


def texts(page, figure: str, selector: str) -> list[dict]:
    return page.evaluate(TEXTS, [figure, selector])


def go_to_step(page, number: int) -> None:
    """Type the step into the player's number box, as a visitor may; a phone's slim bar has only the slider."""
    box = page.locator("#step input[type=number]")
    if box.is_visible():
        box.fill(str(number))
        box.press("Enter")
    else:
        page.locator("#step input[type=range]").fill(str(number))
    wait_step(page, number)


def test_a_tour_stop_of_19_rows_ends_in_the_window_under_its_text(screen):
    width, height = screen.size
    open_tab(screen, "Attention")
    screen.click("#tour-next")  # stop 1
    screen.wait_for_function("() => document.querySelector('#tour-text').textContent.includes('Stop 1 of')")
    screen.click("#tour-next")  # stop 2: cross-attention at the last step
    screen.wait_for_function("() => document.querySelector('#tour-text').textContent.includes('Stop 2 of')")
    assert step_of(screen)[1] > TOUR_ROWS  # the tiny model's translation is long
    go_to_step(screen, TOUR_ROWS)
    screen.wait_for_function("() => document.querySelector('#attention-plot .js-plotly-plot').data[0].y.length == 19")
    screen.wait_for_function("() => document.querySelector('#tour-row').getBoundingClientRect().top < 300")
    heatmap = screen.evaluate(HEATMAP, "#attention-plot")
    assert heatmap["rows"] == TOUR_ROWS and heatmap["cell"] >= 14 - 0.5, heatmap  # a label's height per row
    where = rects(screen, "#player-bar", "#tour-text", "#attention-plot .main-svg")
    assert where["#tour-text"]["top"] >= where["#player-bar"]["bottom"] - 1, where
    if width >= 1000:  # a projector or a laptop: the stop's text and the whole figure in one window
        assert where["#attention-plot .main-svg"]["bottom"] <= height + 0.5, where
    screen.click("#tour-back")
    screen.wait_for_function("() => document.querySelector('#tour-text').textContent.includes('Stop 1 of')")


def test_a_one_row_heatmap_keeps_its_colour_bar_labels_apart(screen):
    open_tab(screen, "Attention")
    screen.locator("#attention-kind label", has_text="Cross-attention").click()
    go_to_step(screen, 1)
    screen.wait_for_function("() => document.querySelector('#attention-plot .js-plotly-plot').data[0].y.length == 1")
    labels = [t for t in texts(screen, "#attention-plot", ".colorbar text") if t["text"] in ("0", "0.5", "1")]
    assert len(labels) == 3, labels
    for i, one in enumerate(labels):  # no two tick labels on top of each other (the bar stands, or lies on a phone)
        for other in labels[i + 1 :]:
            apart_x = abs(one["x"] - other["x"]) >= (one["width"] + other["width"]) / 2
            apart_y = abs(one["y"] - other["y"]) >= (one["height"] + other["height"]) / 2
            assert apart_x or apart_y, labels
    # the bar clear of the cells: beside the row (a wide screen) or below its key labels (a phone)
    where = rects(screen, "#attention-plot .nsewdrag", "#attention-plot .colorbar", "#attention-plot .xtick")
    cells, bar = where["#attention-plot .nsewdrag"], where["#attention-plot .colorbar"]
    if screen.size[0] >= 640:
        assert bar["left"] >= cells["right"], where
    else:
        assert bar["top"] >= where["#attention-plot .xtick"]["bottom"] - 1 and bar["top"] >= cells["bottom"], where


def test_row_labels_stand_apart_in_projector_type_at_any_length(screen):
    """The last step's cross-attention (the tiny model's long translation: over 24 rows, rows shorter than a
    label): every row stays in the data (the hover names it); the drawn row labels stand apart (every k-th where
    rows are short), and on a wide screen they are 14 px or more, the figure grown for them (rows of 16 px)."""
    open_tab(screen, "Attention")
    screen.click("#step-last")
    total = step_of(screen)[1]
    wait_step(screen, total)
    screen.wait_for_function(  # every row, or the window of rows around the last (long sentences)
        "(n) => document.querySelector('#attention-plot .js-plotly-plot').data[0].y.length == Math.min(n, 41)",
        arg=total,
    )
    rows = sorted(texts(screen, "#attention-plot", ".ytick text"), key=lambda label: label["y"])
    assert total > 24 and len(rows) >= 12, (total, len(rows))
    for above, below in zip(rows, rows[1:]):
        assert below["y"] - above["y"] >= above["font"] - 0.5, (above, below)
    if screen.size[0] >= 640:
        assert min(label["font"] for label in rows) >= 14, rows
        cell = screen.evaluate(HEATMAP, "#attention-plot")["cell"]
        assert cell >= 16 - 0.5 or len(rows) < total, cell  # rows a label high, or every k-th labelled


def test_the_look_ahead_mask_names_only_the_rows_that_exist(screen):
    go_to_step(screen, 3)
    open_tab(screen, "Masks")
    screen.wait_for_function(
        "() => /at step 3/.test(document.querySelector('#mask-plot .js-plotly-plot')"
        "?.layout.annotations.map((a) => a.text).join(' '))"
    )
    named = [t["text"] for t in texts(screen, "#mask-plot", ".y2tick text")]
    categories = screen.evaluate("() => document.querySelector('#mask-plot .js-plotly-plot').data[1].y.slice(0, 3)")
    rows = [html.unescape(category.split(" ", 1)[1]) for category in categories]  # "#2 &lt;0x7B&gt;" -> "<0x7B>"
    if screen.size[0] >= 640:  # rows 1..3; the future rows have no cells, no names
        assert named == rows and named[0] == "[BOS]", (named, rows)
    else:  # a phone's rows of the tiny model's long output are a few px: every k-th, the step's query among them
        assert named and set(named) <= set(rows) and named[-1] == rows[2], (named, rows)
    decoder_rows = screen.evaluate("() => document.querySelector('#mask-plot .js-plotly-plot').data[2].y.length")
    assert decoder_rows > 3  # panel (c) beside it has all the rows: (b) stopped at the step
    # panel (a)'s tokens in their cells: each inside its cell (cut with "…" where the cell is too narrow, none
    # where that leaves under 3 characters: the tiny model's tokens make 57 narrow positions)
    cells = texts(screen, "#mask-plot", ".heatmaplayer text")
    first_row = sorted(cell["x"] for cell in cells if abs(cell["y"] - cells[0]["y"]) < 1) if cells else []
    pitch = min((b - a for a, b in zip(first_row, first_row[1:])), default=float("inf"))  # one cell's width
    assert all(cell["width"] <= pitch for cell in cells), (pitch, cells[:5])
    if screen.size[0] < 640:  # a phone turns the panel: a column per sentence, every token whole, [PAD] too
        assert any(cell["text"] == "[PAD]" for cell in cells) and not any("…" in c["text"] for c in cells), cells
    open_tab(screen, "Attention")


def test_step_change_ranks_start_at_one(screen):
    go_to_step(screen, 2)
    open_tab(screen, "Explain")
    open_panel(screen, "Step changes")
    screen.wait_for_selector("#changes-candidates .js-plotly-plot .ytick text")
    names = [t["text"] for t in sorted(texts(screen, "#changes-candidates", ".ytick text"), key=lambda t: t["y"])]
    ranks = [name.split()[0] for name in names if name.startswith("#")]
    assert ranks and ranks[0] == "#1" and "#0" not in ranks, names
    open_tab(screen, "Attention")


def show_short(page) -> None:
    """Translate SHORT (once per page) and wait for its heatmap."""
    if SHORT in page.locator("#source textarea").input_value():
        return
    page.fill("#source textarea", SHORT)
    page.click("#translate")
    page.wait_for_function("() => document.querySelector('#tokens').textContent.includes('Hund')")
    wait_last_step(page)
    page.wait_for_function("() => document.querySelector('#attention-plot .js-plotly-plot').data[0].x.length <= 8")


def test_a_short_sentence_stands_where_the_long_one_stood_in_projector_type(screen):
    width, _ = screen.size
    open_tab(screen, "Attention")
    screen.locator("#head label", has_text="head 1").click()
    show_short(screen)
    before, now = screen.after["#attention-plot"], rects(screen, "#attention-plot")["#attention-plot"]
    assert abs(now["left"] - before["left"]) <= 1 and abs(now["width"] - before["width"]) <= 1, (before, now)
    keys = texts(screen, "#attention-plot", ".xtick text")
    assert keys and min(t["font"] for t in keys) >= 14, keys  # a short sentence's labels in projector type
    if width >= 1000:  # projector type around the figure as well (a phone keeps its sizes)
        sizes = screen.evaluate("""() => [['#step-next', 'button'], ['#step-info', '.label'], ['#step-info', '.tok']]
          .map(([id, inner]) => parseFloat(getComputedStyle(document.querySelector(id + ' ' + inner)
          ?? document.querySelector(id)).fontSize))""")
        assert sizes[0] >= 15 and sizes[1] >= 16 and sizes[2] >= 14.5, sizes


def test_the_all_heads_grid_names_every_key_its_panels_two_a_row_on_a_phone(screen):
    open_tab(screen, "Attention")
    show_short(screen)
    screen.locator("#head label", has_text="all heads").click()
    screen.wait_for_function("() => document.querySelector('#attention-plot .js-plotly-plot').data.length > 1")
    keys = screen.evaluate("() => document.querySelector('#attention-plot .js-plotly-plot').data[0].x.length")
    named = screen.evaluate("""() => { const axes = {};  // each panel's drawn key labels, by its x axis
      document.querySelectorAll('#attention-plot .js-plotly-plot g[class$=tick] text').forEach((t) => {
        const name = t.parentNode.getAttribute('class'); if (/^x\\d*tick$/.test(name)) (axes[name] ??= []).push(t.textContent); });
      return Object.values(axes); }""")
    shown = max(len(panel) for panel in named) if named else 0
    assert keys <= 8 and shown == keys, (keys, named)  # a short sentence: every key named, on a phone too
    panels = screen.evaluate("""() => { const g = document.querySelector('#attention-plot .js-plotly-plot');
      return {box: g.clientWidth, heads: g.data.length, widths: Object.keys(g._fullLayout)
        .filter((k) => /^xaxis\\d*$/.test(k)).map((k) => g._fullLayout[k]._length)}; }""")
    assert len(panels["widths"]) == panels["heads"] >= 4, panels  # a panel for every head of the layer
    per_row = 4 if screen.size[0] >= 640 else 2  # a phone: two panels a row, each a usable size
    assert min(panels["widths"]) >= 0.8 * (panels["box"] - 100) / per_row / 2, panels
    screen.locator("#head label", has_text="head 1").click()
