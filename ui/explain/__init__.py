"""The Explain tab (ui/explain/tab.py) and its panels, one module each, listed in ui/explain/panels.py (`PANELS`);
what they share is in ui/explain/panel.py."""

from .tab import build

__all__ = ["build"]
