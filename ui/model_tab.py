"""The "Model" tab: the configuration beside the paper's base model (Table 3), the parameter count,
the BLEU table (section 6.1) and the training curves of the checkpoint's training_log.json.

A checkpoint trained elsewhere (OPUS-MT, model/checkpoints/catalogue.py) shows its card instead: its name and what
it is, the rows where its architecture differs from the paper's, its data and licence as its model card says, and
the scores its card publishes, named as published (nothing here measures them); it has no training log here.
"""

from __future__ import annotations

import functools
from pathlib import Path

import gradio as gr
from gradio.components.plot import PlotData

import visualizer
from model import Checkpoint
from model.checkpoints.catalogue import OPUS_MT_REPOS, OWN, model_info
from model.checkpoints.files import LOG_FILE, METRICS_FILE
from model.checkpoints.reading import read_json_object, read_optional_file

from .common import Page, TabView, plot
from .text import ABOUT_MODEL, ABOUT_PUBLISHED_MODEL, public_path

TAB_ID = "model"


@functools.lru_cache(maxsize=4)
def load_training_log(directory: str) -> tuple[dict | None, str]:
    """(training_log.json beside the checkpoint, "") ; (None, "") when there is none; (None, the line saying what is
    wrong with it) when it is broken (model/checkpoints/reading.py)."""
    return read_optional_file(Path(directory) / LOG_FILE, read_json_object)


def differing_rows(checkpoint: Checkpoint) -> list[tuple[str, str, str, str]]:
    """(name, paper symbol, this model, the paper) for each choice where the config departs from the paper's
    defaults (model/core/config.py): none for the own model."""
    config = checkpoint.config
    token = checkpoint.tokenizer.id_to_token
    rows = []
    if config.ffn_activation != "relu":
        rows.append(("feed-forward activation", "", f"{config.ffn_activation}: x · σ(x)", "ReLU: max(0, x) (3.3)"))
    if config.positional_layout != "interleaved":
        rows.append(("sinusoid layout", "PE", "halves: all sines, then cosines", "interleaved: sin even, cos odd"))
    if config.logits_bias:
        rows.append(("output logits", "", "+ a stored bias per token", "no bias"))
    if config.bos_id == config.pad_id:
        rows.append(("decoder start token", "", f"`{token(config.bos_id)}` (never generated)", "its own start token"))
    if config.force_eos_at_limit:
        rows.append(("at the length limit", "", f"`{token(config.eos_id)}` forced", "decoding stops"))
    return rows


def config_markdown(checkpoint: Checkpoint) -> str:
    """The hyper-parameters beside the paper's base model (Table 3), and the parameter count; for a checkpoint
    trained elsewhere, its name and the rows where it departs from the paper (no server path)."""
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
        *differing_rows(checkpoint),
    ]
    table = "\n".join(
        f"| {name} | {f'`{symbol}`' if symbol else ''} | {value} | {base} |" for name, symbol, value, base in rows
    )
    where = (
        f"checkpoint `{public_path(checkpoint.path)}`"
        if checkpoint.kind == OWN.key
        else f"{model_info(checkpoint.kind).label}, the architecture of each direction's model"
    )
    return (
        f"**This model: {checkpoint.model.num_parameters():,} parameters**, post-LN, {where}"
        "\n\n| | paper | this model | base model (Table 3) |\n| --- | --- | ---: | ---: |\n" + table
    )


def hub_link(checkpoint: Checkpoint, direction: str) -> str:
    """The checkpoint's name, linked to its Hub repository where it is one of the catalogue's."""
    name = checkpoint.metrics.get("name") or direction
    repo = OPUS_MT_REPOS.get(direction, (None,))[0] if checkpoint.kind != OWN.key else None
    return f"[`{name}`](https://huggingface.co/{repo})" if repo else f"`{name}`"


