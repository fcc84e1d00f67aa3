"""The "Model" tab: the configuration beside the paper's base model (Table 3), the parameter count,
the BLEU table (section 6.1) and the training curves of the checkpoint's training_log.json.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import gradio as gr
from gradio.components.plot import PlotData

import visualizer
from model import Checkpoint

from .common import Page, TabView, plot
from .text import ABOUT_MODEL

TAB_ID = "model"
TRAINING_LOG_FILE = "training_log.json"


@functools.lru_cache(maxsize=4)
def load_training_log(directory: str) -> dict | None:
    """training_log.json beside the checkpoint, or None when absent or unreadable."""
    path = Path(directory) / TRAINING_LOG_FILE
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


def config_markdown(checkpoint: Checkpoint) -> str:
    """The hyper-parameters beside the paper's base model (Table 3), and the parameter count."""
    config = checkpoint.config
    rows = [
        ("layers (encoder / decoder)", "N", f"{config.n_encoder_layers} / {config.n_decoder_layers}", "6 / 6"),
        ("model width", "d_model", config.d_model, 512),
        ("attention heads", "h", config.n_heads, 8),
        ("width per head", "d_k = d_v", config.d_head, 64),
        ("feed-forward width", "d_ff", config.d_ff, 2048),
        ("dropout", "P_drop", config.dropout, 0.1),
        ("shared vocabulary", "", f"{config.vocab_size:,}", "≈37,000 BPE"),
        ("longest sequence", "", config.max_positions, ""),
        ("parameters", "", f"{checkpoint.model.num_parameters():,}", "≈65 million"),
    ]
    table = "\n".join(
        f"| {name} | {f'`{symbol}`' if symbol else ''} | {value} | {base} |" for name, symbol, value, base in rows
    )
    return (
        f"**This model: {checkpoint.model.num_parameters():,} parameters**, post-LN, checkpoint "
        f"`{checkpoint.path}`\n\n| | paper | this model | base model (Table 3) |\n| --- | --- | ---: | ---: |\n" + table
    )


def training_view(checkpoint: Checkpoint | None) -> PlotData | None:
    log = None if checkpoint is None else load_training_log(str(checkpoint.path))
    return None if log is None else plot(visualizer.training_curves_figure(log), "training-curves")


def build(page: Page) -> TabView:
    """The tab -> the view of its curves, drawn when it is first opened (they depend on neither trace nor step)."""
    checkpoint = page.checkpoint
    with gr.Tab("Model", id=TAB_ID, elem_id="model-tab") as tab:
        gr.Markdown(ABOUT_MODEL)
        if checkpoint is None:
            gr.Markdown("No model is loaded, so there is nothing to show here.")
        else:
            with gr.Row(equal_height=False):
                gr.Markdown(config_markdown(checkpoint), elem_id="model-config")
                gr.Markdown(
                    "**BLEU and chrF (metrics.json)**\n\n" + visualizer.metrics_table_markdown(checkpoint.metrics),
                    elem_id="metrics",
                )
        curves = gr.Plot(elem_id="curves-plot", show_label=False)
        curves_note = gr.Markdown()

    def render(trace, step, values) -> dict:
        figure = training_view(checkpoint)
        note = (
            ""
            if figure is not None or checkpoint is None
            else f"No `{TRAINING_LOG_FILE}` beside this checkpoint, so there are no training curves to show."
        )
        return {curves: figure, curves_note: note}

    page.track(tab, TAB_ID)
    return TabView(TAB_ID, [curves, curves_note], render, follows_step=False, follows_trace=False)
