"""The "Compare" tab: two sentences of one direction side by side, drawn with the same attention kind, layer
and head (sections 3.2.2 and 3.2.3), and one source token present in both (the 2017 blog post's "it": the
animal or the street): where it looks in every head of each sentence, the heads that tell the two apart
(`model.analysis.compare`), and the candidates at the step that translates it.

The first sentence is the page's trace; the second is translated in the first's direction by the page's one
Translate action (`serving.translation.Translator`, through ui/compare_second.py `compare_with`) and kept in this user's gr.State. The two figures and
the comparison are views of the page's one redraw (ui/redraw.py); what they show is made in ui/compare_views.py.
A comparison is made when asked (Compare, a link, the blog pair): a new first sentence drops the second, and until a
second is compared the first is drawn alone with one line on how to compare it.
"""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from model import Checkpoint, TranslationTrace

from .attention import VIEWS, head_choices, layer_choices
from .common import KIND_CHOICES, Page, TabView
from .compare_views import (
    candidates_view,
    caption,
    looks_html,
    named_positions,
    opened,
    ranking_choices,
    side_view,
    summary,
)
from .compare_second import Second, compare_with, comparison, opening, pair_referents, problem, token_update
from .page_script import SHOW_COMPARE_JS
from serving.translation import Translator

from .runner import model_event
from .text import ABOUT_ATTENTION, ABOUT_COMPARE, BLOG_PAIR

TAB_ID = "compare"


@dataclass(frozen=True)
class CompareTab:
    """The tab's views and the controls a share link (ui/share.py) or the blog pair (ui/pair.py) sets."""

    views: list[TabView]
    checkpoint: Checkpoint | None
    second_text: gr.Textbox
    second: gr.State  # this user's Second
    token: gr.Dropdown
    kind: gr.Radio
    layer: gr.Radio
    head: gr.Radio
    about_kind: gr.Markdown
    example: gr.Button  # the blog post's pair, one click
    back: gr.Button  # back to the visitor's own sentence after the pair
    kept: gr.State  # (text, direction) of the visitor's sentence the pair replaced, or None

    def outputs(self) -> list:
        return [self.second_text, self.second, self.token, self.kind, self.layer, self.head, self.about_kind]

    def show(
        self, first: TranslationTrace, second: Second, token: str | None, kind: str, layer: int, head: str
    ) -> dict:
        """Updates that compare `second` with `first` at this kind, layer and head (clamped to what exists)."""
        layers = layer_choices(self.checkpoint, kind)
        n_heads = self.checkpoint.config.n_heads if self.checkpoint else 1
        head = head if not head.isdigit() else str(min(int(head), n_heads))
        text = second.trace.source_text if second.trace is not None else ""
        return {
            self.second_text: text,
            self.second: second,
            self.token: token_update(first, second, token),
            self.kind: kind,
            self.layer: gr.Radio(choices=layers, value=min(layer, len(layers))),
            self.head: head,
            self.about_kind: ABOUT_ATTENTION[kind],
        }

    def link_fields(self, values: dict) -> dict:
        """What a link to this tab carries: the second sentence, the token, and this tab's kind, layer and head."""
        second = values.get(self.second)
        text = second.trace.source_text if isinstance(second, Second) and second.trace is not None else None
        return {
            "second": text,
            "token": values.get(self.token) or None,
            "kind": values[self.kind],
            "layer": values[self.layer],
            "head": values[self.head],
        }


def controls(page: Page) -> dict:
    """The side column: the second sentence, the blog pair, the token and the kind, layer, head and drawing."""
    made = {}
    made["second_text"] = gr.Textbox(
        label="Second sentence (translated in the first one's direction)",
        lines=1,
        max_lines=4,
        elem_id="compare-second",
        placeholder=BLOG_PAIR[1],
    )
    with gr.Row(elem_id="compare-buttons"):
        made["go"] = gr.Button("Compare", variant="primary", elem_id="compare-go", min_width=100)
        made["example"] = gr.Button(
            "The blog post's pair: “…too tired” / “…too wide”",
            elem_id="compare-example",
            variant="secondary",
            min_width=200,
        )
        made["back"] = gr.Button(
            "↩ Back to your sentence", elem_id="compare-back", variant="secondary", min_width=160, visible=False
        )
    made["token"] = gr.Dropdown([], value=None, label="Source token in both sentences", elem_id="compare-token")
    made["kind"] = gr.Radio(KIND_CHOICES, value="encoder", label="Attention", elem_id="compare-kind")
    made["layer"] = gr.Radio(layer_choices(page.checkpoint, "encoder"), value=1, label="Layer", elem_id="compare-layer")
    made["head"] = gr.Radio(
        head_choices(page.checkpoint),
        value="all",
        label="Head",
        elem_id="compare-head",
    )
    made["draw"] = gr.Radio(VIEWS, value="lines", label="Draw as", elem_id="compare-view")
    with gr.Accordion("About this view", open=False, elem_classes="view-about"):
        gr.Markdown(ABOUT_COMPARE)
        made["about_kind"] = gr.Markdown(ABOUT_ATTENTION["encoder"])
    return made


