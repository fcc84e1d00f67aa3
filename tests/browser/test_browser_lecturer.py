"""What a lecturer meets, in headless Chromium at a 1280x720 projector and a 390x844 phone, both dark, one page per
screen shared by the module's checks (measured on the drawn page, never read from a figure's JSON):

- after Translate, one head's figure shows its title and every key label inside the window together with the
  sentence and the player bar (a projector);
- the lines view of every head: each head's legend entry in its own dash pattern, and no empty band between the
  lines and the legend (a projector);
- the logit lens names its tokens in its cells (a phone), and no figure's toolbar, shown by a touch or a pointer,
  covers the figure's title (both);
- no server path anywhere on the page (the Model tab); English typed under German → English gets a notice that
  says what the model wrote, not what it may do;
- Compare's blog pair says whether the output tells the two "it"s apart, with both sentences' numbers side by side;
- the all-heads grid names every token its drawn cells hold, in type as large as they allow (projector type on a
  projector), no two labels overlapping, the step's query always (the Attention tab) and on the Compare tab the token
  and every word its summary names (both);
- inside one head, each panel is wide (one above the other on a phone) and its rows as tall as their labels, which
  stand apart in readable type (both).
"""

from __future__ import annotations

import re

import pytest

from browser_helpers import (
    GERMAN,
    inside,
    needs_chromium,
    open_panel,
    open_tab,
    rects,
    redrawn,
    shown_view,
    wait_last_step,
)
from visualizer.heatmap import MIN_FONT

pytestmark = [pytest.mark.browser, needs_chromium]

SCREENS = [((1280, 720), "dark"), ((390, 844), "dark")]
PROJECTOR = SCREENS[0]
SHORT = "Ich habe Hunger."  # a sentence of the tiny model's corpus: 10 keys

# the boxes of a figure's title, its key labels (the x axis' tick labels) and its toolbar's buttons, on screen
FIGURE_PARTS = """(id) => {
  const g = document.querySelector(`#${id} .js-plotly-plot`);
  const box = (e) => { const r = e.getBoundingClientRect(); return {top: r.top, bottom: r.bottom, left: r.left,
                                                                   right: r.right, width: r.width}; };
  const title = g.querySelector('.gtitle');
  const keys = Array.from(g.querySelectorAll('.xaxislayer-above .xtick text')).filter((t) => t.textContent.trim());
  const buttons = Array.from(g.querySelectorAll('.modebar-btn')).filter((b) => b.getBoundingClientRect().width);
  const bar = g.querySelector('.modebar');
  return {title: title && box(title), keys: keys.map(box), buttons: buttons.map(box),
          toolbarShown: !!bar && getComputedStyle(bar).opacity !== '0' && getComputedStyle(bar).display !== 'none'};
}"""
DRAWN = """(id) => { const g = document.querySelector(`#${id} .js-plotly-plot`);
  return !!(g && g._fullLayout && g.querySelector('.main-svg')) && document.body.dataset.figuresDrawing === '0'; }"""


# each labelled axis of a grid of panels: its drawn labels (the position each names, its box, its type), the cells'
# pitch along it, the row the figure outlines (the step's query), and every position's token (the categories)
GRID_LABELS = """(id) => {
  const g = document.querySelector(`#${id} .js-plotly-plot`), full = g._fullLayout;
  const box = (e) => { const r = e.getBoundingClientRect(); return {top: r.top, bottom: r.bottom, left: r.left,
                                                                   right: r.right, width: r.width}; };
  const outline = (full.shapes || []).find((shape) => shape.name === 'highlight');
  const axes = {};
  g.querySelectorAll('g[class$=tick] > text').forEach((t) => {
    const name = /^([xy])(\\d*)tick$/.exec(t.parentNode.getAttribute('class'));
    if (!name || !t.textContent.trim()) return;
    const axis = full[name[1] + 'axis' + name[2]], categories = axis._categories;
    const start = parseInt(String(categories[0]).slice(1));
    const entry = axes[name[1] + name[2]] ??= {letter: name[1], pitch: axis._length / categories.length, labels: [],
      tokens: categories.map((c) => String(c).replace(/^#\\d+ /, '')), start,
      outlined: name[1] === 'y' && outline ? start + Math.round((outline.y0 + outline.y1) / 2) : null};
    entry.labels.push({position: parseInt(t.textContent), text: t.textContent, box: box(t),
                       font: parseFloat(getComputedStyle(t).fontSize)});
  });
  return Object.values(axes).map((axis) => ({...axis, labels: axis.labels.sort((a, b) => a.position - b.position)}));
}"""
LABEL_EM = 1.25  # visualizer.heatmap.LABEL_LINE_EM: a label's line and a gap


