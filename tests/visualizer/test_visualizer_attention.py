"""Attention figures (section 3.2): tokens, the heatmap of one head, the grid of layers x heads, inside one
head (3.2.1) and the next-token candidates (3.4). Hand-made numpy data, no model: each figure shows exactly
the numbers and tokens it is given, escaped, and refuses inputs that do not fit.
"""

from __future__ import annotations

import html
import time

import numpy as np
import plotly.graph_objects as go
import pytest
from helpers import HOSTILE, SOURCE, TARGET, heatmaps, highlight_shapes, softmax_rows

import visualizer
from visualizer import alignment
from visualizer.attention import ROW_HIGH_PX
from visualizer.head_grid import GRID_COLUMNS, GRID_WIDTH_PX, HEAD_GAP_PX, LABEL_PX, fitted_columns
from visualizer.heatmap import LABEL_LINE_EM, MIN_FONT, Window
from visualizer.pipeline import LABEL_PX as PIPELINE_LABEL_PX, side_cell
from visualizer.theme import ACCENT_COLOR, GRID_COLOR, MUTED_COLOR, PRIMARY_COLOR
from visualizer.tokens import token_chips


# ---- tokens ---------------------------------------------------------------------------------


def test_display_tokens_escape_markup_keep_word_marker_and_duplicates():
    tokens = ["▁a", "<script>alert(1)</script>", "▁a", "&amp;", HOSTILE, "[EOS]"]
    labels = visualizer.display_tokens(tokens)
    assert labels == [html.escape(token, quote=False) for token in tokens]
    assert labels[1] == "&lt;script&gt;alert(1)&lt;/script&gt;"
    assert labels[3] == "&amp;amp;"  # shown as the four characters "&amp;", not as "&"
    assert labels[0] == labels[2] == "▁a"


def test_display_tokens_cut_before_escaping_and_reject_non_lists():
    assert visualizer.display_tokens(["<abcdefgh>"], max_chars=4) == ["&lt;ab…"]
    assert visualizer.display_tokens([""]) == ["∅"]
    with pytest.raises(ValueError, match="list of strings"):
        visualizer.display_tokens("▁Mann")
    with pytest.raises(ValueError, match="token 1"):
        visualizer.display_tokens(["▁a", 3])


SPECIAL = {"[PAD]", "[BOS]", "[EOS]", "[UNK]", "<2de>", "<2en>"}  # as the caller (the tokenizer) names them


def test_token_chips_mark_the_special_tokens_the_caller_names():
    chips = token_chips(["<2en>", "▁A", "[EOS]"], {1: "chosen"}, special_tokens=SPECIAL)
    assert chips == (
        '<span class="tok special">&lt;2en&gt;</span><span class="tok chosen">▁A</span>'
        '<span class="tok special">[EOS]</span>'
    )
    assert "special" not in token_chips(["[EOS]", "<2en>"])  # the visualizer has no list of its own


def test_alignment_figure_mutes_the_special_tokens_the_caller_names():
    fig = alignment.alignment_figure(SOURCE, TARGET, [(2, 2)], special_tokens=SPECIAL)
    for row, tokens in zip(fig.data, (SOURCE, TARGET)):
        expected = [GRID_COLOR if token in SPECIAL else PRIMARY_COLOR for token in tokens]
        assert list(row.marker.color) == expected, row.name
    muted = {a.text for a in fig.layout.annotations if a.font.color == MUTED_COLOR and a.xref != "paper"}
    assert muted == {"&lt;2en&gt;", "[EOS]", "[BOS]"}
    plain = alignment.alignment_figure(SOURCE, TARGET, [(2, 2)])
    assert GRID_COLOR not in list(plain.data[0].marker.color) + list(plain.data[1].marker.color)


# ---- attention heatmap (3.2) ----------------------------------------------------------------