def results() -> dict:
    """The main column: the message, the two figures side by side (stacked on a narrow screen), the ranked heads,
    the candidates of both sentences and the table of every head. Shown only with what they hold: no figures
    without a sentence, the first sentence's alone until a second is compared, the comparison's parts with one."""
    made = {"message": gr.Markdown(elem_id="compare-message")}
    with gr.Row(equal_height=False, elem_id="compare-pair", visible=False) as made["pair"]:
        for n in (1, 2):
            with gr.Column(min_width=340, elem_id=f"compare-side-{n}") as made[f"side{n}"]:
                made[f"caption{n}"] = gr.HTML(elem_id=f"compare-caption-{n}")
                made[f"plot{n}"] = gr.Plot(elem_id=f"compare-plot-{n}", show_label=False)
    with gr.Column(elem_id="compare-result", visible=False) as made["result"]:
        made["ranking"] = gr.Radio(
            [], value=None, label="Heads that tell the two apart (choose one to draw it)", elem_id="compare-ranking"
        )
        with gr.Row(equal_height=False, elem_id="compare-candidates"):
            for n in (1, 2):
                with gr.Column(min_width=300):
                    made[f"candidates{n}"] = gr.Plot(elem_id=f"compare-candidates-{n}-plot", show_label=False)
        with gr.Accordion("Where the token looks: every head", open=True):
            made["looks"] = gr.HTML(elem_id="compare-looks")
    return made


def views(c: dict, r: dict) -> list[TabView]:
    """The two figures (they follow the step) and the comparison (it does not), both drawn by the one redraw. Until a
    second sentence is compared the first is drawn alone, the second's box hidden."""
    shown_with = {r["pair"]: gr.update(visible=True), r["side2"]: gr.update(visible=True)}

    def render_figures(first, step, values) -> dict:
        second = values[c["second"]]
        if problem(first, second):
            kind, layer, head, draw = (values[c[name]] for name in ("kind", "layer", "head", "draw"))
            figure, shown = side_view(first, step, None, kind, layer, head, draw)
            return {
                **shown_with,
                r["side2"]: gr.update(visible=False),
                r["caption1"]: caption(1, first, shown, None),
                r["plot1"]: figure,
                r["caption2"]: "",
                r["plot2"]: None,
            }
        result, referents = comparison(first, second.trace, values[c["token"]]), pair_referents(first, second.trace)
        updates = dict(shown_with)
        for n, trace in ((1, first), (2, second.trace)):
            looks = None if result is None else (result.first, result.second)[n - 1]
            named = ((), ()) if result is None else named_positions(result, n, values[c["kind"]], referents)
            figure, shown = side_view(
                trace, step, looks, values[c["kind"]], values[c["layer"]], values[c["head"]], values[c["draw"]], named
            )
            updates |= {r[f"plot{n}"]: figure, r[f"caption{n}"]: caption(n, trace, shown, looks)}
        return updates

    def cleared(message: str) -> dict:
        return {
            r["message"]: message,
            r["result"]: gr.update(visible=False),
            r["ranking"]: gr.Radio(choices=[], value=None),
            r["looks"]: "",
            r["candidates1"]: None,
            r["candidates2"]: None,
        }

    def render_comparison(first, step, values) -> dict:
        second = values[c["second"]]
        message = problem(first, second)
        if message:
            return cleared(message)
        result = comparison(first, second.trace, values[c["token"]])
        if result is None:
            return cleared("⚠️ The two sentences share no source token: nothing to compare token by token.")
        return {
            r["message"]: summary(result, pair_referents(first, second.trace)),
            r["result"]: gr.update(visible=True),
            r["ranking"]: gr.Radio(choices=ranking_choices(result), value=None),
            r["looks"]: looks_html(result),
            r["candidates1"]: candidates_view(1, result.first),
            r["candidates2"]: candidates_view(2, result.second),
        }

    def no_figures() -> dict:  # no sentence: no figure boxes
        hidden = {r["pair"]: gr.update(visible=False), r["plot1"]: None, r["plot2"]: None}
        return {**hidden, r["caption1"]: "", r["caption2"]: ""}

    figure_controls = [c["second"], c["token"], c["kind"], c["layer"], c["head"], c["draw"]]
    figures = [r["pair"], r["side2"], r["caption1"], r["caption2"], r["plot1"], r["plot2"]]
    return [
        TabView(TAB_ID, figures, render_figures, figure_controls, empty=no_figures),
        TabView(
            TAB_ID,
            [r["message"], r["result"], r["ranking"], r["looks"], r["candidates1"], r["candidates2"]],
            render_comparison,
            [c["second"], c["token"]],
            follows_step=False,
            empty=lambda: cleared(problem(None, None)),
        ),
    ]


