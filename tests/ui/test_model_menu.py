"""The model menu on every page (ui/models.py), whatever the start-up options, against a Hub stand-in over HTTP
(tests/support/hub_server.py): one that serves the tiny OPUS-MT folders (tests/conftest.py `opus_mt_folder`) and
one that cannot be reached.

- Started without OPUS-MT, the own page's menu lists it with what it is and its download size; picking it starts
  the download in the background (huggingface_hub's own code, from the stand-in), the line under the menu shows its
  progress, and when it ends OPUS-MT's page is built into the app at /opus-mt (the whole app, translating as the
  core does on the same files) and the visitor who picked it is sent there; the API translates with it at once.
- The Hub unreachable: one plain sentence (no exception text, no library names) naming the local-copy variable,
  and the own model stays; `--model opus-mt` there says on the own page why it is shown.
- With the preload (a Space) the download starts with the app and a plain visit then opens on OPUS-MT.
"""

from __future__ import annotations

import re

import pytest

from model.checkpoints.catalogue import OPUS_MT, OPUS_MT_ENV, OPUS_MT_REPOS, OWN, load_opus_mt
from model.decoding.greedy import translate as core_translate
from ui import models

from helpers import api_function, run_listener

SENTENCE = "Der Hund läuft über die nasse Straße."
TIMEOUT_S = 120


@pytest.fixture
def clean_env(monkeypatch):
    for name in (OPUS_MT_ENV, models.MODEL_ENV, models.PRELOAD_ENV):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.fixture
def hub(clean_env, tmp_path, opus_mt_folder):
    """A Hub stand-in serving both OPUS-MT repos (any revision: en-de is asked for at refs/pr/4)."""
    import hub_server

    repos = {repo: opus_mt_folder / repo.split("/")[1] for repo, _ in OPUS_MT_REPOS.values()}
    server = hub_server.serve(clean_env, repos, tmp_path / "hub-cache")
    yield server
    server.close()


@pytest.fixture
def no_hub(clean_env, tmp_path):
    import hub_server

    return hub_server.refuse(clean_env, tmp_path / "hub-cache")


def menu(demo, page: str = ""):
    [block] = [b for b in demo.blocks.values() if getattr(b, "elem_id", None) == "model-choice" and b.page == page]
    return block


def status_of(demo, page: str = ""):
    [block] = [b for b in demo.blocks.values() if getattr(b, "elem_id", None) == "model-status" and b.page == page]
    return block


def handler(demo, name: str, page: str = ""):
    """The menu's Python function called `name` on `page`: an action of the page (model_pick, model_tick), or a part
    of the page's one load answer (model_visit)."""
    listeners = [f for f in demo.fns.values() if f.page == page and hasattr(f.fn, "action")]
    [fn] = [f.fn.action.fn for f in listeners if f.name == name] or [
        loader
        for f in listeners
        if f.name == "on_load"
        for loader, _ in f.fn.action.fn.loaders
        if loader.__name__ == name
    ]
    return fn


def by_elem_id(result: dict) -> dict:
    return {
        getattr(component, "elem_id", None) or type(component).__name__: value for component, value in result.items()
    }


def shown_text(update) -> str:
    return update.value if hasattr(update, "value") else update["value"]


def test_the_menu_lists_opus_mt_with_its_download_size_on_a_page_started_without_it(clean_env, tiny_checkpoint):
    from ui.app import build_demo

    demo = build_demo(tiny_checkpoint)
    choices = dict((key, label) for label, key in menu(demo).choices)
    assert set(choices) == {OWN.key, OPUS_MT.key} and menu(demo).value == OWN.key
    assert re.fullmatch(
        r"OPUS-MT \(Helsinki-NLP\): .*trained on GPUs.*; picking it downloads about 600 MB", choices["opus-mt"]
    )
    assert [path for path, *_ in demo.pages] == ["", OPUS_MT.key]  # its path is held by a placeholder
    assert status_of(demo).visible is False and demo.later.state == "idle"  # nothing downloads unasked


