"""Accessibility end to end, in headless Chromium on the tiny checkpoint (docs/accessibility.md):

- axe-core (node_modules/axe-core, from npm) finds no serious or critical violation on any screen a visitor reaches
  (scripts/axe_report.py `walk`: the first screen, the examples and model menus, after Translate, every tab,
  Compare's blog pair, every Explain panel after its run, a share link, the tour), light and dark, 1280x720 and
  390x844; the Explain panels on two of the four (1280x720 light, 390x844 dark: each theme and size once);
- the main path by keys only, every stop with a visible focus ring, out of a menu by Tab;
- each figure's text equals its data at this step, and the step is said in a live region;
- the page at 200 % zoom of a 1280 px window (a 640x360 viewport at device scale 2) loses nothing sideways;
- reduced motion: nothing eases, Play still steps; the query and chosen chips differ by more than colour.
"""

from __future__ import annotations

import base64
import html
import math
import re

import numpy as np
import pytest

from scripts.axe_report import AXE, SERIOUS, settled, walk

from browser_helpers import GERMAN, needs_chromium, step_of, wait_last_step, wait_step

pytestmark = [pytest.mark.browser, needs_chromium, pytest.mark.skipif(not AXE.exists(), reason="run `npm ci` first")]

# (screen size, theme, the Explain panels too): each theme and each size runs every panel once
AXE_SCREENS = [
    ((1280, 720), "light", True),
    ((390, 844), "dark", True),
    ((1280, 720), "dark", False),
    ((390, 844), "light", False),
]
# serious or critical violations that are Gradio's own and cannot be mended in the page (rule id -> why, the
# Gradio issue: docs/accessibility.md); none today
KNOWN: dict[str, str] = {}


@pytest.mark.parametrize(
    "size, theme, panels_too", AXE_SCREENS, ids=lambda v: f"{v[0]}x{v[1]}" if isinstance(v, tuple) else str(v)
)
def test_no_serious_axe_violation_on_any_screen(browser, a11y_server, size, theme, panels_too):
    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    try:
        found, screens = [], []
        for name, violations in walk(page, a11y_server, theme, panels_too=panels_too):
            screens.append(name)
            for rule in violations:
                if rule["impact"] in SERIOUS and rule["id"] not in KNOWN:
                    found += [
                        f"{name}: {rule['id']} {node['target']} ({node['summary'][:160]})" for node in rule["nodes"]
                    ]
        assert {"first screen", "model menu", "after Translate", "Compare blog pair", "share link", "tour"} <= set(
            screens
        )
        assert panels_too == any(name.startswith("Explain ") for name in screens)
        assert not found, "\n".join(found)
    finally:
        page.close()


# ---- keyboard only ----

FOCUS = """() => {
  const element = document.activeElement;
  if (!element || element === document.body) return null;
  const shown = element.matches('input[type=radio], input[type=checkbox]') ? element.closest('label') || element : element;
  const style = getComputedStyle(shown), box = shown.getBoundingClientRect();
  const ring = (style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2) || style.boxShadow !== 'none';
  return {ring, seen: box.width > 0 && box.height > 0 && style.visibility !== 'hidden' && style.opacity !== '0',
          where: element.id || (element.closest('[id]') || {}).id || element.tagName};
}"""


