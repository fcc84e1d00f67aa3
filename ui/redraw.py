"""The page's listeners: ONE server listener per user action, and it writes everything that depends on that action.

A tab or panel declares what a visitor can do (`Page.listen`: the event, the action's function, its inputs and
outputs), the menus whose choices follow other values (`Page.follow`) and its views (`TabView`, ui/common.py).
`wire` then makes one Gradio listener per action, and each runs, in one request:
1. the action (translate, step, open a tab, run a panel...) -> the components it changes;
2. the followers of what changed: a menu of the trace's tokens gets its choices and value with the new trace,
   the header its translation and tokens, the player its range;
3. the views of the open tab (and the page-wide ones, e.g. the step line and the share link) whose inputs changed.
Every input of the page is an input of every listener (a gr.State is read on the server; the rest are small values)
and no listener reads what another listener of the same event writes: there is no other listener, and nothing
listens to a component's `.change`. So the step line, the figures, the menus and the translation always come from
one trace and one step: a page that shows one sentence's figure under another's translation cannot happen. The
page's events themselves run one at a time (ui/session_order.py), so each reads the state the one before wrote.
The page's load names the page, in a hidden box of the browser and in the session (`PageListeners.marked`); an
event whose two names differ reaches a session the server dropped, and the page's renewals (ui/renewal.py) make
its state again from what the page holds before the event's action runs.

A plain change of a control (a head, a layer, how to draw) is the action `redraw`: nothing but the views it
affects. Each view's key is what it follows, by value (`drawn_key`); a view is drawn only when its key changed
since it was last drawn (kept per page in a gr.State), so a click that changes nothing draws nothing and one Next
redraws only what follows the step on the open tab. Listeners take their inputs unprocessed (`preprocess=False`):
a menu's value that a newer answer is replacing is read as it is, never refused (each view checks its values).
"""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Sequence

import gradio as gr
from gradio.blocks import Block

from model import TranslationTrace

from .runner import MODEL_EVENTS, in_model_slot
from .common import PAGE_URL, PRIVATE, Action, Page, TabView, page_url, set_initial
from .stepping import step_html

EMPTY = "empty"  # the key of a view emptied for want of a trace
MISSING = object()  # an update that leaves a component's value as it is


def trace_key(trace: TranslationTrace | None) -> tuple | None:
    """A trace by what it is: model, sentence, direction, output, forced steps, the heads or encodings switched off."""
    return (
        None
        if trace is None
        else (
            trace.model,
            trace.source_text,
            trace.direction,
            trace.translation,
            trace.num_steps,
            trace.output_ids,
            trace.forced_steps,
            trace.ablation,
        )
    )


def value_key(value) -> str:
    """A value by what it is (a trace by `trace_key`, not by its arrays)."""
    return repr(trace_key(value)) if isinstance(value, TranslationTrace) else repr(value)


def new_value(update):
    """The value an update gives its component (MISSING: it keeps its value)."""
    if isinstance(update, Block):
        return update.constructor_args.get("value", MISSING)
    if isinstance(update, dict) and update.get("__type__") == "update":
        return update.get("value", MISSING)
    return update


def as_update(update) -> dict:
    if isinstance(update, Block):
        return {"__type__": "update", **update.constructor_args}
    if isinstance(update, dict) and update.get("__type__") == "update":
        return update
    return {"__type__": "update", "value": update}


def merge(updates: dict, more: dict) -> dict:
    """`updates` with `more` on top; two updates of one component are combined (value and properties)."""
    merged = dict(updates)
    for component, update in more.items():
        if component not in merged:
            merged[component] = update
        elif isinstance(update, (Block, dict)) or isinstance(merged[component], (Block, dict)):
            merged[component] = {**as_update(merged[component]), **as_update(update)}
        else:
            merged[component] = update
    return merged


def overlay(values: dict, updates: dict) -> dict:
    """The page's values after `updates` (only the components that are inputs)."""
    after = dict(values)
    for component, update in updates.items():
        value = new_value(update)
        if component in after and value is not MISSING:
            after[component] = value
    return after


def drawn_key(view: TabView, trace: TranslationTrace | None, step: float | None, values: dict) -> str:
    """Everything `view` follows, by value, as one string."""
    read = [value_key(values.get(component)) for component in (*view.controls, *view.inputs)]
    return repr((trace_key(trace) if view.follows_trace else None, step if view.follows_step else None, read))


