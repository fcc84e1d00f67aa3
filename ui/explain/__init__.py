"""The Explain tab (ui/explain/tab.py) and its panels, one module each (ablation, branching, readouts:
logit lens and alignment, beam, diagnostics, no_pe), sharing ui/explain/panel.py."""

from .tab import build

__all__ = ["build"]