def test_attention_heatmap_draws_weights_on_token_axes():
    weights = softmax_rows((len(TARGET), len(SOURCE)))
    fig = visualizer.attention_heatmap(weights, TARGET, SOURCE, title="cross <b>attention</b>")
    assert isinstance(fig, go.Figure)
    (trace,) = fig.data
    assert isinstance(trace, go.Heatmap)
    np.testing.assert_allclose(trace.z, weights)
    assert (trace.zmin, trace.zmax) == (0, 1)
    assert list(fig.layout.xaxis.ticktext) == visualizer.display_tokens(SOURCE)
    assert list(fig.layout.yaxis.ticktext) == visualizer.display_tokens(TARGET)
    assert list(fig.layout.xaxis.tickvals) == list(range(len(SOURCE)))
    assert fig.layout.yaxis.autorange == "reversed"  # first query at the top
    assert fig.layout.title.text == "cross &lt;b&gt;attention&lt;/b&gt;"  # titles are plain text
    assert not highlight_shapes(fig)


def test_attention_heatmap_hover_names_query_key_and_exact_weight():
    weights = softmax_rows((len(TARGET), len(SOURCE)))
    trace = visualizer.attention_heatmap(weights, TARGET, SOURCE).data[0]
    assert (trace.y[3], trace.x[2]) == ("#3 ▁rides", "#2 ▁Mann")  # the hover of cell (3, 2)
    assert "query <b>%{y}</b>" in trace.hovertemplate and "key <b>%{x}</b>" in trace.hovertemplate
    assert "%{z:.4f}" in trace.hovertemplate


def test_attention_heatmap_highlights_the_query_row():
    weights = softmax_rows((len(TARGET), len(SOURCE)))
    fig = visualizer.attention_heatmap(weights, TARGET, SOURCE, highlight_query=4)
    (shape,) = highlight_shapes(fig)
    assert (shape.y0, shape.y1) == (3.5, 4.5)
    assert (shape.x0, shape.x1) == (-0.5, len(SOURCE) - 0.5)


def test_attention_heatmap_keeps_duplicate_tokens_apart_and_escapes_them():
    tokens = ["▁a", "<script>", "▁a", "▁a"]
    weights = softmax_rows((4, 4))
    fig = visualizer.attention_heatmap(weights, tokens, tokens)
    assert list(fig.layout.yaxis.ticktext) == ["▁a", "&lt;script&gt;", "▁a", "▁a"]
    # unique category per position: Plotly cannot merge the repeated rows
    assert list(fig.data[0].y) == ["#0 ▁a", "#1 &lt;script&gt;", "#2 ▁a", "#3 ▁a"]
    assert fig.data[0].z.shape == (4, 4)


def test_attention_heatmap_fills_its_container_until_its_columns_need_more_than_a_phone():
    small = visualizer.attention_heatmap(softmax_rows((5, 5)), ["▁x"] * 5, ["▁x"] * 5)
    big = visualizer.attention_heatmap(softmax_rows((80, 80)), ["▁x"] * 80, ["▁x"] * 80)
    assert small.layout.width is None  # Plotly sizes it to the page's column
    margin = big.layout.margin
    assert big.layout.width - margin.l - margin.r >= 80 * 14  # 14 px a column: rotated 10 px labels apart
    assert small.layout.height < big.layout.height <= 80 * 34 + margin.t + margin.b


def test_attention_heatmap_on_a_phone_lays_its_colour_bar_under_the_keys():
    """meta.narrow (ui/js/figures.js applies it in a box under 640 px): the colour bar across, below the key
    labels, in added height that keeps the plot's own height; the right margin the bar held goes to the cells."""
    fig = visualizer.attention_heatmap(softmax_rows((6, 9)), ["▁x"] * 6, ["▁y"] * 9, title="t")
    narrow = fig.layout.meta["narrow"]
    bar = narrow["traces"][0]["colorbar"]
    assert bar["orientation"] == "h" and bar["lenmode"] == "fraction" and 0 < bar["len"] <= 1
    assert narrow["margin"]["r"] < fig.layout.margin.r and narrow["margin"]["l"] <= fig.layout.margin.l
    added = narrow["height"] - fig.layout.height
    assert narrow["margin"]["b"] - fig.layout.margin.b == added > 0  # the plot keeps its height
    # the bar's top NARROW_BAR_PX over the figure's foot (container coordinates), under the keys' margin
    assert bar["yref"] == "container" and bar["yanchor"] == "top"
    assert bar["y"] * narrow["height"] == pytest.approx(added)


