"""Every Explain panel, in one list: each module of this package that declares `PANEL` (a `panel.Panel`), in
`place` order. The tab (ui/explain/tab.py) lays them out from `PANELS`; the tests, docs/views.md and the README
count from it, so a new panel is its module and nothing listed elsewhere (docs/adding-a-panel.md).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable

from .panel import Panel

PACKAGE = __name__.rpartition(".")[0]  # ui.explain


def declared_panels(modules: Iterable[str]) -> tuple[Panel, ...]:
    """The `PANEL` of each named module of this package that has one, in `place` order; ValueError when two
    share an id, a title or a place."""
    found = [getattr(importlib.import_module(f"{PACKAGE}.{name}"), "PANEL", None) for name in modules]
    panels = sorted((panel for panel in found if isinstance(panel, Panel)), key=lambda panel: panel.place)
    for field in ("place", "id", "title"):
        values = [getattr(panel, field) for panel in panels]
        repeated = sorted({str(value) for value in values if values.count(value) > 1})
        if repeated:
            raise ValueError(f"two Explain panels share a {field}: {', '.join(repeated)}")
    return tuple(panels)


def package_modules() -> list[str]:
    """The names of this package's modules, as found on disk."""
    return [module.name for module in pkgutil.iter_modules(importlib.import_module(PACKAGE).__path__)]


PANELS: tuple[Panel, ...] = declared_panels(name for name in package_modules() if name not in ("panels", "tab"))
