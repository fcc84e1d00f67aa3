"""Every wait of a model loaded after start-up has a deadline (ui/later_model.py): a load that does not end is given
up after its timeout, the menu's line says why in plain words and the log says it once; a download still running
then stops at its next chunk and its page is never built; a page built before the server has started waits for it
only so long. The loads here are stand-ins that block on an event (no download, no model)."""

from __future__ import annotations

import logging
import threading

import gradio as gr
import pytest

from ui import later_model
from ui.later_model import NOT_STARTED, LaterModel, LoadedModel, LoadStopped, mount_page, timed_out

TIMEOUT_S = 0.5  # the stand-in load's deadline
WAIT_S = 60  # how long a test waits for an outcome that comes at once


def stopped_lines(caplog) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.name == later_model.LOG.name]


def test_a_load_that_does_not_end_is_given_up_and_says_why_once(caplog):
    release, opened = threading.Event(), []

    def hanging_load(**_):
        release.wait(WAIT_S)
        return LoadedModel("opus-mt", by_direction={"de-en": object()})

    later = LaterModel(opened.append, hanging_load, timeout_s=TIMEOUT_S)
    caplog.set_level(logging.WARNING, logger=later_model.LOG.name)
    later.start()
    assert later.wait(WAIT_S) == "failed"  # the watch ends at the deadline, the load still blocked
    assert later.progress().text == timed_out(TIMEOUT_S)
    assert "had not ended after 0.5 seconds" in later.progress().text
    worker = next(thread for thread in threading.enumerate() if thread.name == "load-opus-mt-work")
    release.set()  # the load ends late: its page is not built and the line stays
    worker.join(WAIT_S)
    assert opened == [] and later.state == "failed" and later.progress().text == timed_out(TIMEOUT_S)
    assert stopped_lines(caplog) == [f"OPUS-MT's load stopped: {timed_out(TIMEOUT_S)}"]


def test_a_download_given_up_that_fails_later_still_logs_one_line(monkeypatch, caplog):
    """The watch gives the download up at its deadline; when the download itself fails afterwards (the Hub's error,
    several lines long), nothing more is logged: one failed load, one line."""
    from model.checkpoints.marian import MarianDownloadError
    from ui import models

    release = threading.Event()

    def hanging_download(*args, **kwargs):
        release.wait(WAIT_S)
        raise MarianDownloadError("could not download 'Helsinki-NLP/opus-mt-de-en' (Got: refused\nAn error happened)")

    monkeypatch.setattr(models, "load_opus_mt", hanging_download)
    later = LaterModel(lambda loaded: None, models.open_opus_mt, timeout_s=TIMEOUT_S)
    caplog.set_level(logging.WARNING)
    later.start()
    assert later.wait(WAIT_S) == "failed"
    worker = next(thread for thread in threading.enumerate() if thread.name == "load-opus-mt-work")
    release.set()
    worker.join(WAIT_S)
    lines = [line for record in caplog.records for line in record.getMessage().splitlines()]
    assert lines == [f"OPUS-MT's load stopped: {timed_out(TIMEOUT_S)}"]
    assert later.progress().text == timed_out(TIMEOUT_S)


@pytest.mark.parametrize(
    "problem, entry",
    [
        (later_model.UNREACHABLE, later_model.DOWNLOAD_FAILED),
        (timed_out(TIMEOUT_S), later_model.DOWNLOAD_FAILED),
        (later_model.UNREADABLE, later_model.LOAD_FAILED),
        (NOT_STARTED, later_model.LOAD_FAILED),
    ],
    ids=["unreachable", "timed-out", "unreadable", "not-started"],
)
def test_after_each_failure_the_menu_says_what_failed_and_what_a_pick_does(problem, entry):
    """The menu's entry says whether the download or the load failed; the line under it says why in one sentence
    and that picking it again tries once more (never that OPUS-MT is not offered: the menu still offers it)."""
    later = LaterModel(lambda loaded: None, lambda **_: LoadedModel("opus-mt"), timeout_s=TIMEOUT_S)
    later.state, later.problem = "failed", problem
    shown = later.progress()
    assert shown.entry == entry and entry.endswith("; picking it tries once more")
    assert shown.text == problem and "picking it again in the menu tries once more" in problem
    assert ". " not in problem and problem.endswith(".") and "not offered" not in problem  # one sentence


def test_a_download_running_past_its_deadline_stops_at_its_next_chunk():
    later = LaterModel(lambda loaded: None, lambda **_: LoadedModel("opus-mt"), timeout_s=TIMEOUT_S)
    later.state, later.attempt, later.deadline = "loading", 1, 0.0  # an attempt whose deadline has passed
    bar = later.progress_bar()(total=10, disable=True)
    with pytest.raises(LoadStopped, match="stopped waiting"):
        bar.update(1)


def test_the_minutes_of_a_long_timeout_are_said_in_minutes():
    assert "after 30 minutes" in timed_out(30 * 60)


def test_a_page_waits_for_the_server_only_so_long(caplog):
    demo = gr.Blocks()
    demo.launching = True  # ui/server.py sets it before Gradio starts; this server never does
    built = []
    later = LaterModel(
        lambda loaded: mount_page(demo, "opus-mt", lambda: built.append(1), wait_s=TIMEOUT_S),
        lambda **_: LoadedModel("opus-mt", by_direction={"de-en": object()}),
    )
    caplog.set_level(logging.WARNING, logger=later_model.LOG.name)
    later.start()
    assert later.wait(WAIT_S) == "failed" and built == []
    assert later.progress().text == NOT_STARTED
    assert stopped_lines(caplog) == [f"OPUS-MT's load stopped: {NOT_STARTED}"]


@pytest.mark.parametrize("direction", ["", "de-en"])
def test_the_loading_line_is_one_sentence_with_one_stop(direction):
    """While OPUS-MT loads, the menu's line: what happens now, then that the own model stays usable; each sentence
    ends once (never "download…." before the first bytes)."""
    later = LaterModel(lambda loaded: None, lambda **_: LoadedModel("opus-mt"))
    later.state, later.direction = "loading", direction
    text = later.progress().text
    assert text.endswith("OPUS-MT opens when it is ready.") and ("Preparing" in text) == (not direction)
    assert "…." not in text and ".." not in text