@pytest.mark.parametrize("rows", [1, 2, 6])
def test_attention_heatmap_on_a_phone_keeps_a_short_plots_colour_bar_under_its_keys(rows):
    """A one-row heatmap's plot is shorter than its key labels: the bar is still placed under them (a position
    in the plot's own coordinates would lie beyond Plotly's range, -2, and fall back onto the cells)."""
    fig = visualizer.attention_heatmap(softmax_rows((rows, 22)), ["▁x"] * rows, ["▁key"] * 22, title="a title")
    narrow = fig.layout.meta["narrow"]
    bar = narrow["traces"][0]["colorbar"]
    foot_px = bar["y"] * narrow["height"]  # the bar's top above the figure's foot
    assert 0 < bar["y"] < 1 and foot_px <= narrow["margin"]["b"] - fig.layout.margin.b


def plot_height(figure) -> float:
    return figure.layout.height - figure.layout.margin.t - figure.layout.margin.b


@pytest.mark.parametrize("rows", [9, 10, 14, 16])
def test_attention_heatmap_rows_share_a_projector_budget_and_stay_label_high(rows):
    """Up to 16 rows take no more height than 9 rows of ROW_HIGH_PX (8 of them under the keys at 1280x720);
    a row never gets shorter than a label (14 px)."""
    nine = visualizer.attention_heatmap(softmax_rows((9, 11)), ["▁x"] * 9, ["▁y"] * 11, title="t")
    many = visualizer.attention_heatmap(softmax_rows((rows, 11)), ["▁x"] * rows, ["▁y"] * 11, title="t")
    assert plot_height(nine) == pytest.approx(9 * ROW_HIGH_PX, abs=1)
    assert plot_height(many) <= plot_height(nine) + 0.5
    assert plot_height(many) / rows >= 14
    longer = visualizer.attention_heatmap(softmax_rows((40, 11)), ["▁x"] * 40, ["▁y"] * 11, title="t")
    assert plot_height(longer) >= 40 * 14  # past the budget rows keep a label's height: the figure grows


def test_a_one_row_heatmap_hangs_a_colour_bar_long_enough_for_its_labels():
    one = visualizer.attention_heatmap(softmax_rows((1, 7)), ["▁x"], ["▁y"] * 7)
    bar = one.data[0].colorbar
    assert bar.lenmode == "pixels" and bar.len >= 100 and bar.y == 1 and bar.yanchor == "top"
    assert bar.len > 0.8 * plot_height(one)  # longer than the default share of the short plot would be
    assert one.layout.margin.t + bar.len <= one.layout.height  # ... and ends inside the figure
    tall = visualizer.attention_heatmap(softmax_rows((9, 7)), ["▁x"] * 9, ["▁y"] * 7)
    assert tall.data[0].colorbar.lenmode in (None, "fraction")  # a share of a tall plot


@pytest.mark.parametrize(
    "weights, queries, keys, kwargs, message",
    [
        (np.zeros((3, 4, 1)), 3, 4, {}, "2 dimensions"),
        (np.zeros((3, 4)), 2, 4, {}, "query_tokens has 2 tokens"),
        (np.zeros((3, 4)), 3, 5, {}, "key_tokens has 5 tokens"),
        (np.zeros((3, 4)), 3, 4, {"highlight_query": 3}, "out of range"),
        (np.zeros((3, 4)), 3, 4, {"highlight_query": 1.0}, "integer"),
        (np.zeros((0, 4)), 0, 4, {}, "empty"),
    ],
)
def test_attention_heatmap_rejects_mismatched_inputs(weights, queries, keys, kwargs, message):
    with pytest.raises(ValueError, match=message):
        visualizer.attention_heatmap(weights, ["▁q"] * queries, ["▁k"] * keys, **kwargs)


# ---- grid of layers x heads (3.2.2) ----------------------------------------------------------


