"""axe-core (Deque's accessibility rules, from npm: node_modules/axe-core) over every screen a visitor reaches, in
headless Chromium: the first screen, its menus, after Translate, every tab, Compare's blog pair, every Explain panel
after its run, a share link and the tour; per screen size and theme.

    python3 -m scripts.axe_report                               # every screen, 1280x720 and 390x844, light and dark
    python3 -m scripts.axe_report --screens 1280x720-light --all-impacts

It starts `app.py` on the shipped checkpoint (or --checkpoint) with OPUS-MT asked for but absent, so the model menu
is on the page, and prints, per screen, the serious and critical violations (rule: nodes), then the totals.
tests/browser/test_browser_accessibility.py walks the same screens (`walk`) with `run_axe` and fails on any.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a file
    sys.path.insert(0, str(ROOT))

from scripts.chromium import open_tab  # noqa: E402

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
SERIOUS = ("serious", "critical")
GERMAN = "Ein Mann fährt mit dem Fahrrad die Straße entlang."
SCREEN_SIZES = {"1280x720": (1280, 720), "390x844": (390, 844)}
THEMES = ("light", "dark")
TABS = ("Next token", "Attention", "Compare", "Positional encoding", "Masks", "Model", "Explain")
# the model menu: shown when OPUS-MT is asked for; a folder that does not exist leaves it not loaded (one message)
ABSENT_OPUS_MT = {"ATTENTION_EXPLORER_OPUS_MT": "/nonexistent-opus-mt"}

# one run of axe over the document -> its violations, each {id, impact, help, nodes: [{target, summary}]}
RUN_AXE = """async () => {
  const results = await axe.run(document, {resultTypes: ['violations']});
  return results.violations.map((rule) => ({id: rule.id, impact: rule.impact, help: rule.help,
    nodes: rule.nodes.map((node) => ({target: node.target.join(' '), impact: node.impact,
                                      summary: (node.failureSummary || '').slice(0, 300)}))}));
}"""
# Gradio's status trackers: a run in flight (one not in flight carries `hide`, one that failed says "Error")
BUSY_NOW = (
    "Array.from(document.querySelectorAll('[data-testid=status-tracker]:not(.hide)'))"
    ".some((tracker) => !/Error/.test(tracker.textContent))"
)
BUSY = f"() => {BUSY_NOW}"


def run_axe(page) -> list[dict]:
    """axe-core's violations on the page as it is now (axe is injected once per document)."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(path=str(AXE))
    return page.evaluate(RUN_AXE)


def serious(violations: list[dict]) -> list[dict]:
    return [rule for rule in violations if rule["impact"] in SERIOUS]


def settled(page) -> None:
    """Wait until no run is in flight, no figure is being drawn (ui/js/figures.js counts them) and nothing fades
    (a result fades in from Gradio's dimmed pending look: read half-way, its text is pale)."""
    page.wait_for_function(
        f"() => !{BUSY_NOW} && (document.body.dataset.figuresDrawing || '0') === '0'"
        " && document.getAnimations().every((animation) => animation.playState !== 'running')"
    )


def after_click(page, selector: str) -> None:
    """Click, then wait for the run it starts (if it shows as one within a moment) to end."""
    page.click(selector)
    try:
        page.wait_for_function(BUSY, timeout=1500)
    except Exception:  # a fast run may be over before its tracker shows
        pass
    settled(page)


