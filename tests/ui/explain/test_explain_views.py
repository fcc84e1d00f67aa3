"""The Explain tab: its figures (visualizer/explain.py, hand-made numpy data) and its callbacks
(ui/explain/, on the tiny checkpoint: ablation, branching, beam search, alignment, diagnostics,
no positional encodings). No server, no browser (tests/browser/test_browser_explain.py drives the page).
"""

from __future__ import annotations

from types import SimpleNamespace

import gradio as gr
import numpy as np
import plotly.graph_objects as go
import pytest
from helpers import array, figure_json

from model.decoding.ablation import Ablation
from serving import Runner
from ui.explain import ablation as ablation_panel, alignment, beam, branching, diagnostics, no_pe, panel
from visualizer import explain as figures
from visualizer.lens import logit_lens_figure
from visualizer.alignment import alignment_figure

SOURCE = ["<2en>", "▁Ein", "▁Mann", "▁fährt", ".", "[EOS]"]
OUTPUT = ["▁A", "▁man", "▁rides", ".", "[EOS]"]
HOSTILE = "<img src=x onerror=alert(1)>"


# --------------------------------------------------------------------------- figures
def test_probability_change_bars_are_the_differences():
    original = np.array([0.9, 0.5, 0.2, 0.7, 0.8])
    changed = np.array([0.3, 0.6, 0.2, 0.1, 0.8])
    fig = figures.probability_change_figure(OUTPUT, original, changed, changed_name="heads off", title="t")
    (bars,) = fig.data
    np.testing.assert_allclose(bars.y, changed - original)
    assert list(fig.layout.xaxis.ticktext) == OUTPUT
    assert bars.marker.color[0] == figures.DROP_COLOR and bars.marker.color[1] == figures.RISE_COLOR
    assert fig.layout.yaxis.range[1] >= 0.6  # the biggest change fits
    with pytest.raises(ValueError, match="expected 5"):
        figures.probability_change_figure(OUTPUT, original, changed[:4])
    with pytest.raises(ValueError, match="probabilities"):
        figures.probability_change_figure(OUTPUT, original, changed + 1)


def test_logit_lens_outlines_the_chosen_token_and_escapes():
    tokens = [["▁is", "▁man", HOSTILE], ["▁man", "▁is", "▁a"]]
    probs = np.array([[0.4, 0.3, 0.1], [0.8, 0.1, 0.05]])
    fig = logit_lens_figure(tokens, probs, "▁man", title="lens")
    (heatmap,) = fig.data
    assert heatmap.text[0][2] == "&lt;img src=x on…"  # cut to 14 characters, then escaped
    assert list(fig.layout.yaxis.ticktext) == ["layer 1", "layer 2 (output)"]
    outlined = sorted((round(s.y0 + 0.5), round(s.x0 + 0.5)) for s in fig.layout.shapes)
    assert outlined == [(0, 1), (1, 0)]  # (layer, rank) of "▁man"
    with pytest.raises(ValueError, match="lists"):
        logit_lens_figure(tokens[:1], probs)


def test_alignment_figure_draws_one_line_per_link():
    links = [(1, 0), (2, 1), (3, 2), (4, 3)]
    fig = alignment_figure(SOURCE, OUTPUT, links, [0.9, 0.5, 0.2, 0.4], title="align")
    lines = [shape for shape in fig.layout.shapes if shape.type == "line"]
    assert len(lines) == 4
    source_x, target_x = fig.data[0].x, fig.data[1].x
    assert (lines[0].x0, lines[0].x1) == (source_x[1], target_x[0])
    assert lines[0].opacity > lines[2].opacity  # stronger attention, darker line
    labels = [a.text for a in fig.layout.annotations]
    assert "▁Mann" in labels and "&lt;2en&gt;" in labels
    with pytest.raises(ValueError, match="out of range"):
        alignment_figure(SOURCE, OUTPUT, [(9, 0)])
    with pytest.raises(ValueError, match="one value per link"):
        alignment_figure(SOURCE, OUTPUT, links, [1.0])


