"""Every control of the page belongs to a view: none stands in the layout without a name of its own, and none wears
only Gradio's default label.

A component built while the page is laid out lands in the layout where it is built. An update written as a component
(gr.Button(...) returned by a follower) and computed while the page is being put together (the first view drawn at
start-up) would hang at the root of the page: a dead "Run", "▶ Play" or an unlabelled "Dropdown" under every screen.
Read from the page's own config, as the browser receives it, for the page over the tiny checkpoint and for the page
with OPUS-MT's place held (ui/models.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from page_driver import PageDriver

from ui import build_demo, session
from ui.redraw import MISSING, new_value
from ui.runner import MODEL_EVENTS
from ui.text import DIRECTION_LABELS

SHIPPED = Path(__file__).resolve().parents[2] / "checkpoints" / "de-en-small"
# the components a visitor operates; a Button shows its value, every other one its label
CONTROLS = {"button", "downloadbutton", "slider", "dropdown", "radio", "checkbox", "checkboxgroup", "textbox", "number"}
# the labels Gradio's front end shows for a control built without one
DEFAULT_LABELS = {"", "Dropdown", "Slider", "Radio", "Checkbox", "Textbox", "Number", "Button", "Run", "Download"}


def laid_out(config: dict) -> list[tuple[dict, list[dict]]]:
    """Every component of the layout with the chain of components it stands in (root first)."""
    components = {component["id"]: component for component in config["components"]}
    found: list[tuple[dict, list[dict]]] = []

    def walk(node: dict, above: list[dict]) -> None:
        component = components.get(node["id"], {"id": node["id"], "type": "root", "props": {}})
        found.append((component, above))
        for child in node.get("children") or []:
            walk(child, [*above, component])

    walk(config["layout"], [])
    return found


def shown_label(component: dict) -> str:
    props = component.get("props", {})
    if component["type"] == "button":
        return str(props.get("value") or "")
    return str(props.get("label") or "") if props.get("show_label", True) else str(props.get("label") or "?")


@pytest.fixture(scope="module")
def page_config(tiny_checkpoint) -> dict:
    return build_demo(tiny_checkpoint).get_config_file()


def test_every_control_has_a_name_of_its_own(page_config):
    controls = [(c, above) for c, above in laid_out(page_config) if c["type"] in CONTROLS]
    assert len(controls) > 40  # the whole page: header, player, every tab's controls
    nameless = [
        (c["type"], shown_label(c), [a["type"] for a in above])
        for c, above in controls
        if not c["props"].get("elem_id")
    ]
    assert not nameless, f"controls that belong to no view: {nameless}"


def test_no_control_wears_only_the_default_label(page_config):
    """(A control kept hidden, such as the model menu's channel to the page's script or the page's mark, is never
    seen.)"""
    seen = [c for c, _ in laid_out(page_config) if c["props"].get("visible") not in (False, "hidden")]
    controls = [c for c in seen if c["type"] in CONTROLS]
    defaults = [(c["type"], c["props"].get("elem_id")) for c in controls if shown_label(c) in DEFAULT_LABELS]
    assert not defaults, f"controls labelled only with Gradio's default: {defaults}"


def test_the_root_holds_the_header_and_containers_only(page_config):
    """The page's root: the header's parts, the player, the tabs, the rows under them, state and timers; every
    control at the root is one the header places there by name."""
    root = [c for c, above in laid_out(page_config) if len(above) == 1]
    strays = [(c["type"], shown_label(c)) for c in root if c["type"] in CONTROLS and not c["props"].get("elem_id")]
    assert not strays
    assert {"player-bar", "views", "below-figure"} <= {c["props"].get("elem_id") for c in root}


def test_the_sentence_box_asks_for_the_language_of_the_chosen_direction(tiny_checkpoint):
    """Picking English -> German makes the empty box ask for an English sentence at once (no Translate needed), and
    back; what the visitor typed stays."""
    driver = PageDriver(build_demo(tiny_checkpoint))
    driver.load()
    assert driver.prop("source", "placeholder") == "Type a German sentence…"
    driver.set("source", "A dog runs.")
    answer = driver.input("direction", "en-de")
    assert driver.prop("source", "placeholder") == "Type an English sentence…"
    assert "source" not in answer or new_value(answer["source"]) is MISSING  # the typed sentence is kept
    driver.input("direction", "de-en")
    assert driver.prop("source", "placeholder") == "Type a German sentence…"
    assert set(session.PLACEHOLDERS) == set(DIRECTION_LABELS)  # one per direction the page offers


def test_picking_the_other_direction_swaps_the_sentence_and_its_translation():
    """With a translation on screen and its sentence in the box, picking the other direction is one action that
    moves the translation into the box and translates it back: the trace is the core's own greedy decoding of that
    text in the picked direction, and the translation box, the step and the share link are that trace's. On the
    shipped model, whose translations are sentences (the tiny one's are cut bytes)."""
    from urllib.parse import parse_qs, urlsplit

    from model import load_checkpoint
    from model.decoding.greedy import translate as core_translate

    driver = PageDriver(build_demo(SHIPPED))
    driver.load()
    driver.translate("Zwei Hunde spielen im Schnee.", "de-en")
    first = driver.trace
    assert first.translation.strip() and driver.shown("translation") == first.translation
    picks = [f for f in driver.listeners if (driver.component("direction")._id, "input") in f.targets]
    assert [f.name for f in picks] == ["pick_direction"]  # one listener, a model event like Translate
    assert picks[0].concurrency_id == driver.on("translate", "click").concurrency_id == MODEL_EVENTS
    answer = driver.input("direction", "en-de")
    assert new_value(answer["source"]) == first.translation == driver.value("source")
    trace = driver.trace
    assert (trace.source_text, trace.direction) == (first.translation, "en-de")
    checkpoint = load_checkpoint(SHIPPED)
    expected = core_translate(checkpoint.model, checkpoint.tokenizer, first.translation, "en-de")
    assert (trace.translation, trace.output_ids) == (expected.translation, expected.output_ids)
    assert driver.shown("translation") == trace.translation and driver.value("step") == trace.num_steps
    link = parse_qs(urlsplit(driver.shown("share-link")).query)
    assert (link["text"], link["dir"], link["step"]) == ([first.translation], ["en-de"], [str(trace.num_steps)])
    assert driver.prop("source", "placeholder") == "Type an English sentence…"


@pytest.mark.parametrize("box", ["", "Ein Hund läuft am Strand."], ids=["empty-box", "edited-box"])
def test_a_pick_without_its_sentence_in_the_box_only_changes_the_direction(tiny_checkpoint, box):
    """An empty box, or one holding another sentence than the translation's, keeps what it holds: the pick sets the
    direction (and the box's placeholder) and translates nothing; the radio says what a pick does."""
    driver = PageDriver(build_demo(tiny_checkpoint))
    driver.load()
    driver.translate("Zwei Hunde spielen im Schnee.", "de-en")
    shown = driver.trace
    driver.set("source", box)
    answer = driver.input("direction", "en-de")
    assert driver.trace is shown and driver.value("source") == box and driver.value("direction") == "en-de"
    assert "source" not in answer or new_value(answer["source"]) is MISSING
    assert driver.prop("source", "placeholder") == "Type an English sentence…"
    assert driver.prop("direction", "info") == session.SWAP_INFO