def grid_axes(page, elem_id: str) -> list[dict]:
    page.wait_for_function(DRAWN, arg=elem_id)
    axes = page.evaluate(GRID_LABELS, elem_id)
    assert {axis["letter"] for axis in axes} == {"x", "y"}, axes  # keys under the panels, queries beside them
    return axes


def assert_labels_apart_and_all_that_fit(axis: dict, smallest: float) -> None:
    """No two of one axis's labels overlap (by more than antialiasing's half pixel); each in type of at least
    `smallest` px; and every position left unnamed lies closer to a named one than a label's line (LABEL_EM of its
    type): no token is left out that would fit."""
    labels = axis["labels"]
    for a, b in zip(labels, labels[1:]):
        across = min(a["box"]["right"], b["box"]["right"]) - max(a["box"]["left"], b["box"]["left"])
        down = min(a["box"]["bottom"], b["box"]["bottom"]) - max(a["box"]["top"], b["box"]["top"])
        assert min(across, down) <= 0.5, (a, b)
    assert min(label["font"] for label in labels) >= smallest, labels
    named = {label["position"] for label in labels}
    font = min(label["font"] for label in labels)
    for position in range(axis["start"], axis["start"] + len(axis["tokens"])):
        if position not in named:
            gap = min(abs(position - other) for other in named) * axis["pitch"]
            assert gap < LABEL_EM * font - 0.5, (axis["letter"], position, gap, sorted(named))


def overlap(a: dict, b: dict) -> bool:
    return a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] and b["top"] < a["bottom"]


@pytest.fixture(scope="module", params=SCREENS, ids=lambda s: f"{s[0][0]}x{s[0][1]}-{s[1]}")
def screen(request, browser, server):
    """A page at one screen, GERMAN translated by Enter in the sentence box, on the Attention tab."""
    from playwright.sync_api import expect

    (width, height), theme = request.param
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(server + f"?__theme={theme}")
    page.wait_for_selector("#attention-plot .js-plotly-plot", timeout=120_000)
    expect(page.locator("#translation textarea")).not_to_have_value("")
    page.fill("#source textarea", GERMAN)
    page.press("#source textarea", "Enter")
    page.wait_for_function("() => document.querySelector('#tokens').textContent.includes('Fahrrad')")
    wait_last_step(page)
    shown_view(page)
    page.wait_for_function(DRAWN, arg="attention-plot")
    page.size = (width, height)
    yield page
    page.close()


def test_after_translate_the_title_and_every_key_label_share_the_window_with_the_sentence_and_bar(screen):
    if screen.size != PROJECTOR[0]:
        pytest.skip("a projector's first screen")
    width, height = screen.size
    parts = screen.evaluate(FIGURE_PARTS, "attention-plot")
    places = rects(screen, "#source", "#player-bar")
    assert inside(places["#source"], height) and inside(places["#player-bar"], height), places
    assert inside(parts["title"], height), parts["title"]
    assert parts["keys"] and all(inside(key, height) for key in parts["keys"]), parts["keys"]
    assert all(key["top"] >= parts["title"]["bottom"] for key in parts["keys"])  # under the title, over the rows


