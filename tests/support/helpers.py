"""Small helpers that several test modules use (fixtures are in conftest.py): a gr.Plot value's figure JSON,
a figure's (possibly typed) array, the equality of two traces, the labels a view's rows and columns must
carry, PyTorch's nn.Transformer holding our weights (the independent implementation of section 3), the
hand-made tokens and arrays the figure tests draw, and what counts as plain words in an Explain panel's opening."""

from __future__ import annotations

import inspect
import asyncio
import contextvars
import base64
import dataclasses
import html
import json
import re

import numpy as np
import plotly.graph_objects as go
import torch
from torch import nn

import provenance_fixtures as ref

from model.core.attention import MultiHeadAttention
from model.core.transformer import Transformer


# technical names a visitor may not know: an Explain panel's lead and the first sentence of its result name none of
# them (they may follow it, as the technical name of what the plain sentence said)
JARGON = (
    "Spearman",
    "ρ",
    "KL",
    "entropy",
    "IG",
    "integrated gradients",
    "Pharaoh",
    "logit",
    "softmax",
    "total variation",
    "BLEU",
    "log P",
    "nats",
    "rollout",
    "QKᵀ",
    "keys and values",
    "beam search",
)


def first_sentence(text: str) -> str:
    """The first sentence of a text as a reader meets it: up to the first full stop, "!" or "?" followed by a space
    or the end (a quoted token's own full stop sits before its closing quote)."""
    match = re.search(r"[.!?](?=\s|$)", text.strip())
    return text.strip()[: match.end()] if match else text.strip()


def plain_words(text: str) -> bool:
    """No name of JARGON in `text` (as a word of its own, in any case: "IG" in "big" is none)."""
    return not any(re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text, re.IGNORECASE) for word in JARGON)


def figure_json(value) -> dict:
    """A gr.Plot value (PlotData) -> its Plotly figure as JSON."""
    assert value.type == "plotly"
    return json.loads(value.plot)


def array(field) -> np.ndarray:
    """A figure JSON array: a plain list, or Plotly's typed array {"dtype", "bdata" (base64), "shape"}."""
    if not isinstance(field, dict):
        return np.asarray(field)
    values = np.frombuffer(base64.b64decode(field["bdata"]), dtype=np.dtype(field["dtype"]))
    shape = field.get("shape")
    return values.reshape([int(n) for n in str(shape).split(",")]) if shape else values


def assert_same_trace(a, b) -> None:
    """Every field of two traces equal: the same arrays (dtype and values), not close ones."""
    for field in dataclasses.fields(a):
        x, y = getattr(a, field.name), getattr(b, field.name)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y), field.name
        else:
            assert x == y, field.name


def assert_close_traces(a, b, fields, atol: float = 1e-5) -> None:
    """The named fields of two traces equal within atol and rtol = atol: the same run on two models whose
    float32 sums may be ordered differently (a head switched off by the runner vs zeroed in a copy)."""
    for field in fields:
        x, y = getattr(a, field), getattr(b, field)
        if isinstance(x, np.ndarray):
            np.testing.assert_allclose(x, y, atol=atol, rtol=atol, err_msg=field)
        else:
            assert x == y, field


# --------------------------------------------------------------------------- view labels: the one place
def decoder_inputs(trace, step: int) -> list[str]:
    """The tokens the decoder has read up to 0-based `step`: [BOS] y1 .. y_step (section 3.1, shifted right)."""
    return ["[BOS]", *trace.output_tokens[:step]]


def expected_query_labels(trace, kind: str, step: int) -> list[str]:
    """The name of each row of a `kind` attention view (and of each alignment target) at 0-based `step`,
    from the trace's plain token lists: the source for the encoder; for the decoder "input → predicted",
    the token read at that position and the token predicted there (row i: y_i → y_{i+1}, y_0 = [BOS])."""
    if kind == "encoder":
        return list(trace.source_tokens)
    return [
        f"{read} → {out}"
        for read, out in zip(decoder_inputs(trace, step), trace.output_tokens[: step + 1], strict=True)
    ]


def expected_key_labels(trace, kind: str, step: int) -> list[str]:
    """The token each column of a `kind` view names at 0-based `step`: the decoder's inputs for masked
    self-attention (keys are tokens read, not predictions), the source otherwise."""
    return decoder_inputs(trace, step) if kind == "decoder_self" else list(trace.source_tokens)


def position(category: str) -> tuple[int, str]:
    """A heatmap category "#i token" -> (i, token): the position the row or column shows."""
    match = re.fullmatch(r"#(\d+) (.*)", str(category), re.S)
    assert match, f"not a position category: {category!r}"
    return int(match.group(1)), html.unescape(match.group(2))  # labels are HTML-escaped for Plotly


# --------------------------------------------------------------------------- reading a view's figure
VIEW_LAYER, VIEW_HEAD = 2, 2  # 1-based, of the copy model's views: the mirror layer is 1 and the mirror head 3
VIEW_ATOL = 2e-5  # float32 model vs float64 reference


def figure_of(value) -> dict:
    """A gr.Plot value -> the figure JSON the browser receives, numpy arrays decoded."""
    assert value.type == "plotly"
    return ref.decode_plotly(json.loads(value.plot))


