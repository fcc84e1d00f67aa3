"""The built-in examples' translations, computed once per model and then answered from memory.

Picking an example from the page's menu (or sending one of its sentences to the API) returns the trace computed
the first time, so every later pick is instant. The first is computed in this process on the page's own checkpoint
(`Runner.call_here`): on a ZeroGPU Space that is the CPU copy with real weights, so no example ever costs a visitor
a GPU request or quota. Any other sentence goes to the runner as usual. Traces are shared read-only by every
session, like the checkpoint.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable

from model import TranslationTrace

from . import jobs
from .runner import Runner


class ExampleCache:
    """Translations of a fixed set of (text, direction) pairs, per runner (a runner holds one model)."""

    def __init__(self, examples: Iterable[tuple[str, str]]) -> None:
        self.examples = frozenset((str(text), str(direction)) for text, direction in examples)
        self._traces: weakref.WeakKeyDictionary[Runner, dict[tuple[str, str], TranslationTrace]] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()

    def translate(self, runner: Runner, text: str, direction: str) -> TranslationTrace:
        """jobs.translate(runner, text, direction), answered from memory for an example (computed here once)."""
        key = (text, direction)
        if key not in self.examples:
            return jobs.translate(runner, text, direction)
        with self._lock:
            trace = self._traces.setdefault(runner, {}).get(key)
        if trace is None:  # two first picks at once both compute it: the same trace, kept once
            trace = runner.call_here(jobs.translate, text, direction)
            with self._lock:
                trace = self._traces[runner].setdefault(key, trace)
        return trace

    def cached(self, runner: Runner) -> int:
        """How many examples are in memory for this runner."""
        with self._lock:
            return len(self._traces.get(runner, {}))
