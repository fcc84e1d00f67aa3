"""Share what you see: a view (sentence, direction, step, tab, attention kind, layer, head, and on the Compare
tab the second sentence and the token compared) as a link, the page opened at a view (query parameters read on
load, or the Compare tab's blog-post pair), and the curated first view shown on a bare URL.

The first view is the first example translated ONCE when the page is built and shared by every visitor:
a hundred page loads cost no model call. It opens the Attention tab on encoder-decoder attention
(section 3.2.3) at its sharpest head: the head whose weight lies most on the diagonal (the source
position proportional to the target position, `model.analysis.readouts.trace_head_diagnostics`; ties go to the
lower entropy), at the last step before [EOS], where every output row is there to see.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlencode

import gradio as gr
import numpy as np

from model import Checkpoint, TranslationTrace
from model.analysis.readouts import trace_head_diagnostics
from model.decoding.trace import ATTENTION_KINDS

from .attention import layer_choices
from .common import PAGE_URL, PRIVATE, TabView, page_url, set_initial
from .compare import CompareTab, Second, compare_with, opening
from .page_script import KEEP_TYPED_JS, SHOW_COMPARE_JS
from serving import Runner

from .runner import model_event
from .session import Header, parse_direction, translate_text
from .text import ABOUT_ATTENTION, BLOG_PAIR, EXAMPLES

TABS = ("next", "attention", "compare", "positions", "masks", "model", "explain")
HEADS = ("all", "mean")  # besides "1".."h"


@dataclass(frozen=True)
class View:
    """What a link restores; text None = the start-up example. On the Compare tab kind, layer and head are that
    tab's, and second and token name the comparison."""

    text: str | None = None
    direction: str = "de-en"
    step: int = 1
    tab: str = "attention"
    kind: str = "cross"
    layer: int = 1
    head: str = "1"
    second: str | None = None  # the Compare tab's second sentence
    token: str | None = None  # the source token compared


# the Compare tab's built-in example: the blog post's pair as lines, "it" picked; it opens on the head that differs
# most, at the step that translates "it" (open_view)
BLOG_VIEW = View(BLOG_PAIR[0], BLOG_PAIR[2], 1, "compare", "encoder", 1, "all", BLOG_PAIR[1], "▁it")


def sharpest_head(trace: TranslationTrace, kind: str = "cross") -> tuple[int, int]:
    """(layer, head), 1-based: the most diagonal head of `kind`, ties to the lower entropy."""
    stats = trace_head_diagnostics(trace, kind)
    order = np.lexsort((stats["entropy"].ravel(), -stats["diagonal"].ravel()))  # last key sorts first
    layer, head = np.unravel_index(order[0], stats["diagonal"].shape)
    return int(layer) + 1, int(head) + 1


def first_view(trace: TranslationTrace) -> View:
    layer, head = sharpest_head(trace)
    return View(trace.source_text, trace.direction, max(trace.num_steps - 1, 1), "attention", "cross", layer, str(head))


def _number(value, default: int) -> int:
    try:
        return max(1, int(str(value)))
    except ValueError:
        return default


def parse_query(params: Mapping[str, str]) -> View | None:
    """Query parameters -> a View (None without any); bad values fall back to the defaults."""
    keys = {"text", "dir", "step", "tab", "kind", "layer", "head", "second", "token"}
    if not keys & set(params):
        return None
    default = View()
    try:
        direction = parse_direction(params.get("dir", default.direction))
    except gr.Error:
        direction = default.direction
    head = str(params.get("head", default.head))
    return View(
        text=params.get("text") or None,
        direction=direction,
        step=_number(params.get("step"), default.step),
        tab=params.get("tab") if params.get("tab") in TABS else default.tab,
        kind=params.get("kind") if params.get("kind") in ATTENTION_KINDS else default.kind,
        layer=_number(params.get("layer"), default.layer),
        head=head if head in HEADS or head.isdigit() else default.head,
        second=params.get("second") or None,
        token=params.get("token") or None,
    )


def query_string(view: View) -> str:
    """The link's query: ?text=…&dir=…&step=…&tab=…&kind=…&layer=…&head=… (and &second=…&token=… when set)"""
    fields = {
        "text": view.text or "",
        "dir": view.direction,
        "step": view.step,
        "tab": view.tab,
        "kind": view.kind,
        "layer": view.layer,
        "head": view.head,
    }
    fields |= {name: value for name, value in (("second", view.second), ("token", view.token)) if value}
    return "?" + urlencode(fields)