def published_card_markdown(by_direction: dict[str, Checkpoint]) -> str:
    """A checkpoint trained elsewhere: what it is, its data and licence as its card says, and per direction the
    scores its card publishes, named as published and not measured here."""
    first = next(iter(by_direction.values()))
    info = model_info(first.kind)
    facts = first.metrics.get("card") or {}
    data = ", ".join(f"{name} *{facts[name]}*" for name in ("dataset", "model", "pre-processing") if name in facts)
    parts = [
        f"**{info.label}**: {info.summary}.",
        f"Data (its model card): {data or 'not named in this copy of the card'}"
        + (f"; licence *{facts['license']}*." if "license" in facts else "."),
        f"**Published scores**: as published by {info.publisher or 'its publisher'} (the model card), "
        "not measured here.",
    ]
    for direction, checkpoint in by_direction.items():
        parts.append(
            f"{hub_link(checkpoint, direction)}\n\n"
            + visualizer.published_scores_markdown(checkpoint.metrics.get("published_scores"))
        )
    return "\n\n".join(parts)


def metrics_markdown(checkpoint: Checkpoint) -> str:
    """The BLEU and chrF table of metrics.json, or the line saying the file is broken."""
    problem = checkpoint.problems.get(METRICS_FILE)
    table = f"⚠️ {problem}: no scores to show." if problem else visualizer.metrics_table_markdown(checkpoint.metrics)
    return f"**BLEU and chrF ({METRICS_FILE})**\n\n{table}"


def training_view(checkpoint: Checkpoint) -> tuple[PlotData | None, str]:
    """(the training curves, "") or (None, the line saying why there are none)."""
    log, problem = load_training_log(str(checkpoint.path))
    if log is not None:
        return plot(visualizer.training_curves_figure(log), "training-curves"), ""
    if problem:
        return None, f"⚠️ {problem}: no training curves to show."
    return None, f"No `{LOG_FILE}` beside this checkpoint, so there are no training curves to show."


def build_published(page: Page, tab: gr.Tab) -> TabView:
    """The tab of a checkpoint trained elsewhere (call inside its gr.Tab): its card, and one line instead of the
    training curves -> a view with nothing to draw."""
    checkpoint = page.checkpoint
    by_direction = getattr(page.runner, "by_direction", None) or {"": checkpoint}
    gr.Markdown(ABOUT_PUBLISHED_MODEL)
    with gr.Row(equal_height=False):
        gr.Markdown(config_markdown(checkpoint), elem_id="model-config")
        gr.Markdown(published_card_markdown(by_direction), elem_id="metrics")
    gr.Markdown(
        f"{model_info(checkpoint.kind).label} has no training log here, so there are no training curves to show.",
        elem_id="curves-note",
    )
    page.track(tab, TAB_ID)
    return TabView(TAB_ID, [], lambda trace, step, values: {}, follows_step=False, follows_trace=False)


def build(page: Page) -> TabView:
    """The tab -> the view of its curves, drawn when it is first opened (they depend on neither trace nor step)."""
    checkpoint = page.checkpoint
    with gr.Tab("Model", id=TAB_ID, elem_id="model-tab") as tab:
        if checkpoint is not None and checkpoint.kind != OWN.key:
            return build_published(page, tab)
        gr.Markdown(ABOUT_MODEL)
        if checkpoint is None:
            gr.Markdown("No model is loaded, so there is nothing to show here.")
        else:
            with gr.Row(equal_height=False):
                gr.Markdown(config_markdown(checkpoint), elem_id="model-config")
                gr.Markdown(metrics_markdown(checkpoint), elem_id="metrics")
        curves = gr.Plot(elem_id="curves-plot", show_label=False)
        curves_note = gr.Markdown(elem_id="training-log-note")

    def render(trace, step, values) -> dict:
        figure, note = training_view(checkpoint) if checkpoint is not None else (None, "")
        return {curves: figure, curves_note: note}

    page.track(tab, TAB_ID)
    return TabView(TAB_ID, [curves, curves_note], render, follows_step=False, follows_trace=False)