def test_attention_grid_has_one_cell_per_layer_and_head():
    layers, heads = 2, 3
    weights = softmax_rows((layers, heads, len(TARGET), len(SOURCE)))
    fig = visualizer.attention_grid(weights, TARGET, SOURCE, title="model view", highlight_query=2)
    cells = heatmaps(fig)
    assert len(cells) == layers * heads
    titles = [annotation.text for annotation in fig.layout.annotations]
    assert titles == ["head 1", "head 2", "head 3"]  # column titles on the top edge
    # layer names on the rows' left edge, token ticks only on the outer edge (first column, bottom row)
    assert [fig.layout[f"yaxis{'' if i == 1 else i}"].title.text for i in (1, 4)] == ["layer 1", "layer 2"]
    shown_y = [fig.layout[f"yaxis{'' if i == 1 else i}"].showticklabels for i in range(1, 7)]
    shown_x = [fig.layout[f"xaxis{'' if i == 1 else i}"].showticklabels for i in range(1, 7)]
    assert shown_y == [True, False, False, True, False, False]
    assert shown_x == [False, False, False, True, True, True]
    assert list(fig.layout.xaxis4.ticktext) == [
        f"{i} {token}" for i, token in enumerate(visualizer.display_tokens(SOURCE))
    ]
    np.testing.assert_allclose(cells[4].z, weights[1, 1])  # row-major: layer 2, head 2
    assert {cell.coloraxis for cell in cells} == {"coloraxis"}
    assert (fig.layout.coloraxis.cmin, fig.layout.coloraxis.cmax) == (0, 1)
    assert len(highlight_shapes(fig)) == layers * heads
    assert {shape.xref for shape in highlight_shapes(fig)} == {"x", *(f"x{i}" for i in range(2, 7))}


def test_attention_grid_hover_names_tokens_layer_head_and_weight():
    tokens = ["▁a", "<b>", "▁a"]
    fig = visualizer.attention_grid(softmax_rows((1, 2, 3, 3)), tokens, tokens)
    cell = heatmaps(fig)[1]
    assert list(cell.x) == ["#0 ▁a", "#1 &lt;b&gt;", "#2 ▁a"]  # unique per position, escaped
    assert list(cell.y) == list(cell.x)
    assert "layer 1 · head 2" in cell.hovertemplate and "%{z:.4f}" in cell.hovertemplate
    assert fig.layout.yaxis.autorange == "reversed"


def test_attention_grid_rejects_a_single_head():
    with pytest.raises(ValueError, match="4 dimensions"):
        visualizer.attention_grid(softmax_rows((3, 3)), ["▁a"] * 3, ["▁a"] * 3)
    with pytest.raises(ValueError, match="key_tokens"):
        visualizer.attention_grid(softmax_rows((1, 1, 3, 3)), ["▁a"] * 3, ["▁a"] * 2)


def test_large_figures_build_quickly():
    """Not a timing assertion (shared CPUs): the numbers are printed for the record (-s)."""
    tokens80, tokens40 = [f"▁w{i}" for i in range(80)], [f"▁w{i}" for i in range(40)]
    start = time.perf_counter()
    heatmap = visualizer.attention_heatmap(softmax_rows((80, 80)), tokens80, tokens80, highlight_query=5)
    heatmap_json = heatmap.to_json()
    middle = time.perf_counter()
    grid = visualizer.attention_grid(softmax_rows((6, 8, 40, 40)), tokens40, tokens40, highlight_query=5)
    grid_json = grid.to_json()
    end = time.perf_counter()
    print(
        f"\n80x80 heatmap: {middle - start:.2f} s, {len(heatmap_json) / 1e6:.2f} MB JSON; "
        f"6x8 grid of 40x40: {end - middle:.2f} s, {len(grid_json) / 1e6:.2f} MB JSON"
    )
    assert len(heatmaps(grid)) == 48


# ---- inside one head: scores, mask, softmax (3.2.1) ------------------------------------------


