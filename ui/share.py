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
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import gradio as gr
import numpy as np

from model import Checkpoint, TranslationTrace
from model.analysis.readouts import trace_head_diagnostics

from serving.translation import Translated, Translator

from .attention import layer_choices
from .common import PAGE_URL, PRIVATE, Page, TabView, markdown_text, page_url, set_initial
from .compare import CompareTab
from .compare_second import Second, compare_with, opening
from .page_script import COPY_LINK_JS, KEEP_TYPED_JS
from .runner import model_event
from .session import Header, answer, write_trace_json
from .share_link import View, fitted, parse_query, query_string, repair_notice
from .text import ABOUT_ATTENTION, BLOG_PAIR, EXAMPLES

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
            h.notice,
            self.slider,
            self.tabs,
            self.tab,
            self.kind,
            self.layer,
            self.head,
            self.about_kind,
            *(self.compare.outputs() if self.compare else []),
        ]

    def show(self, checkpoint: Checkpoint, translated: Translated, view: View, second: Second | None = None) -> dict:
        """Updates that show a translation at `view` (the step, layer and head clamped to what exists); on the
        Compare tab, compared with `second` at the view's kind, layer and head."""
        trace = translated.trace
        layers = layer_choices(checkpoint, view.kind)
        view = fitted(view, checkpoint, trace)
        head = view.head
        shown = {
            **answer_at(self, translated, view.step),
            self.header.source: trace.source_text,
            self.header.direction: trace.direction,
            self.tabs: gr.Tabs(selected=view.tab),
            self.tab: view.tab,
        }
        if view.tab == "compare" and self.compare is not None:
            return {**shown, **self.compare.show(trace, second or Second(), view.token, view.kind, view.layer, head)}
        return {
            **shown,
            self.kind: view.kind,
            self.layer: gr.Radio(choices=layers, value=view.layer),
            self.head: head,
            self.about_kind: ABOUT_ATTENTION[view.kind],
        }

    def tab_labels(self) -> dict[str, str]:
        """Each top-level tab's label, by its id, as the page's tabs have them."""
        return {tab.id: tab.label for tab in self.tabs.children if isinstance(tab, gr.Tab)}


def answer_at(targets: Targets, translated: Translated, step: int) -> dict:
    """The Translate answer's updates (ui/session.py `answer`) at `step` instead of the last."""
    return {**answer(targets.header, targets.slider, translated), targets.slider: step}


class StartExample:
    """The first example, translated once (lazily, thread-safe, by the one Translate action) and shared read-only
    by every page load."""

    def __init__(self, translator: Translator):
        self.translator = translator
        self._lock = threading.Lock()
        self._value: tuple[Translated, str, View] | None = None

    def get(self) -> tuple[Translated, str, View]:
        with self._lock:
            if self._value is None:
                translated = self.translator.translate(*EXAMPLES[0])
                if translated.trace is None:
                    raise gr.Error(translated.refused)
                self._value = (translated, write_trace_json(translated.trace), first_view(translated.trace))
            return self._value


def open_view(translator: Translator, example: StartExample, targets: Targets, view: View) -> dict:
    """The page at `view`: its sentence translated (text None: the start-up example; '': no sentence), and on the
    Compare tab its second sentence too; the notice opens on the one line of what the page repaired of the link
    (`repair_notice`). A link whose sentence is refused opens the example and says why."""
    checkpoint = translator.runner_of(None).checkpoint
    translated, _, start = example.get()
    if view.text == "":
        repaired = repair_notice(view, fitted(view, checkpoint, None), checkpoint, None, targets.tab_labels())
        return {**blank(targets, view), targets.header.source: "", targets.header.notice: repaired}
    if view.text is None:
        view = dataclasses.replace(view, direction=translated.trace.direction)
    else:
        asked = translator.translate(view.text, view.direction)
        if asked.refused:  # a broken link still opens the example, and says why
            notice = f"⚠️ {markdown_text(asked.refused)}"
            return {**targets.show(checkpoint, translated, start), targets.header.notice: notice}
        translated = asked
    compared = view.tab == "compare" and view.second and targets.compare is not None
    second = compare_with(translator, translated.trace, view.second) if compared else None
    if view is BLOG_VIEW:  # the pair opens on the head that differs most, at the step that translates "it"
        start = opening(translated.trace, second, view.token)
        if start is not None:
            view = dataclasses.replace(view, kind=start.kind, layer=start.layer, head=start.head, step=start.step)
    shown = targets.show(checkpoint, translated, view, second)
    trace = translated.trace
    said = repair_notice(view, fitted(view, checkpoint, trace), checkpoint, trace.num_steps, targets.tab_labels())
    notice = shown.get(targets.header.notice) or ""
    return {**shown, targets.header.notice: "\n\n".join(line for line in (said, notice) if line)}