def render_views(
    views: Sequence[TabView],
    tab: str,
    trace: TranslationTrace | None,
    step: float | None,
    values: dict,
    drawn: dict | None = None,
) -> dict:
    """{component: value} of the open tab's views and the page-wide ones; without a trace every view that
    follows the trace is emptied, whichever tab it is on. drawn: {view index: drawn_key} of what the page shows,
    updated in place; a view whose key is unchanged is left as it is (None: draw every view). A view that resets
    another's input (a panel's kept result, for a new trace) is seen by the views after it."""
    updates: dict = {}
    for index, view in enumerate(views):
        empty = trace is None and view.follows_trace
        if not empty and view.tab_id not in (tab, None):
            continue
        key = EMPTY if empty else drawn_key(view, trace, step, values)
        if drawn is not None:
            if drawn.get(index) == key:
                continue
            drawn[index] = key
        if empty:
            drew = view.empty() if view.empty else {output: None for output in view.outputs}
        else:
            drew = view.render(trace, step, values)
        updates.update(drew)
        values = overlay(values, drew)
    return updates


def changes_of(action: Action, result) -> dict:
    """An action's result as {component: update} (gr.skip() and skipped entries dropped)."""
    if result is None:
        return {}
    if not isinstance(result, dict) or result.get("__type__") == "update":
        result = result if isinstance(result, (tuple, list)) else (result,)
        result = dict(zip(action.outputs, result))
    return {component: update for component, update in result.items() if not is_skip(update)}


def is_skip(update) -> bool:
    return isinstance(update, dict) and update == {"__type__": "update"}


def listener_options(action: Action) -> dict:
    """Gradio options of an action's listener: private; the progress of a model run shown where the action asks
    (`show_progress_on`: e.g. the translation box while a sentence is translated), else on its own visible
    outputs (a panel's result); never over the whole page, and none for a quick action (a step, a tab, a head)."""
    options = {"trigger_mode": "always_last", **action.options, **PRIVATE}
    options.pop("then_js", None)
    shown = [c for c in action.outputs if not isinstance(c, gr.State)]
    if "show_progress_on" in options or options.get("show_progress") == "hidden":
        return options
    if options.get("concurrency_id") == MODEL_EVENTS and shown:
        return {**options, "show_progress_on": shown}
    return {**options, "show_progress": "hidden"}