@dataclass(frozen=True)
class Targets:
    """The components a view sets besides the header: the step, the tabs and the Attention tab's controls."""

    header: Header
    slider: gr.Slider
    tabs: gr.Tabs
    tab: gr.State
    kind: gr.Radio
    layer: gr.Radio
    head: gr.Radio
    about_kind: gr.Markdown
    compare: CompareTab | None = None

    def outputs(self) -> list:
        h = self.header
        return [
            h.trace,
            h.source,
            h.direction,
            h.translation,
            h.download,
            h.tokens,
            h.notice,
            h.switch,
            self.slider,
            self.tabs,
            self.tab,
            self.kind,
            self.layer,
            self.head,
            self.about_kind,
            *(self.compare.outputs() if self.compare else []),
        ]

    def show(
        self,
        checkpoint: Checkpoint,
        trace: TranslationTrace,
        path: str | None,
        view: View,
        second: Second | None = None,
    ) -> dict:
        """Updates that show `trace` at `view` (the step, layer and head clamped to what exists); on the Compare
        tab, compared with `second` at the view's kind, layer and head."""
        layers = layer_choices(checkpoint, view.kind)
        heads = checkpoint.config.n_heads
        head = view.head if view.head in HEADS else str(min(int(view.head), heads))
        slider = gr.Slider(
            minimum=1,
            maximum=max(trace.num_steps, 2),
            value=min(view.step, trace.num_steps),
            interactive=trace.num_steps > 1,
        )
        shown = {
            **self.header.result(trace, path),
            self.header.source: trace.source_text,
            self.header.direction: trace.direction,
            self.slider: slider,
            self.tabs: gr.Tabs(selected=view.tab),
            self.tab: view.tab,
        }
        if view.tab == "compare" and self.compare is not None:
            return {**shown, **self.compare.show(trace, second or Second(), view.token, view.kind, view.layer, head)}
        return {
            **shown,
            self.kind: view.kind,
            self.layer: gr.Radio(choices=layers, value=min(view.layer, len(layers))),
            self.head: head,
            self.about_kind: ABOUT_ATTENTION[view.kind],
        }


class StartExample:
    """The first example, translated once (lazily, thread-safe, through the page's runner) and shared
    read-only by every page load."""

    def __init__(self, runner: Runner):
        self.runner = runner
        self._lock = threading.Lock()
        self._value: tuple[TranslationTrace, str, View] | None = None

    def get(self) -> tuple[TranslationTrace, str, View]:
        with self._lock:
            if self._value is None:
                text, direction = EXAMPLES[0]
                trace, _, path = translate_text(self.runner, text, direction)
                self._value = (trace, path, first_view(trace))
            return self._value


def open_view(runner: Runner, example: StartExample, targets: Targets, view: View) -> dict:
    """The page at `view`: its sentence translated (text None: the start-up example), and on the Compare tab its
    second sentence too."""
    checkpoint = runner.checkpoint
    trace, path, start = example.get()
    if view.text is None:
        view = dataclasses.replace(view, direction=trace.direction)
    else:
        try:
            trace, _, path = translate_text(runner, view.text, view.direction)
        except gr.Error as error:  # a broken link still opens the example, and says why
            return {**targets.show(checkpoint, trace, path, start), targets.header.notice: f"⚠️ {error.message}"}
    compared = view.tab == "compare" and view.second and targets.compare is not None
    second = compare_with(runner, trace, view.second) if compared else None
    if view is BLOG_VIEW:  # the pair opens on the head that differs most, at the step that translates "it"
        start = opening(trace, second, view.token)
        if start is not None:
            view = dataclasses.replace(view, kind=start.kind, layer=start.layer, head=start.head, step=start.step)
    return targets.show(checkpoint, trace, path, view, second)


def restore(runner: Runner, example: StartExample, targets: Targets, params: Mapping[str, str]) -> dict:
    """The page at the view of its query parameters, else at the start-up example's curated view."""
    view = parse_query(params)
    if view is None:
        trace, path, start = example.get()
        return targets.show(runner.checkpoint, trace, path, start)
    return open_view(runner, example, targets, view)


def link(
    trace: TranslationTrace | None,
    step,
    tab,
    kind,
    layer,
    head,
    page_url: str,
    second: str | None = None,
    token: str | None = None,
) -> str:
    """The link to this view ('' without a trace)."""
    if trace is None:
        return ""
    view = View(
        trace.source_text, trace.direction, int(step or 1), tab, kind, int(layer or 1), str(head), second, token
    )
    return page_url.split("?")[0].split("#")[0] + query_string(view)


