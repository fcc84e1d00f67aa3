"""Stepping through greedy decoding (section 3: the decoder is auto-regressive): first / back / next /
last / play, the step slider, and the step panel (the prefix so far, the query, the chosen token).

The slider is the page's one step; every view reads it. `build` lays out the controls and declares their actions;
a new trace sets the range and stops playback, in the same answer that shows it.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import gradio as gr

from model import TranslationTrace

from .common import PRIVATE, chips, set_initial, step_index
from .step_slider import StepSlider

PLAY_SECONDS = 1.0  # one decoding step per tick while playing

BUTTONS = {
    "first": ("« First", "step-first"),
    "prev": ("‹ Back", "step-prev"),
    "next": ("Next ›", "step-next"),
    "last": ("Last »", "step-last"),
}
PLAY_ID = "play"
# the page-wide step keys (ui/js/keys.js): key -> the button it presses, in groups as the hint names them
KEY_GROUPS = [
    ({"ArrowLeft": ("←", BUTTONS["prev"][1]), "ArrowRight": ("→", BUTTONS["next"][1])}, "step"),
    ({"Home": ("Home", BUTTONS["first"][1]), "End": ("End", BUTTONS["last"][1])}, "first, last"),
    ({" ": ("Space", PLAY_ID)}, "play"),
]
KEYS = {key: button for keys, _ in KEY_GROUPS for key, (_, button) in keys.items()}
KEYS_HINT = (
    '<span class="keys-hint" title="The keys step through decoding after Translate, a click on a head, '
    'layer or kind, or anywhere on the page; not while typing in a text box.">'
    + " · ".join(" ".join(f"<kbd>{name}</kbd>" for name, _ in keys.values()) + f" {what}" for keys, what in KEY_GROUPS)
    + "</span>"
)


def clamp_step(trace: TranslationTrace | None, step: float | None) -> int:
    """A requested 1-based step, kept within 1..num_steps (1 when there is no trace)."""
    return 1 if trace is None else step_index(trace, step) + 1


def step_html(trace: TranslationTrace | None, step: float | None) -> str:
    """The target prefix at this step, the query being decoded, the chosen token, its probability, entropy."""
    if trace is None:
        return "<p>Translate a sentence to step through greedy decoding.</p>"
    t = step_index(trace, step)
    prefix = chips(trace.target_tokens[: t + 1], {t: "query"})
    chosen = chips([trace.output_tokens[t]], {0: "chosen"})
    # one compact line for the player bar; a long prefix scrolls inside its own box (style.css)
    return (
        f'<div class="token-row step-line"><span class="label">Step {t + 1} of {trace.num_steps}</span>'
        f'<span class="step-prefix" title="decoder input so far; the highlighted token is the query">'
        f'{prefix}</span><span class="step-arrow">→ next</span>{chosen}'
        f'<span class="step-facts">p = {float(trace.chosen_probs[t]):.3f} · entropy = '
        f"{float(trace.entropy[t]):.2f} bits</span>"
        # the whole translation, shown on a phone only: there the page scrolls past its box to the figure
        f'<span class="step-output" title="the whole translation">“{html.escape(trace.translation)}”</span></div>'
    )


@dataclass(frozen=True)
class Stepping:
    """The step controls other parts of the page read or update."""

    slider: gr.Slider  # 1-based step
    info: gr.HTML  # the step panel (drawn with the views, ui/redraw.py)
    playing: gr.State
    timer: gr.Timer
    play_button: gr.Button
    buttons: tuple[gr.Button, ...] = ()  # first, back, next, last

    def stopped(self) -> dict:
        """Updates that stop playback."""
        return {self.playing: False, self.timer: gr.update(active=False), self.play_button: gr.update(value="▶ Play")}

    def toggle_play(self, trace, step, playing) -> dict:
        if trace is None or playing:
            return self.stopped()
        restart = clamp_step(trace, step) >= trace.num_steps  # at the end: play again from the start
        return {
            self.playing: True,
            self.timer: gr.update(active=True),
            self.play_button: gr.update(value="⏸ Pause"),
            self.slider: 1 if restart else clamp_step(trace, step),
        }

    def tick(self, trace, step, playing) -> dict:
        if trace is None or not playing:
            return self.stopped()
        new_step = clamp_step(trace, int(step or 1) + 1)  # one step on per tick
        return {**(self.stopped() if new_step >= trace.num_steps else {}), self.slider: new_step}

    def prefill(self, trace: TranslationTrace, path: str, view) -> None:
        """The page arrives at `view`'s step of `trace`, the controls enabled (ui/share.py's first view)."""
        step = clamp_step(trace, view.step)
        set_initial(self.slider, step, maximum=max(trace.num_steps, 2), interactive=trace.num_steps > 1)
        set_initial(self.info, step_html(trace, step))
        for button in (*self.buttons, self.play_button):
            set_initial(button, interactive=True)

    def show_trace(self, trace: TranslationTrace | None) -> dict:
        """The steps of a trace (its range; the step itself is the action's), playback stopped; without a trace
        every step control is disabled."""
        ready = trace is not None
        # a slider needs minimum < maximum: a one-step trace gets a disabled 1..2 slider (steps clamp)
        maximum = max(trace.num_steps, 2) if ready else 2
        return {
            self.slider: gr.update(minimum=1, maximum=maximum, interactive=ready and trace.num_steps > 1),
            **self.stopped(),
            self.play_button: gr.update(value="▶ Play", interactive=ready),
            **{button: gr.update(interactive=ready) for button in self.buttons},
        }


def build(page) -> Stepping:
    """The player bar (step controls and panel; sticky at the top of the page, see style.css), declared on `page`
    (ui/common.py): the buttons move the slider in the browser (ui/js/keys.js `moveStep`: the slider's own input
    event, the one action that draws a step), play/pause and its timer, and the controls that follow the trace."""
    with gr.Column(elem_id="player-bar"):
        with gr.Row(elem_id="step-controls", equal_height=False):
            buttons = {
                move: gr.Button(label, elem_id=elem_id, size="sm", min_width=64, scale=0, interactive=False)
                for move, (label, elem_id) in BUTTONS.items()
            }
            play_button = gr.Button(
                "▶ Play", elem_id=PLAY_ID, size="sm", min_width=84, scale=0, variant="primary", interactive=False
            )
            slider = StepSlider(
                1, 2, value=1, step=1, label="Decoding step", elem_id="step", scale=1, min_width=200, interactive=False
            )
            gr.HTML(KEYS_HINT, elem_id="step-keys", padding=False)  # the keys exist: say so
        steps = Stepping(
            slider,
            gr.HTML(step_html(None, 1), elem_id="step-info"),
            gr.State(False),
            gr.Timer(PLAY_SECONDS, active=False),
            play_button,
            tuple(buttons.values()),
        )
    for move, button in buttons.items():
        button.click(None, None, None, js=f"() => window.attentionExplorer.moveStep({move!r})", **PRIVATE)
    page.listen(slider.input, None, show_progress="hidden")  # a step: what follows it is drawn
    play_inputs = [page.trace, slider, steps.playing]
    play_outputs = [steps.playing, steps.timer, play_button, slider]
    page.listen(play_button.click, steps.toggle_play, play_inputs, play_outputs, show_progress="hidden")
    page.listen(steps.timer.tick, steps.tick, play_inputs, play_outputs, show_progress="hidden")
    page.follow(
        [page.trace],
        [slider, steps.playing, steps.timer, play_button, *buttons.values()],
        lambda values: steps.show_trace(values[page.trace]),
    )
    return steps
