"""One page, one state: the page driven in headless Chromium through sequences of what visitors do, generated from
a seed (and a fixed walk that once showed one sentence's figure under another's translation), checking after every
action that the page agrees with itself:

- no error toast, and no traceback in the server's log;
- the step line is the translation in the box: its whole-translation span is the box's text, its tokens a prefix of
  the output, its step within the output's steps;
- the attention figure (while its tab is open) has a row per decoder step up to the step line's (or the source's
  tokens for encoder self-attention) and a column per source token of the token chips;
- the share link is the view on screen: its sentence is the token chips' sentence, its step the step line's, its tab
  the open tab.

A check is read once the page has settled: no request to Gradio's queue in flight and the same reading on a few
animation frames in a row with no figure mid-draw (states of the page, not times); a page that never agrees fails
with the invariant and the action after SETTLE_S. `PAGE_STATE_SEEDS` (comma-separated) replaces the seeds run.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import random
import re
import time
from urllib.parse import parse_qs, urlparse

import pytest
from browser_helpers import needs_chromium

from ui.text import BLOG_PAIR, EXAMPLES, example_label

pytestmark = [pytest.mark.browser, needs_chromium]

SEEDS = [int(seed) for seed in os.environ.get("PAGE_STATE_SEEDS", "1,2").split(",")]
ACTIONS_PER_SEED = 10
SETTLE_S = 30  # two test workers share two busy CPU cores
GERMAN = ["Zwei Hunde spielen im Schnee.", "Ein Mann fährt mit dem Fahrrad.", "Die Frau singt."]
ENGLISH = ["A boy jumps into the water.", "The cat is sleeping."]
TABS = {"Next token": "next", "Attention": "attention", "Compare": "compare", "Positional encoding": "positions",
        "Masks": "masks", "Model": "model", "Explain": "explain"}  # fmt: skip

# everything the invariants read, in one evaluation
READ = """() => {
  const text = (selector) => document.querySelector(selector)?.textContent ?? '';
  const chips = (row) => [...(document.querySelectorAll('#tokens .token-row')[row]?.querySelectorAll('.tok') ?? [])]
    .map((chip) => chip.textContent);
  const stepLine = document.querySelector('#step-info .step-line');
  const figure = document.querySelector('#attention-plot .js-plotly-plot');
  const open = document.querySelector('#views > .tab-wrapper [role=tab][aria-selected=true]');
  const toasts = [...document.querySelectorAll('.toast-body')].filter((toast) => /error/i.test(toast.className)
    || /error/i.test(toast.querySelector('.toast-title')?.textContent ?? ''));
  return {
    translation: document.querySelector('#translation textarea')?.value ?? '',
    step: stepLine ? /Step (\\d+) of (\\d+)/.exec(text('#step-info .label'))?.slice(1).map(Number) : null,
    prefix: stepLine ? [...stepLine.querySelectorAll('.step-prefix .tok')].map((chip) => chip.textContent) : [],
    chosen: stepLine ? text('#step-info .tok.chosen') : '',
    whole: stepLine ? text('#step-info .step-output') : '',
    source: chips(0),
    output: chips(1),
    rows: figure && figure.data ? (figure.data[0].y ?? []).map(String) : null,
    columns: figure && figure.data ? (figure.data[0].x ?? []).map(String) : null,
    figureTitle: text('#attention-plot .gtitle'),
    attentionShown: !!figure && figure.getBoundingClientRect().height > 0,
    link: document.querySelector('#share-link textarea')?.value ?? '',
    tab: open?.textContent.trim() ?? '',
    errors: toasts.map((toast) => toast.textContent.trim()),
  };
}"""


READ_JSON = f"() => JSON.stringify(({READ})())"
# the reading, the page's scroll and its count of views placed (ui/js/scroll.js) unchanged and no figure mid-draw
# (ui/js/figures.js) on `frames` animation frames in a row: what the page does after an answer lands (put values on
# screen, draw, place the view) has been done; each wait counts its own frames
STILL = (
    "([token, frames]) => { const now = JSON.stringify([(" + READ + ")(), window.scrollY,"
    " document.body.dataset.shownView]);"
    " const idle = (document.body.dataset.figuresDrawing || '0') === '0';"
    " const still = window.__still?.token === token ? window.__still : {token, last: null, count: 0};"
    " still.count = idle && now === still.last ? still.count + 1 : 0; still.last = now; window.__still = still;"
    " return still.count >= frames; }"
)
STILL_FRAMES = 5
CHANGED = f"(before) => JSON.stringify(({READ})()) !== before"


def to_queue(request) -> bool:
    """A request to Gradio's queue (an event joined, or the stream of its answers; the stream ends when the
    session has no event left): while one is in flight an answer is on its way."""
    return "/gradio_api/queue/" in request.url


def detokenize(tokens: list[str]) -> str:
    return "".join(tokens).replace("\u2581", " ").strip()


def numbered(label: str) -> tuple[int, str]:
    """A figure's axis label "#3 ▁it" -> (3, "▁it") (Plotly's text has < and > as entities)."""
    match = re.match(r"#(\d+) (.*)$", label.replace("&lt;", "<").replace("&gt;", ">"))
    assert match, label
    return int(match[1]), match[2]


def violations(seen: dict) -> list[str]:
    """What of the page disagrees with itself ([] when it agrees)."""
    wrong = [f"error toast: {error}" for error in seen["errors"]]
    if seen["step"] is None:  # no sentence on the page: nothing else shows one either
        return wrong + ([f"a translation without a step line: {seen['translation']!r}"] if seen["translation"] else [])
    step, total = seen["step"]
    if seen["whole"].strip("“”") != seen["translation"]:
        wrong.append(f"step line's translation {seen['whole']!r} is not the box's {seen['translation']!r}")
    if total != len(seen["output"]) or not 1 <= step <= total:
        wrong.append(f"step {step} of {total} but the output has {len(seen['output'])} tokens")
    elif seen["prefix"][1:] + [seen["chosen"]] != seen["output"][:step]:
        wrong.append(f"step line tokens {seen['prefix'][1:] + [seen['chosen']]} are not the output's {seen['output']}")
    if seen["attentionShown"] and seen["rows"] is not None and "Cross-attention" in seen["figureTitle"]:
        for column in seen["columns"]:  # "#i token": the i-th source token (a long sentence shows a window)
            index, token = numbered(column)
            if index >= len(seen["source"]) or seen["source"][index] != token:
                wrong.append(f"figure column {column!r} is not source token {index} of {seen['source']}")
        for row in seen["rows"]:  # "#i read → predicted": decoder step i+1, up to the step line's
            index, token = numbered(row)
            predicted = token.split(" → ")[-1]
            if index >= step or seen["output"][index] != predicted:
                wrong.append(f"figure row {row!r} at step {step} is not the output's {seen['output']}")
    link = parse_qs(urlparse(seen["link"]).query)
    if seen["link"]:
        if link.get("step", [""])[0] != str(step):
            wrong.append(f"link step {link.get('step')} is not the step line's {step}")
        if TABS.get(seen["tab"]) and link.get("tab", [""])[0] != TABS[seen["tab"]]:
            wrong.append(f"link tab {link.get('tab')} is not the open tab {seen['tab']!r}")
    return wrong


class Visitor:
    """A page and what it did, checking the invariants after each action."""

    def __init__(self, browser, url: str, log, size=(1280, 720)):
        self.page = browser.new_page(viewport={"width": size[0], "height": size[1]})
        self.browser, self.url, self.log, self.done = browser, url, log, []
        self.log_start = log.stat().st_size if log.exists() else 0
        self.watch()
        self.page.goto(url)
        self.page.wait_for_selector("#attention-plot .js-plotly-plot")
        self.page.wait_for_function("() => !!document.querySelector('#share-link textarea')?.value")

    def watch(self) -> None:
        """Follow the page's requests to the queue (`requests`: those now in flight)."""
        self.requests, self.waits = set(), itertools.count()
        self.page.on("request", lambda request: self.requests.add(request) if to_queue(request) else None)
        for done in ("requestfinished", "requestfailed"):
            self.page.on(done, lambda request: self.requests.discard(request))

    def settled(self) -> dict:
        """The page's reading once it is still (STILL), no request of its to the server is in flight and it agrees
        with itself; a page that disagrees is read again each time it changes, until SETTLE_S has passed: then its
        last reading is returned (and fails the check)."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        end = time.monotonic() + SETTLE_S
        while True:
            left_ms = max(1.0, end - time.monotonic()) * 1000
            self.page.wait_for_function(STILL, arg=[next(self.waits), STILL_FRAMES], polling="raf", timeout=left_ms)
            reading = self.page.evaluate(READ_JSON)
            seen = json.loads(reading)
            if time.monotonic() > end or not self.requests and not violations(seen):
                return seen
            if not self.requests:  # a page that disagrees while nothing is on its way: wait for it to change
                with contextlib.suppress(PlaywrightTimeout):
                    self.page.wait_for_function(CHANGED, arg=reading, polling="raf", timeout=left_ms)

    def check(self, action: str) -> None:
        self.done.append(action)
        seen = self.settled()
        wrong = violations(seen)
        log = self.log.read_text(encoding="utf-8", errors="replace")[self.log_start :] if self.log.exists() else ""
        if "Traceback" in log:
            wrong.append("traceback in the server log: " + log[log.index("Traceback") :][:600])
        assert not wrong, f"after {' → '.join(self.done)}: {wrong}"

    # ---- what visitors do
    def open_tab(self, name: str) -> None:
        self.page.locator("#views [role=tablist]").get_by_role("tab", name=name).first.click()
        self.check(f"tab {name}")

    def translate(self, text: str, direction: str | None = None) -> None:
        if direction:
            label = {"de-en": "German → English", "en-de": "English → German"}[direction]
            self.page.locator("#direction").get_by_label(label).check()
        self.page.fill("#source textarea", text)
        self.page.click("#translate")
        self.check(f"translate {text[:20]!r}")

    def pair(self) -> None:
        self.open_tab("Compare")
        self.page.click("#compare-example")
        self.page.wait_for_function(
            "(text) => document.querySelector('#translation textarea')?.value !== '' && "
            "document.querySelector('#compare-second textarea')?.value === text",
            arg=BLOG_PAIR[1],
        )
        self.check("the blog pair")

    def second(self, text: str) -> None:
        self.open_tab("Compare")
        self.page.fill("#compare-second textarea", text)
        self.page.click("#compare-go")
        self.check(f"compare with {text[:20]!r}")

    def step(self, how: str) -> None:
        if how in ("ArrowLeft", "ArrowRight", "Home", "End"):
            self.page.locator("#step-info").click()
            self.page.keyboard.press(how)
        else:
            self.page.click(f"#{how}")
        self.check(f"step {how}")

    def choose(self, menu: str, name) -> None:
        """Pick the option `name` of the dropdown `menu` as a visitor does: open it, then click the option once the
        open list shows it. Gradio's list is fixed to the window and follows its menu when the page scrolls, so an
        option is clicked only on a page that is still (`settled`, its scroll included) and once it is in the window:
        a page that scrolls under an open list carries the option out of reach, or puts another option where it was.
        """
        from playwright.sync_api import expect

        self.page.locator(f"{menu} input").click()
        option = self.page.locator(menu).get_by_role("listbox").get_by_role("option", name=name, exact=True)
        expect(option.first).to_be_in_viewport()
        option.first.click()

    def example(self, index: int) -> None:
        self.choose("#examples", example_label(*EXAMPLES[index]))
        self.page.wait_for_function("(text) => document.querySelector('#source textarea')?.value === text",
                                    arg=EXAMPLES[index][0])  # fmt: skip
        self.check(f"example {index}")

    def bad(self, text: str) -> None:
        before = self.settled()
        self.page.fill("#source textarea", text)
        self.page.click("#translate")
        self.page.wait_for_function("() => document.querySelector('#notice')?.textContent.includes('⚠️')")
        self.check(f"bad input of {len(text)} characters")
        after = self.settled()
        for key in ("translation", "step", "rows", "columns", "link"):  # nothing the visitor had is lost
            assert after[key] == before[key], f"a refused input changed {key}: {before[key]!r} -> {after[key]!r}"

    def share_link(self) -> None:
        seen = self.settled()
        if not seen["link"]:
            return
        other = Visitor.__new__(Visitor)
        other.page = self.browser.new_page(viewport={"width": 1280, "height": 720})
        other.browser, other.url, other.log = self.browser, self.url, self.log
        other.done, other.log_start = list(self.done), self.log_start
        other.watch()
        other.page.goto(seen["link"])
        other.page.wait_for_function("(text) => document.querySelector('#translation textarea')?.value === text",
                                     arg=seen["translation"])  # fmt: skip
        other.check("the share link opened in a new page")
        opened = other.settled()
        other.page.close()
        assert opened["step"] == seen["step"] and opened["tab"] == seen["tab"], (seen, opened)
        self.check("(back on the first page)")

    def model_menu(self) -> None:
        """Pick OPUS-MT in the model menu (not on this server: a download is tried, or its page opens)."""
        if not self.page.locator("#model-choice input").count():
            return
        self.choose("#model-choice", re.compile("OPUS-MT"))
        self.page.wait_for_function("() => !!document.querySelector('#model-status')?.textContent.trim()")
        self.check("the model menu: OPUS-MT")

    def explain(self) -> None:
        self.open_tab("Explain")
        self.page.locator("#explain-panels").get_by_role("tab", name="Beam vs greedy", exact=True).first.click()
        self.page.click("#beam-run")
        self.page.wait_for_selector("#beam-result table tr", timeout=60_000)
        self.check("an Explain panel run")


def moves(visitor: Visitor, rng: random.Random):
    """The visitor's possible actions, each a function of the generator (weights say how often)."""
    return [
        (3, lambda: visitor.translate(rng.choice(GERMAN), "de-en")),
        (1, lambda: visitor.translate(rng.choice(ENGLISH), "en-de")),
        (1, lambda: visitor.translate(rng.choice(ENGLISH), "de-en")),  # the wrong language: a notice
        (2, visitor.pair),
        (1, lambda: visitor.second(rng.choice(GERMAN + ENGLISH))),
        (3, lambda: visitor.open_tab(rng.choice(list(TABS)))),
        (
            4,
            lambda: visitor.step(
                rng.choice(
                    ["step-prev", "step-next", "step-first", "step-last", "ArrowLeft", "ArrowRight", "Home", "End"]
                )
            ),
        ),  # fmt: skip
        (2, lambda: visitor.example(rng.randrange(len(EXAMPLES)))),
        (1, lambda: visitor.bad(rng.choice(["", "   ", "x" * 5001]))),
        (1, visitor.share_link),
        (1, visitor.model_menu),
    ]


