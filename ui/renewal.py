"""A page whose session the server dropped, shown again from what the page holds: its own sentence, never another.

The server keeps the gr.State values of at most STATE_SESSIONS sessions (ui/server.py), the oldest dropped first,
and a closed tab's for an hour. A tab left open past that still shows its sentence, but its next event reaches a
fresh session, whose states are the page's first ones: the start-up example's trace, the first view's tab. The
page's listeners notice it (ui/redraw.py `PageListeners.marked`: the page's mark, kept in the browser, is not the
session's) and, before the event's own action, run `restored`: the sentence of the share link the page shows (its
text, direction, open tab and the Compare tab's second sentence; ui/share.py) translated again by the page's one
Translate action, a fresh trace file for its download, and one notice that says so. The controls (step, kind,
layer, head, the sentence box) are the browser's and stay as the visitor left them; a panel's result, kept on the
server, is run again by its button.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

import gradio as gr

from serving.translation import Translator

from .common import Page, markdown_text
from .compare import TAB_ID as COMPARE_TAB
from .compare_second import compare_with
from .session import write_trace_json
from .share import Targets, parse_query

RENEWED = (
    "⚠️ The server had let this page's session go (it keeps the most recent visitors' pages): the sentence on "
    "screen was translated again. Run a panel's result again if you had one."
)
NOT_RENEWED = "⚠️ The server had let this page's session go, and the sentence on screen could not be translated again: "


def restored(translator: Translator, targets: Targets, link: str | None) -> dict:
    """The page's state made again from its share link ('' or None: the page showed no sentence) -> its updates."""
    header, compare = targets.header, targets.compare
    view = parse_query(dict(parse_qsl(urlsplit(link or "").query)))
    if view is None or not view.text:
        return {header.trace: None}
    translated = translator.translate(view.text, view.direction)
    if translated.trace is None:  # e.g. the model that translated it is no longer served
        return {header.trace: None, header.notice: NOT_RENEWED + markdown_text(translated.refused)}
    updates = {
        header.trace: translated.trace,
        targets.tab: view.tab,
        header.download: gr.DownloadButton(value=write_trace_json(translated.trace), interactive=True),
        header.notice: RENEWED,
    }
    if compare is not None and view.tab == COMPARE_TAB and view.second:
        updates[compare.second] = compare_with(translator, translated.trace, view.second)
    return updates


def wire(page: Page, translator: Translator, targets: Targets, link: gr.Textbox) -> None:
    """Declare the page's renewal: what `restored` makes again, from the share link's box."""
    compared = [targets.compare.second] if targets.compare is not None else []
    outputs = [targets.header.trace, targets.tab, targets.header.download, targets.header.notice, *compared]
    page.renew(lambda shown: restored(translator, targets, shown), [link], outputs)
