"""Attention Explorer's figures: pure functions from a translation trace's arrays and tokens to
Plotly figures, one module per part of the paper ("Attention Is All You Need", Vaswani et al., 2017).

Views: attention (3.2, one head), pipeline (3.2.1, inside one head), head_grid (3.2.2, every head), lines
(3.2.2, the head view), masks (3.2.3), candidates (3.4), positional (3.5), training (5.3, 6), explain
(interventions and read-outs for the Explain tab).
Their parts: theme (look, and ``figure``, the one way a figure is built: plain dict specs,
unvalidated), checks (input errors), grid (subplots as dicts), heatmap (token heatmaps), tokens
(labels, chips). They import numpy and plotly only, check their inputs (ValueError), and never
show anything. Which tokens are special is the tokenizer's to say: views that mute them take the
set from the caller.
"""

from .attention import attention_heatmap
from .candidates import candidates_chart
from .head_grid import attention_grid
from .masks import mask_heatmap, masks_figure
from .pipeline import attention_pipeline
from .positional import positional_encoding_figure
from .tokens import display_tokens
from .training import metrics_table_markdown, published_scores_markdown, training_curves_figure

__all__ = [
    "attention_grid",
    "attention_heatmap",
    "attention_pipeline",
    "candidates_chart",
    "display_tokens",
    "mask_heatmap",
    "masks_figure",
    "metrics_table_markdown",
    "published_scores_markdown",
    "positional_encoding_figure",
    "training_curves_figure",
]
