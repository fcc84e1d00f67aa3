"""Screenshots of the app as a visitor sees it: the README's pictures, and a look before calling a view done.

Starts `app.py` on the shipped checkpoint (or --checkpoint), opens headless Chromium at 1400x1000,
1280x720 and a 390x844 phone, light and dark, translates a sentence, steps forward, and saves one PNG
per screen and tab into --out:

    python3 scripts/screenshots.py --out /tmp/shots                      # every screen, theme and tab
    python3 scripts/screenshots.py --readme                               # the three first screens in docs/screenshots
    python3 scripts/screenshots.py --text "$(python3 -c 'print("Ein Mann fährt Rad. " * 20)')" --out /tmp/long
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a file
    sys.path.insert(0, str(ROOT))

from scripts.app_process import started_app  # noqa: E402
from scripts.chromium import CHROMIUM, CHROMIUM_ARGS, open_tab  # noqa: E402  (one Chromium set-up for all)
SCREENS = {"wide": (1400, 1000), "projector": (1280, 720), "phone": (390, 844)}
TABS = ["Next token", "Attention", "Positional encoding", "Masks", "Model", "Explain"]
README_SHOTS = {"light-wide.png": ("wide", "light"), "dark-1280x720.png": ("projector", "dark"),
                "phone-390.png": ("phone", "light")}


# the open tab's strip just under the sticky player bar; where that leaves the tab's first figure in the lower
# half of the window (the Attention tab's controls), that figure's top instead: the picture shows the view
SCROLL_TO_VIEW = """() => {
  const bar = document.getElementById('player-bar').getBoundingClientRect().height;
  const top = (element) => element.getBoundingClientRect().top + window.scrollY - bar;
  const figure = Array.from(document.querySelectorAll('#views .js-plotly-plot')).find(g => g.offsetParent !== null);
  const strip = top(document.getElementById('views'));
  const target = figure && top(figure) - strip > window.innerHeight * 0.45 - bar ? top(figure) - 8 : strip;
  window.scrollTo(0, Math.max(target, 0));
}"""


def translated_page(browser, url: str, screen: str, theme: str, text: str, steps: int):
    size = SCREENS[screen]
    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    page.set_default_timeout(60_000)
    page.goto(url + f"?__theme={theme}")
    page.wait_for_selector("#attention-plot .js-plotly-plot")  # the start-up example has landed
    page.fill("#source textarea", text)
    page.click("#translate")
    page.wait_for_function("() => document.querySelector('#step-info').textContent.includes('Step 1 of')")
    for _ in range(steps):
        page.click("#step-next")
        page.wait_for_timeout(300)
    return page


def first_screen(browser, url: str, screen: str, theme: str, path: Path) -> None:
    """The page as it opens, before any click or scroll: the form, the player and the start-up example's figure."""
    size = SCREENS[screen]
    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    page.set_default_timeout(120_000)
    page.goto(url + f"?__theme={theme}")
    page.wait_for_selector("#attention-plot .js-plotly-plot .heatmaplayer")
    page.wait_for_timeout(1500)
    page.mouse.move(0, 0)
    page.screenshot(path=str(path), full_page=False)
    page.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", default=str(ROOT / "checkpoints" / "de-en-small"))
    parser.add_argument("--out", type=Path, default=Path("/tmp/screenshots"))
    parser.add_argument("--text", default="Ein Mann fährt mit dem Fahrrad die Straße entlang.")
    parser.add_argument("--steps", type=int, default=3, help="Next clicks after translating")
    parser.add_argument("--screens", default=",".join(SCREENS), help=f"comma-separated: {','.join(SCREENS)}")
    parser.add_argument("--themes", default="light,dark")
    parser.add_argument("--tabs", default=",".join(TABS))
    parser.add_argument("--readme", action="store_true", help="write the README's three pictures to docs/screenshots")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    if args.readme:
        args.out = ROOT / "docs" / "screenshots"
        shots = [(name, screen, theme, "Attention") for name, (screen, theme) in README_SHOTS.items()]
    else:
        shots = [(f"{screen}-{theme}-{tab.lower().replace(' ', '-')}.png", screen, theme, tab)
                 for screen in args.screens.split(",") for theme in args.themes.split(",")
                 for tab in args.tabs.split(",")]
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder, \
            started_app(args.checkpoint, Path(folder) / "app.log") as (url, _process), \
            sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        pages: dict = {}
        for name, screen, theme, tab in shots if args.readme else ():
            first_screen(browser, url, screen, theme, args.out / name)
            print(args.out / name, flush=True)
        for name, screen, theme, tab in () if args.readme else shots:
            if (screen, theme) not in pages:
                pages[(screen, theme)] = translated_page(browser, url, screen, theme, args.text, args.steps)
            page = pages[(screen, theme)]
            open_tab(page, tab)
            page.wait_for_timeout(1500)  # the tab's figures are drawn when it opens
            page.evaluate(SCROLL_TO_VIEW)
            page.mouse.move(0, 0)  # no hover: a phone shows a figure's toolbar only when the figure is touched
            page.wait_for_timeout(300)
            page.screenshot(path=str(args.out / name), full_page=False)
            print(args.out / name, flush=True)
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
