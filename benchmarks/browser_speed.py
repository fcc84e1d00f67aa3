"""Browser part: page-load and click-to-plot times in headless Chromium (Playwright), app.py in a subprocess.

Page load (`page_load`): the page requested -> its first figure drawn (ms after the navigation started, the
page's own performance.now(), noted by a MutationObserver installed before any of the page's scripts), at
1280x720, median of several loads, each a first visit (a fresh browser context: no cached files) and again with
the files cached (a visitor coming back). Run alone, with the CPU named:

    python -m benchmarks.browser_speed --loads 7

Runs on one machine differ by a few hundred ms; to tell a change from that, serve another checkout beside this one
(`git worktree add /tmp/before HEAD~1`) and alternate first visits between the two in the same run:

    python -m benchmarks.browser_speed --loads 15 --against /tmp/before

With the Attention tab open, two timings (ms, measured inside the page with performance.now()):
- translate: click Translate -> the attention plot redrawn with the new trace;
- step:      click "Next ›"  -> the attention plot redrawn for the next step.

"Redrawn": gr.Plot draws with `Plotly.react(div, data, ...)`, which replaces `div.data` and updates
the SVG synchronously. A MutationObserver on the plot (plus an animation-frame poll as a fallback)
notes the first moment `div.data` is a new object and the plot has a layout: `drawn`. `painted`
adds the next animation frame (the pixels on screen); `afterplot` is Plotly's own
`plotly_afterplot` event, when it fired after the new data arrived; `plotly_react` the time spent
inside Plotly.react (all plots this click redrew), i.e. the browser's share of `drawn`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import time
from pathlib import Path

from scripts.chromium import CHROMIUM, CHROMIUM_ARGS

from .common import machine_info, app_server, summarize, text_of_tokens

PLOT_TIMEOUT_MS = 60_000
PAUSE_S = 0.3  # between clicks, so one event chain has fully finished before the next click

# Click `button` and resolve with the times (ms after the click) at which `plot` was redrawn.
CLICK_TO_PLOT_JS = """
async ({button, plot, timeout}) => {
  const host = () => document.querySelector(`#${plot} [data-testid=plotly]`);
  const old = host();
  const before = old ? old.data : undefined;
  let afterplot = null;
  if (old && typeof old.on === "function") {
    old.on("plotly_afterplot", () => {
      if (afterplot === null && old.data !== before) afterplot = performance.now();
    });
  }
  // time spent inside Plotly.react (every plot redrawn by this click), where gr.Plot calls it
  if (window.Plotly && !window.Plotly.__benchmarkWrapped) {
    const react = window.Plotly.react;
    window.Plotly.react = function (...args) {
      const start = performance.now();
      try { return react.apply(this, args); } finally { window.__plotlyMs += performance.now() - start; }
    };
    window.Plotly.__benchmarkWrapped = true;
  }
  window.__plotlyMs = 0;
  const container = document.querySelector(`#${plot}`);
  return await new Promise((resolve, reject) => {
    let done = false, observer = null;
    const t0 = performance.now();
    const check = () => {
      if (done) return;
      const gd = host();
      if (gd && gd.data && gd.data !== before && gd._fullLayout) {
        done = true;
        const drawn = performance.now();
        if (observer) observer.disconnect();
        requestAnimationFrame(() => setTimeout(() => resolve({
          drawn: drawn - t0, painted: performance.now() - t0,
          afterplot: afterplot === null ? null : afterplot - t0,
          plotly_react: window.Plotly && window.Plotly.__benchmarkWrapped ? window.__plotlyMs : null,
        }), 0));
        return;
      }
      if (performance.now() - t0 > timeout) { done = true; reject(new Error(`no redraw of #${plot}`)); return; }
      requestAnimationFrame(check);
    };
    observer = new MutationObserver(check);
    observer.observe(container, {subtree: true, childList: true, attributes: true});
    document.querySelector(`#${button}`).click();
    requestAnimationFrame(check);
  });
}
"""


# installed before the page's own scripts: the moment (performance.now(), ms after the navigation started) the first
# figure's plot area is in the page
FIRST_FIGURE_JS = """
window.__firstFigureMs = null;
new MutationObserver((_, observer) => {
  if (document.querySelector('.js-plotly-plot .main-svg .cartesianlayer')) {
    window.__firstFigureMs = performance.now();
    observer.disconnect();
  }
}).observe(document, {childList: true, subtree: true});
"""
LOAD_VIEWPORT = {"width": 1280, "height": 720}  # a projector


def first_figure_ms(context, url: str) -> float:
    """One load of `url` in `context` -> ms from the navigation to the first figure."""
    page = context.new_page()
    try:
        page.set_default_timeout(PLOT_TIMEOUT_MS)
        page.goto(url)
        page.wait_for_function("() => window.__firstFigureMs !== null")
        return page.evaluate("window.__firstFigureMs")
    finally:
        page.close()


def first_visit_ms(browser, url: str) -> float:
    """A first visit (a fresh context: nothing cached) -> ms to the first figure."""
    context = browser.new_context(viewport=LOAD_VIEWPORT)
    context.add_init_script(FIRST_FIGURE_JS)
    try:
        return first_figure_ms(context, url)
    finally:
        context.close()


def page_load(browser, url: str, loads: int = 5, against: str | None = None) -> dict:
    """The page requested -> its first figure, ms: `loads` first visits (each in a fresh context, nothing cached)
    and `loads` visits with the page's files cached, interleaved; with `against` (another server's URL), a first
    visit to it after each to this one, the two taking turns to go first."""
    first, again, other = [], [], []
    cached = browser.new_context(viewport=LOAD_VIEWPORT)
    cached.add_init_script(FIRST_FIGURE_JS)
    try:
        for index in range(loads):
            visits = [(first, url), (other, against)] if against else [(first, url)]
            for samples, address in visits[:: -1 if index % 2 else 1]:
                samples.append(first_visit_ms(browser, address))
            again.append(first_figure_ms(cached, url))
    finally:
        cached.close()
    result = {
        "viewport": LOAD_VIEWPORT,
        "first_visit_ms": summarize(first),
        "cached_ms": summarize(again),
        "first_visit_samples_ms": [round(ms) for ms in first],
        "cached_samples_ms": [round(ms) for ms in again],
    }
    if against:
        result["against_first_visit_ms"] = summarize(other)
        result["against_first_visit_samples_ms"] = [round(ms) for ms in other]
    return result


def click_to_plot(page, button: str, plot: str = "attention-plot") -> dict:
    return page.evaluate(CLICK_TO_PLOT_JS, {"button": button, "plot": plot, "timeout": PLOT_TIMEOUT_MS})


def measure(checkpoint, checkpoint_dir: str, repeats: int = 10, n_tokens: int = 20, direction: str = "de-en") -> dict:
    if not CHROMIUM.exists():
        return {"skipped": f"{CHROMIUM} is not installed"}
    from playwright.sync_api import sync_playwright

    # gr.Plot redraws only when the figure changes: alternate two different sentences of n_tokens
    language = "de" if direction == "de-en" else "en"
    texts = [text_of_tokens(checkpoint.tokenizer, language, n_tokens, skip_words) for skip_words in (0, 3)]
    translations, steps = [], []
    with app_server(checkpoint_dir) as (url, _pid), sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            loading = page_load(browser, url, max(3, repeats // 2))
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(PLOT_TIMEOUT_MS)
            page.goto(url)
            page.wait_for_selector("#source textarea")
            page.get_by_role("tab", name="Attention").click()
            if direction == "en-de":
                page.locator("#direction").get_by_label("English → German").check()
            for index in range(repeats + 2):  # two warm-up translations: the first plot also loads Plotly
                page.fill("#source textarea", texts[index % 2])
                timing = click_to_plot(page, "translate")
                if index >= 2:
                    translations.append(timing)
                time.sleep(PAUSE_S)
            num_steps = int(page.locator("#step input[type=number]").get_attribute("max") or 0) or None
            for _ in range(repeats):
                step = page.locator("#step input[type=number]").input_value()
                if num_steps and int(step) >= num_steps:  # at the last step: back to the first, untimed
                    click_to_plot(page, "step-first")
                    time.sleep(PAUSE_S)
                steps.append(click_to_plot(page, "step-next"))
                time.sleep(PAUSE_S)
        finally:
            browser.close()

    def stats(samples: list[dict]) -> dict:
        result = {key: summarize([s[key] for s in samples]) for key in ("drawn", "painted")}
        for key in ("afterplot", "plotly_react"):
            values = [s[key] for s in samples if s[key] is not None]
            result[key] = summarize(values) if values else None
        return result

    return {
        "page_load": loading,
        "source_tokens": n_tokens,
        "sources": texts,
        "direction": direction,
        "translate_ms": stats(translations),
        "step_ms": stats(steps),
    }


def main(argv: list[str] | None = None) -> dict:
    """The page-load part alone: the shipped checkpoint served by app.py, `--loads` loads of each kind, the CPU
    and its load average printed with the numbers."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.browser_speed", description=main.__doc__)
    parser.add_argument("--checkpoint", default=None, help="checkpoint directory (default: the shipped one)")
    parser.add_argument("--loads", type=int, default=7, help="page loads of each kind (median reported)")
    parser.add_argument(
        "--against",
        type=Path,
        default=None,
        metavar="CHECKOUT",
        help="another copy of the repository (e.g. an earlier commit's worktree): its app.py served too, first "
        "visits alternating between the two",
    )
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    from model.checkpoints.paths import DEFAULT_CHECKPOINT

    machine = {key: value for key, value in machine_info(1, None).items() if key in ("cpu", "cpu_count", "date_utc")}
    checkpoint = Path(args.checkpoint or DEFAULT_CHECKPOINT).resolve()
    with contextlib.ExitStack() as stack:
        url, _pid = stack.enter_context(app_server(checkpoint))
        against = stack.enter_context(app_server(checkpoint, args.against))[0] if args.against else None
        playwright = stack.enter_context(sync_playwright())
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        stack.callback(browser.close)
        load_before = os.getloadavg()
        result = {**machine, "load_average_start": load_before, **page_load(browser, url, args.loads, against)}
        result["load_average_end"] = os.getloadavg()
    print(json.dumps(result, indent=1))
    print(
        f"page requested -> first figure at 1280x720, median of {args.loads}: first visit "
        f"{result['first_visit_ms']['median']:.0f} ms, files cached {result['cached_ms']['median']:.0f} ms "
        f"({machine['cpu']}, {machine['cpu_count']} cores, load average {load_before[0]:.1f} at start)"
    )
    if args.against:
        print(f"{args.against}: first visit {result['against_first_visit_ms']['median']:.0f} ms (same run)")
    return result


if __name__ == "__main__":
    main()
