"""A fair queue: one visitor's queued events never hold the model slots other visitors need.

A page's events take their turn one at a time (ui/session_order.py) and only then wait for a model slot
(ui/runner.py's in_model_slot), in a Gradio group with no limit of its own. Here a small app made with the page's
own means (SessionOrderedBlocks, model_event, in_model_slot, a gr.State) is served, one session queues more model
events than there are slots, the first of them held running until the test lets it go, and another visitor's page
event and an API call (no state) must be answered while that flood still waits. Gradio's own concurrency group
would have given each queued event a slot before its page's turn: the other visitor would wait for the whole flood.
"""

from __future__ import annotations

import asyncio
import threading

import gradio as gr
import pytest

from helpers import in_own_thread
from ui.runner import MODEL_SLOTS, ModelSlots, in_model_slot, model_event
from ui.session_order import SessionOrderedBlocks

FLOOD = MODEL_SLOTS + 2  # more events than slots, from one session
ANSWER_S = 60  # the other visitors' answers come long before this; with an unfair queue they never come


@pytest.fixture
def served_app():
    release = threading.Event()  # the flood's first event runs until the test sets this
    started = threading.Event()
    order: list[str] = []

    def model_run(text: str, kept: list | None):
        """A model computation: the flood's own runs wait for `release`, the other visitors' return at once."""
        order.append(text)
        if text.startswith("flood"):
            started.set()
            release.wait(ANSWER_S * 2)
        return text, [*(kept or []), text]

    def api_run(sentence: str) -> str:
        """A call of the API: no state, no page."""
        return model_run(sentence, None)[0]

    with SessionOrderedBlocks(analytics_enabled=False) as demo:
        text, kept, out = gr.Textbox(), gr.State(None), gr.Textbox()
        text.submit(in_model_slot(model_run), [text, kept], [out, kept], api_name="page_run", **model_event())
        gr.api(in_model_slot(api_run), api_name="api_run", **model_event())
    demo.queue(default_concurrency_limit=MODEL_SLOTS)
    _, url, _ = demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", quiet=True)
    try:
        yield url, release, started, order
    finally:
        release.set()
        demo.close()


def test_a_flood_from_one_page_leaves_the_other_visitors_their_slots(served_app):
    from gradio_client import Client

    url, release, started, order = served_app
    flooder = Client(url, verbose=False)  # one session: one tab's events
    flood = [flooder.submit(f"flood {index}", api_name="/page_run") for index in range(FLOOD)]
    assert started.wait(ANSWER_S), "the flood's first event never ran"
    visitor = Client(url, verbose=False)
    assert visitor.submit("another visitor", api_name="/page_run").result(timeout=ANSWER_S) == "another visitor"
    assert visitor.submit("an API call", api_name="/api_run").result(timeout=ANSWER_S) == "an API call"
    # the flood still waits behind its first event (the client sends its events from threads: in any order)
    assert [text for text in order if text.startswith("flood")] == order[:1]
    release.set()
    answers = [job.result(timeout=ANSWER_S) for job in flood]
    assert answers == [f"flood {index}" for index in range(FLOOD)]
    assert sorted(text for text in order if text.startswith("flood")) == sorted(answers)  # each ran once


def test_no_more_model_runs_at_once_than_slots():
    """MODEL_SLOTS + 3 visitors' model runs at once: MODEL_SLOTS of them run, the rest wait (holding no thread) and
    run as slots free. The one timed window is a negative check: a run past the slots would start at once."""
    visitors = MODEL_SLOTS + 3
    release, lock = threading.Event(), threading.Lock()
    running = {"now": 0, "most": 0, "done": 0}

    def model_run(index: int) -> int:
        with lock:
            running["now"] += 1
            running["most"] = max(running["most"], running["now"])
        release.wait(ANSWER_S)
        with lock:
            running["now"] -= 1
            running["done"] += 1
        return index

    async def all_visitors() -> list[int]:
        slots = ModelSlots(MODEL_SLOTS)
        run = in_model_slot(model_run, slots)
        tasks = [asyncio.create_task(run(index)) for index in range(visitors)]
        for _ in range(ANSWER_S * 100):  # until the slots are taken
            if running["most"] >= MODEL_SLOTS:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.3)  # the negative window: a run beyond the slots would have started by now
        assert running["most"] == MODEL_SLOTS and slots.held().locked()
        release.set()
        return await asyncio.gather(*tasks)

    assert in_own_thread(asyncio.run, all_visitors()) == list(range(visitors))
    assert running["done"] == visitors and running["most"] == MODEL_SLOTS
