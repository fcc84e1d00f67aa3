"""The Compare tab (ui/compare.py) as the page's one redraw draws it: every number it shows (top-key weights,
the "differs by" ranking, the candidates and their probabilities, the lines of both figures) equals two
independent translations of the two sentences (model.decoding.greedy.translate, recomputed here with plain
loops); the first sentence's numbers never come from the second's trace; bad input gives one message and a
cleared result; a share link and the blog post's pair restore a comparison (the page driven as the browser drives
it, tests/support/page_driver.py), and the pair's notice leads back to the visitor's own sentence."""

from __future__ import annotations

import html
import re
from urllib.parse import parse_qsl, urlsplit

import gradio as gr
import numpy as np
import pytest
from helpers import array, figure_of, translator_of
from lines_figure import drawn_lines
from page_driver import PageDriver

from model.analysis import compare as model_compare
from model.analysis.compare import translating_step
from model.decoding.greedy import translate
from model.text.tokenizer import SPECIAL_TOKENS
from serving.translation import notices
from ui import build_demo, compare, compare_second, compare_views, redraw, session, share
from ui import share_link
from ui.common import Page
from ui.text import BLOG_PAIR, DIRECTION_LABELS
from visualizer.lines import LINE_THRESHOLD

TIRED, WIDE, DIRECTION = BLOG_PAIR


@pytest.fixture(scope="module")
def independent(checkpoint):
    """The two sentences translated directly, not through the page."""
    return tuple(translate(checkpoint.model, checkpoint.tokenizer, text, DIRECTION) for text in (TIRED, WIDE))


@pytest.fixture(scope="module")
def translator(checkpoint):
    """The page's one Translate action (serving/translation.py) over the tiny checkpoint."""
    return translator_of(checkpoint)


@pytest.fixture(scope="module")
def tab(checkpoint, translator):
    """The Compare tab built as the page builds it (its views, controls and the page's trace and step)."""
    with gr.Blocks():
        trace, step, open_tab = gr.State(None), gr.Slider(1, 2), gr.State(compare.TAB_ID)
        with gr.Tabs() as tabs:
            page = Page(checkpoint, trace, step, open_tab, tabs, translator.runner_of(None))
            built = compare.build(page, translator)
    return built


@pytest.fixture(scope="module")
def demo(tiny_checkpoint) -> gr.Blocks:
    return build_demo(tiny_checkpoint)


def translated(translator, text: str, direction: str):
    """`text` through the page's one Translate action (a refused input fails the test)."""
    result = translator.translate(text, direction)
    assert not result.refused, result.refused
    return result.trace


