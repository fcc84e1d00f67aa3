"""In the browser: an exported lesson (lesson/) opened from file:// with every request that is not a file refused.

The figure is drawn, every control redraws it, the keys step, and the numbers drawn (read back from Plotly's graph
div) are the trace's: attention of several kinds, layers, heads, the mean and every head at several steps (the rows
after the step blank), the candidates and the masks of a step, the positional encoding. Light and dark, a
projector's 1280x720 and a 390x844 phone. The page opens on the lesson's "start" record (lesson/start.py), its note
shown.
"""

from __future__ import annotations

import numpy as np
import pytest

from browser_helpers import needs_chromium
from helpers import array
from lesson import Start, write_lesson
from lesson_folder import lesson_folder
from model.decoding.trace import ATTENTION_KINDS

pytestmark = needs_chromium

READ_FIGURE = """() => {
    const graph = document.getElementById('figure');
    const plain = (a) => (a && a.bdata) ? a : ArrayBuffer.isView(a) ? Array.from(a)
        : Array.isArray(a) ? a.map((row) => (ArrayBuffer.isView(row) ? Array.from(row) : row)) : a;
    return {data: graph.data.map((t) => ({z: plain(t.z), x: plain(t.x), type: t.type})),
            title: graph.layout.title && graph.layout.title.text, paper: graph.layout.paper_bgcolor,
            shapes: (graph.layout.shapes || []).filter((s) => s.name === 'highlight').map((s) => [s.y0, s.y1]),
            yticks: graph.layout.yaxis.ticktext, yvals: plain(graph.layout.yaxis.tickvals)};
}"""


@pytest.fixture(scope="module")
def written(checkpoint, tmp_path_factory):
    """(index.html, the LessonSentences) of a lesson with the default start."""
    return lesson_folder(checkpoint, tmp_path_factory.mktemp("lesson") / "lesson")


@pytest.fixture(scope="module")
def lesson(written):
    """(index.html's file:// URL, the sentences' traces)."""
    index, sentences = written
    return index.as_uri(), [sentence.trace for sentence in sentences]


def open_lesson(browser, url: str, viewport=(1280, 720), theme: str = "light"):
    """A page on the lesson, every request that is not file:// refused and recorded (page.refused), errors kept."""
    page = browser.new_page(viewport={"width": viewport[0], "height": viewport[1]})
    page.refused, page.errors = [], []
    page.on("pageerror", lambda error: page.errors.append(str(error)))

    def route(route):
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            page.refused.append(route.request.url)
            route.abort()

    page.route("**/*", route)
    page.goto(f"{url}?theme={theme}")
    page.wait_for_function(
        "() => Number(document.body.dataset.drawn) >= 1 && document.body.dataset.figuresDrawing === '0'"
    )
    return page


def act(page, action) -> dict:
    """Do ``action`` (a function of the page), wait for the redraw it causes, -> the figure as drawn."""
    before = int(page.evaluate("document.body.dataset.drawn"))
    action(page)
    page.wait_for_function(
        "(n) => Number(document.body.dataset.drawn) > n && document.body.dataset.figuresDrawing === '0'", arg=before
    )
    return page.evaluate(READ_FIGURE)


def choose(page, box: str, value) -> dict:
    return act(page, lambda p: p.click(f"#{box} button[data-choice='{value}']"))


def go_to_step(page, step: int) -> dict:
    """1-based step by the slider."""
    return act(page, lambda p: p.locator("#step-slider").fill(str(step)))


def state(page) -> dict:
    return page.evaluate("({...document.body.dataset})")


def matrix(z) -> np.ndarray:
    """A drawn matrix: Plotly's packed form as sent, or rows (None = blank -> NaN)."""
    if isinstance(z, dict):
        return array(z).astype(np.float64)
    return np.array([[np.nan if v is None else v for v in row] for row in z], dtype=np.float64)


def assert_rows_until(z, expected: np.ndarray, step: int | None, keys_grow: bool = False) -> None:
    """The drawn matrix holds ``expected`` (Tq, Tk) up to row ``step`` (0-based; None = all), the rest blank."""
    drawn = matrix(z)
    assert drawn.shape == expected.shape
    last = expected.shape[0] - 1 if step is None else step
    cols = last + 1 if keys_grow else expected.shape[1]
    np.testing.assert_array_equal(drawn[: last + 1, :cols], expected[: last + 1, :cols].astype(np.float32))
    assert np.isnan(drawn[last + 1 :]).all() and np.isnan(drawn[:, cols:]).all()