def open_page(page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("#attention-plot .js-plotly-plot")  # the start-up example, drawn
    page.wait_for_function("() => !!document.querySelector('#share-link textarea')?.value")
    settled(page)


def translate(page) -> None:
    page.fill("#source textarea", GERMAN)
    page.click("#translate")
    page.wait_for_function(
        "() => document.querySelector('#tokens').textContent.includes('Fahrrad') && "
        "(() => { const m = /Step (\\d+) of (\\d+)/.exec(document.querySelector('#step-info').textContent);"
        " return m && m[1] === m[2]; })()"
    )
    settled(page)


def show_tab(page, name: str) -> None:
    open_tab(page, name)
    settled(page)


def open_menu(page, selector: str) -> bool:
    """Open a dropdown by keyboard-free click; False where the page has no such menu."""
    if page.locator(selector).count() == 0:
        return False
    page.locator(f"{selector} input").click()
    page.wait_for_selector("ul[role=listbox]")
    return True


def close_menu(page) -> None:
    page.keyboard.press("Escape")
    page.wait_for_selector("ul[role=listbox]", state="detached")


def panels() -> list[tuple[str, str]]:
    """Every Explain panel: (its tab's title, its run button's id or '' where opening it draws its result)."""
    from ui.explain.panels import PANELS

    runs = {
        "ablate": "ablate-run",
        "branch": "branch-run",
        "beam": "beam-run",
        "positions": "nope-run",
        "paper": "paper-run",
        "cache": "cache-run",
        "attribution": "attribution-run",
    }
    return [(panel.title, runs.get(panel.id, "")) for panel in PANELS]


def walk(
    page, url: str, theme: str, only: Callable[[str], bool] = lambda name: True, panels_too: bool = True
) -> Iterator[tuple[str, list]]:
    """Visit every screen in a visitor's order on `page` (a fresh page), yielding (screen, axe violations) for each
    screen `only` keeps (the walk itself visits them all: each screen sets up the next); `panels_too`: every
    Explain panel after its run as well."""

    def check(name: str):
        return (name, run_axe(page)) if only(name) else None

    open_page(page, url + f"?__theme={theme}")
    screens = [check("first screen")]
    if open_menu(page, "#examples"):
        screens.append(check("examples menu"))
        close_menu(page)
    if open_menu(page, "#model-choice"):
        screens.append(check("model menu"))
        close_menu(page)
    translate(page)
    screens.append(check("after Translate"))
    yield from filter(None, screens)
    for tab in TABS:
        show_tab(page, tab)
        if (shown := check(f"tab {tab}")) is not None:
            yield shown
        if tab == "Compare":
            after_click(page, "#compare-example")
            page.wait_for_selector("#compare-plot-2 .js-plotly-plot")
            settled(page)
            if (shown := check("Compare blog pair")) is not None:
                yield shown
    for title, run in panels() if panels_too else ():
        page.locator("#explain-panels").get_by_role("tab", name=title, exact=True).first.click()
        settled(page)
        if run == "ablate-run":  # a head to switch off first
            page.locator("#ablate-encoder-1").get_by_text("H1").click()
        if run and page.locator(f"#{run}").is_visible():
            after_click(page, f"#{run}")
        if (shown := check(f"Explain {title}")) is not None:
            yield shown
    link = page.locator("#share-link textarea").input_value()
    open_page(page, link + ("&" if "?" in link else "?") + f"__theme={theme}")
    if (shown := check("share link")) is not None:
        yield shown
    after_click(page, "#tour-next")
    if (shown := check("tour")) is not None:
        yield shown


def report(url: str, screens: list[str], all_impacts: bool = False) -> Counter:
    """Print each screen's violations (serious and critical, or all with `all_impacts`) -> nodes per screen."""
    from playwright.sync_api import sync_playwright

    from scripts.chromium import launch

    totals: Counter = Counter()
    with sync_playwright() as playwright:
        browser = launch(playwright)
        for screen in screens:
            size, theme = screen.rsplit("-", 1)
            width, height = SCREEN_SIZES[size]
            page = browser.new_page(viewport={"width": width, "height": height})
            page.set_default_timeout(60_000)
            for name, violations in walk(page, url, theme):
                shown = violations if all_impacts else serious(violations)
                nodes = sum(len(rule["nodes"]) for rule in shown)
                totals[f"{screen} | {name}"] = nodes
                rules = ", ".join(f"{rule['id']} ({rule['impact']}): {len(rule['nodes'])}" for rule in shown)
                print(f"{screen:16} {name:36} {nodes:3}  {rules}", flush=True)
            page.close()
        browser.close()
    print(f"total: {sum(totals.values())} nodes over {len(totals)} screens")
    return totals


def main(argv: list[str] | None = None) -> int:
    from scripts.app_process import started_app

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", default=str(ROOT / "checkpoints" / "de-en-small"))
    parser.add_argument("--url", help="an app already running (else one is started on --checkpoint)")
    parser.add_argument("--screens", default=",".join(f"{s}-{t}" for s in SCREEN_SIZES for t in THEMES))
    parser.add_argument("--all-impacts", action="store_true", help="minor and moderate violations too")
    args = parser.parse_args(argv)
    if not AXE.exists():
        parser.error(f"{AXE} is missing: run `npm ci` first")
    screens = args.screens.split(",")
    if args.url:
        report(args.url, screens, args.all_impacts)
        return 0
    with tempfile.TemporaryDirectory() as folder:
        with started_app(args.checkpoint, Path(folder) / "app.log", env=ABSENT_OPUS_MT) as (url, _process):
            report(url, screens, args.all_impacts)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