def test_a_figures_toolbar_never_covers_its_title(screen):
    """Shown by a pointer over the figure (a touch on a phone): its buttons stay clear of the title."""
    screen.locator("#attention-plot .js-plotly-plot").hover()
    parts = screen.evaluate(FIGURE_PARTS, "attention-plot")
    covered = [b for b in parts["buttons"] if parts["toolbarShown"] and overlap(b, parts["title"])]
    assert not covered, (parts["title"], covered)


def test_every_heads_lines_keep_their_own_pattern_and_no_band_above_the_legend(screen):
    if screen.size != PROJECTOR[0]:
        pytest.skip("the lines view on a projector (the phone's: tests/browser/test_browser_lines.py)")
    from playwright.sync_api import expect

    screen.locator("#attention-kind").get_by_text("Encoder self-attention").click()
    screen.locator("#attention-view").get_by_text("lines", exact=True).click()
    screen.locator("#head").get_by_text("all heads").click()
    expect(screen.locator("#attention-plot .gtitle")).to_contain_text("every head")
    screen.wait_for_function(DRAWN, arg="attention-plot")
    drawn = screen.evaluate("""() => {
      const g = document.querySelector('#attention-plot .js-plotly-plot');
      const legend = g.querySelector('.legend').getBoundingClientRect();
      const dashes = Array.from(g.querySelectorAll('.legend .traces .js-line'))
        .map((line) => getComputedStyle(line).strokeDasharray);
      const tokens = Array.from(g.querySelectorAll('.scatterlayer .textpoint text'))
        .map((t) => t.getBoundingClientRect().bottom);
      return {legendTop: legend.top, dashes, lowest: Math.max(...tokens)};
    }""")
    assert len(drawn["dashes"]) >= 2 and len(set(drawn["dashes"])) == len(drawn["dashes"]), drawn["dashes"]
    assert 0 <= drawn["legendTop"] - drawn["lowest"] <= 40, drawn  # the legend right under the last token
    screen.locator("#attention-view").get_by_text("heatmap", exact=True).click()
    screen.locator("#head").get_by_text("head 1", exact=True).click()


def test_the_logit_lens_names_its_tokens_in_its_cells(screen):
    open_tab(screen, "Explain")
    open_panel(screen, "Logit lens")
    screen.wait_for_selector("#lens-plot .js-plotly-plot")
    screen.wait_for_function(DRAWN, arg="lens-plot")
    cells = screen.evaluate("""() => Array.from(document.querySelectorAll('#lens-plot .heatmaplayer text'))
      .map((t) => t.textContent.trim())""")
    # a cell per layer and rank (the tiny model: 2 layers x 5 ranks), each with its token, whole or cut with "…"
    assert len(cells) >= 10 and all(cells), cells
    screen.locator("#lens-plot .js-plotly-plot").hover()
    parts = screen.evaluate(FIGURE_PARTS, "lens-plot")
    assert not [b for b in parts["buttons"] if parts["toolbarShown"] and overlap(b, parts["title"])]
    open_tab(screen, "Attention")


def test_no_server_path_on_the_page_and_the_notice_says_what_the_model_wrote(screen, tiny_checkpoint):
    from playwright.sync_api import expect

    open_tab(screen, "Model")
    expect(screen.locator("#model-config")).to_contain_text("parameters")
    text = screen.locator("body").inner_text()
    assert str(tiny_checkpoint.parent) not in text and not re.search(r"(^|\s|`)/(tmp|home|root|work)/", text)
    open_tab(screen, "Attention")
    screen.fill("#source textarea", "A little girl is climbing into a wooden playhouse.")
    screen.press("#source textarea", "Enter")
    expect(screen.locator("#notice")).to_contain_text("looks like English")
    notice = screen.locator("#notice").inner_text()
    assert "may echo" not in notice and re.search(r"The model wrote (German|English)|not clearly", notice), notice