def test_attention_pipeline_shows_scores_masked_scores_and_softmax():
    n = len(TARGET)
    mask = np.tril(np.ones((n, n), dtype=bool))
    scores = np.random.default_rng(1).normal(size=(n, n)).astype(np.float32) * 3
    weights = softmax_rows((n, n), mask=mask)
    fig = visualizer.attention_pipeline(scores, mask, weights, TARGET, TARGET, title="head 1")
    raw, masked, overlay, soft = heatmaps(fig)
    assert [a.text for a in fig.layout.annotations] == ["QKᵀ/√d_k", "+ mask", "softmax"]
    np.testing.assert_allclose(raw.z, scores)
    assert np.isnan(masked.z[~mask]).all()  # −∞ is not a colour: the cell is left to the overlay
    np.testing.assert_allclose(masked.z[mask], scores[mask])
    assert np.isnan(overlay.z[mask]).all() and not np.isnan(overlay.z[~mask]).any()
    assert "score <b>−∞ (masked)</b>" in overlay.hovertemplate
    assert masked.hoverongaps is False and overlay.hoverongaps is False
    np.testing.assert_allclose(soft.z, weights)
    # scores diverge around 0 on a shared axis; the softmax has its own fixed 0-1 axis
    assert raw.coloraxis == masked.coloraxis == "coloraxis" and soft.coloraxis == "coloraxis2"
    assert fig.layout.coloraxis.cmin == -fig.layout.coloraxis.cmax == -np.abs(scores).max()
    assert (fig.layout.coloraxis2.cmin, fig.layout.coloraxis2.cmax) == (0, 1)
    assert all("query <b>%{y}</b>" in trace.hovertemplate for trace in fig.data)


def pipeline_rows(layout: dict) -> list[tuple[float, float, float]]:
    """(top, bottom, one row's height in px) of each panel's rows in a layout dict (the figure's or meta.narrow)."""
    plot = layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]
    spans = [layout[f"yaxis{s}"]["domain"] for s in ("", "2", "3")]
    return [(top, bottom, (top - bottom) * plot / len(TARGET)) for bottom, top in spans]


@pytest.mark.parametrize("n_keys", [8, 12, 40])
def test_inside_one_head_keeps_rows_as_tall_as_their_labels_side_by_side_only_where_a_projector_holds_them(n_keys):
    """Side by side where each key's column in a projector's box holds a label in projector type, else one above the
    other; rows at least a label's line tall (LABEL_PX), the columns filling the width (no square cells that a narrow
    box would shrink). A phone (meta.narrow): one above the other, every panel naming its rows and keys in the type
    its rows hold."""
    keys = [f"▁w{i}" for i in range(n_keys)]
    w = softmax_rows((len(TARGET), n_keys))
    fig = visualizer.attention_pipeline(np.log(w), np.ones_like(w, bool), w, TARGET, keys, title="t")
    layout = fig.to_plotly_json()["layout"]
    side = side_cell(n_keys, layout["margin"]["l"]) >= PIPELINE_LABEL_PX
    assert side == (n_keys <= 12)  # 8 and 12 keys fit a projector side by side; 40 do not
    rows = pipeline_rows(layout)
    assert len({top for top, _, _ in rows}) == (1 if side else 3)
    assert all(row >= PIPELINE_LABEL_PX - 0.1 or not side for _, _, row in rows)
    assert not any("scaleanchor" in layout[f"xaxis{s}"] for s in ("", "2", "3"))
    narrow = layout["meta"]["narrow"]
    narrow_rows = pipeline_rows(dict(narrow, height=narrow["height"]))
    assert (
        len({top for top, _, _ in narrow_rows}) == 3
        and len({tuple(narrow[f"xaxis{s}"]["domain"]) for s in ("", "2", "3")}) == 1
    )
    for s, (_, _, row) in zip(("", "2", "3"), narrow_rows):
        font = narrow[f"yaxis{s}"]["tickfont"]["size"]
        assert narrow[f"yaxis{s}"]["showticklabels"] and narrow[f"xaxis{s}"]["showticklabels"]
        assert narrow[f"yaxis{s}"]["matches"] is None and row >= LABEL_LINE_EM * font - 0.1 and font >= MIN_FONT
    assert narrow["coloraxis"]["colorbar"]["orientation"] == narrow["coloraxis2"]["colorbar"]["orientation"] == "h"