def test_picking_opus_mt_downloads_it_with_progress_and_opens_its_page(hub, tiny_checkpoint, opus_mt_folder):
    from ui.app import build_demo

    demo = build_demo(tiny_checkpoint)
    endpoint = api_function(demo, "translate")

    def translate_api(*args):
        return run_listener(endpoint, *args)

    with pytest.raises(Exception, match="not loaded on this server"):
        translate_api(SENTENCE, "de-en", OPUS_MT.key)
    own = translate_api(SENTENCE, "de-en", OWN.key)["translation"]
    progress_lines = []
    original = demo.later.progress_bar

    def watched_bar():  # records the menu's line at each byte count the library reports
        bar = original()

        class Watched(bar):
            def update(self, n=1):
                result = super().update(n)
                if self.counted:
                    later = demo.later
                    progress_lines.append((later.direction, later.done, later.total, later.progress().text))
                return result

        return Watched

    demo.later.progress_bar = watched_bar
    pick = handler(demo, "model_pick")
    answer = by_elem_id(pick(OPUS_MT.key))
    assert answer["model-choice"].value == OWN.key  # the own model stays on screen meanwhile
    assert demo.later.wait(TIMEOUT_S) == "ready", demo.later.problem
    for direction, (repo, _) in OPUS_MT_REPOS.items():  # every byte of each snapshot counted, as it came
        counts = [(done, total) for seen, done, total, _ in progress_lines if seen == direction]
        files = sum(path.stat().st_size for path in (opus_mt_folder / repo.split("/")[1]).iterdir())
        assert counts and counts[-1] == (files, files), (direction, counts[-3:], files)
        assert [done for done, _ in counts] == sorted(done for done, _ in counts)
    texts = [text for *_, text in progress_lines]
    assert any(re.match(r"Downloading OPUS-MT, German → English \(1 of 2\): \d+ of \d+ MB\. ", text) for text in texts)
    assert any("English → German (2 of 2)" in text for text in texts)
    assert any(path.endswith("model.safetensors") for _, path in hub.requests)  # from the stand-in, over HTTP

    tick = handler(demo, "model_tick")
    answer = by_elem_id(tick(True))
    assert answer["model-go"] == "open" and answer["Timer"].active is False  # the visitor who asked goes there
    assert by_elem_id(tick(False))["model-go"] == ""  # others stay
    assert [path for path, *_ in demo.pages] == ["", OPUS_MT.key]
    assert menu(demo, OPUS_MT.key).value == OPUS_MT.key and not [
        b for b in demo.blocks.values() if getattr(b, "elem_id", None) == "model-placeholder"
    ]
    assert menu(demo, OPUS_MT.key)._id in demo.config["page"][OPUS_MT.key]["components"]  # served from the new config

    checkpoint = load_opus_mt("de-en", folder=opus_mt_folder)
    expected = core_translate(checkpoint.model, checkpoint.tokenizer, SENTENCE, "de-en")
    assert demo.runners[OPUS_MT.key].model == OPUS_MT.key
    assert translate_api(SENTENCE, "de-en", OPUS_MT.key)["translation"] == expected.translation  # the API has it
    assert translate_api(SENTENCE, "de-en", OWN.key)["translation"] == own  # and the own model as before


def test_an_unreachable_hub_says_so_in_one_plain_sentence(no_hub, tiny_checkpoint):
    from ui.app import build_demo

    demo = build_demo(tiny_checkpoint)
    pick = handler(demo, "model_pick")
    pick(OPUS_MT.key)
    assert demo.later.wait(TIMEOUT_S) == "failed"
    text = shown_text(by_elem_id(pick(OWN.key))["model-status"])
    assert text == models.UNREACHABLE and text.count(". ") == 0 and text.endswith(".")
    assert OPUS_MT_ENV in text and "cannot reach the Hugging Face Hub" in text
    for leak in ("Error", "Errno", "huggingface_hub", "http", "Traceback", "LocalEntry", "MarianError"):
        assert leak not in text
    assert [path for path, *_ in demo.pages] == ["", OPUS_MT.key]  # the placeholder stays, the own model serves
    assert run_listener(api_function(demo, "translate"), SENTENCE, "de-en", OWN.key)["translation"]


