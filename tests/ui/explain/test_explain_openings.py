"""How the Explain tab's panels open, on the page that build_demo makes (a tiny checkpoint with its training film
and corpus file, so every panel has its full layout): each opens with one sentence saying what it shows and how
to read it, the rest of its prose folded in a closed accordion under its figure; and no panel text, before or
after any of its buttons, shows an HTML entity or Markdown's asterisks instead of what they stand for.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
from html.parser import HTMLParser

import gradio as gr
import numpy as np
import pytest
from markdown_it import MarkdownIt

from model import load_checkpoint
from model.analysis.corpus.collect import CorpusSettings, compute_corpus_heads
from model.analysis.corpus.store import CORPUS_FILE, save_corpus
from model.analysis.paper_figures import PAPER_FIGURES
from model.decoding.greedy import translate
from model.training import film
from explain_page import ExplainPage
from helpers import plain_words
from ui.common import markdown_text
from ui.explain.panels import PANELS
from ui.explain import attribution, paper, panel
from ui.explain.branching import branch_choices

SMALL = CorpusSettings(importance_sentences=3, prune_sentences=3, map_sentences=3, prune_points=3, batch_size=4)
SHORT_SENTENCES = {  # the figures' words in sentences short enough for the tiny tokenizer
    "figure-3": "laws making the process more difficult.",
    "figures-4-5": "The Law is fine, but its application is not.",
}
RAW = ("&#x", "&#", "&lt;", "&gt;", "&amp;", "**")  # what a reader must never see in place of a character
LEAD_MAX = 200


# --------------------------------------------------------------------------- the page
@pytest.fixture(scope="module")
def checkpoint_dir(film_run, pairs, tmp_path_factory):
    """A copy of the film run's checkpoint with its training film and its corpus file beside it."""
    directory = tmp_path_factory.mktemp("openings") / "tiny"
    shutil.copytree(film_run / "best", directory)
    shutil.copy(film_run / film.FILM_FILE, directory / film.FILM_FILE)
    checkpoint = load_checkpoint(directory)
    data = compute_corpus_heads(checkpoint.model, checkpoint.tokenizer, pairs, SMALL, log=lambda *_: None)
    save_corpus(directory / CORPUS_FILE, data)
    return directory


@pytest.fixture(scope="module")
def demo(checkpoint_dir) -> gr.Blocks:
    from ui.app import build_demo

    return build_demo(checkpoint_dir)


@pytest.fixture(scope="module")
def page_trace(checkpoint_dir):
    checkpoint = load_checkpoint(checkpoint_dir)
    return translate(checkpoint.model, checkpoint.tokenizer, "Ein Mann fährt Fahrrad.", "de-en", max_new_tokens=6)


def by_elem_id(demo, elem_id: str):
    [block] = [b for b in demo.blocks.values() if getattr(b, "elem_id", None) == elem_id]
    return block


def panels(demo) -> list[gr.Tab]:
    return list(by_elem_id(demo, "explain-panels").children)


def leaves(block) -> list:
    """The components inside a layout block, in page order, each with the chain of blocks above it."""
    found = []
    for child in getattr(block, "children", []):
        if isinstance(child, gr.blocks.BlockContext) and not isinstance(child, gr.components.Component):
            found += [(leaf, [child, *above]) for leaf, above in leaves(child)]
        else:
            found.append((child, []))
    return found


def is_text(component) -> bool:
    return isinstance(component, gr.Markdown | gr.HTML)


