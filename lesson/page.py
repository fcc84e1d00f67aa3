"""The lesson's index.html: the page template (lesson/page.html) with the lesson's title filled in.

Everything else on the page (the sentence menu, the views, the controls, the figure) is drawn by
lesson/player.js from the lesson's data; the title is escaped, so a lecturer's text is never read as markup.
"""

from __future__ import annotations

import html
from pathlib import Path
from string import Template

TEMPLATE = Path(__file__).resolve().parent / "page.html"


def index_html(title: str, n_sentences: int) -> str:
    """The page of a lesson named ``title`` with ``n_sentences`` sentences."""
    return Template(TEMPLATE.read_text("utf-8")).substitute(title=html.escape(title), count=int(n_sentences))