def axis(figure: dict, ref_name: str) -> dict:
    """The layout axis of a series reference ("x", "y2")."""
    return figure["layout"][f"{ref_name[0]}axis{ref_name[1:]}"]


def cells(
    figure: dict, series: dict, trace, kind: str, step: int, labels: tuple[list[str], list[str]] | None = None
) -> tuple[list[int], list[int]]:
    """(row positions, column positions) a heatmap series shows, checked against its tick labels.
    `labels` = (row labels, column labels) by position; None = those of a `kind` attention view."""
    rows = [position(y) for y in series["y"]]
    cols = [position(x) for x in series["x"]]
    queries, keys = labels or (expected_query_labels(trace, kind, step), expected_key_labels(trace, kind, step))
    assert [token for _, token in rows] == [queries[i] for i, _ in rows]
    assert [token for _, token in cols] == [keys[i] for i, _ in cols]
    for name, items, labels in (("y", rows, queries), ("x", cols, keys)):
        layout_axis = axis(figure, series.get(f"{name}axis", name))
        if layout_axis.get("showticklabels", True) and "ticktext" in layout_axis:
            by_value = dict(zip(np.asarray(layout_axis["tickvals"]).tolist(), layout_axis["ticktext"]))
            for index, (pos, _) in enumerate(items):  # tick i names category i
                if index in by_value:
                    assert html.unescape(by_value[index]) == labels[pos], f"{name} tick {index}"
    return [p for p, _ in rows], [p for p, _ in cols]


def reference_attention(reference: ref.Reference, kind: str) -> np.ndarray:
    """(L, h, Tq, Tk) weights of the independent forward pass, whole sentence."""
    return torch.stack([a.weights for a in getattr(reference, kind)]).numpy()


# --------------------------------------------------------------------------- nn.Transformer with our weights
def copy_attention(ours: MultiHeadAttention, theirs: nn.MultiheadAttention) -> None:
    """torch packs W^Q, W^K, W^V into one in_proj_weight (3 d_model, d_model), in that order."""
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([ours.q_proj.weight, ours.k_proj.weight, ours.v_proj.weight]))
        theirs.in_proj_bias.copy_(torch.cat([ours.q_proj.bias, ours.k_proj.bias, ours.v_proj.bias]))
        theirs.out_proj.weight.copy_(ours.out_proj.weight)
        theirs.out_proj.bias.copy_(ours.out_proj.bias)


def copy_modules(pairs: list[tuple[nn.Module, nn.Module]]) -> None:
    """Copy the parameters of same-shaped modules (Linear, LayerNorm) ours -> theirs."""
    with torch.no_grad():
        for ours, theirs in pairs:
            for (name, source), (other_name, target) in zip(ours.named_parameters(), theirs.named_parameters()):
                assert name == other_name and source.shape == target.shape
                target.copy_(source)


def reference_transformer(model: Transformer) -> nn.Transformer:
    """nn.Transformer holding our weights, in post-LN form as the paper."""
    config = model.config
    reference = nn.Transformer(
        d_model=config.d_model,
        nhead=config.n_heads,
        num_encoder_layers=config.n_encoder_layers,
        num_decoder_layers=config.n_decoder_layers,
        dim_feedforward=config.d_ff,
        dropout=0.0,
        layer_norm_eps=config.layer_norm_eps,
        batch_first=True,
        norm_first=False,
    )
    # nn.Transformer always adds a LayerNorm after each whole stack. The paper (section 3.1) has
    # none: in post-LN every sub-layer already ends in LayerNorm(x + Sublayer(x)), so a stack's
    # output is already normalised. (The final norm belongs to pre-LN models, whose residual stream
    # is never normalised otherwise.) Remove it to compare like with like.
    reference.encoder.norm = nn.Identity()
    reference.decoder.norm = nn.Identity()
    # Its eval-mode fast path packs padded batches into nested tensors and writes zeros at padded
    # positions; the plain path keeps every position, so the comparison sees the ordinary maths.
    reference.encoder.use_nested_tensor = False
    for ours, theirs in zip(model.encoder_layers, reference.encoder.layers):
        copy_attention(ours.self_attention, theirs.self_attn)
        copy_modules(
            [
                (ours.feed_forward.linear1, theirs.linear1),
                (ours.feed_forward.linear2, theirs.linear2),
                (ours.norm1, theirs.norm1),
                (ours.norm2, theirs.norm2),
            ]
        )
    for ours, theirs in zip(model.decoder_layers, reference.decoder.layers):
        copy_attention(ours.self_attention, theirs.self_attn)
        copy_attention(ours.cross_attention, theirs.multihead_attn)
        copy_modules(
            [
                (ours.feed_forward.linear1, theirs.linear1),
                (ours.feed_forward.linear2, theirs.linear2),
                (ours.norm1, theirs.norm1),
                (ours.norm2, theirs.norm2),
                (ours.norm3, theirs.norm3),
            ]
        )
    return reference.double().eval()


