"""The public API and MCP tools of the page: plain functions registered with `gr.api`, so every tool an agent lists
returns its result (no gr.State among the outputs, which Gradio's MCP server would drop), and a call does only the
work it asks for.

- `/translate` (text, direction, model) -> {"translation", "notices"}: the model once, nothing written to disk, with
  the notices the page shows (so an agent can tell a good translation from a cut or wrong-language one);
- `/translation_trace` (text, direction, model) -> the trace as lean JSON text (serving/wire.py; `trace_from_lean`
  rebuilds it): every token, attention weight and next-token candidate, only for a client that wants them;
- `/positional_encoding` () -> the sinusoidal table of section 3.5 as a JSON object.

Every parameter takes any JSON value and every parameter has a default in the signature, so every way of calling
answers in words: a wrong type, a huge or unknown value gets the Translate action's one message (gr.Error titled
"Input not accepted", or "No model loaded"), never a traceback; a parameter left out takes its default, which
gradio_client, `/gradio_api/call/v2/` and the MCP server fill in from the API's description, and `with_defaults`
for a positional call (`/gradio_api/call/`, the queue) that sends fewer values (Gradio itself would refuse it
with an error that says nothing, {"error": null}). An empty text is refused in the API's own words, naming the
`text` parameter (serving/translation.py `API_WORDS`), not the page's text box.

Each tool returns one value (Gradio's MCP server sends a tool's several outputs as one text when the client asks no
progress). Each function's docstring is its API and MCP description (Gradio reads `Args:`); `direction` is typed as the two
codes, so the schema an agent sees lists exactly the values the description offers (no `from __future__ import
annotations` here: gr.api reads the annotations as they are, and needs types, not strings). Every tool joins the model
runs' queue group (ui/runner.py) except the table, which is computed once.
"""

from typing import Literal

import gradio as gr
from gradio.components.api_component import Api  # the component gr.api makes for each parameter

from model.checkpoints.catalogue import MODELS
from serving import LEAN_FORMAT, lean_trace_json
from serving.translation import DIRECTIONS, Translator, input_limits

from .runner import in_model_slot, model_event, positional_encoding_object

Direction = Literal[tuple(DIRECTIONS)]  # serving/translation.py's codes
Model = Literal[tuple(MODELS)]  # model/checkpoints/catalogue.py's keys
TEXT_ARG = f"The sentence to translate, German or English ({input_limits()})."
DIRECTION_ARG = '"de-en" (German to English) or "en-de" (English to German).'
MODEL_ARG = " or ".join(f'"{key}" ({info.label}: {info.summary})' for key, info in MODELS.items()) + "."


def described(function, returns: str):
    """`function` with its API and MCP description: its docstring's first paragraph, then the arguments (Gradio
    reads `Args:`) in the words and limits said once above."""
    function.__doc__ = (
        f"{function.__doc__.strip()}\n\nArgs:\n    text: {TEXT_ARG}\n    direction: {DIRECTION_ARG}\n"
        f"    model: {MODEL_ARG}\nReturns:\n    {returns}\n"
    )
    return function


def add_endpoints(translator: Translator) -> None:
    """Register the API (inside the page's gr.Blocks) over every model the translator has; each answer is the one
    Translate action's (serving/translation.py): the same check, the same notices as the page. Without a model the
    translation tools say why and the table is left out."""
    default = translator.default

    def translated(text, direction, model):
        return translator.translate(text, direction, model).checked()  # a refused input: its one message

    def translate(text: str = "", direction: Direction = "de-en", model: Model = default) -> dict:
        """Translate German ↔ English with the Transformer of "Attention Is All You Need" (greedy decoding), with
        the notices the page shows beside it: the input looks like the other language, it was cut to its first
        subword tokens, decoding reached its length budget, bytes or markup the model was not trained on."""
        return translator.translate(text, direction, model).answer()

    def translation_trace(text: str = "", direction: Direction = "de-en", model: Model = default) -> str:
        """The full trace of one greedy translation as JSON: source and output tokens, every attention weight of
        every layer and head (encoder, decoder self- and cross-attention) and the top next-token candidates at each
        step. Weights are fixed-point integers in units of "float_scale"; the fields listed in "fixed" are so."""
        return lean_trace_json(translated(text, direction, model).trace)

    returns = 'An object {"translation": the greedy translation, "notices": a list of plain sentences, [] if none}.'
    gr.api(in_model_slot(described(translate, returns)), api_name="translate", **model_event())
    trace_returns = f'The trace as JSON text (format "{LEAN_FORMAT}"); its "model" names the model.'
    gr.api(in_model_slot(described(translation_trace, trace_returns)), api_name="translation_trace", **model_event())
    if default not in translator.runners:
        return
    config = translator.runners[default].checkpoint.config

    def positional_encoding() -> dict:
        """The sinusoidal positional-encoding table (section 3.5) that the model adds to its embeddings, as a
        JSON object: {"rows", "d_model", "table"} (4 decimals)."""
        return positional_encoding_object(config.max_positions, config.d_model, config.positional_layout)

    gr.api(positional_encoding, api_name="positional_encoding", concurrency_limit=None)


TOOLS = ("translate", "translation_trace", "positional_encoding")  # what add_endpoints registers, in order


def with_defaults(block_fn, inputs: list) -> list:
    """The values of a call to one of the API's functions (a `gr.api` endpoint: every input a gr.Api holding its
    parameter's default), the parameters it left out filled with their defaults, as gradio_client fills them;
    any other listener's `inputs` as they came."""
    expected = block_fn.inputs
    if not isinstance(inputs, list) or len(inputs) >= len(expected):
        return inputs
    if block_fn.api_name not in TOOLS or not all(isinstance(block, Api) for block in expected):
        return inputs
    return [*inputs, *(block.value for block in expected[len(inputs) :])]
