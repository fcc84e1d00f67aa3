"""One page's events run one at a time, in the order they reach the server: each reads the page's state (its gr.State
values) after the event before it has written it.

Gradio gives every listener its own workers, so two listeners of one page run side by side, and each reads the
page's gr.State values when it starts and writes them when it ends (Blocks.process_api: preprocess, the function,
postprocess). A panel's Run pressed while the Explain tab is still opening (the tab's views read the logit lens
first) would then read the open tab from before the opening and draw nothing, and an answer computed from an older
trace could land after a newer one. `SessionOrderedBlocks` holds a lock per session around that whole read, run
and write for every listener that reads or writes a gr.State: a page's state changes one event at a time. Other
sessions, and listeners without state (the API's endpoints), run side by side as Gradio runs them. A call to the API
that leaves out parameters gets their defaults first (ui/api.py `with_defaults`).
"""

from __future__ import annotations

import asyncio
import contextlib

import gradio as gr

from .api import with_defaults


def keeps_state(block_fn) -> bool:
    """Whether a listener reads or writes a gr.State (a value kept per page on the server)."""
    return any(block.stateful for block in (*block_fn.inputs, *block_fn.outputs))


class SessionTurns:
    """A lock per session while some event of it runs or waits (asyncio.Lock: waiters are served in order);
    dropped when none does."""

    def __init__(self) -> None:
        self.locks: dict[str, tuple[asyncio.Lock, int]] = {}

    @contextlib.asynccontextmanager
    async def turn(self, session_hash: str):
        lock, users = self.locks.get(session_hash, (None, 0))
        lock = lock or asyncio.Lock()
        self.locks[session_hash] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self.locks[session_hash]
            if users == 1:
                del self.locks[session_hash]
            else:
                self.locks[session_hash] = (lock, users - 1)


class SessionOrderedBlocks(gr.Blocks):
    """gr.Blocks whose listeners with state run one at a time per session (the module's docstring)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.session_turns = SessionTurns()

    async def process_api(self, block_fn, *args, session_hash: str | None = None, **kwargs) -> dict:
        fn = self.fns[block_fn] if isinstance(block_fn, int) else block_fn
        if "inputs" in kwargs:
            kwargs["inputs"] = with_defaults(fn, kwargs["inputs"])
        elif args:
            args = (with_defaults(fn, args[0]), *args[1:])
        if session_hash is None or not keeps_state(fn):
            return await super().process_api(block_fn, *args, session_hash=session_hash, **kwargs)
        async with self.session_turns.turn(session_hash):
            return await super().process_api(block_fn, *args, session_hash=session_hash, **kwargs)
