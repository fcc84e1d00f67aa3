"""One page's events run one at a time (ui/session_order.py): an event that reaches the server while another of
the same page runs reads the page's state after that one has written it; another page's events, and listeners
without state, do not wait. Driven through Gradio's own Blocks.process_api (read the state, run, write it), as
the queue runs an event.

The slow listener is held, not slept: it says it has started and waits until the test lets it go, once the other
events have reached the server (ended, or queued behind it in its page's turn). Every wait has a deadline
(DEADLINE_S), so a page that never lets an event through fails with what it waited for, never hangs.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time

import gradio as gr
import pytest
from gradio.state_holder import SessionState
from helpers import in_own_thread
from page_driver import PageDriver

from model.analysis.paper_figures import PAPER_FIGURES
from serving import jobs
from ui import build_demo
from ui.explain import paper as paper_panel
from ui.session_order import SessionOrderedBlocks

DEADLINE_S = 60  # the most any wait below takes on a busy machine; a wait that reaches it fails the test
POLL_S = 0.01  # how often `until` looks again at a condition no event announces (a lock's queue)
SHORT_SENTENCES = {  # the paper's words in sentences the tiny byte-level tokenizer can spell
    "figure-3": "laws making the process more difficult.",
    "figures-4-5": "The Law is fine, but its application is not.",
}


class Held:
    """A listener's body held until the test releases it: `started` is set when it begins, it then waits for
    `released` (both threading.Event: Gradio runs a plain function in a worker thread)."""

    def __init__(self) -> None:
        self.started, self.released = threading.Event(), threading.Event()

    def hold(self) -> None:
        self.started.set()
        assert self.released.wait(DEADLINE_S), "the held listener was never released"

    async def until_started(self) -> None:
        assert await asyncio.to_thread(self.started.wait, DEADLINE_S), "the held listener never started"


async def until(condition, what: str) -> None:
    """Wait (on the event loop, without blocking it) until `condition()` holds; fails after DEADLINE_S."""
    end = time.monotonic() + DEADLINE_S
    while not condition():
        assert time.monotonic() < end, f"never happened: {what}"
        await asyncio.sleep(POLL_S)  # a poll of the condition, not a margin: nothing waits for this long to pass


def queued_behind(demo, session_hash: str, task: asyncio.Task) -> bool:
    """`task` has ended, or waits in its page's turn behind the event that holds it (two users of the lock)."""
    return task.done() or demo.session_turns.locks.get(session_hash, (None, 0))[1] >= 2


async def ended(call):
    """`call` awaited -> (its answer, when it ended)."""
    answer = await call
    return answer, time.perf_counter()


def small_page(held: Held):
    """A page with a kept value: `write` sets it once `held` is released, `read` shows it, `plain` keeps nothing."""
    with SessionOrderedBlocks() as demo:
        kept = gr.State("before")
        shown, echoed = gr.Textbox(), gr.Textbox()
        write, read, plain = gr.Button(), gr.Button(), gr.Button()

        def held_write() -> str:
            held.hold()
            return "after"

        write.click(held_write, None, kept)
        read.click(lambda value: value, kept, shown)
        plain.click(lambda text: text, echoed, echoed)
    return demo, [fn for fn in demo.fns.values()]


def test_an_event_reads_the_state_the_pages_earlier_event_wrote():
    held = Held()
    demo, (write, read, plain) = small_page(held)
    first, second = SessionState(demo), SessionState(demo)

    async def events():
        writing = asyncio.create_task(ended(demo.process_api(write, [], state=first, session_hash="first")))
        await held.until_started()  # the write runs (and holds its page's turn)
        same_page = asyncio.create_task(ended(demo.process_api(read, [None], state=first, session_hash="first")))
        other_page = asyncio.create_task(ended(demo.process_api(read, [None], state=second, session_hash="second")))
        stateless = asyncio.create_task(ended(demo.process_api(plain, ["text"], state=first, session_hash="first")))
        # another page's read and the stateless listener end while the write is still held: they do not wait
        _, pending = await asyncio.wait({other_page, stateless}, timeout=DEADLINE_S)
        assert not pending, "another page's read or a listener without state waited for the held write"
        await until(lambda: queued_behind(demo, "first", same_page), "the same page's read reached the server")
        held.released.set()
        return await asyncio.wait_for(asyncio.gather(writing, same_page, other_page, stateless), DEADLINE_S)

    (_, written), (same_page, read_at), (other_page, other_at), (stateless, stateless_at) = in_own_thread(
        asyncio.run, events()
    )
    assert same_page["data"] == ["after"] and read_at >= written  # it waited for the write of its own page
    assert other_page["data"] == ["before"] and other_at < written  # another page does not wait
    assert stateless["data"] == ["text"] and stateless_at < written  # nor a listener without state
    assert demo.session_turns.locks == {}  # nothing kept once the page's events are done


@pytest.fixture
def held_lens(monkeypatch) -> Held:
    """The logit lens held while the Explain tab opens (its views read it) until the test releases it."""
    held, lens = Held(), jobs.logit_lens

    def held_logit_lens(*args, **kwargs):
        held.hold()
        return lens(*args, **kwargs)

    monkeypatch.setattr(jobs, "logit_lens", held_logit_lens)
    return held


@pytest.fixture
def page(tiny_checkpoint, monkeypatch, held_lens):
    """The app on the tiny checkpoint, the paper's figures in sentences it can spell, the logit lens held."""
    short = tuple(dataclasses.replace(f, sentence=SHORT_SENTENCES[f.name]) for f in PAPER_FIGURES)
    monkeypatch.setattr(paper_panel, "FIGURES", short)
    return build_demo(tiny_checkpoint)


def test_a_panel_run_while_the_explain_tab_opens_draws_its_figure(page, held_lens):
    """The visitor opens Explain (its views read the logit lens) and presses the paper's Run before that answer:
    the Run's answer draws the figures, for the Explain tab the opening made open."""
    driver = PageDriver(page)
    opening, run = driver.on("explain-tab", "select"), driver.on("paper-run", "click")
    state = SessionState(page)

    def call(listener):
        values = [driver.values.get(component) for component in listener.inputs]
        return page.process_api(listener, values, state=state, session_hash="visitor")

    async def events():
        opened = asyncio.create_task(call(opening))
        await held_lens.until_started()  # the opening is reading the lens
        ran = asyncio.create_task(call(run))
        await until(lambda: queued_behind(page, "visitor", ran), "the Run reached the server")
        held_lens.released.set()
        return await asyncio.wait_for(asyncio.gather(opened, ran), DEADLINE_S)

    opened, ran = in_own_thread(asyncio.run, events())
    heatmap = driver.component("paper-heatmap")
    drawn = dict(zip(run.outputs, ran["data"]))[heatmap]
    assert drawn and drawn.get("type") == "plotly", drawn  # the figure, not an update that leaves it empty
    lens = dict(zip(opening.outputs, opened["data"]))[driver.component("lens-plot")]
    assert lens and lens.get("type") == "plotly", lens  # the opening drew the lens it read
