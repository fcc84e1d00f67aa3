"""The "Explain" tab: what other attention viewers do not show, in panels over the user's trace ("Attention Is All
You Need"); ui/explain/panels.py lists them (`PANELS`), each declared once at the end of its own module.

Each panel builds and wires itself inside its sub-tab and returns its views (`TabView`s of the page's one redraw,
ui/redraw.py: what each follows, the step or only the trace, and its controls); this shell opens the sub-tab,
writes the panel's lead above what it builds and folds its prose below; a panel that needs what only the own model
has (`Panel.own_model_only`) says so in one line on another model's page, and builds nothing there. A panel's model runs (its buttons) go
through the page's runner (serving/jobs.py) and keep or show their results; the results are reset for a new
trace by the panel's `cleared_view`.
"""

from __future__ import annotations

import gradio as gr

from ..attention import HeadOpener
from ..common import Page, TabView
from ..text import ABOUT_EXPLAIN
from .panel import TAB_ID, lead, more_about, unavailable
from .panels import PANELS


def build(page: Page, opener: HeadOpener) -> list[TabView]:
    """The tab and its panels (call inside the page's gr.Tabs) -> the views of its panels."""
    with gr.Tab("Explain", id=TAB_ID, elem_id="explain-tab") as tab:
        gr.Markdown(ABOUT_EXPLAIN)
        page.track(tab, TAB_ID)
        if page.checkpoint is None:
            gr.Markdown("No model is loaded, so there is nothing to explain.")
            return []
        views: list[TabView] = []
        # every panel in view; only gr.Tab children: Gradio places a tab's button by its index among
        # all the children, so a gr.State here would put one panel's button over the next one's
        with gr.Tabs(elem_id="explain-panels", overflow_behavior="wrap"):
            for panel in PANELS:
                with gr.Tab(panel.title, id=panel.id) as panel_tab:
                    lead(panel.lead_text)
                    missing = panel.unavailable_on(page.checkpoint)  # what only the own model has
                    if missing:
                        unavailable(panel, missing)
                    else:
                        views += panel.build(page, opener, panel_tab)
                    more_about(panel.about)
    return views