def blank(targets: Targets, view: View) -> dict:
    """A page with no sentence yet, on the view's tab (a link with an empty text: a class types its own)."""
    return {
        targets.header.trace: None,
        targets.header.direction: view.direction,
        targets.header.notice: "",
        targets.slider: 1,
        targets.tabs: gr.Tabs(selected=view.tab),
        targets.tab: view.tab,
    }


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
    copy.click(None, url, url, js=COPY_LINK_JS, **PRIVATE)
    return url


def wire(
    page: Page,
    translator: Translator,
    targets: Targets,
    url: gr.Textbox,
    demo: gr.Blocks,
    prefills: Sequence[Callable] = (),
) -> StartExample | None:
    """The page's load (restore a link, else the first view) and the blog post's pair: each one action of the page
    that translates through the one Translate action and draws what it shows.

    The first view arrives with the page: `prefills` (each (trace, path, view) -> None, e.g. `Header.prefill`) put
    it in the page's config, so a bare URL draws its figure as soon as the page is built and its load answer only
    fills the sentence box (kept out of the config) and the link box (it needs the page's address). On ZeroGPU,
    where the example is computed on the first page load (the GPU exists only within a request), the load answer
    shows it."""
    runner = translator.runner_of(None)
    if runner is None:
        return None
    example = StartExample(translator)
    prefilled = not runner.zerogpu
    if prefilled:
        translated, path, start = example.get()  # at start-up: the first visitor does not wait either
        for prefill in prefills:
            prefill(translated.trace, path, start)
        set_initial(targets.tabs, selected=start.tab)
        set_initial(targets.tab, start.tab)

    def on_load(request: gr.Request):
        shown = view_on_load(request)
        for loader, _ in page.loaders:  # what else the page's one load answer says (e.g. the model menu's progress)
            shown = {**shown, **loader()}
        return shown

    def view_on_load(request: gr.Request) -> dict:
        params = dict(getattr(request, "query_params", None) or {})
        view = parse_query(params)
        if view is None:
            translated, _, start = example.get()
            if prefilled:  # the first view is on screen already: its sentence, its link
                fields = dict(kind=start.kind, layer=start.layer, head=start.head)
                return {
                    targets.header.source: translated.trace.source_text,
                    url: link(translated.trace, start.step, start.tab, page_url=page_url(request), **fields),
                }
            return targets.show(runner.checkpoint, translated, start)
        return open_view(translator, example, targets, view)

    on_load.loaders = page.loaders  # what else its answer says, each (fn, outputs)
    # text typed while the example was on its way is put back (the page script kept it)
    keep_typed = (KEEP_TYPED_JS, targets.header.source, targets.header.source)
    loaded = [output for _, outputs in page.loaders for output in outputs]
    page.listen(
        demo.load,
        on_load,
        [],
        [*targets.outputs(), url, *loaded],
        then_js=keep_typed,
        **model_event(show_progress="hidden"),
    )
    return example


def screen_inputs(targets: Targets) -> list:
    """The components that say which view is on screen besides the trace and the step (`on_screen` reads them)."""
    compare = targets.compare
    compared = [compare.second, compare.token, compare.kind, compare.layer, compare.head] if compare else []
    return [targets.tab, targets.kind, targets.layer, targets.head, *compared]


def on_screen(targets: Targets, values: dict) -> dict:
    """The view on screen besides the sentence and the step, as `link`'s fields: the open tab and the Attention tab's
    kind, layer and head (on the Compare tab that tab's, with its second sentence and token). What the share link
    names and a downloaded lesson opens on (ui/lesson.py); `values` holds `screen_inputs`."""
    tab = values[targets.tab]
    if tab == "compare" and targets.compare is not None:
        return {"tab": tab, **targets.compare.link_fields(values)}
    return {"tab": tab, "kind": values[targets.kind], "layer": values[targets.layer], "head": values[targets.head]}


def link_view(targets: Targets, url: gr.Textbox) -> TabView:
    """The link box follows the view: a page-wide view of the redraw listener (ui/redraw.py)."""

    def render(trace, step, values) -> dict:
        return {url: link(trace, step, page_url=values[PAGE_URL], **on_screen(targets, values))}

    return TabView(None, [url], render, inputs=screen_inputs(targets))