# the button says what happened: copied, or (no clipboard, e.g. an http page on another machine) the link selected
COPY_JS = """(url) => {
  const button = document.getElementById('share-copy');
  const say = (text) => { if (!button) return; const label = button.dataset.label || button.textContent;
    button.dataset.label = label; button.textContent = text;
    clearTimeout(button.__reset); button.__reset = setTimeout(() => { button.textContent = label; }, 2500); };
  const select = () => { const box = document.querySelector('#share-link textarea, #share-link input');
    if (box) { box.focus(); box.select(); } say('Selected: press Ctrl+C'); };
  if (!url) { say('Translate first'); return url; }
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(url).then(() => say('Copied ✓'), select);
  } else { select(); }
  return url;
}"""


def link_row() -> gr.Textbox:
    """The read-only link box and its copy button (place them where the page should show them)."""
    with gr.Row(elem_id="share-row", equal_height=False):
        url = gr.Textbox(
            label="Link to this view (sentence, direction, step, tab, attention, layer, head)",
            interactive=False,
            elem_id="share-link",
            scale=4,
        )
        copy = gr.Button("Copy link", elem_id="share-copy", size="sm", scale=1, min_width=120)
    copy.click(None, url, url, js=COPY_JS, **PRIVATE)
    return url


def wire(
    runner: Runner | None, targets: Targets, url: gr.Textbox, demo: gr.Blocks, prefills: Sequence[Callable] = ()
) -> StartExample | None:
    """The page's load handler (restore a link, else the first view): a model event, as a link translates.

    The first view arrives with the page: `prefills` (each (trace, path, view) -> None, e.g. `Header.prefill`) put
    it in the page's config, so a bare URL draws its figure as soon as the page is built and its load handler only
    fills the sentence box (an API input, kept out of the config) and the link box (it needs the page's address). On ZeroGPU, where the example is computed on the first page
    load (the GPU exists only within a request), the load handler shows it."""
    if runner is None:
        return None
    example = StartExample(runner)
    prefilled = not runner.zerogpu
    if prefilled:
        trace, path, start = example.get()  # at start-up: the first visitor does not wait either
        for prefill in prefills:
            prefill(trace, path, start)
        set_initial(targets.tabs, selected=start.tab)
        set_initial(targets.tab, start.tab)

    def on_load(request: gr.Request):
        params = dict(getattr(request, "query_params", None) or {})
        if prefilled and parse_query(params) is None:  # the first view is on screen already: its sentence, its link
            trace, _, start = example.get()
            fields = dict(kind=start.kind, layer=start.layer, head=start.head)
            return {
                targets.header.source: trace.source_text,
                url: link(trace, start.step, start.tab, page_url=page_url(request), **fields),
            }
        return restore(runner, example, targets, params)

    loaded = demo.load(on_load, None, [*targets.outputs(), url], **model_event(show_progress="hidden", **PRIVATE))
    if targets.compare is not None:  # the blog post's pair: both sentences translated, compared on "it"
        targets.compare.example.click(
            lambda: open_view(runner, example, targets, BLOG_VIEW),
            None,
            targets.outputs(),
            **model_event(show_progress="minimal", **PRIVATE),
        ).success(None, js=SHOW_COMPARE_JS, **PRIVATE)  # its sentence and figures under the player bar
    # text typed while the example was on its way is put back (the page script kept it)
    loaded.then(None, targets.header.source, targets.header.source, js=KEEP_TYPED_JS, **PRIVATE)

    return example


def link_view(targets: Targets, url: gr.Textbox) -> TabView:
    """The link box follows the view: a page-wide view of the redraw listener (ui/redraw.py)."""
    compare = targets.compare

    def render(trace, step, values) -> dict:
        tab = values[targets.tab]
        shown = {"kind": values[targets.kind], "layer": values[targets.layer], "head": values[targets.head]}
        if tab == "compare" and compare is not None:
            shown = compare.link_fields(values)
        return {url: link(trace, step, tab, page_url=values[PAGE_URL], **shown)}

    compared = [compare.second, compare.token, compare.kind, compare.layer, compare.head] if compare else []
    return TabView(None, [url], render, inputs=[targets.tab, targets.kind, targets.layer, targets.head, *compared])
