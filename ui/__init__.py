"""The Gradio UI of Attention Explorer: one module per tab, each building its components and wiring
its listeners; `build_demo(checkpoint)` puts the page together (no model is loaded at import).

    session.py   the checkpoint, the Translate action (api_name="translate"), the trace file, the header
    stepping.py  first / back / next / last / play and the step panel
    share.py     the first view (computed once at start-up), share links and the page's load handler
    tour.py      the guided tour: five stops, each setting the view
    next_token.py, attention.py, positions.py (positional encoding and masks), model_tab.py, explain/
    compare.py   two sentences side by side, one source token compared head by head (compare_views.py: what
                 it shows of a comparison)
    redraw.py    the one listener that draws the open tab's views from the kept trace
    common.py    Page (what tabs share), TabView, plot(), step_index()
    text.py, style.css   page text and styles;  server.py   queue, limits, host, threads
"""

from .app import build_demo

__all__ = ["build_demo"]