def test_attention_pipeline_rejects_a_mask_of_another_shape():
    n = len(TARGET)
    with pytest.raises(ValueError, match="mask has shape"):
        visualizer.attention_pipeline(np.zeros((n, n)), np.ones((n, n - 1), bool), softmax_rows((n, n)), TARGET, TARGET)


# ---- next-token candidates (3.4) --------------------------------------------------------------


def test_candidates_chart_ranks_bars_and_highlights_the_chosen_one():
    tokens = ["▁man", "▁woman", "<b>x", "▁person"]
    probs = np.array([0.05, 0.71, 0.0004, 0.2])
    fig = visualizer.candidates_chart(tokens, probs, 1, entropy_bits=1.234, title="step 3")
    (bar,) = fig.data
    assert bar.orientation == "h"
    np.testing.assert_allclose(bar.x, [0.71, 0.2, 0.05, 0.0004])  # most probable first = on top
    assert fig.layout.yaxis.autorange == "reversed"
    assert list(fig.layout.yaxis.ticktext) == ["<b>▁woman</b>", "▁person", "▁man", "&lt;b&gt;x"]
    assert list(bar.marker.color) == [ACCENT_COLOR, PRIMARY_COLOR, PRIMARY_COLOR, PRIMARY_COLOR]
    assert list(bar.text) == ["71.0%", "20.0%", "5.0%", "&lt;0.1%"]
    assert tuple(fig.layout.xaxis.range) == (0, 1)
    assert any("1.23 bits" in annotation.text for annotation in fig.layout.annotations)


def test_candidates_chart_without_a_chosen_token():
    fig = visualizer.candidates_chart(["▁a", "▁b"], np.array([0.5, 0.5]), None)
    assert list(fig.data[0].marker.color) == [PRIMARY_COLOR, PRIMARY_COLOR]


@pytest.mark.parametrize(
    "tokens, probs, chosen, message",
    [
        (["▁a", "▁b"], [0.5, 0.3, 0.2], 0, "tokens has 2 tokens"),
        (["▁a", "▁b"], [0.5, 0.5], 2, "out of range"),
        (["▁a", "▁b"], [1.5, -0.5], 0, "probabilities"),
        (["▁a", "▁b"], [[0.5, 0.5]], 0, "1 dimensions"),
    ],
)
def test_candidates_chart_rejects_bad_inputs(tokens, probs, chosen, message):
    with pytest.raises(ValueError, match=message):
        visualizer.candidates_chart(tokens, np.array(probs), chosen)


@pytest.mark.parametrize("rows", range(1, 9))
@pytest.mark.parametrize("cols", range(1, 13))
def test_subplot_domains_stay_inside_the_unit_interval(rows, cols):
    """Rounding in the cumulative sums must never push a domain past 1 (Plotly rejects 1.0000000000000002)."""
    from visualizer.grid import subplot_grid

    layout, _ = subplot_grid(rows, cols, horizontal_spacing=0.07 / cols, vertical_spacing=0.09 / rows)
    for name, axis in layout.items():
        if name.startswith(("xaxis", "yaxis")):
            assert 0.0 <= axis["domain"][0] <= axis["domain"][1] <= 1.0, (name, axis["domain"])


def test_pipeline_builds_for_every_size():
    """The three-panel figure builds (and validates) for any number of queries and keys."""
    rng = np.random.default_rng(0)
    for queries, keys in [(t, s) for t in range(1, 41, 3) for s in range(1, 41, 7)]:
        scores = rng.normal(size=(queries, keys)).astype(np.float32)
        weights = np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)
        figure = visualizer.attention_pipeline(
            scores,
            np.ones((queries, keys), bool),
            weights,
            [f"q{i}" for i in range(queries)],
            [f"k{j}" for j in range(keys)],
        )
        go.Figure(figure.to_dict())  # full validation, as a client loading the JSON would need


def grid_query_labels(fig) -> list[str]:
    """The query labels of an all-heads grid: the first column's y-axis tick texts."""
    layout = fig.to_plotly_json()["layout"]
    texts = [list(axis["ticktext"]) for name, axis in layout.items() if name.startswith("yaxis") and "ticktext" in axis]
    assert texts and all(labels == texts[0] for labels in texts)  # each row of panels, the same labels
    return texts[0]


