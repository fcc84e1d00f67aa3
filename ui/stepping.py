"""Stepping through greedy decoding (section 3: the decoder is auto-regressive): first / back / next /
last / play, the step slider, and the step panel (the prefix so far, the query, the chosen token).

The slider is the page's one step; every view reads it. `build` lays out the controls and wires them;
a new trace resets the slider to step 1 and stops playback.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import gradio as gr

from model import TranslationTrace

from .common import PRIVATE, chips, step_index
from .step_slider import StepSlider

KEYS_HINT = (
    '<span class="keys-hint" title="The keys step through decoding after Translate, a click on a head, '
    'layer or kind, or anywhere on the page; not while typing in a text box."><kbd>←</kbd> <kbd>→</kbd> '
    "step · <kbd>Home</kbd> <kbd>End</kbd> first, last · <kbd>Space</kbd> play</span>"
)
PLAY_SECONDS = 1.0  # one decoding step per tick while playing

BUTTONS = {
    "first": ("« First", "step-first"),
    "prev": ("‹ Back", "step-prev"),
    "next": ("Next ›", "step-next"),
    "last": ("Last »", "step-last"),
}


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
    info: gr.HTML  # the step panel (drawn by the redraw listener, with the views)
    playing: gr.State
    timer: gr.Timer
    play_button: gr.Button
    buttons: tuple[gr.Button, ...] = ()  # first, back, next, last

    def stopped(self) -> dict:
        """Updates that stop playback."""
        return {self.playing: False, self.timer: gr.Timer(active=False), self.play_button: gr.Button("▶ Play")}

    def toggle_play(self, trace, step, playing) -> dict:
        if trace is None or playing:
            return self.stopped()
        restart = clamp_step(trace, step) >= trace.num_steps  # at the end: play again from the start
        return {
            self.playing: True,
            self.timer: gr.Timer(active=True),
            self.play_button: gr.Button("⏸ Pause"),
            self.slider: 1 if restart else clamp_step(trace, step),
        }

    def tick(self, trace, step, playing) -> dict:
        if trace is None or not playing:
            return self.stopped()
        new_step = clamp_step(trace, int(step or 1) + 1)  # one step on per tick
        return {**(self.stopped() if new_step >= trace.num_steps else {}), self.slider: new_step}

    def show_trace(self, trace: TranslationTrace | None, step: float | None = 1) -> dict:
        """The steps of a new trace, playback stopped; without a trace every step control is disabled.

        The value is left alone: Translate sets step 1 and a shared link its own step (ui/app.py, ui/share.py)."""
        ready = trace is not None
        # a slider needs minimum < maximum: a one-step trace gets a disabled 1..2 slider (steps clamp)
        if not ready:  # keep the range: an event still in flight may carry the old step (Gradio checks it)
            slider = gr.Slider(value=1, interactive=False)
        else:  # the range only: Translate's step 1 or a link's step arrive in their own update, and this
            # listener may run after it (a step outside the range is clamped by StepSlider and the views)
            slider = gr.Slider(minimum=1, maximum=max(trace.num_steps, 2), interactive=trace.num_steps > 1)
        return {
            self.slider: slider,
            **self.stopped(),
            self.play_button: gr.Button("▶ Play", interactive=ready),
            **{button: gr.Button(interactive=ready) for button in self.buttons},
        }


# The step rule, written once: the buttons move the slider in the browser, on the slider's own range, with
# no round trip (the slider's change is then the one event that redraws, ui/redraw.py). A disabled slider
# (no trace, or a one-step trace) stays at step 1. tests/ui/test_app.py runs these functions in Node.
STEP_JS = {
    "first": "1",
    "prev": "step - 1",
    "next": "step + 1",
    "last": "last",
}


def step_js(move: str) -> str:
    """The browser-side handler of one step button: (slider value) -> new slider value."""
    return (
        "(value) => { const range = document.querySelector('#step input[type=range]');"
        " if (!range || range.disabled) return 1;"
        " const step = Number(value) || 1, last = Number(range.max) || 1;"
        f" return Math.min(Math.max({STEP_JS[move]}, 1), last); }}"
    )


def build(trace: gr.State) -> Stepping:
    """The player bar (step controls and panel; sticky at the top of the page, see style.css), wired:
    buttons, play/pause, the reset on a new trace, and the controls disabled while there is no trace."""
    with gr.Column(elem_id="player-bar"):
        with gr.Row(elem_id="step-controls", equal_height=False):
            buttons = {
                move: gr.Button(label, elem_id=elem_id, size="sm", min_width=64, scale=0, interactive=False)
                for move, (label, elem_id) in BUTTONS.items()
            }
            play_button = gr.Button(
                "▶ Play", elem_id="play", size="sm", min_width=84, scale=0, variant="primary", interactive=False
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
        button.click(None, slider, slider, js=step_js(move), **PRIVATE)
    play_inputs = [trace, slider, steps.playing]
    play_outputs = [steps.playing, steps.timer, play_button, slider]
    play_button.click(steps.toggle_play, play_inputs, play_outputs, **PRIVATE)
    steps.timer.tick(steps.tick, play_inputs, play_outputs, trigger_mode="always_last", **PRIVATE)
    # every change of the trace (a new one, or none after an error) resets the controls
    trace.change(
        steps.show_trace,
        [trace, slider],
        [slider, steps.playing, steps.timer, play_button, *buttons.values()],
        show_progress="hidden",
        **PRIVATE,
    )
    return steps
