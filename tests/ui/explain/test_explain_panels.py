"""The Explain panels as one list (ui/explain/panels.py): every panel module declares its `PANEL` and is found, in
`place` order, with no two panels sharing a place, id or title; and a result a panel's button kept for one
translation is never drawn for another (`kept_for` / `sentence_matches`, the one way a panel keeps results)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from explain_page import ExplainPage
from model import load_checkpoint
from model.decoding.greedy import translate
from ui.explain import panels
from ui.explain.panels import PANELS, declared_panels

EXPLAIN = Path(panels.__file__).parent


def test_panels_are_in_place_order_with_unique_places_ids_and_titles():
    places = [panel.place for panel in PANELS]
    assert places == sorted(places) and len(set(places)) == len(places)
    assert len({panel.id for panel in PANELS}) == len({panel.title for panel in PANELS}) == len(PANELS)


def test_every_module_with_a_build_is_a_declared_panel():
    """A panel module (one defining `build`) that forgot its PANEL would be a panel missing from the tab."""
    builders = {
        path.stem
        for path in EXPLAIN.glob("*.py")
        if any(isinstance(node, ast.FunctionDef) and node.name == "build" for node in ast.parse(path.read_text()).body)
    }
    builders.discard("tab")  # the tab itself
    declared = {panel.build.__module__.rpartition(".")[2] for panel in PANELS}
    assert builders == declared


def test_two_panels_with_one_place_are_refused():
    with pytest.raises(ValueError, match="share a place"):
        declared_panels(["rollout", "rollout"])


@pytest.fixture(scope="module")
def demo(tiny_checkpoint):
    from ui.app import build_demo

    return build_demo(tiny_checkpoint)


@pytest.fixture(scope="module")
def two_traces(tiny_checkpoint):
    checkpoint = load_checkpoint(tiny_checkpoint)
    return [
        translate(checkpoint.model, checkpoint.tokenizer, text, "de-en", max_new_tokens=4)
        for text in ("Ein Mann fährt Fahrrad.", "Zwei Hunde spielen im Schnee.")
    ]


@pytest.mark.parametrize(
    "button, shown", [("cache-run", "cache-plot"), ("nope-run", "nope-plot"), ("attribution-run", "attribution-plot")]
)
def test_a_result_kept_for_one_translation_is_not_drawn_for_another(demo, two_traces, button, shown):
    first, second = two_traces
    page = ExplainPage(demo, first)
    page.draw()  # the Explain tab showing the first translation
    page.press(button, first)
    assert page.shown(shown) is not None
    page.values[page.trace_state] = second  # the kept result stays in its gr.State until the redraw clears it
    page.set({})
    assert page.shown(shown) is None


def test_the_panel_bar_holds_only_tabs(demo):
    """Gradio's tab bar numbers a tab by its place among *all* the children of gr.Tabs: a gr.State built
    between two panels shifted every later tab by one, so opening "Flow to the source" drew its button over
    "KV cache" (two "Flow to the source", no "KV cache"). Anything a panel keeps goes inside its gr.Tab."""
    bar = next(block for block in demo.blocks.values() if getattr(block, "elem_id", None) == "explain-panels")
    assert [type(child).__name__ for child in bar.children] == ["Tab"] * len(PANELS)