def test_a_failed_download_changes_the_menus_words_and_logs_one_line_per_failure(no_hub, tiny_checkpoint, caplog):
    """After a failed download the menu's entry no longer offers the download but says it failed and what picking it
    again does (on the page that picked it and on a fresh one), the line under it says why; each failed pick writes
    one line to the server's log, naming what failed, whichever logger would write it."""
    import logging

    from ui.app import build_demo

    demo = build_demo(tiny_checkpoint)
    pick, visit = handler(demo, "model_pick"), handler(demo, "model_visit")
    caplog.set_level(logging.WARNING)
    caplog.clear()
    for failures in (1, 2):  # the first pick, and picking it again
        pick(OPUS_MT.key)
        assert demo.later.wait(TIMEOUT_S) == "failed"
        lines = [line for record in caplog.records for line in record.getMessage().splitlines()]
        assert len(lines) == failures, lines
        assert lines[-1].startswith("OPUS-MT not loaded: could not download 'Helsinki-NLP/opus-mt-de-en'"), lines
    for answer in (by_elem_id(handler(demo, "model_tick")(True)), by_elem_id(visit())):
        entry = dict((key, label) for label, key in answer["model-choice"].choices)[OPUS_MT.key]
        assert entry == "OPUS-MT (Helsinki-NLP): its download failed; picking it tries once more"
        assert "600 MB" not in entry and answer["model-choice"].value == OWN.key
    text = shown_text(by_elem_id(pick(OWN.key))["model-status"])
    assert text.startswith("OPUS-MT could not be downloaded because this server cannot reach the Hugging Face Hub; ")
    assert "; picking it again in the menu tries once more, or copy its two folders" in text and text.count(".") == 1
    assert demo.later.state == "failed"  # picking the own model starts nothing


def test_model_opus_mt_without_the_hub_says_why_the_own_model_is_shown(no_hub, tiny_checkpoint, caplog):
    import logging

    from ui.app import build_demo

    caplog.set_level(logging.WARNING)
    demo = build_demo(tiny_checkpoint, model=OPUS_MT.key)
    failed = [line for record in caplog.records for line in record.getMessage().splitlines() if "OPUS-MT" in line]
    assert len(failed) == 1 and failed[0].startswith("OPUS-MT not loaded: could not download"), failed  # one line
    assert demo.runner.model == OWN.key
    status = status_of(demo)
    assert status.visible is True and status.value == models.OWN_SHOWN + models.UNREACHABLE
    entry = dict((key, label) for label, key in menu(demo).choices)[OPUS_MT.key]
    assert entry.endswith(": its download failed; picking it tries once more")  # the menu says what happened
    assert "This page shows this project's model because OPUS-MT, asked for at start-up" in status.value


def test_the_preload_downloads_at_start_up_and_a_plain_visit_then_opens_on_opus_mt(hub, tiny_checkpoint):
    from ui.app import build_demo

    hub_env = hub
    del hub_env
    import os

    os.environ[models.PRELOAD_ENV] = "1"
    try:
        demo = build_demo(tiny_checkpoint)
    finally:
        del os.environ[models.PRELOAD_ENV]
    assert demo.runner.model == OWN.key  # the own model serves at once
    assert demo.later.wait(TIMEOUT_S) == "ready"
    visit = handler(demo, "model_visit")
    assert by_elem_id(visit())["model-go"] == "auto"  # the page's script opens OPUS-MT unless the link asks otherwise
    assert menu(demo, OPUS_MT.key).value == OPUS_MT.key
    assert "?model=own" in models.open_js(models.FIRST_PAGE + models.STAY, OWN.key)


def test_a_page_built_into_the_app_takes_no_component_made_by_another_thread(clean_env):
    """While mount_page builds, a listener in another thread that makes a component (an update such as
    gr.Radio(choices=...)) must not add it to the page being built."""
    import threading

    import gradio as gr

    with gr.Blocks() as demo:
        gr.Markdown("home")
    models.placeholder_page(demo, OPUS_MT.key)
    made = {}

    def build():
        gr.Markdown("first", elem_id="built-first")
        other = threading.Thread(target=lambda: made.setdefault("radio", gr.Radio(["a", "b"], elem_id="stray")))
        other.start()
        other.join()
        gr.Markdown("last", elem_id="built-last")

    models.mount_page(demo, OPUS_MT.key, build)
    ids = {getattr(b, "elem_id", None) for b in demo.blocks.values() if b.page == OPUS_MT.key}
    assert {"built-first", "built-last"} <= ids and "stray" not in ids and "model-placeholder" not in ids
    assert made["radio"]._id not in demo.config["page"][OPUS_MT.key]["components"]
