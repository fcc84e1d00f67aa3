"""The Attention tab's lines view (ui/attention.py: `lines_view`, `token_choices`), read from the gr.Plot value the
page receives: one layer's heads at the slider's step, the chosen head alone, a chosen token's lines only."""

from __future__ import annotations

import pytest
from helpers import figure_of
from lines_figure import column, drawn_lines, strongest_per_query

from ui.attention import lines_view, token_choices
from visualizer.lines import LINE_THRESHOLD


@pytest.mark.parametrize("kind", ["encoder", "decoder_self", "cross"])
def test_the_layers_heads_at_the_step_are_the_traces_weights(trace, kind):
    step = trace.num_steps // 2  # 0-based; the slider is 1-based
    figure = figure_of(lines_view(trace, step + 1, kind, 2, "all", show_all=True))
    weights = {
        "encoder": trace.encoder_attention,
        "decoder_self": trace.decoder_self_attention,
        "cross": trace.cross_attention,
    }[kind][1]  # layer 2: (h, T, S)
    rows = len(trace.source_tokens) if kind == "encoder" else step + 1
    cols = step + 1 if kind == "decoder_self" else len(trace.source_tokens)
    lines = drawn_lines(figure)
    assert set(lines) == strongest_per_query(weights, rows, cols)  # every head: its strongest line per query
    assert all(weight == float(weights[key]) for key, weight in lines.items())
    assert len(column(figure, "query")[1]) == rows
    assert figure["layout"]["title"]["text"].endswith("layer 2, every head")


def test_one_head_and_one_token(trace):
    choices = {value: label for label, value in token_choices(trace, "encoder")}
    assert choices["query/2"] == f"query #2 {trace.source_tokens[2]}"
    figure = figure_of(lines_view(trace, 1, "encoder", 1, "3", show_all=True, token="query/2"))
    lines = drawn_lines(figure)
    expected = {
        (2, 2, k) for k in range(len(trace.source_tokens)) if trace.encoder_attention[0, 2, 2, k] >= LINE_THRESHOLD
    }
    assert set(lines) == expected
    # a decoder token that does not exist yet at step 1 selects nothing: every line of the step is drawn
    later = figure_of(lines_view(trace, 1, "cross", 1, "1", show_all=True, token=f"query/{trace.num_steps - 1}"))
    assert set(drawn_lines(later)) == {
        (0, 0, k) for k in range(len(trace.source_tokens)) if trace.cross_attention[0, 0, 0, k] >= LINE_THRESHOLD
    }