def tab_to(page, selector: str, text: str | None = None, limit: int = 150) -> None:
    """Press Tab until the focus is in `selector` (on an element that says `text`, when given); every stop on the
    way shows a focus ring and can be seen."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        stop = page.evaluate(FOCUS)
        if stop is None:
            continue
        assert stop["ring"] and stop["seen"], f"focus without a visible ring at {stop['where']}"
        if page.evaluate(
            "([s, t]) => !!document.activeElement.closest(s) && (t === null || document.activeElement.textContent.trim() === t)",
            [selector, text],
        ):
            return
    raise AssertionError(f"{selector} not reached by Tab")


def checked(page, elem_id: str) -> str:
    return page.locator(f"#{elem_id} input:checked").evaluate("(input) => input.closest('label').textContent.trim()")


def test_keyboard_only_main_path(browser, a11y_server):
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1280, "height": 720})
    try:
        page.goto(a11y_server)
        settled_first(page)
        # a menu opened by keys and left by Tab closes: no trap
        tab_to(page, "#examples")
        page.keyboard.press("ArrowDown")
        page.wait_for_selector("ul[role=listbox]")
        page.keyboard.press("Tab")
        page.wait_for_selector("ul[role=listbox]", state="detached")
        tab_to(page, "#source")
        page.keyboard.press("Control+A")
        page.keyboard.type(GERMAN)
        tab_to(page, "#translate")
        page.keyboard.press("Enter")
        expect(page.locator("#tokens")).to_contain_text("Fahrrad")
        total = wait_last_step(page)
        page.keyboard.press("Home")  # the focus is on Translate: the step keys work from there
        wait_step(page, 1)
        page.keyboard.press("ArrowRight")
        wait_step(page, 2)
        # kind, layer and head: Tab into each group, Down picks the next choice (Left/Right step)
        for group in ("attention-kind", "layer", "head"):
            title = page.locator("#attention-plot .gtitle").text_content()
            choices = [text.strip() for text in page.locator(f"#{group} label").all_text_contents()]
            tab_to(page, f"#{group}")
            focused = page.evaluate("() => document.activeElement.closest('label').textContent.trim()")
            after = choices[(choices.index(focused) + 1) % len(choices)]
            if after == checked(page, group):  # the next one is already picked: from it, the one after
                page.keyboard.press("ArrowDown")
                focused, after = after, choices[(choices.index(after) + 1) % len(choices)]
            page.keyboard.press("ArrowDown")  # the choice after the focused one is picked
            page.wait_for_function(
                "(id) => document.activeElement.closest(`#${id}`) && document.activeElement.checked", arg=group
            )
            assert checked(page, group) == after, group
            expect(page.locator("#attention-plot .gtitle")).not_to_have_text(title)
        assert step_of(page) == (2, total)
        # Compare's blog pair, by Enter on its tab and its button
        tab_to(page, "#views [role=tab]", "Compare")
        page.keyboard.press("Enter")
        tab_to(page, "#compare-example")
        page.keyboard.press("Enter")
        page.wait_for_selector("#compare-plot-2 .js-plotly-plot")
        # an Explain panel run by keys: tick a head (Space), then Enter on its run button
        tab_to(page, "#views [role=tab]", "Explain")
        page.keyboard.press("Enter")
        tab_to(page, "#ablate-encoder-1")
        page.keyboard.press("Space")
        tab_to(page, "#ablate-run")
        page.keyboard.press("Enter")
        expect(page.locator("#ablate-result")).to_contain_text("Heads switched off")
        # the tour: its buttons by keys, and Tab leaves it
        tab_to(page, "#tour-next")
        page.keyboard.press("Enter")
        expect(page.locator("#tour-text")).not_to_contain_text("Start")
        page.keyboard.press("Tab")
        assert page.evaluate("() => !!document.activeElement && document.activeElement !== document.body")
    finally:
        page.close()


def settled_first(page) -> None:
    page.wait_for_selector("#attention-plot .js-plotly-plot")
    page.wait_for_function("() => !!document.querySelector('#share-link textarea')?.value")
    settled(page)


# ---- the figures' text ----

TYPES = {
    "i1": np.int8,
    "u1": np.uint8,
    "i2": np.int16,
    "u2": np.uint16,
    "i4": np.int32,
    "u4": np.uint32,
    "f4": np.float32,
    "f8": np.float64,
}


def values(value):
    """A figure's array as the page's JSON holds it (a list, or Plotly's packed {dtype, bdata, shape})."""
    if isinstance(value, dict) and "bdata" in value:
        array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=TYPES[value["dtype"]])
        shape = [int(n) for n in str(value.get("shape", array.size)).split(",")]
        return array.reshape(shape).tolist()
    return list(value or [])


def plain(text) -> str:
    text = re.sub(r"<br\s*/?>", " ", str(text if text is not None else ""), flags=re.I)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]*>", "", text))).strip()


def expected_text(figure: dict) -> str:
    """What ui/js/a11y.js should say of a heatmap or bar figure, written here from the figure's spec."""
    layout = figure["layout"]
    title = layout.get("title")
    title = plain(title.get("text") if isinstance(title, dict) else title)
    parts = [f"{title}."] if title else []
    for trace in figure["data"]:
        if trace["type"] == "heatmap":
            z, xs, ys = values(trace["z"]), values(trace["x"]), values(trace["y"])
            ref = trace.get("yaxis", "y")
            outline = next(
                (s for s in layout.get("shapes", []) if s.get("name") == "highlight" and s.get("yref", "y") == ref),
                None,
            )
            marked = math.floor((outline["y0"] + outline["y1"]) / 2 + 0.5) if outline else None
            order = list(range(len(z)))
            if marked is not None:
                order.insert(0, order.pop(marked))
            rows = []
            for row in order[:40]:
                cells = sorted(
                    ((v, c) for c, v in enumerate(z[row]) if v is not None and math.isfinite(v)),
                    key=lambda p: (-p[0], p[1]),
                )
                strongest = ", ".join(f"{plain(xs[c])} {v:.3f}" for v, c in cells[:3])
                rows.append(f"{'outlined row ' if row == marked else ''}{plain(ys[row])}: {strongest}.")
            more = f" {len(z) - 40} more rows." if len(z) > 40 else ""
            parts.append(
                f"{plain(trace.get('name')) or 'Heatmap'}, {len(z)} rows, strongest columns per row: {' '.join(rows)}{more}"
            )
        elif trace["type"] == "bar":
            lengths, custom = values(trace["x"]), trace["customdata"]
            bars = sorted(((v, i) for i, v in enumerate(lengths)), key=lambda p: (-p[0], p[1]))[:10]
            listed = ", ".join(f"{plain(custom[i][0])} {v:.3f}" for v, i in bars)
            parts.append(f"{plain(trace.get('name')) or 'Bars'}, largest {len(bars)} of {len(lengths)}: {listed}.")
    return " ".join(parts)