@pytest.fixture(scope="module")
def token(independent):
    """A source token both sentences have (the tiny tokenizer may not know "▁it"), read from the direct traces."""
    first, second = independent
    shared = [
        t
        for t in first.source_tokens
        if t in second.source_tokens and t not in SPECIAL_TOKENS and not t.startswith("<2")
    ]
    return shared[len(shared) // 2]


def values(
    tab: compare.CompareTab,
    second: compare_second.Second,
    token,
    kind="encoder",
    layer=1,
    head="all",
    draw="lines",
) -> dict:
    [figures, _] = tab.views
    draw_control = figures.controls[5]
    return {tab.second: second, tab.token: token, tab.kind: kind, tab.layer: layer, tab.head: head, draw_control: draw}


def shown(tab, first, second, token, step=1, **controls) -> dict:
    """{elem_id: value} the redraw draws on the Compare tab."""
    updates = redraw.render_views(tab.views, compare.TAB_ID, first, step, values(tab, second, token, **controls))
    return {component.elem_id: value for component, value in updates.items()}


# --------------------------------------------------------------------------- independent recomputation
def top_keys(row, tokens, k=compare_views.KEYS_SHOWN) -> list[tuple[str, str]]:
    order = sorted(range(len(row)), key=lambda i: (-float(row[i]), i))[:k]
    return [(tokens[i], f"{float(row[i]):.2f}") for i in order]


def distance(a, a_tokens, b, b_tokens) -> float:
    """Total variation over keys named (token, how many times it came before)."""

    def named(row, tokens):
        weights, seen = {}, {}
        for weight, t in zip(row, tokens):
            weights[t, seen.get(t, 0)] = float(weight)
            seen[t] = seen.get(t, 0) + 1
        return weights

    x, y = named(a, a_tokens), named(b, b_tokens)
    return 0.5 * sum(abs(x.get(key, 0.0) - y.get(key, 0.0)) for key in {*x, *y})


def shown_table(text: str) -> list[tuple[str, str, list, list]]:
    """(head "kind/l/h", distance, sentence 1's keys, sentence 2's keys) of each row of the table of every head."""
    rows = re.findall(r'<tr data-head="([^"]+)">(.*?)</tr>', text)
    keys = re.compile(r'<span class="tok">(.*?)</span> ([0-9.]+)</span>')
    table = []
    for head, row in rows:
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
        table.append(
            (
                head,
                cells[2],
                [(html.unescape(t), w) for t, w in keys.findall(cells[3])],
                [(html.unescape(t), w) for t, w in keys.findall(cells[4])],
            )
        )
    return table


def candidates_of(value) -> tuple[list[str], np.ndarray, str]:
    figure = figure_of(value)
    [bars] = figure["data"]
    labels = [html.unescape(re.sub(r"</?b>", "", t)) for t in figure["layout"]["yaxis"]["ticktext"]]
    return labels, array(bars["x"]), figure["layout"]["title"]["text"]


def assert_shows(page: dict, independent, token) -> None:
    """Every number of a drawn comparison equals the direct translations' (token, its rows, the steps)."""
    first, second = independent
    at = [trace.source_tokens.index(token) for trace in independent]
    steps = []
    for n, trace, position in ((1, first, at[0]), (2, second, at[1])):
        labels, probs, title = candidates_of(page[f"compare-candidates-{n}-plot"])
        step = int(re.search(r"step (\d+)", title)[1]) - 1
        assert step == translating_step(trace, position).step
        assert labels == list(trace.candidate_tokens[step][: len(labels)])
        np.testing.assert_array_equal(probs, trace.candidate_probs[step][: len(labels)])
        steps.append(step)
    probs = " / ".join(f"{trace.candidate_probs[step][0]:.3f}" for trace, step in zip(independent, steps))
    assert f"p = {probs})" in page["compare-message"]
    expected = []
    for kind, a, b in (
        ("encoder", first.encoder_attention[:, :, at[0]], second.encoder_attention[:, :, at[1]]),
        ("cross", first.cross_attention[:, :, steps[0]], second.cross_attention[:, :, steps[1]]),
    ):
        for layer, head in np.ndindex(a.shape[:2]):
            d = distance(a[layer, head], first.source_tokens, b[layer, head], second.source_tokens)
            expected.append(
                (
                    -d,
                    ("encoder", "cross").index(kind),
                    layer,
                    head,
                    (
                        f"{kind}/{layer + 1}/{head + 1}",
                        f"{d:.3f}",
                        top_keys(a[layer, head], first.source_tokens),
                        top_keys(b[layer, head], second.source_tokens),
                    ),
                )
            )
    assert shown_table(page["compare-looks"]) == [row for *_, row in sorted(expected)]
    ranked = [value for _, value in page["compare-ranking"].choices]
    assert ranked == [row[0] for *_, row in sorted(expected)][: compare_views.RANKED]


# --------------------------------------------------------------------------- provenance
def test_the_numbers_shown_equal_two_independent_translations(tab, translator, independent, token):
    first = translated(translator, TIRED, DIRECTION)  # the page's way: both through the one Translate action
    second = compare_second.compare_with(translator, first, WIDE)
    assert second.trace is not None and second.trace.direction == DIRECTION
    page = shown(tab, first, second, token)
    assert_shows(page, independent, token)
    assert html.escape(TIRED) in page["compare-caption-1"] and html.escape(WIDE) in page["compare-caption-2"]


def test_the_second_sentences_trace_reused_for_the_first_is_caught(tab, translator, independent, token):
    second = compare_second.compare_with(translator, independent[0], WIDE)
    page = shown(tab, second.trace, second, token)  # planted fault: the same trace twice
    with pytest.raises(AssertionError):
        assert_shows(page, independent, token)


@pytest.mark.parametrize("kind", ["encoder", "cross"])
def test_both_figures_draw_the_same_head_each_from_its_own_sentence(tab, independent, token, kind):
    first, second_trace = independent
    second = compare_second.Second(second_trace)
    for n, trace in ((1, first), (2, second_trace)):
        position = trace.source_tokens.index(token)
        step = translating_step(trace, position).step
        # the page at the step after the one that translates the token in this sentence
        page = shown(tab, first, second, token, step=step + 2, kind=kind, layer=2, head="3")
        figure = figure_of(page[f"compare-plot-{n}"])
        assert figure["layout"]["title"]["text"].endswith("layer 2, head 3")
        weights = trace.encoder_attention if kind == "encoder" else trace.cross_attention
        query = position if kind == "encoder" else step  # the token's lines only
        expected = {
            (2, query, k): float(weights[1, 2, query, k])
            for k in range(len(trace.source_tokens))
            if weights[1, 2, query, k] >= LINE_THRESHOLD
        }
        assert drawn_lines(figure) == expected
        assert f"step {min(step + 2, trace.num_steps)} of {trace.num_steps}" in page[f"compare-caption-{n}"]


def test_both_figures_and_captions_show_the_pages_step(tab, independent, token):
    first, second_trace = independent
    page = shown(tab, first, compare_second.Second(second_trace), token, step=3, kind="cross", layer=1, head="1")
    for n, trace in ((1, first), (2, second_trace)):
        assert f"step 3 of {trace.num_steps}" in page[f"compare-caption-{n}"]
        assert max(query for _, query, _ in drawn_lines(figure_of(page[f"compare-plot-{n}"]))) <= 2  # rows to step 3


def test_a_ranked_head_sets_the_kind_layer_and_head_of_both_figures():
    assert compare_views.opened("cross/2/3") == ("cross", 2, "3")
    for bad in (None, "", "decoder_self/1/1", "cross/x/1", "<b>/1/1"):
        assert compare_views.opened(bad) is None


# --------------------------------------------------------------------------- bad input
def cleared(page: dict) -> bool:
    """No comparison: its ranking, table and candidates emptied, and their box hidden."""
    return (
        page["compare-looks"] == ""
        and page["compare-ranking"].choices == []
        and page["compare-candidates-1-plot"] is None
        and page["compare-candidates-2-plot"] is None
        and page["compare-result"]["visible"] is False
    )


def alone(page: dict, first) -> bool:
    """The first sentence drawn alone: its caption and figure, the second's box hidden and empty."""
    return (
        html.escape(first.source_text) in page["compare-caption-1"]
        and figure_of(page["compare-plot-1"])["data"] != []
        and page["compare-pair"]["visible"] is True
        and page["compare-side-2"]["visible"] is False
        and page["compare-plot-2"] is None
    )


def test_bad_input_gives_one_message_and_a_cleared_result(tab, translator, independent, token):
    first = independent[0]
    for text, message in (("  ", "second sentence is empty"), ("x" * 6000, "the limit is")):
        page = shown(tab, first, compare_second.compare_with(translator, first, text), token)
        assert message in page["compare-message"] and cleared(page)
        assert alone(page, first)  # the first sentence stays, drawn alone
    assert "first sentence" in compare_second.compare_with(translator, None, WIDE).note
    other = compare_second.Second(translated(translator, "Ein Mann fährt Fahrrad.", "de-en"))
    page = shown(tab, first, other, token)
    assert "English → German and the second German → English" in page["compare-message"] and cleared(page)
    assert alone(page, first)
    # nothing in common but the special tokens: the figures stay, the token's comparison goes
    apart = compare_second.Second(translated(translator, "Wow", "en-de"))
    assert compare_second.shared_source_tokens(first, apart.trace) == []
    page = shown(tab, first, apart, token)
    assert "share no source token" in page["compare-message"] and cleared(page)
    assert page["compare-plot-1"] is not None and page["compare-plot-2"] is not None
    # without a first sentence (a refused input above) the comparison is emptied too, not left as it was
    page = {c.elem_id: v for c, v in redraw.render_views(tab.views, "next", None, 1, values(tab, other, token)).items()}
    assert "Translate a first sentence" in page["compare-message"] and cleared(page)


# --------------------------------------------------------------------------- share links and the blog pair
def test_a_share_link_restores_a_comparison(demo, independent, token):
    view = share_link.View(TIRED, DIRECTION, 1, "compare", "cross", 2, "3", WIDE, token)
    assert share_link.parse_query(dict(parse_qsl(urlsplit("http://h/" + share_link.query_string(view)).query))) == view
    driver = PageDriver(demo)
    page = driver.load(dict(parse_qsl(share_link.query_string(view)[1:])))
    assert driver.value("source") == TIRED and page["compare-second"] == WIDE
    assert driver.prop("views", "selected") == "compare"
    assert (driver.value("compare-kind"), driver.value("compare-layer"), driver.value("compare-head")) == (
        "cross",
        2,
        "3",
    )
    assert driver.value("compare-token") == token and token in driver.choices("compare-token")
    [second] = [v for v in driver.values.values() if isinstance(v, compare_second.Second)]
    assert second.trace.source_text == WIDE and second.trace.direction == DIRECTION
    np.testing.assert_array_equal(second.trace.cross_attention, independent[1].cross_attention)
    np.testing.assert_array_equal(driver.trace.cross_attention, independent[0].cross_attention)
    # the same answer draws the comparison, and the link box names the same view
    assert page["compare-plot-1"] is not None and page["compare-plot-2"] is not None
    assert_shows(page, independent, token)
    assert page["share-link"] == driver.url + share_link.query_string(view)


def ranked_first(independent, token) -> tuple[str, int, int, int]:
    """(kind, 1-based layer, 1-based head, the 0-based step that translates `token` in the first sentence): the
    head that differs most between the two sentences, ranked here with plain loops."""
    first, second = independent
    at = [t.source_tokens.index(token) for t in independent]
    steps = (translating_step(first, at[0]).step, translating_step(second, at[1]).step)
    ranked = sorted(
        (-distance(a[layer, head], first.source_tokens, b[layer, head], second.source_tokens), k, layer, head)
        for k, (a, b) in enumerate(
            (
                (first.encoder_attention[:, :, at[0]], second.encoder_attention[:, :, at[1]]),
                (first.cross_attention[:, :, steps[0]], second.cross_attention[:, :, steps[1]]),
            )
        )
        for layer, head in np.ndindex(first.encoder_attention.shape[:2] if k == 0 else first.cross_attention.shape[:2])
    )
    _, kind, layer, head = ranked[0]
    return ("encoder", "cross")[kind], layer + 1, head + 1, steps[0]


def test_the_blog_pair_opens_with_one_click(demo, independent):
    driver = PageDriver(demo)
    driver.load()
    page = driver.click("compare-example")
    assert "source" in page and (driver.value("source"), page["direction"], page["compare-second"]) == (
        TIRED,
        DIRECTION,
        WIDE,
    )
    assert driver.trace.output_ids == independent[0].output_ids
    # it opens on the head that differs most (ranked here with plain loops), at the step that translates the token
    token = driver.value("compare-token")
    kind, layer, head, step = ranked_first(independent, token)
    assert driver.prop("views", "selected") == "compare"
    assert (driver.value("compare-kind"), driver.value("compare-layer"), driver.value("compare-head")) == (
        kind,
        layer,
        str(head),
    )
    assert driver.value("step") == step + 1  # the player bar and both captions: the step that translates the token
    assert f"step {step + 1} of {driver.trace.num_steps}" in page["compare-caption-1"]
    assert_shows(page, independent, token)  # drawn in the same answer


def test_the_blog_pair_says_it_replaced_your_sentence_and_back_restores_it(demo):
    """The pair replaces the visitor's sentence (and here its direction): the notice says so and "Back to your
    sentence" appears; it brings the sentence, its direction and its translation back, and goes."""
    own, own_direction = ("Zwei Hunde spielen im Schnee.", "de-en") if DIRECTION == "en-de" else (TIRED, "en-de")
    driver = PageDriver(demo)
    driver.load()
    driver.translate(own, own_direction)
    mine = driver.trace
    assert driver.prop("compare-back", "visible") is False
    page = driver.click("compare-example")
    assert driver.trace.source_text == TIRED and driver.value("direction") == DIRECTION
    notice = page["notice"]
    assert "in place of your sentence" in notice and "Back to your sentence" in notice
    assert f"the direction is now {DIRECTION_LABELS[DIRECTION]}" in notice
    assert driver.prop("compare-back", "visible") is True
    driver.click("compare-example")  # the pair again: the way back still leads to the visitor's sentence
    assert driver.prop("compare-back", "visible") is True
    page = driver.click("compare-back")
    assert "source" in page and (driver.value("source"), page["direction"]) == (own, own_direction)
    assert driver.trace.source_text == own and driver.trace.output_ids == mine.output_ids
    assert page["translation"] == mine.translation and driver.value("step") == mine.num_steps
    assert page["notice"] == session.notice_markdown(notices(driver.trace))  # the sentence's own notices
    assert driver.prop("compare-back", "visible") is False
    assert driver.click("compare-back") == {}  # nothing kept any more: nothing changes


def test_back_to_your_sentence_shows_it_alone_and_compares_only_when_asked(demo):
    """After "Back to your sentence" the Compare tab shows the visitor's sentence alone, its figure drawn and the
    second's box hidden, with one line on how to compare it in its own language; a new sentence translated above is
    not compared with the pair's leftover; a Compare click compares."""
    own, language = ("Zwei Hunde spielen im Schnee.", "German") if DIRECTION == "en-de" else (TIRED, "English")
    own_direction = "de-en" if DIRECTION == "en-de" else "en-de"
    driver = PageDriver(demo)
    driver.load()
    driver.translate(own, own_direction)
    driver.click("compare-example")
    page = driver.click("compare-back")
    assert driver.trace.source_text == own and driver.value("compare-second") == ""
    assert not any(isinstance(v, compare_second.Second) for v in driver.values.values())  # the pair's second is gone
    assert alone(page, driver.trace) and cleared(page)
    line = page["compare-message"]
    assert "⚠️" not in line and "\n" not in line and f"in {language} and press **Compare**" in line
    assert not any(label in line for label in DIRECTION_LABELS.values())  # no advice to translate anything
    # a new sentence typed above and translated: shown alone, not compared with anything left over
    other, second = ("Ein Kind isst einen Apfel.", "Ein Mann fährt Fahrrad.")
    if own_direction == "en-de":
        other, second = ("A child eats an apple.", "A man rides a bike.")
    page = driver.translate(other, own_direction)
    assert alone(page, driver.trace) and cleared(page) and "becomes" not in page["compare-message"]
    # asked: a Compare click compares the two (they share a token), both figures shown
    driver.set("compare-second", second)
    page = driver.click("compare-go")
    assert "becomes" in page["compare-message"] and page["compare-result"]["visible"] is True
    assert page["compare-side-2"]["visible"] is True and html.escape(second) in page["compare-caption-2"]


@pytest.mark.parametrize("written", ["German", "English"])
def test_a_second_sentence_of_another_direction_gets_advice_in_its_own_language(tab, translator, written):
    """A second sentence translated English → German beside a first translated German → English: German text is
    advised to be translated German → English too, English text to be replaced by a German sentence (never
    translated German → English)."""
    first = translated(translator, "Ein Mann fährt Fahrrad.", "de-en")
    text = {"German": "Zwei Hunde spielen im Schnee.", "English": WIDE}[written]
    message = compare_second.problem(first, compare_second.Second(translated(translator, text, "en-de")))
    if written == "German":
        assert message.endswith("press **Compare** to translate the second German → English too.")
    else:
        assert "translate the second" not in message
        assert message.endswith(
            "the second is written in English; type a second sentence in German and press **Compare**."
        )


def test_the_blog_pair_on_a_page_without_a_sentence_offers_no_way_back(demo):
    driver = PageDriver(demo)
    driver.load({"text": ""})
    page = driver.click("compare-example")
    assert driver.trace.source_text == TIRED
    assert "Opened the blog post's pair" in page["notice"] and "your sentence" not in page["notice"]
    assert driver.prop("compare-back", "visible") is False


def test_the_link_names_the_comparison_on_the_compare_tab(tab, independent, token):
    first, second_trace = independent
    link = share.link(
        first,
        1,
        "compare",
        page_url="http://h/?x=1",
        **tab.link_fields(values(tab, compare_second.Second(second_trace), token, kind="cross", layer=2, head="3")),
    )
    assert link == "http://h/" + share_link.query_string(
        share_link.View(TIRED, DIRECTION, 1, "compare", "cross", 2, "3", WIDE, token)
    )


# --------------------------------------------------------------------------- the plain sentences
WORDS = ["<2de>", "▁The", "▁anim", "al", "▁crossed", "▁the", "▁street", "▁because", "▁it", "▁was", "▁tired", "."]
IT = WORDS.index("▁it")


def made_comparison(
    weights_to: dict[str, float], sentence: int = 1, outputs=("▁es", "▁es"), second_to: dict[str, float] | None = None
) -> model_compare.Comparison:
    """Two sentences of WORDS whose encoder rows of "▁it" (2 layers x 2 heads) look at "▁was" alone, except that
    layer 1, head 2 of `sentence` sends `weights_to` = {token: weight} (and of the other sentence `second_to`) and the
    rest of its row to "▁was"; "▁it" becomes `outputs` in the two sentences."""

    def looks(n: int) -> model_compare.TokenLooks:
        rows = np.zeros((2, 2, len(WORDS)))
        rows[..., WORDS.index("▁was")] = 1.0
        sends = weights_to if n == sentence else second_to
        if sends:
            rows[0, 1] = 0.0
            for token, weight in sends.items():
                rows[0, 1, WORDS.index(token)] = weight
            rows[0, 1, WORDS.index("▁was")] += 1 - sum(sends.values())
        chosen = outputs[n - 1]
        step = model_compare.TranslatingStep(3, "alignment", chosen, [chosen, "▁sie"], np.array([0.9, 0.05]), 0.5)
        return model_compare.TokenLooks(IT, rows, step, np.full((2, 2, len(WORDS)), 1 / len(WORDS)), list(WORDS))

    first, second = looks(1), looks(2)
    head = model_compare.HeadDifference("encoder", 0, 1, 0.5)
    return model_compare.Comparison("▁it", first, second, np.zeros((2, 2)), np.zeros((2, 2)), [head])


def test_the_summary_says_whether_the_output_tells_the_two_apart():
    said = compare_views.summary(made_comparison({}), ("animal", "street"))
    assert said.startswith("**“it” becomes “es” in both sentences** (step 4, p = 0.900 / 0.900)")
    assert "does not tell the two “it”s apart" in said
    said = compare_views.summary(made_comparison({}, outputs=("▁es", "▁sie")), ("animal", "street"))
    assert said.startswith("**“it” becomes “es” in sentence 1 and “sie” in sentence 2**")
    assert "its output tells the two apart" in said and "does not" not in said.split("**")[2].split(".")[0]


def test_the_sentence_says_no_head_links_it_below_a_quarter_with_both_sentences_numbers():
    # "animal" is two pieces: its weight is theirs together, 0.06 + 0.04 in sentence 1; sentence 2 sends it nothing
    said = compare_views.story(made_comparison({"▁anim": 0.06, "al": 0.04}), ("animal", "street"))
    assert said.startswith(
        "No encoder head links “it” to “animal” or “street”: the most any sends is encoder layer 1 · head 2, to "
        "“animal”, 0.10 / 0.00 of its attention (sentence 1 / sentence 2)."
    )


def test_the_sentence_names_the_head_that_links_it_and_its_weight_in_both_sentences():
    said = compare_views.story(made_comparison({"▁street": 0.30}, 2, second_to={"▁street": 0.28}), ("animal", "street"))
    assert said.startswith(
        "The encoder head that links “it” most to “animal” or “street” is encoder layer 1 · head 2: it sends “street” "
        "0.28 / 0.30 of its attention (sentence 1 / sentence 2), about the same in both, so this head does not "
        "separate the sentences either."
    )
    said = compare_views.story(made_comparison({"▁street": 0.60}, 2, second_to={"▁street": 0.28}), ("animal", "street"))
    assert "it sends “street” 0.28 / 0.60 of its attention (sentence 1 / sentence 2), more in sentence 2." in said
    said = compare_views.story(made_comparison({"▁street": 0.24}, sentence=2), ("animal", "street"))
    assert said.startswith("No encoder head links “it”") and "0.00 / 0.24" in said


def test_the_sentence_names_the_keys_the_top_head_differs_on_with_both_weights():
    said = compare_views.story(made_comparison({"▁tired": 0.7}), ("animal", "street"))
    # the top head (layer 1, head 2): sentence 1 sends "tired" 0.70 and "was" 0.30, sentence 2 "was" 1.00: both words
    # differ by 0.70, named in the sentence's order
    assert said.endswith(
        "differ most between the sentences is encoder self · layer 1 · head 2 (by 0.50 of 1), most at “was” "
        "(0.30 / 1.00) and “tired.” (0.70 / 0.00)."
    )


def test_the_sentence_names_whole_words_its_pieces_weights_summed():
    """The top head of sentence 1 sends "▁anim" 0.30 and "al" 0.40 (the word “animal”: 0.70), sentence 2 none: the
    summary names “animal” with 0.70 / 0.00, never its piece “al”, and the grid labels both pieces."""
    result = made_comparison({"▁anim": 0.3, "al": 0.4})
    said = compare_views.story(result, ("animal", "street"))
    assert said.endswith("most at “animal” (0.70 / 0.00) and “was” (0.30 / 1.00).")
    assert "“al”" not in said and "“anim”" not in said
    pieces = [WORDS.index("▁anim"), WORDS.index("al")]
    assert set(pieces) <= set(compare_views.named_positions(result, 1, "encoder")[1])


def test_the_grid_of_every_head_always_names_the_token_and_the_words_the_summary_names():
    """The token first, then the pieces of the words the top head differs on (“was”, “tired.”: "▁tired" and "."), then the
    referent word's pieces (“animal”: no head links “it” to either word, the most any sends goes to “animal”); the
    decoder's row of the step that translates the token (step 4)."""
    result = made_comparison({"▁tired": 0.7})
    said = compare_views.summary(result, ("animal", "street"))
    assert all(f"“{word}”" in said for word in ("it", "was", "tired.", "animal"))
    words = [WORDS.index(word) for word in ("▁it", "▁was", "▁tired", ".", "▁anim", "al")]
    assert compare_views.named_positions(result, 1, "encoder", ("animal", "street")) == (words, words)
    assert compare_views.named_positions(result, 2, "cross", ("animal", "street")) == ([3], words)
    assert compare_views.named_positions(result, 1, "decoder_self", ("animal", "street")) == ([3], [])


@pytest.mark.parametrize("kind", ["encoder", "cross"])
def test_both_grids_of_every_head_keep_the_tokens_label(tab, independent, token, kind):
    """Drawn as a heatmap of every head, each sentence's grid names the token (and, in cross-attention, the step
    that translates it) among the labels the page always draws (meta.cells, ui/js/figures.js); the page at the step
    that translates it in the first sentence."""
    first, second_trace = independent
    step = translating_step(first, first.source_tokens.index(token)).step + 1
    page = shown(
        tab, first, compare_second.Second(second_trace), token, step, kind=kind, layer=1, head="all", draw="heatmap"
    )
    named = []
    for n, trace in ((1, first), (2, second_trace)):
        layout = figure_of(page[f"compare-plot-{n}"])["layout"]
        keep = layout["meta"]["cells"]["keep"]  # counted within the figure's window (a long sentence's)
        keys, rows = (
            [axis["ticktext"] for name, axis in layout.items() if name.startswith(side) and "ticktext" in axis][0]
            for side in ("xaxis", "yaxis")
        )
        position = trace.source_tokens.index(token)
        row = position if kind == "encoder" else translating_step(trace, position).step
        assert keys[keep["x"][0]].startswith(f"{position} ")  # the token first: it wins where two are too close
        if any(label.startswith(f"{row} ") for label in rows):  # its row drawn (not after the step, in the window)
            assert rows[keep["y"][0]].startswith(f"{row} ")
            named.append(n)
        else:
            assert kind == "cross" and row + 1 > step or keep["y"] == []
    assert 1 in named


def plain_words(tokens, specials: bool = False) -> list[tuple[str, list[int]]]:
    """(word, its pieces' positions) written out: a new word at each "▁", the special tokens left out (`specials`:
    each a word of its own, and the piece after one starts a word)."""
    words, current = [], None
    for i, piece in enumerate(tokens):
        if piece in SPECIAL_TOKENS or piece.startswith("<2"):
            if specials:
                words.append([piece, [i]])
                current = None
            continue
        if piece.startswith("▁") or current is None:
            current = ["", []]
            words.append(current)
        current[0] += piece.replace("▁", "")
        current[1].append(i)
    return [(text, positions) for text, positions in words]


def test_the_blog_pairs_sentences_are_both_traces_numbers(independent):
    """Without "▁it" in the tiny tokenizer the pair's shared token stands in. Found here with plain loops over both
    traces: the head and word ("animal" or "street", pieces summed) with the largest weight in either sentence, and
    that head's weight in each; the output token in each; the keys where the top head's two rows differ most."""
    first, second = independent
    token = compare_second.pick_token(first, second, "▁it")
    result = compare_second.comparison(first, second, token)
    queries = [trace.source_tokens.index(token) for trace in independent]
    said = compare_views.summary(result, ("animal", "street"))
    # the output at the step that translates the token, in each sentence
    outputs = [trace.output_tokens[translating_step(trace, q).step] for trace, q in zip(independent, queries)]
    assert ("in both sentences**" in said) == (outputs[0] == outputs[1])
    # the strongest link, and the same head's weight in the other sentence
    best, where = -1.0, None
    for name in ("animal", "street"):
        found = []
        for trace in independent:
            pieces = [p for text, p in plain_words(trace.source_tokens) if text.strip(".,").lower() == name]
            found.append(pieces[0] if pieces else None)
        for layer, head in np.ndindex(first.encoder_attention.shape[:2]):
            weights = [
                None if p is None else sum(float(t.encoder_attention[layer, head, q, i]) for i in p)
                for t, q, p in zip(independent, queries, found)
            ]
            if max(w or 0.0 for w in weights) > best:
                best, where = max(w or 0.0 for w in weights), (name, layer, head, weights)
    if where is None:
        assert "Neither sentence has" in said
    else:
        name, layer, head, weights = where
        shown = " / ".join("–" if w is None else f"{w:.2f}" for w in weights)
        assert f"encoder layer {layer + 1} · head {head + 1}" in said and f"{shown} of its attention" in said
        assert ("No encoder head links" in said) == (best < 0.25)  # a quarter of the token's attention, as said
    # the top head (ranked independently in test_the_numbers_shown_equal_two_independent_translations): the words
    # (their pieces' weights summed) where its two rows differ most
    top = result.ranking[0]
    rows = [
        (
            t.encoder_attention[top.layer, top.head, q]
            if top.kind == "encoder"
            else t.cross_attention[top.layer, top.head, s]
        )
        for t, q, s in zip(independent, queries, [translating_step(t, q).step for t, q in zip(independent, queries)])
    ]
    named = []
    for t, r in zip(independent, rows):
        words, seen = {}, {}
        for text, pieces in plain_words(t.source_tokens, specials=True):
            words[text, seen.get(text, 0)] = sum(float(r[i]) for i in pieces)
            seen[text] = seen.get(text, 0) + 1
        named.append(words)
    keys = list(dict.fromkeys([*named[0], *named[1]]))
    gaps = sorted(keys, key=lambda k: -abs(named[0].get(k, 0.0) - named[1].get(k, 0.0)))[:2]
    for key in gaps:
        a, b = named[0].get(key), named[1].get(key)
        numbers = f"{a:.2f} / {b:.2f}" if a is not None and b is not None else None
        text = f"“{html.escape(key[0])}” ("
        assert text in said.split("differ most between")[1]
        if numbers:
            assert f"{text}{numbers})" in said