def wire(page: Page, c: dict, ranking: gr.Radio, translator: Translator) -> None:
    """The tab's actions: Compare (a model run), a token, a kind or a ranked head chosen; the token menu follows the
    two sentences. Each is one listener of the page that also draws what it changed (ui/redraw.py)."""

    def opened_at(first, second, chosen) -> dict:
        """The controls and the page's step at the head that differs most and the token's step ({}: none)."""
        start = opening(first, second, chosen)
        if start is None:
            return {}
        return {
            c["kind"]: start.kind,
            c["layer"]: gr.Radio(choices=layer_choices(page.checkpoint, start.kind), value=start.layer),
            c["head"]: start.head,
            c["about_kind"]: ABOUT_ATTENTION[start.kind],
            page.step: start.step,
        }

    def on_compare(first, text, chosen) -> dict:
        second = compare_with(translator, first, text)
        return {c["second"]: second, **opened_at(first, second, chosen)}

    opened_outputs = [c["kind"], c["layer"], c["head"], c["about_kind"], page.step]
    page.listen(
        [c["go"].click, c["second_text"].submit],
        on_compare,
        [page.trace, c["second_text"], c["token"]],
        [c["second"], *opened_outputs],
        then_js=SHOW_COMPARE_JS,
        **model_event(show_progress="minimal", show_progress_on=[c["go"]]),
    )

    def on_token(first, second, chosen):  # the page goes to the step that translates it (bar and captions say so)
        start = opening(first, second, chosen)
        return gr.skip() if start is None else {page.step: start.step}

    page.listen(c["token"].input, on_token, [page.trace, c["second"], c["token"]], [page.step])
    # a new first sentence (Translate, an example, "Back to your sentence") is compared only when asked: the second
    # goes with the first it was compared with (an action that sets both, a link or the blog pair, keeps its own)
    page.follow(
        [page.trace],
        [c["second"]],
        lambda values: {c["second"]: None} if values[c["second"]] is not None else {},
    )
    page.follow(
        [page.trace, c["second"]],
        [c["token"]],
        lambda values: {c["token"]: token_update(values[page.trace], values[c["second"]], values[c["token"]])},
    )

    def on_kind(kind, layer) -> dict:
        choices = layer_choices(page.checkpoint, kind)
        return {
            c["layer"]: gr.Radio(choices=choices, value=min(int(layer or 1), len(choices))),
            c["about_kind"]: ABOUT_ATTENTION[kind],
        }

    page.listen(c["kind"].input, on_kind, [c["kind"], c["layer"]], [c["layer"], c["about_kind"]])

    def on_ranked(value) -> dict:  # the controls change, and that head is drawn for both sentences
        head = opened(value)
        if head is None:  # dismissed without a choice: nothing changes
            return gr.skip()
        kind, layer, number = head
        return {
            c["kind"]: kind,
            c["layer"]: gr.Radio(choices=layer_choices(page.checkpoint, kind), value=layer),
            c["head"]: number,
            c["about_kind"]: ABOUT_ATTENTION[kind],
        }

    page.listen(ranking.input, on_ranked, [ranking], [c["kind"], c["layer"], c["head"], c["about_kind"]])


def build(page: Page, translator: Translator) -> CompareTab:
    with gr.Tab("Compare", id=TAB_ID, elem_id="compare-tab") as tab:
        with gr.Row(equal_height=False, elem_classes="view-row"):
            with gr.Column(scale=1, min_width=280, elem_classes="view-side"):
                c = controls(page)
            with gr.Column(scale=3, min_width=340, elem_classes="view-main"):
                r = results()
        c["second"], c["kept"] = gr.State(None), gr.State(None)
    page.track(tab, TAB_ID)
    wire(page, c, r["ranking"], translator)
    return CompareTab(
        views(c, r),
        page.checkpoint,
        c["second_text"],
        c["second"],
        c["token"],
        c["kind"],
        c["layer"],
        c["head"],
        c["about_kind"],
        c["example"],
        c["back"],
        c["kept"],
    )