class PageListeners:
    """The listeners of one page: its views, what each listener reads (every input of the page) and writes (every
    output), and `drawn`, this visitor's record of what the page shows (each view's and follower's key)."""

    def __init__(self, page: Page, step_info: gr.HTML, views: Sequence[TabView]) -> None:
        self.page, self.step_info, self.views = page, step_info, list(views)
        self.drawn = gr.State(None)  # {view index, ("follower", i) or "step": drawn_key} of what the page shows now
        # the name its load gives this page, held in the browser and in the session: they differ once the server has
        # dropped the session (a fresh one starts with the page's first states)
        self.page_mark, self.session_mark = gr.Textbox(visible=False, elem_id="page-mark"), gr.State(None)
        self.controls = list(dict.fromkeys(control for view in views for control in view.controls))
        self.inputs = unique(
            [page.trace, page.step, page.tab, *self.controls],
            (item for view in views for item in view.inputs),
            (component for follower in page.followers for component in follower.follows),
            (item for action in page.actions for item in action.inputs),
            (item for renewal in page.renewals for item in renewal.inputs),
            [self.page_mark, self.session_mark],
        )
        self.outputs = unique(
            [step_info],
            (output for view in views for output in view.outputs),
            (output for follower in page.followers for output in follower.outputs),
            (output for action in page.actions for output in action.outputs),
            (output for renewal in page.renewals for output in renewal.outputs),
            [self.page_mark, self.session_mark],
        )

    def settle(self, values: dict, changes: dict, shown: dict, request: gr.Request | None) -> dict:
        """After `changes`: the followers of what differs from `shown` (updated in place), then the views -> every
        update (the action's own writes win over a follower's, in what the views are drawn from too)."""
        page = self.page
        values = overlay(values, changes)
        for index, follower in enumerate(page.followers):
            key = follower_key(follower, values)
            if shown.get(("follower", index)) != key:
                shown[("follower", index)] = key
                followed = follower.update(values)
                changes = merge(followed, changes)
                values = overlay(values, changes)
        trace, step = values[page.trace], values[page.step]
        values = {**values, PAGE_URL: page_url(request)}
        updates = render_views(self.views, values[page.tab], trace, step, values, shown)
        info = repr((trace_key(trace), step))
        if shown.get("step") != info:
            shown["step"] = info
            updates[self.step_info] = step_html(trace, step)
        return {**updates, **changes}

    def respond(self, action: Action, values: dict, request: gr.Request | None) -> dict:
        """One request of `action`: its changes, the followers of what changed, the views -> every update. In a
        session the server dropped, the page's state is made again first (`renewed`), then the action runs on it."""
        marks, renewed = self.marked(action, values)
        if renewed:
            values = overlay(values, renewed)
            shown = {("follower", i): follower_key(f, values) for i, f in enumerate(self.page.followers)}
        else:
            shown = dict(values.get(self.drawn) or {})
        asks = action.fn is not None and "request" in inspect.signature(action.fn).parameters
        arguments = [values[c] for c in action.inputs]
        result = (action.fn(*arguments, request=request) if asks else action.fn(*arguments)) if action.fn else {}
        if isinstance(result, dict) and is_skip(result) and not marks:
            return {}
        changes = merge(renewed, changes_of(action, result))  # the action's own writes win (a new notice)
        updates = self.settle(values, changes, shown, request)
        if not updates and not marks and shown == (values.get(self.drawn) or {}):
            return {}
        return {self.drawn: shown, **marks, **updates}

    def marked(self, action: Action, values: dict) -> tuple[dict, dict]:
        """(the marks to write, the page's state made again): the page's load names the page afresh; an event whose
        page mark (the browser's) is not its session's finds a session the server dropped (or that had ended), and
        the page's renewals make its state again from what the page holds."""
        if any(getattr(trigger, "event_name", None) == "load" for trigger in action.triggers):
            mark = uuid.uuid4().hex
            return {self.page_mark: mark, self.session_mark: mark}, {}
        page_mark = values.get(self.page_mark)
        if not page_mark or page_mark == values.get(self.session_mark):  # no load answer yet, or the page's session
            return {}, {}
        renewed: dict = {}
        for renewal in self.page.renewals:
            renewed.update(renewal.fn(*[overlay(values, renewed)[c] for c in renewal.inputs]))
        return {self.session_mark: page_mark}, renewed

    def listen(self, action: Action) -> None:
        """The one Gradio listener of `action` (then, in the browser, its `then_js`)."""

        def run(values: dict, request: gr.Request):
            return self.respond(action, values, request) or gr.skip()

        run.__name__ = getattr(action.fn, "__name__", "redraw") if action.fn else "redraw"
        run.action = action  # tests call the action alone (tests/support/explain_page.py)
        if action.options.get("concurrency_id") == MODEL_EVENTS:
            run = in_model_slot(run)  # its page's turn first, then a model slot (ui/runner.py)
        event = gr.on(
            list(action.triggers),
            run,
            {*self.inputs, self.drawn},
            [self.drawn, *self.outputs],
            preprocess=False,
            api_name=f"page_{run.__name__}",  # the page's own (private); the API's names are ui/api.py's
            **listener_options(action),
        )
        then = action.options.get("then_js")  # in the browser, once the answer is shown (e.g. scroll to it)
        if then:
            js, then_inputs, then_outputs = (then, None, None) if isinstance(then, str) else then
            event.success(None, then_inputs, then_outputs, js=js, **PRIVATE)

    def arrived(self) -> None:
        """A page that arrives drawn (its config shows the first view) starts with that view marked drawn."""
        if self.page.trace.value is not None:
            shown: dict = {}
            self.settle({component: getattr(component, "value", None) for component in self.inputs}, {}, shown, None)
            set_initial(self.drawn, shown)


def follower_key(follower, values: dict) -> str:
    """What `follower` follows, by value."""
    return repr([value_key(values.get(component)) for component in follower.follows])


def unique(*groups) -> list:
    """The components of every group, each once, in order."""
    return list(dict.fromkeys(item for group in groups for item in group))


def wire(page: Page, step_info: gr.HTML, views: Sequence[TabView]) -> None:
    """Make the page's listeners: one per declared action (`page.actions`), and `redraw` for the plain change of a
    control; each writes what its action changes, the followers of those changes and the views they affect."""
    listeners = PageListeners(page, step_info, views)
    for action in page.actions:
        listeners.listen(action)
    listeners.arrived()
    # a plain change of a control: `redraw`, except for a control whose input is an action of its own (that action's
    # answer draws its views too: one listener per user action)
    acted = {(trigger.__self__, trigger.event_name) for action in page.actions for trigger in action.triggers}
    editable = [c for c in listeners.controls if not isinstance(c, gr.State) and (c, "input") not in acted]
    listeners.listen(Action([control.input for control in editable], None, options={"show_progress": "hidden"}))
