"""The share link's view (ui/share.py): what a link holds (`View`), read from its query (`parse_query`), fitted to the
page and the model (`fitted`, with the one line that says what a repaired link changed: `repair_notice`) and
written back (`query_string`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlencode


from model import Checkpoint, TranslationTrace
from model.decoding.trace import ATTENTION_KINDS

from serving.runner import shown_value
from serving.translation import DIRECTIONS, parse_direction

from . import attention, compare, model_tab, next_token, positions
from .attention import layer_choices
from .explain.panel import TAB_ID as EXPLAIN_TAB
from .common import markdown_text

HEADS = ("all", "mean")  # besides "1".."h"
LINK_NUMBER_DIGITS = 4  # a link's step, layer or head: 1 .. 9999 (more than any model has; larger ones are clamped)
# the top-level tabs a link may open, by the id each tab module declares, in the page's order
TABS = (next_token.TAB_ID, attention.TAB_ID, compare.TAB_ID, *positions.TAB_IDS, model_tab.TAB_ID, EXPLAIN_TAB)


@dataclass(frozen=True)
class View:
    """What a link restores; text None = the start-up example. On the Compare tab kind, layer and head are that
    tab's, and second and token name the comparison."""

    text: str | None = None
    direction: str = "de-en"
    step: int = 1
    tab: str = "attention"
    kind: str = "cross"
    layer: int = 1
    head: str = "1"
    second: str | None = None  # the Compare tab's second sentence
    token: str | None = None  # the source token compared
    # what the link held that the page could not use, each (name, value) (the page says so): not part of the view
    unusable: tuple[tuple[str, str], ...] = field(default=(), compare=False)


def link_number(value: object) -> int | None:
    """A link's step, layer or head: ASCII digits only, 1 .. 9999 (LINK_NUMBER_DIGITS); None for anything else
    ("²", "①" and "٣" are digits to str.isdigit, not numbers a link writes)."""
    text = str(value)
    if not (text.isascii() and text.isdigit()) or len(text) > LINK_NUMBER_DIGITS or int(text) < 1:
        return None
    return int(text)


def parse_query(params: Mapping[str, str]) -> View | None:
    """Query parameters -> a View (None without any); a bad value falls back to its default and is kept in
    `unusable` (the page says so: `repair_notice`)."""
    keys = {"text", "dir", "step", "tab", "kind", "layer", "head", "second", "token"}
    if not keys & set(params):
        return None
    default, unusable = View(), []

    def read(name: str, fallback, parse: Callable):
        """The parameter `name` parsed (None: not usable), else `fallback`, a bad value noted."""
        if name not in params:
            return fallback
        value = parse(params[name])
        if value is None:
            unusable.append((name, params[name]))
            return fallback
        return value

    def head(value: str) -> str | None:
        return value if value in HEADS else (str(link_number(value)) if link_number(value) else None)

    view = View(
        text=params["text"] if "text" in params else None,  # an empty text: a page with no sentence yet
        direction=read("dir", default.direction, parse_direction),
        step=read("step", default.step, link_number),
        tab=read("tab", default.tab, lambda value: value if value in TABS else None),
        kind=read("kind", default.kind, lambda value: value if value in ATTENTION_KINDS else None),
        layer=read("layer", default.layer, link_number),
        head=read("head", default.head, head),
        second=params.get("second") or None,
        token=params.get("token") or None,
    )
    return dataclasses.replace(view, unusable=tuple(unusable))


def fitted(view: View, checkpoint: Checkpoint, trace: TranslationTrace | None) -> View:
    """`view` as the page shows it: its step, layer and head clamped to what the trace and the model have."""
    layers = len(layer_choices(checkpoint, view.kind))
    head = view.head if view.head in HEADS else str(min(int(view.head), checkpoint.config.n_heads))
    step = view.step if trace is None else min(view.step, trace.num_steps)
    return dataclasses.replace(view, step=step, layer=min(view.layer, layers), head=head)


def repair_notice(link: View, shown: View, checkpoint: Checkpoint, steps: int | None, tabs: Mapping[str, str]) -> str:
    """The one line the page says about a link it repaired ('' when it showed the link as it was): for each value
    it could not use (`View.unusable`) or had to clamp (`fitted`: `shown`), what the link held and what the page
    shows instead, in the link's order. steps: the trace's steps (None: no sentence); tabs: each tab's label."""
    unusable = dict(link.unusable)
    layers, heads = len(layer_choices(checkpoint, shown.kind)), checkpoint.config.n_heads
    of_steps = f" of {steps}" if steps is not None else ""
    now = {  # a number's value as the page shows it (a bad head falls back to head 1, never to all heads)
        "step": f"step {shown.step}{of_steps}",
        "layer": f"layer {shown.layer} of {layers}",
        "head": f"head {shown.head} of {heads}",
    }
    said = []
    for name, showing in now.items():
        asked = str(getattr(link, name))
        if name in unusable:
            said.append((name, f"{name} {shown_value(unusable[name])} is not a {name} number: showing {showing}"))
        elif asked != str(getattr(shown, name)):
            past = "is past the end" if name == "step" else "does not exist"
            said.append((name, f"{name} {asked} {past}: showing {showing}"))
    words = {
        "dir": f"direction {{}} is unknown: showing {DIRECTIONS[shown.direction]}",
        "tab": f"tab {{}} is unknown: showing {tabs.get(shown.tab, shown.tab)}",
        "kind": f"attention kind {{}} is unknown: showing {ATTENTION_KINDS[shown.kind].label}",
    }
    said += [(name, text.format(shown_value(unusable[name]))) for name, text in words.items() if name in unusable]
    order = ("dir", "step", "tab", "kind", "layer", "head")  # as the link writes them (query_string)
    said.sort(key=lambda named: order.index(named[0]))
    if not said:
        return ""
    return f"⚠️ {markdown_text('The link’s ' + '; '.join(text for _, text in said))}."


def query_string(view: View) -> str:
    """The link's query: ?text=…&dir=…&step=…&tab=…&kind=…&layer=…&head=… (and &second=…&token=… when set)"""
    fields = {
        "text": view.text or "",
        "dir": view.direction,
        "step": view.step,
        "tab": view.tab,
        "kind": view.kind,
        "layer": view.layer,
        "head": view.head,
    }
    fields |= {name: value for name, value in (("second", view.second), ("token", view.token)) if value}
    return "?" + urlencode(fields)