def test_compares_summary_says_whether_the_output_tells_the_two_apart_with_both_numbers(screen):
    from playwright.sync_api import expect

    open_tab(screen, "Compare")
    screen.click("#compare-example")
    message = screen.locator("#compare-message")
    expect(message).to_contain_text("The head whose weights differ most between the sentences")
    said = message.inner_text()
    assert re.search(r"becomes “[^”]+” in both sentences|becomes “[^”]+” in sentence 1 and “[^”]+” in sentence 2", said)
    assert re.search(r"p = \d\.\d{3} / \d\.\d{3}", said), said  # both sentences' numbers side by side
    box = rects(screen, "#compare-message")["#compare-message"]
    assert box["width"] > 0


def test_the_all_heads_grid_names_every_token_its_cells_hold_and_always_the_steps_query(screen):
    """Cross-attention at the page's step, every head of layer 1: on a projector every label in projector type."""
    from playwright.sync_api import expect

    open_tab(screen, "Attention")
    screen.locator("#attention-kind").get_by_text("Cross-attention", exact=False).click()
    screen.locator("#head").get_by_text("all heads", exact=True).click()
    expect(screen.locator("#attention-plot .gtitle")).to_contain_text("every head")
    for axis in grid_axes(screen, "attention-plot"):
        assert_labels_apart_and_all_that_fit(axis, 14 if screen.size == PROJECTOR[0] else MIN_FONT)
        if axis["letter"] == "y":  # the step's query, outlined in every panel, named beside it
            assert axis["outlined"] is not None and axis["outlined"] in {label["position"] for label in axis["labels"]}
    screen.locator("#head").get_by_text("head 1", exact=True).click()


def word_starts(tokens: list[str], start: int) -> dict[str, int]:
    """The words of a window of subword tokens (a word starts at a piece with "▁"), each -> the position of its first
    piece in the whole sentence (the window starts at `start`)."""
    words, text, first = {}, None, None
    for i, token in enumerate(tokens):
        if text is not None and not token.startswith("\u2581"):
            text += token
            continue
        if text:
            words.setdefault(text, first)
        text, first = token.replace("\u2581", ""), start + i
    if text:
        words.setdefault(text, first)
    return words


@pytest.mark.xfail(
    strict=False,
    reason="Compare's summary names whole words now: a word it names for one sentence only is not named in the other's "
    "grid, and on a phone a key that would fit between two named ones is left out; the test and the grid's labels "
    "are to be brought to whole words",
)
def test_compares_grids_always_name_the_token_and_the_words_its_summary_names(screen):
    from playwright.sync_api import expect

    open_tab(screen, "Compare")
    screen.click("#compare-example")
    expect(screen.locator("#compare-message")).to_contain_text("differ most")
    view = screen.locator("#compare-view")
    if not view.get_by_label("heatmap", exact=True).is_checked():  # its answer lands before the next click
        with redrawn(screen, "compare-plot-2"):
            view.get_by_text("heatmap", exact=True).click()
    screen.locator("#compare-head").get_by_text("all heads", exact=True).click()
    expect(screen.locator("#compare-plot-2 .gtitle")).to_contain_text("every head")
    quoted = set(re.findall(r"“([^”]+)”", screen.locator("#compare-message").inner_text()))
    token = re.match(r"\s*“([^”]+)”", screen.locator("#compare-message").inner_text())[1]
    checked = []
    for n in (1, 2):
        for axis in grid_axes(screen, f"compare-plot-{n}"):
            assert_labels_apart_and_all_that_fit(axis, MIN_FONT)
            bare = [
                t.replace("\u2581", "") for t in axis["tokens"]
            ]  # the tokens of the figure's (long sentence's) window
            drawn = {bare[label["position"] - axis["start"]] for label in axis["labels"]}
            named = {label["position"] for label in axis["labels"]}
            starts = word_starts(axis["tokens"], axis["start"])  # each word of the window -> its first piece
            said = {word for word in quoted if word in starts}  # the (whole) words said that the window shows
            if axis["letter"] == "x":  # the keys: every word said that is shown, named at its first piece
                assert {word for word in said if starts[word] not in named} == set(), (n, said, sorted(named))
                checked += said
            elif token in bare:  # the rows of encoder self-attention: the token's own row
                assert token in drawn, (n, token, drawn)
    assert checked, quoted
    screen.locator("#compare-view").get_by_text("lines", exact=True).click()
    open_tab(screen, "Attention")


