"""The lesson's figures: the app's own figure functions (visualizer/) drawn once per sentence, as JSON specs.

Attention (sections 3.2.2, 3.2.3) is drawn once per kind at the whole sentence (every decoder row, the last one
outlined), with each heatmap's z replaced by a reference into the exported arrays, {"ref": field, "index": [...]}
("layer" and "head" in the index stand for the chosen ones): the page's player (lesson/player.js) puts the
trace's rows in, those after the step blank, and outlines the step's row. One head and the mean share one layout
per kind; every head is one figure per layer (its panels' hovers name the layer). Next-token candidates (3.4) and
the masks (3.2.3) are one figure per step, the positional encoding (3.5) one per sentence.

A spec is {"data", "layout"} as the app sends it to Plotly (`Figure.to_json`: numpy arrays packed as base64),
without the layout's template (the lesson holds it once, `TEMPLATE`).
"""

from __future__ import annotations

import json

import numpy as np

import visualizer
from model import TranslationTrace
from model.decoding.trace import ATTENTION_KINDS
from visualizer.head_grid import GRID_COLUMNS, grid_cells
from visualizer.steps import step_candidates, step_masks
from visualizer.theme import TEMPLATE
from visualizer.tokens import decoder_rows

MEAN = ":mean"  # an exported array's name for the mean of a weights field's heads: "cross_attention:mean"


def spec(figure) -> dict:
    """{"data", "layout"} of a figure as the app serializes it, its template left out (one copy per lesson)."""
    data = json.loads(figure.to_json())
    data["layout"].pop("template", None)
    return {"data": data["data"], "layout": data["layout"]}


def query_labels(trace: TranslationTrace, kind: str) -> list[str]:
    """Rows of a kind over the whole sentence, named as the app's Attention tab names them."""
    part = trace.attention(kind)
    return part.queries if kind == "encoder" else decoder_rows(part.queries, trace.output_tokens)


def referenced(figure: dict, refs: list[dict]) -> dict:
    """The figure with each heatmap's z (in order) replaced by its reference."""
    heatmaps = [trace for trace in figure["data"] if trace.get("type") == "heatmap"]
    if len(heatmaps) != len(refs):
        raise ValueError(f"{len(heatmaps)} heatmaps for {len(refs)} references")
    for trace, ref in zip(heatmaps, refs):
        trace["z"] = ref
    return figure


def kind_figures(trace: TranslationTrace, kind: str) -> dict:
    """One kind's figures: "head" and "mean" (their titles with {layer}, {head} to fill), "all" (one per layer),
    "grows" (decoder kinds: rows, and for self-attention keys too, appear step by step)."""
    spec_kind = ATTENTION_KINDS[kind]
    weights = getattr(trace, spec_kind.weights_field)  # (L, h, Tq, Tk)
    n_layers, n_heads = weights.shape[:2]
    queries, keys = query_labels(trace, kind), trace.attention(kind).keys
    shown = dict(highlight_query=None if kind == "encoder" else len(queries) - 1)
    name, field = spec_kind.label, spec_kind.weights_field
    titles = {
        "head": f"{name}, layer {{layer}}, head {{head}}",
        "mean": f"{name}, layer {{layer}}, mean of {n_heads} heads",
    }
    head = spec(visualizer.attention_heatmap(weights[0, 0], queries, keys, **shown, title=titles["head"]))
    mean = spec(visualizer.attention_heatmap(weights[0].mean(axis=0), queries, keys, **shown, title=titles["mean"]))
    every = []
    for l in range(n_layers):
        grid = visualizer.attention_grid(
            weights, queries, keys, **shown, layer=l, columns=GRID_COLUMNS, title=f"{name}, layer {l + 1}: every head"
        )
        cells = sorted(grid_cells(n_layers, n_heads, l, GRID_COLUMNS)[2].items())  # the grid's panels, in its order
        every.append(referenced(spec(grid), [{"ref": field, "index": [cl, ch]} for _, (cl, ch) in cells]))
    return {
        "head": referenced(head, [{"ref": field, "index": ["layer", "head"]}]),
        "mean": referenced(mean, [{"ref": field + MEAN, "index": ["layer"]}]),
        "all": every,
        "titles": titles,
        "grows": None if not spec_kind.grows_with_step else "rows+keys" if kind == "decoder_self" else "rows",
    }


def attention_arrays(trace: TranslationTrace) -> dict[str, np.ndarray]:
    """The arrays the attention figures reference: each kind's weights (L, h, Tq, Tk) as the trace holds them, and
    the mean of their heads (L, Tq, Tk), as the app's mean view computes it (float32)."""
    arrays = {}
    for kind in ATTENTION_KINDS.values():
        weights = getattr(trace, kind.weights_field)
        arrays[kind.weights_field] = weights
        arrays[kind.weights_field + MEAN] = weights.mean(axis=1)
    return arrays


def candidates_figures(trace: TranslationTrace) -> list[dict]:
    """The Next token view at every step (section 3.4), as the app's candidates view draws it."""
    return [spec(step_candidates(trace, t)) for t in range(trace.num_steps)]


def masks_figures(trace: TranslationTrace, batch) -> list[dict]:
    """The Masks view at every step (section 3.2.3); ``batch`` the padded batch the app shows (PaddedBatch)."""
    return [spec(step_masks(trace, batch, t)) for t in range(trace.num_steps)]


def positions_figure(trace: TranslationTrace, table: np.ndarray, layout: str) -> dict:
    """The positional-encoding view (section 3.5) of the table's rows ``table`` (P, d_model)."""
    return spec(visualizer.positional_encoding_figure(table, tokens=trace.source_tokens, layout=layout))


def template() -> dict:
    """The light template every spec leaves out (the page puts it back; a dark page swaps in the dark one)."""
    return json.loads(json.dumps(TEMPLATE))