# --------------------------------------------------------------------------- hand-made figure inputs
SOURCE = ["<2en>", "▁Ein", "▁Mann", "▁fährt", "▁Fahr", "rad", ".", "[EOS]"]
TARGET = ["[BOS]", "▁A", "▁man", "▁rides", "▁a", "▁bike", "."]
HOSTILE = "<img src=x onerror=alert(1)>"


def softmax_rows(shape: tuple[int, ...], seed: int = 0, mask: np.ndarray | None = None) -> np.ndarray:
    """Random attention weights: every row a distribution (masked keys get 0)."""
    scores = np.random.default_rng(seed).normal(size=shape) * 2
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (weights / weights.sum(axis=-1, keepdims=True)).astype(np.float32)


def heatmaps(fig: go.Figure) -> list[go.Heatmap]:
    return [trace for trace in fig.data if isinstance(trace, go.Heatmap)]


def highlight_shapes(fig: go.Figure) -> list:
    return [shape for shape in fig.layout.shapes if shape.name == "highlight"]


def mask_inputs():
    """(padding, batch tokens, causal, decoder, cross) of a two-sentence batch for masks_figure."""
    longer = ["<2en>", "▁Zwei", "▁Hunde", "▁spielen", "▁im", "▁Schnee", "▁vor", "▁dem", "▁Haus", ".", "[EOS]"]
    batch = [SOURCE + ["[PAD]"] * (len(longer) - len(SOURCE)), longer]
    padding = np.array([[token != "[PAD]" for token in row] for row in batch])
    causal = np.tril(np.ones((len(TARGET), len(TARGET)), dtype=bool))
    cross = np.ones((len(TARGET), len(SOURCE)), dtype=bool)
    return padding, batch, causal, causal.copy(), cross


def sinusoids(positions: int, d_model: int) -> np.ndarray:
    """The table of section 3.5 written out in float64 numpy, cast to float32."""
    angles = np.arange(positions)[:, None] / 10000 ** (np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((positions, d_model), dtype=np.float32)
    pe[:, 0::2], pe[:, 1::2] = np.sin(angles), np.cos(angles)
    return pe


def full_log() -> dict:
    """A training_log.json with every part the training-curves figure draws."""
    steps = list(range(0, 1000, 100))
    return {
        "train": {
            "step": steps,
            "loss": [9 - i * 0.5 for i in range(10)],
            "learning_rate": [1e-4 * i for i in range(10)],
            "tokens_per_second": [1000.0] * 10,
        },
        "validation": {"step": [500, 1000], "loss": [5.0, 4.0], "bleu_de_en": [10.0, 20.0], "bleu_en_de": [8.0, 15.0]},
    }


def api_function(demo, api_name: str):
    """The one endpoint of a built Gradio app named `api_name`."""
    matches = [block_fn for block_fn in demo.fns.values() if block_fn.api_name == api_name]
    assert len(matches) == 1, f"expected one endpoint named {api_name!r}"
    return matches[0]


def run_listener(block_fn, *args, **kwargs):
    """Call a listener's function as Gradio does -> its answer (a model-running one is async: ui/runner.py's
    in_model_slot; it runs in an event loop of its own, in a thread of its own (see in_own_thread) that sees the
    caller's context variables, such as the event Gradio's LocalContext names)."""
    answer = block_fn.fn(*args, **kwargs)
    return in_own_thread(contextvars.copy_context().run, asyncio.run, answer) if inspect.iscoroutine(answer) else answer


# A tiny training run's flags (model.training.train): the model's shape, then how it runs (fp32: the same run on
# every CPU). A continued run (--init-from, --resume) takes the run flags alone: the checkpoint brings its shape.
TINY_MODEL_FLAGS = "--d-model 32 --heads 4 --encoder-layers 1 --decoder-layers 1 --d-ff 64 --vocab-size 400".split()
TINY_RUN_FLAGS = (
    "--max-tokens 400 --warmup 20 --lr-factor 2 --bleu-sentences 4 --log-every 1 --threads 1 --precision fp32".split()
)


def in_own_thread(function, *args, **kwargs):
    """function(*args, **kwargs) run in a new thread, its result or exception handed back: for code that calls
    asyncio.run or starts its own Playwright while the run's Chromium (conftest `browser`) holds the main
    thread's event loop."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(function, *args, **kwargs).result()


# --------------------------------------------------------------------------- the one Translate action
def translator_of(checkpoint, examples=()):
    """The page's Translate action (serving/translation.py) over one checkpoint's runner, in this process."""
    from serving import Runner
    from serving.translation import Translator

    return Translator({checkpoint.kind: Runner(checkpoint)}, checkpoint.kind, examples)


def translated_trace(checkpoint_or_runner, text: str, direction: str = "de-en"):
    """`text` translated through the one Translate action (the page's path); a refused input fails the test."""
    from serving.translation import Translator

    runner = checkpoint_or_runner
    if not hasattr(runner, "checkpoint"):
        return translated_trace(translator_of(runner).runner_of(None), text, direction)
    result = Translator({runner.checkpoint.kind: runner}, runner.checkpoint.kind).translate(text, direction)
    assert not result.refused, result.refused
    return result.trace
