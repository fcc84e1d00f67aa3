"""What every figure of visualizer/ keeps to: JSON of bounded size that passes Plotly's validation, imports
of numpy and plotly only, and (in a browser) an HTML-like token shown as text.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest
from browser_helpers import needs_chromium
from helpers import HOSTILE, SOURCE, TARGET, full_log, mask_inputs, sinusoids, softmax_rows


import visualizer
from visualizer import alignment, explain, lens

VISUALIZER_DIR = Path(__file__).resolve().parents[2] / "visualizer"


# ---- every figure ---------------------------------------------------------------------------


def every_figure() -> dict[str, go.Figure]:
    """One of each public figure, the Explain tab's included."""
    n = len(TARGET)
    weights = softmax_rows((n, len(SOURCE)))
    mask = np.tril(np.ones((n, n), dtype=bool))
    rng = np.random.default_rng(1)
    return {
        "heatmap": visualizer.attention_heatmap(weights, TARGET, SOURCE, highlight_query=2),
        "grid": visualizer.attention_grid(softmax_rows((2, 2, n, n)), TARGET, TARGET),
        "pipeline": visualizer.attention_pipeline(
            np.zeros((n, n)), mask, softmax_rows((n, n), mask=mask), TARGET, TARGET
        ),
        "candidates": visualizer.candidates_chart(["▁a", "▁b"], np.array([0.9, 0.1]), 0, entropy_bits=0.5),
        "masks": visualizer.masks_figure(*mask_inputs(), SOURCE, TARGET, step=1),
        "positional": visualizer.positional_encoding_figure(sinusoids(16, 8), tokens=SOURCE),
        "mask": visualizer.mask_heatmap(mask, TARGET, TARGET, highlight_row=3, title="mask"),
        "training": visualizer.training_curves_figure(full_log()),
        "probability change": explain.probability_change_figure(TARGET, rng.random(n), rng.random(n), title="t"),
        "logit lens": lens.logit_lens_figure([TARGET[:3], TARGET[2:5]], rng.random((2, 3)), TARGET[2], title="t"),
        # strongest link 0.4: 0.2 + 0.8 * 0.4 / 0.4 is 1.0000000000000002, an opacity Plotly rejects
        "alignment": alignment.alignment_figure(
            SOURCE,
            TARGET,
            [(i, i - 1) for i in range(1, n)],
            [0.4, 0.1, 0.2, 0.3, 0.2, 0.1][: n - 1],
            special_tokens={"<2en>", "[EOS]", "[BOS]"},
            title="t",
        ),
        "head diagnostics": explain.head_diagnostics_figure(
            {"entropy": 3 * rng.random((2, 4)), "diagonal": rng.random((2, 4))}, selected=(1, 2), title="t"
        ),
        "attention comparison": explain.attention_comparison(
            weights, softmax_rows(weights.shape, seed=2), TARGET, SOURCE, names=("a", "b"), title="t"
        ),
    }


def test_every_figure_serializes_to_json_with_a_bounded_size():
    for name, fig in every_figure().items():
        data = json.loads(fig.to_json())
        assert data["data"], name
        assert fig.layout.width is None or 200 <= fig.layout.width <= 1400, name
        assert 180 <= fig.layout.height <= 1400, name


def test_every_figure_validates_as_plotly_json():
    """Figures are built unvalidated (fast); what they hold must still pass Plotly's full validation."""
    empty = {"training, no log": visualizer.training_curves_figure(None)}  # no series, only "no data" notes
    for name, fig in {**every_figure(), **empty}.items():
        try:
            go.Figure(fig.to_dict())
        except ValueError as error:
            pytest.fail(f"{name}: {error}")


def test_visualizer_imports_only_numpy_and_plotly():
    allowed = {"__future__", "collections", "html", "math", "numpy", "plotly"}
    for path in VISUALIZER_DIR.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                roots = {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                roots = {node.module.split(".")[0]}
            else:
                continue
            assert roots <= allowed, f"{path.name} imports {roots - allowed}"
        assert ".show(" not in path.read_text(encoding="utf-8"), path.name


# ---- in a browser ------------------------------------------------------------------------------


@pytest.mark.browser
@needs_chromium
def test_hostile_token_is_shown_as_text_in_ticks_and_hover(tmp_path, browser):
    tokens = ["▁a", HOSTILE, "<script>alert(2)</script>"]
    fig = visualizer.attention_heatmap(softmax_rows((3, 3)), tokens, tokens)
    page_path = tmp_path / "figure.html"
    fig.write_html(page_path, include_plotlyjs=True, div_id="figure")
    dialogs = []
    page = browser.new_page()
    try:
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.goto(page_path.as_uri())
        page.wait_for_selector(".xtick text")
        ticks = page.locator(".xtick text").all_text_contents()
        box = page.locator(".nsewdrag").first.bounding_box()  # the plot area: 3 x 3 cells
        page.mouse.move(box["x"] + box["width"] * 2.5 / 3, box["y"] + box["height"] * 1.5 / 3)  # row 1, col 2
        page.wait_for_selector(".hovertext")
        hover = page.locator(".hovertext").text_content()
        images = page.evaluate("document.querySelectorAll('img').length")
    finally:
        page.close()
    assert ticks == tokens
    assert images == 0
    assert HOSTILE in hover and "<script>alert(2)</script>" in hover
    assert f"{fig.data[0].z[1, 2]:.4f}" in hover
    assert dialogs == []
