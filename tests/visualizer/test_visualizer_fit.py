"""Figures that fit the box the page gives them: the all-heads grid of one layer has no fixed width (its small
multiples shrink with the box), names its tokens at projector size, and wraps a layer's heads into rows; the
masks' batch panel shows every token whole, [PAD] included.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import SOURCE, TARGET, heatmaps, mask_inputs, softmax_rows

import visualizer
from visualizer.head_grid import GRID_TICK_FONT, grid_cells


def test_one_layer_of_the_grid_wraps_its_heads_into_rows_of_panels():
    rows, columns, cells = grid_cells(3, 8, layer=1, columns=4)
    assert (rows, columns) == (2, 4)
    assert cells == {(1 + h // 4, 1 + h % 4): (1, h) for h in range(8)}
    assert grid_cells(2, 3, None, None)[:2] == (2, 3)  # default: a row per layer


def test_the_grid_of_one_layer_fits_its_box_and_names_tokens_at_projector_size():
    weights = softmax_rows((3, 8, len(TARGET), len(SOURCE)))
    fig = visualizer.attention_grid(weights, TARGET, SOURCE, layer=2, columns=4, title="layer 3")
    cells = heatmaps(fig)
    assert len(cells) == 8 and fig.layout.width is None  # no width: Plotly fills the figure's box
    np.testing.assert_allclose(cells[5].z, weights[2, 5])
    assert "layer 3 · head 6" in cells[5].hovertemplate
    titles = sorted(a.text for a in fig.layout.annotations if a.text.startswith("head"))
    assert titles == sorted(f"head {h}" for h in range(1, 9))  # every panel titled: heads wrap into rows
    fonts = [
        fig.layout[name].tickfont.size
        for name in fig.layout.to_plotly_json()
        if name.startswith(("xaxis", "yaxis")) and fig.layout[name].showticklabels
    ]
    assert fonts and min(fonts) >= GRID_TICK_FONT >= 14
    with pytest.raises(ValueError, match="layer 3 is outside"):
        visualizer.attention_grid(weights, TARGET, SOURCE, layer=3)


def test_the_grid_on_a_phone_puts_two_heads_a_row_in_the_same_order():
    """meta.narrow (ui/js/figures.js applies it in a box under 640 px): head h stays the h-th subplot, so each
    trace lands in its head's panel; two panels a row, titled by head; the colour bar across under the keys."""
    weights = softmax_rows((3, 8, len(TARGET), len(SOURCE)))
    fig = visualizer.attention_grid(weights, TARGET, SOURCE, layer=1, columns=4, title="layer 2", highlight_query=2)
    narrow = fig.layout.meta["narrow"]
    x_domains = [tuple(narrow["xaxis" + ("" if h == 0 else str(h + 1))]["domain"]) for h in range(8)]
    y_domains = [tuple(narrow["yaxis" + ("" if h == 0 else str(h + 1))]["domain"]) for h in range(8)]
    assert len(set(x_domains)) == 2 and len(set(y_domains)) == 4  # two columns, four rows
    assert x_domains[0][0] == 0 and x_domains[1][0] > x_domains[0][1] and y_domains[0] == y_domains[1]
    assert y_domains[2][1] < y_domains[0][0]  # heads 3 and 4 under heads 1 and 2
    titles = {a["text"]: (a["x"], a["y"]) for a in narrow["annotations"] if a["text"].startswith("head")}
    assert len(titles) == 8 and titles["head 2"][0] > titles["head 1"][0] and titles["head 3"][1] < titles["head 1"][1]
    assert [trace.xaxis for trace in heatmaps(fig)] == ["x"] + [f"x{h + 1}" for h in range(1, 8)]
    assert len(narrow["shapes"]) == 8  # the query's outline in every panel
    assert narrow["coloraxis"]["colorbar"]["orientation"] == "h" and narrow["margin"]["r"] < fig.layout.margin.r


def test_the_masks_batch_panel_shows_every_token_whole():
    padding, batch, causal, decoder, cross = mask_inputs()
    fig = visualizer.masks_figure(padding, batch, causal, decoder, cross, SOURCE, TARGET, step=3)
    batch_panel = heatmaps(fig)[0]
    shown = [[str(text) for text in row] for row in batch_panel.text]
    assert shown == [visualizer.display_tokens(sentence) for sentence in batch]
    assert "[PAD]" in shown[0] and not any("…" in text for row in shown for text in row)


def test_a_phones_logit_lens_turns_the_table_so_each_cell_holds_its_token():
    """meta.narrow (a phone): a column per layer and a row per rank, the same cells turned (probabilities, tokens and
    hover), the chosen token's cells still outlined, the colour bar under the table."""
    from helpers import array

    from visualizer.lens import logit_lens_figure

    tokens = [["▁the", "▁a", "▁street"], ["▁street.", "▁road", "▁a"], ["▁street.", "▁road.", "▁city"]]
    probs = np.array([[0.2, 0.1, 0.05], [0.5, 0.2, 0.1], [0.9, 0.05, 0.01]])
    fig = logit_lens_figure(tokens, probs, "▁street.", title="t").to_plotly_json()
    narrow = fig["layout"]["meta"]["narrow"]
    [turned] = narrow["traces"]
    np.testing.assert_array_equal(array(turned["z"]), probs.T)
    [cells] = fig["data"]
    assert array(turned["text"]).tolist() == array(cells["text"]).T.tolist()
    assert narrow["xaxis"]["ticktext"] == ["L1", "L2", "L3 (out)"] and len(narrow["yaxis"]["ticktext"]) == 3
    outlined = {(round((s["x0"] + s["x1"]) / 2), round((s["y0"] + s["y1"]) / 2)) for s in narrow["shapes"]}
    assert outlined == {(1, 0), (2, 0)}  # layers 2 and 3 (columns), rank 1 (row)
    assert turned["colorbar"]["orientation"] == "h" and narrow["margin"]["r"] <= 16
