"""Every control of the page belongs to a view: none stands in the layout without a name of its own, and none wears
only Gradio's default label.

A component built while the page is laid out lands in the layout where it is built. An update written as a component
(gr.Button(...) returned by a follower) and computed while the page is being put together (the first view drawn at
start-up) would hang at the root of the page: a dead "Run", "▶ Play" or an unlabelled "Dropdown" under every screen.
Read from the page's own config, as the browser receives it, for the page over the tiny checkpoint and for the page
with OPUS-MT's place held (ui/models.py).
"""

from __future__ import annotations

import pytest
from page_driver import PageDriver

from ui import build_demo, session
from ui.redraw import MISSING, new_value
from ui.text import DIRECTION_LABELS

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
