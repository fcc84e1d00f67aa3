"""The step slider: a gr.Slider that clamps a step outside its range instead of refusing the event.

An event can still carry the previous sentence's step after a new, shorter trace has narrowed the
range (the page sends the value it showed). Gradio refused such an event, which left a stale plot;
here the step is clamped into the range (the views clamp it too). It is a subclass, not a patched
instance, because Gradio rebuilds a component from its class on every property update. Like every
Component subclass, importing it makes Gradio write a typing stub, ui/step_slider.pyi (git-ignored).
"""

from __future__ import annotations

import gradio as gr


class StepSlider(gr.Slider):
    def get_block_name(self) -> str:
        return "slider"  # the front end's own slider

    def preprocess(self, payload: float | None) -> float | None:
        if payload is not None and self.minimum is not None and self.maximum is not None:
            payload = min(max(payload, self.minimum), self.maximum)
        return super().preprocess(payload)