# --------------------------------------------------------------------------- what a reader sees
class Text(HTMLParser):
    """The text an HTML string shows (character references resolved, as a browser does)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts = []

    def handle_data(self, data):
        self.parts.append(data)


def shown_html(value: str) -> str:
    reader = Text()
    reader.feed(value)
    reader.close()
    return "".join(reader.parts)


def shown_markdown(value: str) -> str:
    """The text a Markdown string shows (rendered as CommonMark, as Gradio's Markdown does, then read as HTML)."""
    return shown_html(MarkdownIt("commonmark").render(value)).strip()


def raw_in(component, value) -> list[str]:
    """What of RAW shows in `component`'s value: a Markdown value shows its entities literally where they sit in
    code, and any asterisks it did not mean as emphasis, so its source must hold neither; an HTML value may
    escape, but what it shows must not hold an escape."""
    if not isinstance(value, str):
        return []
    if isinstance(component, gr.Markdown):
        return [raw for raw in RAW if raw in value or raw in shown_markdown(value)]
    return [raw for raw in RAW if raw in shown_html(value)]


# --------------------------------------------------------------------------- the openings
def test_every_panel_opens_with_one_sentence_and_folds_the_rest(demo):
    tabs = panels(demo)
    assert [(tab.label, tab.id) for tab in tabs] == [(declared.title, declared.id) for declared in PANELS]
    for tab in tabs:
        components = [(c, above) for c, above in leaves(tab) if not isinstance(c, gr.State)]
        first, above_first = components[0]
        assert isinstance(first, gr.Markdown) and not above_first, tab.label
        lead = first.value.strip()
        assert lead.startswith(f"{tab.label}: ") and lead.endswith("."), lead
        assert len(lead) <= LEAD_MAX and not re.search(r"[.!?]\s+\S", lead[:-1]), lead  # one sentence
        folded = [block for block in tab.children if isinstance(block, gr.Accordion)]
        assert [(block.label, block.open) for block in folded] == [(panel.MORE_ABOUT, False)], tab.label
        assert tab.children[-1] is folded[0] or isinstance(tab.children[-1], gr.State), tab.label  # under the figure
        inside = [c for c, above in components if folded[0] in above]
        assert inside and all(isinstance(c, gr.Markdown) for c in inside), tab.label
        assert sum(len(c.value) for c in inside) > len(lead), tab.label  # the prose, not a stub
        # outside the fold: the lead, controls, figures and named results (no other prose)
        unfolded = [c for c, above in components[1:] if folded[0] not in above and is_text(c)]
        assert all(c.elem_id for c in unfolded), (tab.label, [c.value for c in unfolded if not c.elem_id])


def test_every_lead_is_plain_and_every_declared_result_and_button_is_in_its_panel(demo):
    """No lead names a technical term (JARGON: they come after, in the result or the folded prose); a panel's declared
    reading (`Panel.reading`) is a text of its own sub-tab, its declared run a button there."""
    tabs = {tab.id: tab for tab in panels(demo)}
    for declared in PANELS:
        assert plain_words(declared.lead), (declared.title, declared.lead)
        inside = {getattr(leaf, "elem_id", None): leaf for leaf, _ in leaves(tabs[declared.id])}
        if declared.reading:
            assert is_text(inside.get(declared.reading)), (declared.title, declared.reading)
        if declared.run:
            assert isinstance(inside.get(declared.run), gr.Button), (declared.title, declared.run)


def test_a_panel_without_its_file_still_opens_with_its_sentence(tiny_checkpoint):
    from ui.app import build_demo

    page = build_demo(tiny_checkpoint)  # no training film, no corpus file: each says how to make it
    for tab in panels(page):
        if tab.label in ("Heads forming", "Heads across the corpus"):
            first, second, *_ = [c for c, _ in leaves(tab)]
            assert first.value.startswith(f"{tab.label}: ") and second.elem_id in ("film-missing", "corpus-missing")
            assert [(b.label, b.open) for b in tab.children if isinstance(b, gr.Accordion)] == [
                (panel.MORE_ABOUT, False)
            ]


# --------------------------------------------------------------------------- no raw entities, at any state
def test_no_panel_text_shows_an_entity_or_asterisks_before_or_after_its_buttons(demo, page_trace, monkeypatch):
    monkeypatch.setattr(
        paper, "FIGURES", tuple(dataclasses.replace(f, sentence=SHORT_SENTENCES[f.name]) for f in PAPER_FIGURES)
    )
    texts = [c for tab in panels(demo) for c, _ in leaves(tab) if is_text(c)]
    texts.append(next(c for c, _ in leaves(by_elem_id(demo, "explain-tab")) if isinstance(c, gr.Markdown)))
    page = ExplainPage(demo, page_trace)
    page.screen.update({c: c.value for c in texts})
    seen = {}

    def look(action: str) -> None:
        for component in texts:
            value = page.screen.get(component)
            assert not raw_in(component, value), (action, component.elem_id, value)
            if isinstance(value, str) and value:
                seen.setdefault(component.elem_id, action)

    look("built")
    page.set({})  # the translation drawn on the open Explain tab
    look("translated")
    n_boxes = len(next(f for f in demo.fns.values() if f.name == "on_ablate").inputs) - 1
    candidate = branch_choices(page_trace, 1).value
    presses = [
        ("corpus-heads",),
        ("ablate-run", page_trace, [1], *[[]] * (n_boxes - 1)),
        ("branch-run", page_trace, 1, candidate),
        ("beam-run", page_trace),
        ("nope-run", page_trace),
        ("paper-run", "figure-3"),
        ("cache-run", page_trace),
        ("corpus-prune-run", page_trace, 2),
        ("corpus-qk-place", page_trace, "cross", 1, 1),
        ("attribution-run", page_trace),
    ]
    for elem_id, *args in presses:
        page.press(elem_id, *args)
        look(elem_id)
    page.set({page.step: 2})
    look("step 2")
    # every result text was on screen at some point (the presses really drew)
    assert {
        "ablate-result",
        "branch-result",
        "beam-result",
        "nope-result",
        "paper-verdict",
        "cache-facts",
        "corpus-prune-result",
        "attribution-facts",
        "changes-summary",
        "film-facts",
    } <= set(seen)
    assert "Step 2" in page.screen[by_elem_id(demo, "attribution-facts")]


def test_tokens_and_sentences_in_panel_texts_show_as_written(demo, page_trace):
    """Tokens with an apostrophe, a language tag and Markdown's own characters show as they are."""
    hostile = ["▁didn't", "<2de>", "a*b*c", "[EOS]", "R&D"]
    source = (hostile * len(page_trace.source_tokens))[: len(page_trace.source_tokens)]
    output = (hostile[::-1] * len(page_trace.output_tokens))[: len(page_trace.output_tokens)]
    trace = dataclasses.replace(page_trace, source_tokens=source, output_tokens=output)
    [kept] = ExplainPage(demo, page_trace).press("attribution-run", page_trace).values()
    for step in range(1, len(output) + 1):
        value = attribution.attribution_facts(trace, kept["result"], step)
        shown = shown_markdown(value)
        assert not raw_in(gr.Markdown(), value), value
        assert f"Step {step}, “{output[step - 1]}”" in shown, shown
        # the plain opening says whether the token the output depends on most is the one the last layer reads most
        depends = np.argmax(np.abs(kept["result"].integrated_gradients[step - 1]))
        read = np.argmax(trace.cross_attention[-1, :, step - 1].mean(0))
        assert shown.index("In detail:") > shown.index(": it depends most on")
        assert ("so here attention shows what the output rests on" in shown) == (depends == read), shown
    assert shown_markdown(markdown_text("▁didn't <2de> a*b*c [x] & \\")) == "▁didn't <2de> a*b*c [x] & \\"
    assert shown_markdown(panel.code("<2de>")) == "<2de>"
