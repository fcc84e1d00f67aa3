"""Write docs/views.md's list of the Explain panels from the panels themselves (ui/explain/panels.py): each panel's
title and its lead, in the tab's order, between the two marker lines below.

    python3 -m scripts.views_doc           # rewrite the list
    python3 -m scripts.views_doc --check   # exit 1 when the list is not what the panels say (a test runs this)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ui.explain.panels import PANELS

ROOT = Path(__file__).resolve().parent.parent
VIEWS_DOC = ROOT / "docs" / "views.md"
BEGIN = "<!-- the panel list: written by `python3 -m scripts.views_doc` from ui/explain/panels.py -->"
END = "<!-- end of the panel list -->"


def panel_list() -> str:
    """One bullet per panel: `- **title**: lead`, wrapped at 116 characters."""
    bullets = []
    for panel in PANELS:
        words, lines = f"- **{panel.title}**: {panel.lead}".split(), [""]
        for word in words:
            if lines[-1] and len(lines[-1]) + 1 + len(word) > 116:
                lines.append("  ")
            lines[-1] += (" " if lines[-1].strip() else "") + word
        bullets.append("\n".join(lines))
    return "\n".join(bullets)


def with_panel_list(text: str) -> str:
    """`text` (docs/views.md) with the list between the markers written anew."""
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    return f"{text[:start]}\n{panel_list()}\n{text[end:]}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say whether docs/views.md is current")
    args = parser.parse_args(argv)
    text = VIEWS_DOC.read_text(encoding="utf-8")
    written = with_panel_list(text)
    if args.check:
        if written != text:
            print("docs/views.md's panel list is stale: run python3 -m scripts.views_doc", file=sys.stderr)
            return 1
        return 0
    VIEWS_DOC.write_text(written, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
