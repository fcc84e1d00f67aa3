"""The model menu in headless Chromium with OPUS-MT not loaded at start-up (ui/models.py): `python3 app.py` on the
tiny checkpoint, its Hub a stand-in over HTTP (tests/support/hub_server.py) that serves the small OPUS-MT folders,
or one that cannot be reached.

- Served: pick OPUS-MT on the own page; the download runs in the server, OPUS-MT's page is built into the running
  app, and this page goes there by itself, in its theme; that page translates and its menu leads back.
- Unreachable: the line under the menus says so in the plain sentence, at the page's width on a laptop and a phone,
  and the menu's entry says the download failed and that picking it tries once more; the page stays on the own
  model.
"""

from __future__ import annotations

import re

import pytest

from browser_helpers import needs_chromium
from model.checkpoints.catalogue import OPUS_MT_REPOS
from ui import later_model, models

pytestmark = [pytest.mark.browser, needs_chromium]


@pytest.fixture(scope="module")
def hub(opus_mt_folder):
    import hub_server

    server = hub_server.HubServer({repo: opus_mt_folder / repo.split("/")[1] for repo, _ in OPUS_MT_REPOS.values()})
    yield server
    server.close()


def app_with_hub(tiny_checkpoint, tmp_path_factory, name: str, endpoint: str):
    from scripts.app_process import started_app

    folder = tmp_path_factory.mktemp(name)
    env = {"HF_ENDPOINT": endpoint, "HF_HUB_CACHE": str(folder / "hub-cache"), "HF_HUB_OFFLINE": "0"}
    with started_app(tiny_checkpoint, folder / "app.log", 180, env) as (url, _process):
        yield url


@pytest.fixture(scope="module")
def served_hub_app(tiny_checkpoint, tmp_path_factory, hub):
    yield from app_with_hub(tiny_checkpoint, tmp_path_factory, "menu-hub", hub.url)


@pytest.fixture(scope="module")
def no_hub_app(tiny_checkpoint, tmp_path_factory):
    import socket

    with socket.socket() as probe:  # a port where nothing listens
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    yield from app_with_hub(tiny_checkpoint, tmp_path_factory, "menu-no-hub", f"http://127.0.0.1:{port}")


def pick_opus_mt(page, entry: str = r".*downloads about 600 MB") -> None:
    """Pick OPUS-MT in the menu, its entry saying `entry` (a pattern) after its name."""
    page.locator("#model-choice input").click()
    page.get_by_role("option", name=re.compile(rf"^OPUS-MT \(Helsinki-NLP\): {entry}$")).click()


def test_picking_opus_mt_downloads_it_and_opens_its_page(browser, served_hub_app, hub):
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1280, "height": 720})
    try:
        page.goto(served_hub_app + "?__theme=dark")
        page.wait_for_selector("#attention-plot .js-plotly-plot")
        expect(page.locator("#model-choice input")).to_have_value("This project's model")
        pick_opus_mt(page)
        page.wait_for_url(re.compile(r"/opus-mt(\?|$)"), timeout=120_000)
        expect(page.locator("body")).to_have_class(re.compile(r"\bdark\b"))
        expect(page.locator("#model-choice input")).to_have_value("OPUS-MT (Helsinki-NLP)")
        assert any(path.endswith("model.safetensors") for _, path in hub.requests)
        page.locator("#direction").get_by_text("German → English").click()
        page.fill("#source textarea", "Der Hund läuft über die nasse Straße.")
        page.click("#translate")
        expect(page.locator("#translation textarea")).not_to_have_value("", timeout=60_000)
        page.locator("#model-choice input").click()  # and back
        page.get_by_role("option", name="This project's model", exact=True).click()
        page.wait_for_url(re.compile(r"/(\?.*)?$"))
        expect(page.locator("#model-choice input")).to_have_value("This project's model")
    finally:
        page.close()


# the line under the menus: its box, the header row's and the menu's, from the drawn page
BOXES = """() => Object.fromEntries(['#model-status', '#intro-row', '#model-choice'].map((id) => {
  const b = document.querySelector(id).getBoundingClientRect();
  return [id, {top: b.top, bottom: b.bottom, width: b.width}]; }))"""


@pytest.mark.parametrize("size, theme", [((1280, 720), "light"), ((390, 844), "dark")], ids=["1280x720", "390x844"])
def test_an_unreachable_hub_leaves_one_plain_line_and_the_own_model(browser, no_hub_app, size, theme):
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    try:
        page.goto(no_hub_app + f"?__theme={theme}")
        page.wait_for_selector("#attention-plot .js-plotly-plot")
        failed = re.escape(later_model.DOWNLOAD_FAILED)  # once a pick has failed, the menu says so (the app is shared)
        pick_opus_mt(page, rf"(.*downloads about 600 MB|{failed})")
        expect(page.locator("#model-status")).to_have_text(models.UNREACHABLE, timeout=120_000)
        page.locator("#model-choice input").click()  # the entry says what happened and what picking it again does
        expect(page.get_by_role("option", name=re.compile(rf"^OPUS-MT \(Helsinki-NLP\): {failed}$"))).to_be_visible()
        page.keyboard.press("Escape")
        boxes = page.evaluate(BOXES)
        status, row, menu = boxes["#model-status"], boxes["#intro-row"], boxes["#model-choice"]
        assert status["width"] >= 0.9 * row["width"], boxes  # a line of the page's width, not a column beside the menu
        assert status["top"] >= menu["bottom"] - 1, boxes  # under the menu
        assert status["bottom"] - status["top"] <= 5 * 24, boxes  # a few lines of text, not one word per line
        expect(page.locator("#model-choice input")).to_have_value("This project's model")
        assert not re.search(r"/opus-mt", page.url)
        assert page.locator(".toast-body").count() == 0  # no warning pop-up with the library's words
    finally:
        page.close()