def test_the_grid_names_every_query_of_a_sentence_whose_rows_fit_a_label():
    words = [f"w{i}" for i in range(15)]  # the blog sentence's length: every row holds a 14 px label
    fig = visualizer.attention_grid(softmax_rows((1, 8, 15, 15)), words, words, layer=0, columns=4)
    assert grid_query_labels(fig) == [f"{i} w{i}" for i in range(15)]
    layout = fig.layout
    panel = np.diff(layout.yaxis.domain)[0] * (layout.height - layout.margin.t - layout.margin.b)
    assert panel / 15 >= LABEL_PX - 0.1  # each row a label's height apart from the next (the page names them all)


def test_a_long_sentences_grid_carries_every_label_and_the_positions_the_page_always_names():
    """Every label is in the figure (the page leaves out what its drawn cells cannot hold, ui/js/figures.js); the
    step's query is outlined and the named positions are in meta.cells, counted within the window, in the order
    given (where two are too close for both labels, the first wins)."""
    words = [f"w{i}" for i in range(60)]
    window = Window(slice(20, 60), slice(10, 50))
    fig = visualizer.attention_grid(
        softmax_rows((1, 8, 60, 60)),
        words,
        words,
        layer=0,
        columns=4,
        highlight_query=37,
        window=window,
        named_queries=[45, 5, 21],
        named_keys=[49, 12, 50, 12],
    )
    assert grid_query_labels(fig) == [f"{i} w{i}" for i in range(20, 60)]
    keys = [axis.get("ticktext") for name, axis in fig.layout.to_plotly_json().items() if name.startswith("xaxis")]
    assert [f"{i} w{i}" for i in range(10, 50)] in [list(text) for text in keys if text is not None]
    assert {shape["y0"] + 0.5 for shape in highlight_shapes(fig)} == {37 - 20}  # the step's query, outlined
    assert fig.layout.meta["cells"] == {"keep": {"x": [39, 2], "y": [25, 1]}}  # 5 and 50 lie outside the window
    assert fig.layout.meta["narrow"]["yaxis"]["ticktext"] == [f"{i} w{i}" for i in range(20, 60)]  # a phone's too


def test_a_grid_of_a_short_sentence_keeps_four_panels_a_row_a_longer_one_three():
    """Rows of GRID_COLUMNS while a key's column holds a label in projector type, else MIN_COLUMNS (never fewer)."""
    assert [fitted_columns(n, GRID_COLUMNS) for n in (3, 8, 9, 11, 41)] == [4, 4, 3, 3, 3]
    assert fitted_columns(41, 2) == 2 and fitted_columns(41, 3) == 3
    for n_keys in (8, 9):
        fig = visualizer.attention_grid(softmax_rows((1, 8, 5, n_keys)), ["q"] * 5, ["k"] * n_keys, layer=0, columns=4)
        columns = {tuple(fig.layout[name].domain) for name in fig.layout.to_plotly_json() if name.startswith("xaxis")}
        width = (GRID_WIDTH_PX - (len(columns) - 1) * HEAD_GAP_PX[0]) / len(columns)
        assert len(columns) == (4 if n_keys <= 8 else 3) and width / n_keys >= LABEL_PX


def test_one_heads_keys_stand_above_its_rows_under_the_title():
    """The keys' labels on top (a projector's first screen holds the title, the keys and the first rows) with room
    for them at projector size between the title and the rows, and the figure's bottom margin small."""
    keys = ["▁Straße", "▁entlang."] * 5
    fig = visualizer.attention_heatmap(softmax_rows((9, 10)), ["▁x"] * 9, keys, title="t")
    assert fig.layout.xaxis.side == "top" and fig.layout.xaxis.tickangle == -45
    room = 0.62 * 14 * len("▁entlang.") * 0.75  # the longest label turned 45°, at 14 px
    assert fig.layout.margin.t >= 64 + room and fig.layout.margin.b <= 20
    assert any(note.text == "keys →" for note in fig.layout.annotations)