@pytest.fixture(scope="module")
def log(server, tmp_path_factory):
    """The served app's log (tests/conftest.py `served` writes it in a fresh folder named after the fixture)."""
    [path] = [p for p in tmp_path_factory.getbasetemp().glob("server*/app.log") if p.parent.name[6:].isdigit()]
    return path


def test_the_walk_that_showed_another_sentences_figure(browser, server, log):
    """Compare, the blog pair, back to Attention, German → English, an own German sentence: the step line and the
    figure are the new sentence's; then Translate pressed on the Compare tab after the pair."""
    visitor = Visitor(browser, server, log)
    visitor.pair()
    visitor.open_tab("Attention")
    visitor.translate("Zwei Hunde spielen im Schnee.", "de-en")
    visitor.pair()
    visitor.translate(GERMAN[1], "de-en")
    visitor.bad("")
    visitor.model_menu()
    visitor.explain()
    visitor.page.close()


@pytest.mark.parametrize("seed", SEEDS)
def test_seeded_visits_keep_the_page_in_agreement(browser, server, log, seed):
    rng = random.Random(seed)
    visitor = Visitor(browser, server, log)
    choices = moves(visitor, rng)
    weights = [weight for weight, _ in choices]
    for _ in range(ACTIONS_PER_SEED):
        rng.choices([move for _, move in choices], weights)[0]()
    visitor.page.close()