def test_head_diagnostics_figure_has_a_panel_per_statistic():
    stats = {"entropy": np.array([[0.1, 2.0], [1.0, 3.5]]), "diagonal": np.array([[0.9, 0.1], [0.5, 0.2]])}
    fig = figures.head_diagnostics_figure(stats, {"entropy": "entropy (bits)"}, selected=(1, 0), title="heads")
    assert len(fig.data) == 2 and all(isinstance(trace, go.Heatmap) for trace in fig.data)
    assert [a.text for a in fig.layout.annotations][:2] == ["entropy (bits)", "diagonal"]
    assert fig.data[1].text[0][0] == "90" and fig.data[0].zmax == 3.5
    assert len(fig.layout.shapes) == 2  # the selected head outlined in both panels
    with pytest.raises(ValueError, match="heads"):
        figures.head_diagnostics_figure({"entropy": np.zeros((2, 2)), "diagonal": np.zeros((2, 3))})


def test_head_diagnostics_on_a_phone_puts_the_panels_two_abreast():
    """6 layers x 8 heads (Transformer-base, OPUS-MT): four panels abreast left 5 px cells in a phone's box; the
    narrow layout (ui/js/figures.js applies it) sets them in two rows of two, every panel naming its layers, no
    two panels overlapping, each title in lines of at most 20 characters."""
    names = ("entropy", "diagonal", "special", "punctuation")
    stats = {name: np.full((6, 8), 0.5) for name in names}
    titles = dict(
        zip(names, ("entropy (bits)", "diagonal (%)", "to special tokens (%)", "to tokens ending in punctuation (%)"))
    )
    narrow = figures.head_diagnostics_figure(stats, titles, title="heads").layout.meta["narrow"]
    boxes = [(narrow[f"xaxis{n}"]["domain"], narrow[f"yaxis{n}"]["domain"]) for n in ("", "2", "3", "4")]
    assert len({tuple(y) for _, y in boxes}) == 2 and len({tuple(x) for x, _ in boxes}) == 2  # 2 rows, 2 columns
    for i, (x, y) in enumerate(boxes):
        for other_x, other_y in boxes[i + 1 :]:
            assert x[1] <= other_x[0] or other_x[1] <= x[0] or y[1] <= other_y[0] or other_y[1] <= y[0]
    assert all(narrow[f"yaxis{n}"]["showticklabels"] for n in ("", "2", "3", "4"))
    lines = [line for note in narrow["annotations"] for line in note["text"].split("<br>")]
    assert " ".join(lines).split() == " ".join(titles.values()).split() and max(map(len, lines)) <= 20


def test_attention_comparison_puts_both_runs_on_one_scale():
    a, b = np.eye(3), np.full((3, 3), 1 / 3)
    fig = figures.attention_comparison(a, b, SOURCE[:3], SOURCE[:3], names=("with PE", "without"))
    assert [trace.coloraxis for trace in fig.data] == ["coloraxis", "coloraxis"]
    np.testing.assert_allclose(fig.data[1].z, b)
    with pytest.raises(ValueError, match="same shape"):
        figures.attention_comparison(a, b[:2], SOURCE[:3], SOURCE[:3])


# --------------------------------------------------------------------------- callbacks


def test_checkboxes_become_an_ablation():
    # 2 encoder layers, then 2 decoder-self layers, then 2 cross layers; heads are 1-based in the UI
    config = SimpleNamespace(n_encoder_layers=2, n_decoder_layers=2)
    ablation = ablation_panel.ablation_from_choices([[1], [], None, [2, 4], [], [3]], config)
    assert ablation == Ablation(encoder_heads={(0, 0)}, decoder_self_heads={(1, 1), (1, 3)}, cross_heads={(1, 2)})
    assert panel.describe_ablation(ablation) == (
        "Encoder self-attention L1 H1; Masked decoder self-attention "
        "L2 H2, L2 H4; Cross-attention (encoder → decoder) L2 H3"
    )
    with pytest.raises(ValueError, match="expected 6"):
        ablation_panel.ablation_from_choices([[1]], config)


