"""What every tab of the UI shares: the page's named components (`Page`), the contract of a view that
the one redraw listener draws (`TabView`), a figure as a gr.Plot value and the slider's step.

Tabs talk to each other only through named interfaces: a tab's `build(page)` receives the `Page` and
returns its `TabView` (or nothing); where one tab opens another (the Explain tab's diagnostics open a
head in the Attention tab) it goes through what the opened tab returns (`ui.attention.HeadOpener`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import gradio as gr
import numpy as np
from gradio.components.plot import PlotData
from gradio.processing_utils import move_files_to_cache
from gradio_client import utils as client_utils
from pydantic import BaseModel

from model import Checkpoint, TranslationTrace
from model.decoding.trace import ATTENTION_KINDS
from model.text.special_tokens import SPECIAL_TOKENS
from visualizer.tokens import token_chips

PRIVATE = {"api_visibility": "private"}  # listeners that are page plumbing, not API endpoints


@dataclass(frozen=True)
class Action:
    """One user action: `fn(*inputs)` -> {component: update} (or a tuple in `outputs`' order, or gr.skip())."""

    triggers: Sequence
    fn: Callable | None
    inputs: Sequence = ()
    outputs: Sequence = ()
    options: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Follower:
    """Components (`outputs`) whose choices follow other values: when one of `follows` differs from what the page
    last followed, `update(values)` -> {component: update} is applied before the views are drawn."""

    follows: Sequence
    outputs: Sequence
    update: Callable[[dict], dict]


@dataclass(frozen=True)
class Renewal:
    """What the server keeps of a page and loses with its session (ui/renewal.py), made again from what the page
    holds: `fn(*inputs)` -> {component: update} of `outputs`, run before the event of a page whose session the server
    dropped (ui/redraw.py)."""

    fn: Callable[..., dict]
    inputs: Sequence
    outputs: Sequence


@dataclass(frozen=True)
class Page:
    """The session's components that the tabs may read or update, and the actions they declare: every server
    listener of the page is declared with `listen` (and made by ui/redraw.py, which adds what depends on it)."""

    checkpoint: Checkpoint | None  # shared read-only by every user; None when loading failed
    trace: gr.State  # this user's TranslationTrace (None before the first translation)
    step: gr.Slider  # 1-based decoding step
    tab: gr.State  # id of the open top-level tab: only its views are drawn
    tabs: gr.Tabs  # the top-level tabs (a tab may open another)
    runner: object = None  # serving.Runner: runs every model computation (serving/jobs.py)
    actions: list = field(default_factory=list)  # ui.redraw.Action, in the order declared
    followers: list = field(default_factory=list)  # ui.redraw.Follower
    loaders: list = field(default_factory=list)  # (fn() -> {component: update}, its outputs): added to the page's load
    renewals: list = field(default_factory=list)  # Renewal: the page's state made again after its session was dropped

    def listen(self, triggers, fn: Callable | None, inputs=(), outputs=(), **options) -> None:
        """A user action: `triggers` (one event or a list) run fn(*inputs) -> {component: update} in one listener
        that also writes everything depending on what it changed (ui/redraw.py)."""
        listed = [(value if isinstance(value, (list, tuple)) else [value]) for value in (triggers, inputs, outputs)]
        triggers, inputs, outputs = (list(value) if value != [None] else [] for value in listed)
        self.actions.append(Action(list(triggers), fn, list(inputs), list(outputs), options))

    def follow(self, follows: Sequence, outputs: Sequence, update: Callable[[dict], dict]) -> None:
        """Components (`outputs`) whose choices follow others: update(values) -> their updates, in the same
        answer as a change of any of `follows`."""
        self.followers.append(Follower(list(follows), list(outputs), update))

    def renew(self, fn: Callable[..., dict], inputs: Sequence, outputs: Sequence) -> None:
        """What the server loses with a dropped session: fn(*inputs) -> its updates (of `outputs`) make it again from
        what the page holds, before that page's next event runs."""
        self.renewals.append(Renewal(fn, list(inputs), list(outputs)))

    def track(self, tab: gr.Tab, tab_id: str) -> None:
        """Selecting `tab` makes `tab_id` the open tab (and so draws its views)."""

        def open_tab() -> dict:
            return {self.tab: tab_id}

        self.listen(tab.select, open_tab, outputs=[self.tab])


PAGE_URL = "page_url"  # a TabView's values[PAGE_URL]: the page's address as the browser sent it (Referer)


def page_url(request: gr.Request | None) -> str:
    """The address of the page that sent `request` (its Referer; '' if none)."""
    return (getattr(request, "headers", None) or {}).get("referer", "")


@dataclass(frozen=True)
class TabView:
    """A view (a tab's or a panel's figures), drawn by the page's one redraw listener (ui/redraw.py) while its
    tab is open (tab_id None: drawn whichever tab is open, e.g. the share link).

    render(trace, step, values) -> {component: value}, values = {component: value} of every input of the
    listener (the trace, step and open tab, every view's `controls` and `inputs`, and redraw.PAGE_URL).
    It is drawn again when what it follows changes: a change of one of its `controls` (which fires the
    listener), of its `inputs` (read, firing nothing), of the step if `follows_step`, of the trace if
    `follows_trace` (such a view is emptied without a trace; one that does not follow it is rendered with
    trace None).
    """

    tab_id: str | None
    outputs: Sequence[gr.components.Component]
    render: Callable[[TranslationTrace | None, float | None, dict], dict]
    controls: Sequence[gr.components.Component] = ()
    inputs: Sequence[gr.components.Component] = ()
    follows_step: bool = True
    follows_trace: bool = True
    empty: Callable[[], dict] | None = None  # what it shows without a trace (None: every output emptied)


# the three attention kinds as a radio's (label, value) choices, in the trace's order (section 3.2.3)
KIND_CHOICES = [(spec.label, name) for name, spec in ATTENTION_KINDS.items()]


def plot(figure, name: str) -> PlotData:
    """A Plotly figure for gr.Plot with the toolbar always shown; its camera icon saves `name`.png."""
    config = {
        "displayModeBar": True,
        "displaylogo": False,
        "toImageButtonOptions": {"format": "png", "filename": name, "scale": 2},
    }
    # gr.Plot's front end passes a "config" key of the figure JSON to Plotly; splice it in front.
    return PlotData(type="plotly", plot='{"config": %s, %s' % (json.dumps(config), figure.to_json()[1:]))


def step_index(trace: TranslationTrace, step: float | None) -> int:
    """The 1-based step of the slider -> a 0-based index into the trace, clamped to the steps there are."""
    return int(np.clip(int(step or 1), 1, trace.num_steps)) - 1


def clamp(value: float | None, count: int) -> int:
    """A 1-based choice of the UI (layer, head) -> a 0-based index within `count`."""
    return int(np.clip(int(value or 1), 1, count)) - 1


def figure_tab(page: Page, label: str, tab_id: str, about: str, elem_id: str, view) -> TabView:
    """A tab of one explanation and one figure, view(trace, step) -> its gr.Plot value."""
    with gr.Tab(label, id=tab_id, elem_id=f"{tab_id}-tab") as tab:
        # the prose beside the figure, as on the Attention tab: the figure in one place on every tab
        with gr.Row(equal_height=False, elem_classes="view-row"):
            with gr.Column(scale=1, min_width=280, elem_classes="view-side"):
                with gr.Accordion("About this view", open=True, elem_classes="view-about"):
                    gr.Markdown(about)
            with gr.Column(scale=3, min_width=340, elem_classes="view-main"):
                figure = gr.Plot(elem_id=elem_id, show_label=False)
    page.track(tab, tab_id)
    return TabView(tab_id, [figure], lambda trace, step, values: {figure: view(trace, step)})


def chips(tokens: Sequence[str], classes: dict | None = None, titles: Sequence[str] | None = None) -> str:
    """Token chips with the special tokens of either tokenizer ([BOS], [EOS], language tags; </s>, <pad>, <unk>)
    marked as such."""
    return token_chips(tokens, classes, titles, special_tokens=SPECIAL_TOKENS)


MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]<>&#|~!])")


def markdown_text(text: str) -> str:
    """`text` for a Markdown value, shown as written: Markdown's special characters backslash-escaped (an HTML
    entity would show literally, and `<2de>` would be read as a tag)."""
    return MARKDOWN_SPECIAL.sub(r"\\\1", text)


def set_initial(component: gr.components.Component, value=None, **props) -> None:
    """Give a built component the value (and properties: choices, maximum, interactive...) it shows when the page
    arrives, as its constructor would have (the value postprocessed, a file put in Gradio's cache); a gr.State's
    value is each new session's own copy. The constructor's arguments are updated too: Gradio builds each
    session's copy of a component, and a component after an update, from them."""
    arguments = component.constructor_args
    for name, prop in props.items():
        setattr(component, name, prop)
        arguments[name] = prop
    if value is None:
        return
    arguments["value"] = value
    if isinstance(component, gr.State):
        component.value = value
        return
    value = component.postprocess(value)
    if isinstance(value, BaseModel):
        value = value.model_dump()
    component.value = move_files_to_cache(value, component, postprocess=True, keep_in_cache=True)
    if client_utils.is_file_obj(component.value):
        component.keep_in_cache.add(component.value["path"])
