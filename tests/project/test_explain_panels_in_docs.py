"""The Explain panels are declared once (each panel module's `PANEL`, found by ui/explain/panels.py) and every
text that lists them is written from that list or counts nothing: docs/views.md's list is written by
scripts/views_doc.py, and no text counts the panels in words."""

from __future__ import annotations

import re
from pathlib import Path

from scripts import views_doc
from ui.explain.panels import PANELS

ROOT = Path(__file__).resolve().parents[2]


def test_docs_views_lists_every_panel_as_the_panels_say():
    assert views_doc.main(["--check"]) == 0, "docs/views.md's panel list is stale: python3 -m scripts.views_doc"
    text = views_doc.VIEWS_DOC.read_text(encoding="utf-8")
    listed = text[text.index(views_doc.BEGIN) : text.index(views_doc.END)]
    assert re.findall(r"^- \*\*(.+?)\*\*: ", listed, re.M) == [panel.title for panel in PANELS]


def test_the_list_is_rewritten_from_the_panels():
    """A stale list (a panel missing) is found and written anew."""
    text = views_doc.VIEWS_DOC.read_text(encoding="utf-8")
    stale = text.replace(f"- **{PANELS[-1].title}**", "- **A panel that left**")
    assert views_doc.with_panel_list(stale) == text


def test_no_text_counts_the_panels_in_words():
    """A count written out goes stale with the next panel: the texts list them, the code counts them."""
    numbers = r"\b(ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen)\s+panels\b"
    for path in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "ui").rglob("*.py")]:
        found = re.findall(numbers, path.read_text(encoding="utf-8"), re.IGNORECASE)
        assert not found, f"{path.relative_to(ROOT)} counts the panels in words: {found}"
