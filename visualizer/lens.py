"""The logit lens (section 3.4's final projection read after every decoder layer): a layers x ranks table of the
top tokens each layer would predict at one step, coloured by probability; on a phone the table turned (a column
per layer) so each cell holds its token.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .attention import below_toolbar
from .checks import as_array
from .heatmap import NARROW_BAR_PX, foot_colorbar
from .theme import ATTENTION_SCALE, colorbar, figure, outline
from .tokens import display_tokens


def logit_lens_figure(
    tokens: Sequence[Sequence[str]], probs: np.ndarray, chosen_token: str | None = None, *, title: str = ""
) -> go.Figure:
    """A layers x rank table: the top tokens read from each decoder layer's output, coloured by probability.

    Args:
        tokens: L lists of k tokens, most probable first (layer 1 first; the last layer is the model's output).
        probs: (L, k) their probabilities.
        chosen_token: the token decoding chose at this step; its cells are outlined.
        title: plain text (escaped).
    """
    p = as_array("probs", probs, 2, dtype=np.float64)
    n_layers, k = p.shape
    if len(tokens) != n_layers or any(len(row) != k for row in tokens):
        raise ValueError(f"tokens must be {n_layers} lists of {k} tokens to match probs {p.shape}")
    full = [display_tokens(row) for row in tokens]
    y_labels = [f"layer {layer + 1}" + (" (output)" if layer == n_layers - 1 else "") for layer in range(n_layers)]
    hover = np.array(
        [[f"{y_labels[l]} · rank {r + 1}<br><b>{full[l][r]}</b>" for r in range(k)] for l in range(n_layers)],
        dtype=object,
    )
    cells = dict(
        type="heatmap",
        z=p,
        x=np.arange(k),
        y=np.arange(n_layers),
        text=np.array([display_tokens(row, max_chars=14) for row in tokens], dtype=object),
        texttemplate="%{text}",
        textfont=dict(size=12),
        customdata=hover,
        zmin=0,
        zmax=1,
        colorscale=ATTENTION_SCALE,
        xgap=2,
        ygap=2,
        colorbar=colorbar("probability"),
        hovertemplate="%{customdata}<br>p = %{z:.3f}<extra></extra>",
    )
    chosen = display_tokens([chosen_token])[0] if chosen_token is not None else None
    marked = [(l, r) for l in range(n_layers) for r in range(k) if full[l][r] == chosen]
    shapes = [outline(r - 0.5, r + 0.5, l - 0.5, l + 0.5) for l, r in marked]
    fig = figure(
        [cells],
        dict(
            xaxis=dict(
                tickmode="array",
                tickvals=np.arange(k),
                ticktext=[f"rank {r + 1}" for r in range(k)],
                side="top",
                showgrid=False,
                zeroline=False,
            ),
            yaxis=dict(
                tickmode="array", tickvals=np.arange(n_layers), ticktext=y_labels, showgrid=False, zeroline=False
            ),
            shapes=shapes,
            width=140 + 120 * k + 110,
            height=int(120 + 46 * n_layers),
            margin=dict(l=130, r=110, t=90 if title else 50, b=20),
        ),
        title,
    )
    fig.layout.meta = dict(narrow=narrow_lens(cells, y_labels, marked, title=bool(title)))
    return below_toolbar(fig)


LENS_PHONE_ROW_PX = 40  # a phone's logit lens: the height of a rank's row


def narrow_lens(cells: dict, layer_labels: Sequence[str], marked: Sequence[tuple[int, int]], *, title: bool) -> dict:
    """A phone's logit lens (``meta.narrow``, applied by ui/js/figures.js): the table turned, a column per layer and
    a row per rank, so that 3 to 6 columns share a phone's width and each cell holds its token; the colour bar
    under the table."""
    n_layers, k = np.shape(cells["z"])
    top = 94 if title else 40  # a title under the toolbar (visualizer.attention.below_toolbar), the layers' names
    height = int(top + LENS_PHONE_ROW_PX * k + NARROW_BAR_PX)
    bar = foot_colorbar(height)
    turned = dict(
        z=np.ascontiguousarray(np.asarray(cells["z"]).T),
        x=np.arange(n_layers),
        y=np.arange(k),
        text=np.asarray(cells["text"]).T,
        customdata=np.asarray(cells["customdata"]).T,
        colorbar=dict(cells["colorbar"], **bar),
    )
    return dict(
        width=None,
        height=height,
        margin=dict(l=64, r=12, t=top, b=NARROW_BAR_PX + 8),
        xaxis=dict(
            ticktext=[label.replace("layer ", "L").replace(" (output)", " (out)") for label in layer_labels],
            tickvals=np.arange(n_layers),
        ),
        yaxis=dict(ticktext=[f"rank {r + 1}" for r in range(k)], tickvals=np.arange(k), autorange="reversed"),
        shapes=[outline(l - 0.5, l + 0.5, r - 0.5, r + 0.5) for l, r in marked],
        traces=[turned],
    )