FIGURE = """(id) => { const gd = document.querySelector(`#${id} .js-plotly-plot`);
  const svg = gd.querySelector('svg.main-svg'), text = document.getElementById(svg.getAttribute('aria-describedby'));
  return {figure: gd.__lightFigure, role: svg.getAttribute('role'), label: svg.getAttribute('aria-label'),
          text: text ? text.textContent : null}; }"""


def test_figure_text_and_step_announcement_follow_the_data(browser, a11y_server):
    from playwright.sync_api import expect

    from browser_helpers import redrawn, show_tab

    page = browser.new_page(viewport={"width": 1280, "height": 720})
    try:
        page.goto(a11y_server)
        settled_first(page)
        page.fill("#source textarea", GERMAN)
        page.click("#translate")
        total = wait_last_step(page)
        settled(page)
        for step in (total, 2):
            if step != total:
                with redrawn(page, "attention-plot"):
                    page.click("#step-first")
                    page.click("#step-next")
                wait_step(page, step)
                settled(page)
            shown = page.evaluate(FIGURE, "attention-plot")
            assert shown["role"] == "img" and shown["label"] == plain(shown["figure"]["layout"]["title"]["text"])
            assert shown["text"] == expected_text(shown["figure"])
            query = page.locator("#step-info .tok.query").inner_text().strip()
            assert re.search(rf"outlined row #{step - 1} {re.escape(query)} → ", shown["text"]), shown["text"][:300]
            chosen = page.locator("#step-info .tok.chosen").inner_text().strip()
            facts = page.locator("#step-info .step-facts").inner_text().strip()
            expect(page.locator("#step-announce")).to_have_text(
                f"Step {step} of {total}: query {query}, next token {chosen}, {facts}."
            )
            assert page.locator("#step-announce").get_attribute("aria-live") == "polite"
        show_tab(page, "Next token")
        settled(page)
        shown = page.evaluate(FIGURE, "candidates-plot")
        assert shown["text"] == expected_text(shown["figure"])
        best = max(values(shown["figure"]["data"][0]["x"]))
        assert f" {best:.3f}" in shown["text"].split(": ", 2)[-1].split(",")[0]  # the tallest bar comes first
    finally:
        page.close()


# ---- zoom, motion, colour ----


def test_page_at_200_percent_zoom_keeps_everything_in_reach(browser, a11y_server):
    """1280 px at 200 % is a 640 px CSS viewport at device scale 2: nothing sideways beyond the window, the
    sticky player bar leaves most of the window to the page, and each view's figure fits its width."""
    from browser_helpers import overflow, show_tab

    page = browser.new_page(viewport={"width": 640, "height": 360}, device_scale_factor=2)
    try:
        page.goto(a11y_server)
        settled_first(page)
        page.fill("#source textarea", GERMAN)
        page.click("#translate")
        wait_last_step(page)
        for tab in ("Next token", "Attention", "Positional encoding", "Masks", "Model", "Explain"):
            show_tab(page, tab)
            settled(page)
            assert overflow(page) <= 1, tab
            bar = page.locator("#player-bar").bounding_box()
            assert bar["height"] <= 0.6 * 360, (tab, bar)
            widths = page.evaluate(
                "() => Array.from(document.querySelectorAll('#views .block[id$=\"-plot\"]'))"
                ".filter((b) => b.offsetParent !== null).map((b) => b.getBoundingClientRect().right)"
            )
            assert all(right <= 640 + 1 for right in widths), (tab, widths)
    finally:
        page.close()


def test_reduced_motion_stops_easing_and_play_still_steps(browser, a11y_server):
    page = browser.new_page(viewport={"width": 1280, "height": 720}, reduced_motion="reduce")
    try:
        page.goto(a11y_server)
        settled_first(page)
        durations = page.evaluate(
            "() => ['#translate', '#play', '#step-next'].map((s) => getComputedStyle(document.querySelector(s))"
            ".transitionDuration)"
        )
        assert all(float(d.rstrip("s")) == 0 for value in durations for d in value.split(",")), durations
        assert page.evaluate("() => getComputedStyle(document.documentElement).scrollBehavior") == "auto"
        page.click("#step-first")
        wait_step(page, 1)
        page.click("#play")
        wait_step(page, 2)  # Play still steps, a step a tick
        page.click("#play")
        # the query and the chosen token differ by more than their colour (a colour-blind reader tells them apart)
        styles = page.evaluate(
            "() => ['.tok.query', '.tok.chosen'].map((s) => { const c = getComputedStyle(document.querySelector("
            "'#step-info ' + s)); return [c.fontWeight, c.textDecorationLine, c.borderStyle]; })"
        )
        assert styles[0] != styles[1], styles
    finally:
        page.close()
