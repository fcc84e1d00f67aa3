"""The page's one script, put together from the `.js` files beside this module (ui/js/, checked by ESLint in
scripts/test.sh): figures drawn in the page's theme and fitted to their boxes (ui/js/figures.js), where the page
scrolls after Translate, a tour stop and a panel's run (ui/js/scroll.js), the page-wide step keys and the step
buttons (ui/js/keys.js), the share link's copy button (ui/js/share.js), and the page for a screen reader and a
keyboard: the figures' text, the step said as it changes (ui/js/a11y.js).

Each file declares one `install…` function; `page_script()` is the function `demo.load(js=...)` runs once when the
page loads: it calls them with what Python knows (the dark theme of `visualizer.theme.dark_theme()`, the keys).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import gradio

from visualizer.theme import ACCENT_COLOR, PHONE_WINDOW_PX, dark_theme

from .stepping import KEYS

SCRIPTS = Path(__file__).resolve().parent / "js"

SHOW_VIEW_JS = "() => { window.attentionExplorer && window.attentionExplorer.showView(); }"
SHOW_TOUR_JS = "() => { window.attentionExplorer && window.attentionExplorer.showTour(); }"
SHOW_COMPARE_JS = "() => { window.attentionExplorer && window.attentionExplorer.showCompare(); }"
A11Y = {"topColumns": 3, "topBars": 10, "maxRows": 40}  # ui/js/a11y.js: what a figure's text says of its data
KEEP_TYPED_JS = "(text) => window.attentionExplorer ? window.attentionExplorer.keepTyped(text) : text"
COPY_LINK_JS = "(url) => window.attentionExplorer ? window.attentionExplorer.copyLink(url) : url"


def follow_result_js(elem_id: str) -> str:
    """After a panel's run: its result box brought into view once drawn (ui/js/scroll.js `followResult`)."""
    return f"() => {{ window.attentionExplorer && window.attentionExplorer.followResult({json.dumps(elem_id)}); }}"


def script(name: str) -> str:
    """The text of ui/js/`name`."""
    return (SCRIPTS / name).read_text(encoding="utf-8")


@functools.cache
def page_script() -> str:
    """The JavaScript function run once when the page loads (for `demo.load(js=...)`)."""
    files = "\n".join(script(name) for name in ("figures.js", "scroll.js", "keys.js", "share.js", "a11y.js"))
    return (
        "() => {\n  if (window.__attentionExplorer) return;\n  window.__attentionExplorer = true;\n"
        f"{files}\n  installFigures({json.dumps(dark_theme())}, {PHONE_WINDOW_PX});\n  installScroll({PHONE_WINDOW_PX});\n"
        f"  installKeys({json.dumps(KEYS)});\n  installShare();\n  installA11y({json.dumps(A11Y)});\n}}"
    )


@functools.cache
def page_css() -> str:
    """The page's style sheet (ui/style.css) with the facts it shares with the scripts and the figures: a phone's
    width and the query's colour (visualizer.theme.ACCENT_COLOR, the outline of the query's row in a figure)."""
    css = (SCRIPTS.parent / "style.css").read_text(encoding="utf-8")
    return css.replace("PHONE_PX", str(PHONE_WINDOW_PX)).replace("QUERY_COLOR", ACCENT_COLOR)


@functools.cache
def page_head() -> str:
    """The page's <head> additions: Plotly's own module (Gradio's PlotlyPlot chunk, 4.6 MB, loaded only once a plot
    mounts) fetched and compiled from the start, beside the rest of the page, so the first figure does not wait
    for it ('' where this Gradio has no such chunk)."""
    chunks = sorted((Path(gradio.__file__).parent / "templates" / "frontend" / "assets").glob("PlotlyPlot-*.js"))
    return "".join(f'<link rel="modulepreload" href="assets/{chunk.name}">' for chunk in chunks)