# each heatmap panel of a figure: its drawn box and rows, and the labels of its rows (their boxes and type)
PANELS = """(id) => {
  const g = document.querySelector(`#${id} .js-plotly-plot`), full = g._fullLayout;
  const box = (e) => { const r = e.getBoundingClientRect(); return {top: r.top, bottom: r.bottom, left: r.left,
                                                                   right: r.right, width: r.width}; };
  return {width: g.getBoundingClientRect().width, panels: Object.keys(full._plots).map((id) => {
    const [x, y] = [full['xaxis' + id.split('y')[0].slice(1)], full['yaxis' + id.split('y')[1]]];
    const rows = g.querySelectorAll(`g.${y._id}tick > text`);
    return {id, width: x._length, height: y._length, top: y._offset, left: x._offset, rows: y._categories.length,
            labels: Array.from(rows).filter((t) => t.textContent.trim())
              .map((t) => ({text: t.textContent, box: box(t), font: parseFloat(getComputedStyle(t).fontSize)}))};
  })};
}"""


def test_inside_one_head_draws_wide_panels_whose_row_labels_stand_apart(screen):
    """A short sentence (its keys side by side fit a projector), cross-attention, head 1, "Inside one head" opened:
    the scores, the mask and the softmax. On a projector the panels side by side, on a phone one above the other;
    each at least 22 % of the figure's width (a phone: 45 %), its rows as tall as a line of their labels,
    the labels apart in 14 px type on a projector and 10 px at least on a phone."""
    from playwright.sync_api import expect

    open_tab(screen, "Attention")
    screen.fill("#source textarea", SHORT)
    screen.press("#source textarea", "Enter")
    screen.wait_for_function("() => !document.querySelector('#tokens').textContent.includes('Stra')")  # not GERMAN
    wait_last_step(screen)
    screen.locator("#attention-kind").get_by_text("Cross-attention", exact=False).click()
    screen.locator("#head").get_by_text("head 1", exact=True).click()
    screen.locator("#pipeline-box > button").first.click()
    expect(screen.locator("#pipeline-plot .gtitle")).to_contain_text("softmax")
    screen.wait_for_function(DRAWN, arg="pipeline-plot")
    drawn = screen.evaluate(PANELS, "pipeline-plot")
    phone = screen.size != PROJECTOR[0]
    panels = drawn["panels"]
    assert len(panels) == 3, panels
    if phone:  # one above the other
        assert len({round(panel["left"]) for panel in panels}) == 1 and len({panel["top"] for panel in panels}) == 3
    else:  # side by side
        assert len({round(panel["top"]) for panel in panels}) == 1 and len({panel["left"] for panel in panels}) == 3
    for panel in panels:
        assert panel["width"] >= (0.45 if phone else 0.22) * drawn["width"], (panel, drawn["width"])
        labels = sorted(panel["labels"], key=lambda label: label["box"]["top"])
        if not labels:
            continue  # side by side, the rows are named left of the first panel only
        fonts = [label["font"] for label in labels]
        assert min(fonts) >= (MIN_FONT if phone else 14), labels
        assert panel["height"] / panel["rows"] >= LABEL_EM * min(fonts) - 0.5, panel  # a row holds a line of type
        for a, b in zip(labels, labels[1:]):
            assert a["box"]["bottom"] <= b["box"]["top"] + 0.5, (a, b)
    assert sum(bool(panel["labels"]) for panel in panels) >= (3 if phone else 1)
    screen.locator("#pipeline-box > button").first.click()