def test_the_lesson_draws_offline_and_asks_for_nothing_outside_its_folder(browser, lesson):
    url, traces = lesson
    page = open_lesson(browser, url)
    figure = page.evaluate(READ_FIGURE)
    assert figure["data"] and figure["data"][0]["type"] == "heatmap"
    assert state(page) == {**state(page), "view": "attention", "kind": "cross", "step": str(traces[0].num_steps)}
    assert page.refused == [] and page.errors == []
    assert page.locator("#translation").text_content() == traces[0].translation
    page.close()


@pytest.mark.parametrize(
    "start, title",
    [
        (Start(1, "attention", "encoder", 2, "3", 2), "layer 2, head 3"),
        (Start(2, "next", "decoder_self", 1, "all", 1, "Downloaded on the app's Model tab."), "Step 1:"),
        (Start(1, "masks", "cross", 2, "mean", 3, "A note."), None),
    ],
    ids=["attention", "next-of-sentence-2", "masks"],
)
def test_the_page_opens_on_its_start(browser, written, tmp_path, start, title):
    """<body data-sentence data-view data-kind data-layer data-head data-step> are the start record's (data-head the
    head button's choice: "2" is head 3), the figure drawn is that view's, and the note is shown where there is one."""
    _, sentences = written
    page = open_lesson(browser, write_lesson(sentences, tmp_path / "lesson", start=start).as_uri())
    head = str(int(start.head) - 1) if start.head.isdigit() else start.head
    expected = {"sentence": start.sentence, "view": start.view, "kind": start.kind, "layer": start.layer, "head": head}
    assert {key: state(page)[key] for key in (*expected, "step")} == {
        **{key: str(value) for key, value in expected.items()},
        "step": str(start.step),
    }
    figure = page.evaluate(READ_FIGURE)
    if title:
        assert title in figure["title"]
    if start.view == "masks":
        trace = sentences[start.sentence - 1].trace
        np.testing.assert_array_equal(matrix(figure["data"][1]["z"]), trace.causal_mask[: start.step])
    note = page.locator("#start-note")
    assert note.is_visible() == bool(start.note) and note.text_content() == start.note
    assert page.locator("#attention-controls").is_visible() == (start.view == "attention")
    assert page.refused == [] and page.errors == []
    page.close()


@pytest.mark.parametrize(
    "kind, layer, head, step",
    [("cross", 2, "2", 3), ("decoder_self", 1, "mean", 2), ("encoder", 2, "all", 4), ("decoder_self", 2, "all", 1)],
)
def test_the_drawn_attention_is_the_traces(browser, lesson, kind, layer, head, step):
    url, traces = lesson
    trace, page = traces[0], open_lesson(browser, url)
    choose(page, "kind-choices", kind)
    choose(page, "layer-choices", layer - 1)
    choose(page, "head-choices", head)
    figure = go_to_step(page, step)
    weights = getattr(trace, ATTENTION_KINDS[kind].weights_field)[layer - 1]  # (h, Tq, Tk)
    t = None if kind == "encoder" else step - 1
    if head == "all":
        assert len(figure["data"]) == weights.shape[0]
        for h, series in enumerate(figure["data"]):
            assert_rows_until(series["z"], weights[h], t, kind == "decoder_self")
    else:
        expected = weights.mean(axis=0) if head == "mean" else weights[int(head)]
        assert_rows_until(figure["data"][0]["z"], expected, t, kind == "decoder_self")
        named = "mean of" if head == "mean" else f"head {int(head) + 1}"
        assert f"layer {layer}, {named}" in figure["title"]
    if t is not None:  # the step's row is outlined, later rows unnamed
        assert figure["shapes"] and all(y0 == t - 0.5 for y0, _ in figure["shapes"])
    page.close()


