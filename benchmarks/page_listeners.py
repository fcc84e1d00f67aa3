"""How many server listeners one visitor's click runs, and how many components a page has, counted in headless
Chromium on the served app (app.py in a subprocess on the shipped checkpoint).

For each click (Translate with a new sentence, Next, the Compare tab's blog pair) the page's requests to Gradio's
queue (`/gradio_api/queue/join`: one per server listener the click runs, chained ones included) are counted from
the click until none has come for a second. `--against DIR` counts a second checkout (e.g. a git worktree of an
earlier commit) in the same run:

    python3 -m benchmarks.page_listeners --against /tmp/before
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from scripts.chromium import launch

from .common import ROOT, app_server, machine_info

CHECKPOINT = ROOT / "checkpoints" / "de-en-small"
QUIET_MS = 1000  # no new request for this long: the click's listeners are done


# every request the page's scripts make to the queue, counted in the page (installed before its scripts run)
COUNT_JOINS = """(() => { window.__joins = 0; const fetch = window.fetch;
  window.fetch = function (input, ...rest) {
    if (String(input && input.url ? input.url : input).includes('/queue/join')) window.__joins += 1;
    return fetch.call(this, input, ...rest); }; })()"""


def counted(page, click) -> int:
    """Requests to the queue that `click()` caused (each a server listener run)."""
    start = page.evaluate("() => window.__joins")
    click()
    seen = -1
    while seen != page.evaluate("() => window.__joins"):
        seen = page.evaluate("() => window.__joins")
        page.wait_for_timeout(QUIET_MS)
    return seen - start


def count(url: str, playwright) -> dict:
    browser = launch(playwright)
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.add_init_script(COUNT_JOINS)
    page.goto(url)
    page.wait_for_selector("#attention-plot .js-plotly-plot")
    page.wait_for_function("() => !!document.querySelector('#share-link textarea')?.value")
    page.wait_for_timeout(QUIET_MS)
    components = page.evaluate("() => window.gradio_config.components.length")
    listeners = page.evaluate("() => window.gradio_config.dependencies.filter((d) => d.backend_fn).length")
    page.fill("#source textarea", "Zwei Hunde spielen im Schnee.")
    translate = counted(page, lambda: page.click("#translate"))
    step = counted(page, lambda: page.click("#step-prev"))
    page.locator("#views [role=tablist]").get_by_role("tab", name="Compare").click()
    page.wait_for_timeout(QUIET_MS)
    pair = counted(page, lambda: page.click("#compare-example"))
    browser.close()
    return {
        "components": components,
        "server_listeners": listeners,
        "requests_per_translate": translate,
        "requests_per_step": step,
        "requests_per_blog_pair": pair,
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", type=Path, help="another checkout, counted in the same run")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    checkouts = {"this checkout": ROOT, **({str(args.against): args.against} if args.against else {})}
    result = {"machine": machine_info(threads=1), "counts": {}}
    with sync_playwright() as playwright:
        for name, checkout in checkouts.items():
            with app_server(CHECKPOINT, checkout) as (url, _pid):
                result["counts"][name] = count(url, playwright)
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