def test_intervention_scores_the_original_output(checkpoint, trace):
    result = panel.intervene(Runner(checkpoint), trace, Ablation(cross_heads={(0, 0), (1, 1)}))
    assert result.changed_probs.shape == trace.chosen_probs.shape
    assert not np.allclose(result.changed_probs, trace.chosen_probs)
    assert result.trace.ablation["cross_heads"] == [[0, 0], [1, 1]]
    html, value = panel.intervention_views(trace, result, "Heads switched off", "x", "With 2 heads switched off")
    assert html.startswith('<p class="explain-reading">With 2 heads switched off, the model writes ')
    assert "Original (greedy)" in html and "Heads switched off" in html
    np.testing.assert_allclose(
        array(figure_json(value)["data"][0]["y"]), result.changed_probs - trace.chosen_probs, atol=1e-6
    )


def test_branch_forces_the_candidate_and_keeps_the_prefix(checkpoint, trace):
    dropdown = branching.branch_choices(trace, 2)
    t = 1
    candidate = dropdown.value
    assert candidate != trace.output_ids[t] and candidate in trace.candidate_ids[t]
    assert len(dropdown.choices) == trace.candidate_ids.shape[1]
    branched, step = branching.branch(Runner(checkpoint), trace, 2, candidate)
    assert step == t and branched.forced_steps == t + 1
    assert branched.output_ids[: t + 1] == [*trace.output_ids[:t], candidate]
    html = panel.comparison_html(trace, branched, "Branch", forced_step=t)
    assert 'class="tok forced"' in html and "outputs part at step 2" in html
    with pytest.raises(gr.Error, match="candidate"):
        branching.branch(Runner(checkpoint), trace, 2, None)


def test_beam_table_lists_greedy_and_the_hypotheses(checkpoint, trace):
    from model.analysis.readouts import beam_versus_greedy

    comparison = beam_versus_greedy(checkpoint.model, checkpoint.tokenizer, trace)
    html = beam.beam_html(comparison)
    assert html.count("<tr>") == 2 + len(comparison.beams)  # header, greedy, hypotheses
    assert f"{comparison.greedy.score:.3f}" in html and "α = 0.6" in html


def test_alignment_views_use_the_chosen_layers_and_level(trace):
    value, pharaoh, _ = alignment.alignment_views(trace, [2], "subword")
    assert "decoder layer(s) 2" in figure_json(value)["layout"]["title"]["text"]
    pairs = [tuple(map(int, pair.split("-"))) for pair in pharaoh.split()]
    assert all(0 <= i < len(trace.source_tokens) - 2 for i, _ in pairs)
    _, words, _ = alignment.alignment_views(trace, [], "word")  # none ticked: every layer
    assert len(words.split()) <= len(pairs) or pairs == []


def test_diagnostics_list_every_head_to_open(trace):
    value, dropdown, _ = diagnostics.diagnostics_views(trace, "cross")
    assert len(figure_json(value)["data"]) == 4
    assert [v for _, v in dropdown.choices][:2] == ["1-1", "1-2"] and len(dropdown.choices) == 2 * 4
    assert diagnostics.parse_head("2-3") == (2, 3)
    with pytest.raises(gr.Error):
        diagnostics.parse_head("all")


def test_without_positions_compares_encoder_attention(checkpoint, trace):
    result = panel.intervene(Runner(checkpoint), trace, Ablation(positional_encoding=False))
    assert result.label == "no positional encodings" and result.trace.ablation["positional_encoding"] is False
    value = no_pe.positions_views(trace, result, 2, 3)
    z = [array(panel["z"]) for panel in figure_json(value)["data"]]
    np.testing.assert_allclose(z[0], trace.encoder_attention[1, 2], atol=1e-6)
    np.testing.assert_allclose(z[1], result.trace.encoder_attention[1, 2], atol=1e-6)
    assert no_pe.positions_views(trace, None, 1, 1) is None


def test_model_runs_need_a_model_and_a_trace(checkpoint, trace):
    with pytest.raises(gr.Error, match="Translate"):
        panel.require(checkpoint, None)
    with pytest.raises(gr.Error, match="No model"):
        panel.require(None, trace)
