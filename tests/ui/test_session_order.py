"""One page's events run one at a time (ui/session_order.py): an event that reaches the server while another of
the same page runs reads the page's state after that one has written it; another page's events, and listeners
without state, do not wait. Driven through Gradio's own Blocks.process_api (read the state, run, write it), as
the queue runs an event.
"""

from __future__ import annotations

import asyncio
import dataclasses
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

SLOW_S = 0.6
SHORT_SENTENCES = {  # the paper's words in sentences the tiny byte-level tokenizer can spell
    "figure-3": "laws making the process more difficult.",
    "figures-4-5": "The Law is fine, but its application is not.",
}


def small_page():
    """A page with a kept value: `write` sets it after SLOW_S, `read` shows it, `plain` keeps nothing."""
    with SessionOrderedBlocks() as demo:
        kept = gr.State("before")
        shown, echoed = gr.Textbox(), gr.Textbox()
        write, read, plain = gr.Button(), gr.Button(), gr.Button()

        def slowly_written() -> str:
            time.sleep(SLOW_S)
            return "after"

        write.click(slowly_written, None, kept)
        read.click(lambda value: value, kept, shown)
        plain.click(lambda text: text, echoed, echoed)
    return demo, [fn for fn in demo.fns.values()]


async def later(seconds: float, call):
    """`call` awaited after `seconds` -> (its answer, when it ended)."""
    await asyncio.sleep(seconds)
    answer = await call
    return answer, time.perf_counter()


def test_an_event_reads_the_state_the_pages_earlier_event_wrote():
    demo, (write, read, plain) = small_page()
    first, second = SessionState(demo), SessionState(demo)

    async def events():
        return await asyncio.gather(
            later(0, demo.process_api(write, [], state=first, session_hash="first")),
            later(0.1, demo.process_api(read, [None], state=first, session_hash="first")),
            later(0.1, demo.process_api(read, [None], state=second, session_hash="second")),
            later(0.1, demo.process_api(plain, ["text"], state=first, session_hash="first")),
        )

    (_, written), (same_page, read_at), (other_page, other_at), (stateless, stateless_at) = in_own_thread(
        asyncio.run, events()
    )
    assert same_page["data"] == ["after"] and read_at >= written  # it waited for the write of its own page
    assert other_page["data"] == ["before"] and other_at < written  # another page does not wait
    assert stateless["data"] == ["text"] and stateless_at < written  # nor a listener without state
    assert demo.session_turns.locks == {}  # nothing kept once the page's events are done


@pytest.fixture
def page(tiny_checkpoint, monkeypatch):
    """The app on the tiny checkpoint, the paper's figures in sentences it can spell, the logit lens slow to read."""
    short = tuple(dataclasses.replace(f, sentence=SHORT_SENTENCES[f.name]) for f in PAPER_FIGURES)
    monkeypatch.setattr(paper_panel, "FIGURES", short)
    lens = jobs.logit_lens

    def slow_lens(*args, **kwargs):
        time.sleep(SLOW_S)
        return lens(*args, **kwargs)

    monkeypatch.setattr(jobs, "logit_lens", slow_lens)
    return build_demo(tiny_checkpoint)


def test_a_panel_run_while_the_explain_tab_opens_draws_its_figure(page):
    """The visitor opens Explain (its views read the logit lens) and presses the paper's Run before that answer:
    the Run's answer draws the figures, for the Explain tab the opening made open."""
    driver = PageDriver(page)
    opening, run = driver.on("explain-tab", "select"), driver.on("paper-run", "click")
    state = SessionState(page)

    def call(listener):
        values = [driver.values.get(component) for component in listener.inputs]
        return page.process_api(listener, values, state=state, session_hash="visitor")

    async def events():
        return await asyncio.gather(call(opening), later(0.1, call(run)))

    opened, (ran, _) = in_own_thread(asyncio.run, events())
    heatmap = driver.component("paper-heatmap")
    drawn = dict(zip(run.outputs, ran["data"]))[heatmap]
    assert drawn and drawn.get("type") == "plotly", drawn  # the figure, not an update that leaves it empty
    lens = dict(zip(opening.outputs, opened["data"]))[driver.component("lens-plot")]
    assert lens and lens.get("type") == "plotly", lens  # the opening drew the lens it read
