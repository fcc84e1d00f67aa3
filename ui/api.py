"""The public API and MCP tools of the page: plain functions registered with `gr.api`, so every tool an agent lists
returns its result (no gr.State among the outputs, which Gradio's MCP server would drop), and a call does only the
work it asks for.

- `/translate` (text, direction, model) -> the translation: the model once, nothing written to disk;
- `/translation_trace` (text, direction, model) -> the trace as lean JSON text (serving/wire.py; `trace_from_lean`
  rebuilds it): every token, attention weight and next-token candidate, only for a client that wants them;
- `/positional_encoding` () -> the sinusoidal table of section 3.5 as a JSON object.

Each tool returns one value (Gradio's MCP server sends a tool's several outputs as one text when the client asks no
progress). Each function's docstring is its API and MCP description (Gradio reads `Args:`); `direction` is typed as the two
codes, so the schema an agent sees lists exactly the values the description offers (no `from __future__ import
annotations` here: gr.api reads the annotations as they are, and needs types, not strings). Every tool joins the model
runs' queue group (ui/runner.py) except the table, which is computed once.
"""

from typing import Literal

import gradio as gr

from collections.abc import Mapping

from model.checkpoints.catalogue import MODELS
from serving import Runner, lean_trace_json

from .models import not_loaded_message

from .runner import model_event, positional_encoding_object
from .session import translate_trace

Direction = Literal["de-en", "en-de"]
Model = Literal["own", "opus-mt"]  # model/checkpoints/catalogue.py's keys


def add_endpoints(runners: Mapping[str, Runner], default: str, load_error: str = "") -> None:
    """Register the API (inside the page's gr.Blocks) over every loaded model (`runners`, by model; `default`: the
    page's). Without a model the translation tools say why (load_error) and the table is left out."""

    def runner_of(model: str | None) -> Runner | None:
        model = model or default  # a client that sends no model gets the page's
        if model not in MODELS:
            raise gr.Error(f"Unknown model {model!r}: use one of {', '.join(map(repr, MODELS))}.")
        if model not in runners and runners:
            raise gr.Error(f"{MODELS[model].label} is not loaded on this server. {not_loaded_message()}")
        return runners.get(model)

    def translate(text: str, direction: Direction = "de-en", model: Model = default) -> str:
        """Translate German ↔ English with the Transformer of "Attention Is All You Need" (greedy decoding).

        Args:
            text: The sentence to translate, German or English, at most 5,000 characters (cut to 100 subword tokens).
            direction: "de-en" (German to English) or "en-de" (English to German).
            model: "own" (this project's Transformer) or "opus-mt" (Helsinki-NLP's OPUS-MT, where the server has it).
        Returns:
            The translation (greedy decoding; translation_trace gives its tokens and every attention weight).
        """
        return translate_trace(runner_of(model), text, direction, load_error).translation

    def translation_trace(text: str, direction: Direction = "de-en", model: Model = default) -> str:
        """The full trace of one greedy translation as JSON: source and output tokens, every attention weight of
        every layer and head (encoder, decoder self- and cross-attention) and the top next-token candidates at each
        step. Weights are fixed-point integers in units of "float_scale"; the fields listed in "fixed" are so.

        Args:
            text: The sentence to translate, German or English, at most 5,000 characters (cut to 100 subword tokens).
            direction: "de-en" (German to English) or "en-de" (English to German).
            model: "own" (this project's Transformer) or "opus-mt" (Helsinki-NLP's OPUS-MT, where the server has it).
        Returns:
            The trace as JSON text (format "attention-explorer/lean-trace/2"); its "model" names the model.
        """
        return lean_trace_json(translate_trace(runner_of(model), text, direction, load_error))

    gr.api(translate, api_name="translate", **model_event())
    gr.api(translation_trace, api_name="translation_trace", **model_event())
    if default not in runners:
        return
    config = runners[default].checkpoint.config

    def positional_encoding() -> dict:
        """The sinusoidal positional-encoding table (section 3.5) that the model adds to its embeddings, as a
        JSON object: {"rows", "d_model", "table"} (4 decimals)."""
        return positional_encoding_object(config.max_positions, config.d_model, config.positional_layout)

    gr.api(positional_encoding, api_name="positional_encoding", concurrency_limit=None)


TOOLS = ("translate", "translation_trace", "positional_encoding")  # what add_endpoints registers, in order
