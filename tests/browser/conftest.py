"""The browser lane's fixtures: one headless Chromium and one served app per test run.

Each app is `python3 app.py` in a subprocess on a free 127.0.0.1 port (scripts/app_process.py), started the
first time a test asks for it and stopped at the end of the run: `server` on the tiny checkpoint, and the
three that must differ, `corpus_server` (a corpus file beside the checkpoint), `copy_server` (a tiny model
trained to copy, for provenance) and `shipped_server` (the shipped checkpoint). Tests open their own pages,
so the server's sessions never cross (each page is a Gradio session with its own gr.State).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from browser_helpers import GERMAN, THEMES, VIEWPORTS, rects, settled_scroll, to_empty_page, wait_step

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "checkpoints" / "de-en-small"
START_TIMEOUT_S = 180  # importing torch and gradio on a busy 2-core machine is slow
PAGE_TIMEOUT_MS = 30_000  # the server shares two busy CPU cores


def pytest_collection_modifyitems(items):
    """Every test in this folder is a browser test (pytest.ini's default lane leaves them out)."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.browser)


def served(checkpoint, tmp_path_factory, name: str):
    """Yield the app's URL (`python3 app.py` on `checkpoint`, its log in a fresh temporary folder `name`); the
    server stops after the fixture that yields from this; a server that does not start fails the test."""
    from scripts.app_process import started_app

    log_path = tmp_path_factory.mktemp(name) / "app.log"
    try:
        with started_app(checkpoint, log_path, START_TIMEOUT_S) as (url, _process):
            yield url
    except RuntimeError as error:
        pytest.fail(str(error))


@pytest.fixture(scope="session")
def server(tiny_checkpoint, tmp_path_factory):
    """The app's URL on the tiny checkpoint."""
    yield from served(tiny_checkpoint, tmp_path_factory, "server")


@pytest.fixture(scope="session")
def corpus_checkpoint(tiny_checkpoint, pairs, tmp_path_factory):
    """A copy of the tiny checkpoint with corpus_heads.npz beside it, made by the script from the shared pairs."""
    from scripts.corpus_heads import main

    root = tmp_path_factory.mktemp("browser-corpus")
    directory = root / "tiny"
    shutil.copytree(tiny_checkpoint, directory)
    (root / "val.de").write_text("\n".join(de for de, _ in pairs) + "\n", encoding="utf-8")
    (root / "val.en").write_text("\n".join(en for _, en in pairs) + "\n", encoding="utf-8")
    assert main(["--checkpoint", str(directory), "--data", str(root / "val"), "--sentences", "6",
                 "--importance-sentences", "3", "--prune-sentences", "2", "--map-sentences", "3",
                 "--prune-points", "3", "--threads", "1"]) == 0
    assert (directory / "corpus_heads.npz").exists()
    return directory


@pytest.fixture(scope="session")
def corpus_server(corpus_checkpoint, tmp_path_factory):
    """The app's URL on the tiny checkpoint with a corpus file (the corpus panels have data)."""
    yield from served(corpus_checkpoint, tmp_path_factory, "corpus-server")


@pytest.fixture(scope="session")
def copy_server(copy_checkpoint_dir, tmp_path_factory):
    """The app's URL on the tiny copy model (tests/conftest.py), whose translations end with [EOS]."""
    yield from served(copy_checkpoint_dir, tmp_path_factory, "copy-server")


@pytest.fixture(scope="session")
def shipped_server(tmp_path_factory):
    """The app's URL on the shipped checkpoint (checkpoints/de-en-small, part of the repository)."""
    if not (SHIPPED / "config.json").exists():
        pytest.skip("no shipped checkpoint")
    yield from served(SHIPPED, tmp_path_factory, "shipped-server")


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium for the whole run (each test opens and closes its own pages)."""
    from browser_helpers import CHROMIUM
    from playwright.sync_api import expect, sync_playwright

    from scripts.chromium import launch

    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is not installed")
    expect.set_options(timeout=PAGE_TIMEOUT_MS)
    with sync_playwright() as playwright:
        browser = launch(playwright)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, server):
    """A 1400x1000 page on the app, emptied (browser_helpers.to_empty_page); any alert() lands in page.dialogs."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.dialogs = []  # any alert() would land here
    page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
    page.set_default_timeout(PAGE_TIMEOUT_MS)
    page.goto(server)
    to_empty_page(page)
    yield page
    page.close()


@pytest.fixture(scope="module", params=[(size, theme) for size in VIEWPORTS for theme in THEMES],
                ids=lambda param: f"{param[0][0]}x{param[0][1]}-{param[1]}")
def screen(request, browser, server):
    """A page at one viewport and theme, on the Attention tab, GERMAN translated by Enter in the sentence box;
    `page.after` holds where things were right after the translation (one page per module and screen)."""
    from playwright.sync_api import expect

    (width, height), theme = request.param
    page = browser.new_page(viewport={"width": width, "height": height})
    page.set_default_timeout(PAGE_TIMEOUT_MS)
    page.goto(server + f"?__theme={theme}")
    page.wait_for_selector("#attention-plot .js-plotly-plot")  # the start-up example, on the Attention tab
    expect(page.locator("#translation textarea")).not_to_have_value("")
    page.fill("#source textarea", GERMAN)
    page.press("#source textarea", "Enter")
    expect(page.locator("#source textarea")).to_have_value(GERMAN)
    page.wait_for_function("(text) => document.querySelector('#translation textarea').value !== '' && "
                           "document.querySelector('#tokens').textContent.includes('Fahrrad')", arg=GERMAN)
    wait_step(page, 1)
    settled_scroll(page)
    page.wait_for_selector("#attention-plot .js-plotly-plot .heatmaplayer")
    page.after = rects(page, "#player-bar", "#step-next", "#attention-kind", "#layer", "#head",
                       "#attention-plot", "#attention-plot .js-plotly-plot .main-svg", "#step-info .step-output")
    page.size, page.theme = (width, height), theme
    yield page
    page.close()