def test_the_candidates_masks_and_positions_are_the_traces(browser, lesson):
    url, traces = lesson
    page, trace = open_lesson(browser, url), traces[0]
    step = 3
    go_to_step(page, step)
    figure = choose(page, "view-tabs", "next")
    np.testing.assert_array_equal(array(figure["data"][0]["x"]), trace.candidate_probs[step - 1])
    assert figure["title"].startswith(f"Step {step}:")
    # the kind, layer and head buttons belong to the attention view alone: hidden with it, on screen too
    assert not page.locator("#attention-controls").is_visible()
    figure = choose(page, "view-tabs", "masks")
    assert not page.locator("#attention-controls").is_visible()
    causal, decoder, cross = (matrix(series["z"]) for series in figure["data"][1:])
    np.testing.assert_array_equal(causal, trace.causal_mask[:step])
    np.testing.assert_array_equal(decoder, trace.decoder_mask)
    np.testing.assert_array_equal(cross, trace.cross_mask)
    figure = choose(page, "view-tabs", "positions")
    table = (
        matrix(figure["data"][0]["z"]) if isinstance(figure["data"][0]["z"], list) else array(figure["data"][0]["z"])
    )
    assert table.shape[0] >= len(trace.source_tokens) and np.abs(table).max() <= 1
    page.close()


def signature(figure: dict) -> str:
    return repr((figure["title"], [series["z"] for series in figure["data"]][:2], figure["shapes"]))


def test_every_control_changes_the_figure(browser, lesson):
    url, traces = lesson
    page = open_lesson(browser, url)
    last = page.evaluate(READ_FIGURE)
    controls = [
        ("#step-first", None),
        ("#step-next", None),
        ("#step-last", None),
        ("#step-prev", None),
        ("#head-choices button[data-choice='1']", None),
        ("#head-choices button[data-choice='mean']", None),
        ("#head-choices button[data-choice='all']", None),
        ("#layer-choices button[data-choice='1']", None),
        ("#kind-choices button[data-choice='encoder']", None),
        ("#kind-choices button[data-choice='decoder_self']", None),
        ("#view-tabs button[data-choice='next']", None),
        ("#view-tabs button[data-choice='positions']", None),
        ("#view-tabs button[data-choice='masks']", None),
        ("#view-tabs button[data-choice='attention']", None),
    ]
    for selector, _ in controls:
        figure = act(page, lambda p: p.click(selector))
        assert signature(figure) != signature(last), selector
        last = figure
    figure = act(page, lambda p: p.select_option("#sentence-menu", "1"))  # the second sentence
    assert signature(figure) != signature(last) and state(page)["sentence"] == "2"
    assert page.locator("#source").text_content() == traces[1].source_text
    page.close()


def test_the_keys_step_and_play(browser, lesson):
    url, traces = lesson
    page, total = open_lesson(browser, url), traces[0].num_steps
    for key, step in (
        ("Home", 1),
        ("ArrowRight", 2),
        ("ArrowRight", 3),
        ("ArrowLeft", 2),
        ("End", total),
        ("ArrowRight", total),
        ("ArrowLeft", total - 1),
    ):
        act(page, lambda p: p.keyboard.press(key))
        assert state(page)["step"] == str(step), key
    act(page, lambda p: p.keyboard.press("Home"))
    page.keyboard.press(" ")  # play: the steps go on by themselves
    page.wait_for_function("() => Number(document.body.dataset.step) >= 3")
    assert page.locator("#play").text_content() == "Pause"
    page.keyboard.press(" ")
    page.wait_for_function("() => document.getElementById('play').textContent === 'Play'")
    page.close()


@pytest.mark.parametrize("viewport, theme", [((1280, 720), "dark"), ((390, 844), "light"), ((390, 844), "dark")])
def test_the_lesson_fits_each_screen_in_each_theme(browser, lesson, viewport, theme):
    from visualizer.theme import DARK_BACKGROUND

    url, _ = lesson
    page = open_lesson(browser, url, viewport, theme)
    figure = page.evaluate(READ_FIGURE)
    assert (figure["paper"] == DARK_BACKGROUND) == (theme == "dark")
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport[0]  # nothing scrolls the page sideways
    box = page.locator("#figure .main-svg").first.bounding_box()
    assert box["width"] <= viewport[0] and box["height"] > 150
    page.click("#theme-toggle")  # the other theme, live: figures.js draws the figure again in it
    page.wait_for_function(
        "(dark) => (document.getElementById('figure').layout.paper_bgcolor === dark) === document.body.classList.contains('dark')"
        " && document.body.dataset.figuresDrawing === '0'",
        arg=DARK_BACKGROUND,
    )
    assert page.evaluate("document.body.classList.contains('dark')") == (theme != "dark")
    page.close()
