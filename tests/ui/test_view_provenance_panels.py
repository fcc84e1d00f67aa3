"""Provenance of the other views: the Masks (3.2.3) and Positional-encoding (3.5) tabs,
the next-token candidates (3.4), the Explain panels (logit lens, alignment, head diagnostics, ablation boxes)
and the one redraw listener that draws them.

A tiny model trained to copy (its sentence ends with [EOS]; conftest's copy_* fixtures) is saved as a
checkpoint and translated through the app's own Translate path. At a step in the middle of the sentence, for
layer 2 of 2 and head 2 of 4 (so reversed layers or heads show other numbers), each view's Plotly JSON is
parsed and its data compared with the trace slice it claims to show AND with the independent float64
reference forward pass of tests/support/provenance_fixtures.py. Rows and columns are read from the figure's own
category names and tick labels; the tokens expected on them come from helpers.py's `decoder_inputs`,
`expected_query_labels` and `expected_key_labels` only (the one place to change when the label convention
changes).
"""

from __future__ import annotations

import html
import re

import gradio as gr
import numpy as np
import pytest
import torch

import provenance_fixtures as ref
from helpers import (
    VIEW_HEAD,
    VIEW_LAYER,
    axis,
    cells,
    decoder_inputs,
    expected_key_labels,
    expected_query_labels,
    figure_of,
    position,
    reference_attention,
)

from model.analysis.readouts import is_special
from model.decoding.trace import ATTENTION_KINDS
from model.text.inputs import PADDING_EXAMPLES
from serving import jobs
from ui import attention, next_token, positions, redraw
from ui.common import Page
from ui.explain import ablation as ablation_panel, alignment, diagnostics, lens


# --------------------------------------------------------------------------- masks, PE, candidates
def test_masks_view_shows_the_masks_of_this_sentence_at_this_step(copy_runner, copy_trace, tiny_tokenizer, copy_step):
    figure = figure_of(positions.masks_view(copy_runner, copy_trace, copy_step + 1))
    batch, causal, decoder, cross = figure["data"]
    shown = [
        [html.unescape(str(label).split(" ", 1)[1]) for label in row]  # "#j token" -> token
        for row in np.asarray(batch["customdata"], dtype=object)[..., 1]
    ]
    # (a): this sentence (its real keys are the trace's source_mask, all True) beside the longer example
    # sentence, tokenized here, right-padded with [PAD] to the longer; the mask is False exactly on [PAD]
    example = ["<2en>", *tiny_tokenizer.tokens(tiny_tokenizer.encode(PADDING_EXAMPLES["de"])), "[EOS]"]
    width = max(len(copy_trace.source_tokens), len(example))
    assert shown == [row + ["[PAD]"] * (width - len(row)) for row in (list(copy_trace.source_tokens), example)]
    real = np.asarray(batch["z"]) > 0.5
    np.testing.assert_array_equal(real, [[token != "[PAD]" for token in row] for row in shown])
    np.testing.assert_array_equal(real[0, : len(copy_trace.source_tokens)], copy_trace.source_mask)
    assert not real.all()  # a padded batch: the panel has [PAD] keys to show
    n_target = copy_trace.num_steps
    inputs = decoder_inputs(copy_trace, n_target - 1)  # the masks name decoder positions by the token read there
    rows, cols = cells(figure, causal, copy_trace, "decoder_self", n_target - 1, (inputs, inputs))
    assert rows == list(range(copy_step + 1))  # panel (b) stops at the step
    np.testing.assert_array_equal(np.asarray(causal["z"]) > 0.5, np.tri(n_target, dtype=bool)[: copy_step + 1])
    rows, cols = cells(figure, decoder, copy_trace, "decoder_self", n_target - 1, (inputs, inputs))
    np.testing.assert_array_equal(np.asarray(decoder["z"]) > 0.5, np.tri(n_target, dtype=bool))
    rows, cols = cells(figure, cross, copy_trace, "cross", n_target - 1, (inputs, list(copy_trace.source_tokens)))
    assert cols == list(range(len(copy_trace.source_tokens)))
    np.testing.assert_array_equal(np.asarray(cross["z"]) > 0.5, np.ones((n_target, len(cols)), bool))


def test_positional_encoding_view_is_the_sinusoid_table(copy_runner, copy_trace, copy_model):
    figure = figure_of(positions.positions_view(copy_runner, copy_trace))
    matrix = figure["data"][0]
    z = np.asarray(matrix["z"], dtype=np.float64)
    assert z.shape[0] == min(
        max(len(copy_trace.source_tokens), copy_trace.num_steps, positions.MIN_PE_ROWS), copy_model.config.max_positions
    )
    np.testing.assert_allclose(z, ref.sinusoid_table(z.shape[0], copy_model.config.d_model).numpy(), atol=1e-5)
    np.testing.assert_allclose(
        z, copy_model.positional_encoding[: z.shape[0]].numpy(), atol=1e-6
    )  # the rows the model adds
    for p, label in enumerate(matrix["y"]):  # row p names position p and the source token there
        expected = f"{p} {copy_trace.source_tokens[p]}" if p < len(copy_trace.source_tokens) else str(p)
        assert html.unescape(label) == expected
    waves = [s for s in figure["data"] if s["type"] == "scatter"]
    assert waves
    for wave in waves:
        dim, kind = re.fullmatch(r"dim (\d+) \((sin|cos)\)", wave["name"]).groups()
        assert kind == ("sin" if int(dim) % 2 == 0 else "cos")
        shifted = np.asarray(wave["y"], dtype=np.float64) - z[:, int(dim)]
        np.testing.assert_allclose(shifted, shifted[0], atol=1e-5)  # the column itself, offset for stacking
    similarity = np.asarray(figure["data"][-1]["z"], dtype=np.float64)
    np.testing.assert_allclose(similarity, z @ z.T, atol=1e-3)


def test_candidates_view_is_a_softmax_of_the_models_logits(copy_trace, copy_reference, copy_step, tiny_tokenizer):
    figure = figure_of(next_token.candidates_view(copy_trace, copy_step + 1))
    (bars,) = figure["data"]
    probs = torch.softmax(copy_reference.logits[copy_step], dim=-1)  # (V,)
    top = torch.topk(probs, len(bars["x"]))
    np.testing.assert_allclose(np.asarray(bars["x"], dtype=np.float64), top.values.numpy(), atol=1e-5)
    ticks = [html.unescape(re.sub(r"</?b>", "", text)) for text in figure["layout"]["yaxis"]["ticktext"]]
    assert ticks == tiny_tokenizer.tokens(top.indices.tolist())
    bold = [
        html.unescape(re.sub(r"</?b>", "", t)) for t in figure["layout"]["yaxis"]["ticktext"] if t.startswith("<b>")
    ]
    assert bold == [copy_trace.output_tokens[copy_step]]  # greedy: the chosen token is the top one, marked
    assert f"Step {copy_step + 1}" in figure["layout"]["title"]["text"]


# --------------------------------------------------------------------------- explain views
def test_logit_lens_reads_each_decoder_layer_through_the_tied_projection(
    copy_runner, copy_trace, copy_reference, copy_model, copy_step, tiny_tokenizer
):
    read = jobs.logit_lens(copy_runner, copy_trace)
    figure = figure_of(lens.lens_view(copy_trace, read, copy_step + 1))
    (cells_series,) = figure["data"]
    z = np.asarray(cells_series["z"], dtype=np.float64)  # (L, k)
    labels = figure["layout"]["yaxis"]["ticktext"]
    embedding = copy_model.embedding.weight.detach().double()
    for layer, hidden in enumerate(copy_reference.layer_hiddens):
        assert labels[layer].startswith(f"layer {layer + 1}")
        top = torch.topk(torch.softmax(hidden[copy_step] @ embedding.T, dim=-1), z.shape[1])
        np.testing.assert_allclose(z[layer], top.values.numpy(), atol=1e-4, err_msg=f"layer {layer + 1}")
        assert read.tokens[copy_step][layer] == tiny_tokenizer.tokens(top.indices.tolist())


def test_alignment_links_each_output_to_its_strongest_real_source_token(copy_trace, copy_reference):
    plot, pharaoh, _ = alignment.alignment_views(copy_trace, [VIEW_LAYER], "subword")
    figure = figure_of(plot)
    source_row, target_row = figure["data"]
    xs, xt = np.asarray(source_row["x"], dtype=float), np.asarray(target_row["x"], dtype=float)
    assert [position(c[0])[1] for c in source_row["customdata"]] == copy_trace.source_tokens
    assert [position(c[0])[1] for c in target_row["customdata"]] == expected_query_labels(
        copy_trace, "cross", copy_trace.num_steps - 1
    )
    links = sorted(
        (int(np.argmin(abs(xs - s["x0"]))), int(np.argmin(abs(xt - s["x1"]))))
        for s in figure["layout"]["shapes"]
        if s["type"] == "line"
    )
    mean = copy_reference.cross[VIEW_LAYER - 1].weights.mean(0).numpy()  # (T, S), only the chosen layer
    real = [k for k, token in enumerate(copy_trace.source_tokens) if not is_special(token)]
    expected = sorted(
        (real[int(np.argmax(mean[t, real]))], t)
        for t, token in enumerate(copy_trace.output_tokens)
        if not is_special(token)
    )
    assert links == expected
    real_target = [t for t, token in enumerate(copy_trace.output_tokens) if not is_special(token)]
    numbered = sorted((real.index(s), real_target.index(t)) for s, t in expected)  # Pharaoh: specials not counted
    assert sorted(tuple(int(n) for n in pair.split("-")) for pair in pharaoh.split()) == numbered
    assert f"decoder layer(s) {VIEW_LAYER}" in figure["layout"]["title"]["text"]


@pytest.mark.parametrize("kind", list(ATTENTION_KINDS))
def test_head_diagnostics_panels_are_per_layer_and_head(copy_trace, copy_reference, kind):
    plot, dropdown, _ = diagnostics.diagnostics_views(copy_trace, kind)
    figure = figure_of(plot)
    w = reference_attention(copy_reference, kind).astype(np.float64)  # (L, h, Tq, Tk), whole sentence
    keys = expected_key_labels(copy_trace, kind, copy_trace.num_steps - 1)
    special = np.array([is_special(token) for token in keys])
    expected = {
        "entropy": -(w * np.log2(np.clip(w, 1e-12, None))).sum(-1).mean(-1),
        "special": w[..., special].sum(-1).mean(-1),
    }
    by_title = {a["text"]: a for a in figure["layout"]["annotations"]}
    for name, values in expected.items():
        title = by_title[diagnostics.TITLES[name]]
        series = next(s for s in figure["data"] if abs(sum(axis(figure, s["xaxis"])["domain"]) / 2 - title["x"]) < 1e-9)
        assert list(series["y"]) == list(range(1, w.shape[0] + 1)) and list(series["x"]) == list(
            range(1, w.shape[1] + 1)
        )
        assert axis(figure, series["xaxis"])["ticktext"] == [f"H{h}" for h in range(1, w.shape[1] + 1)]
        np.testing.assert_allclose(np.asarray(series["z"], dtype=np.float64), values, atol=1e-4, err_msg=name)
    for label, value in dropdown.choices:  # each entry opens the head it names, with that head's numbers
        layer, head = diagnostics.parse_head(value)
        assert label.startswith(f"layer {layer}, head {head}")
        assert f"{expected['entropy'][layer - 1, head - 1]:.1f} bits" in label


# --------------------------------------------------------------------------- the redraw listener
def test_redraw_draws_the_view_of_the_open_tab_and_controls(copy_runner, copy_trace, copy_step):
    with gr.Blocks():
        page = Page(copy_runner.checkpoint, gr.State(), gr.Slider(1, 10), gr.State(), gr.Tabs(), copy_runner)
        with page.tabs:
            candidates = next_token.build(page)
            attention_tab = attention.build(page)
            tabs = [candidates, attention_tab.view, *positions.build(page)]
    kind, layer, head, show_all, pipeline_open, view_as, _keep_token = attention_tab.view.controls
    plot_component, pipeline_component = attention_tab.view.outputs
    for kind_value in ATTENTION_KINDS:
        for all_value in (False, True):
            values = {
                kind: kind_value,
                layer: VIEW_LAYER,
                head: str(VIEW_HEAD),
                show_all: all_value,
                pipeline_open: True,
                view_as: "heatmap",
            }
            drawn = redraw.render_views(tabs, "attention", copy_trace, copy_step + 1, values)
            args = (copy_trace, copy_step + 1, kind_value, VIEW_LAYER, str(VIEW_HEAD), all_value)
            assert drawn[plot_component].plot == attention.attention_view(*args).plot
            assert drawn[pipeline_component].plot == attention.pipeline_view(*args).plot
        values = {kind: kind_value, layer: VIEW_LAYER, head: str(VIEW_HEAD), show_all: False, pipeline_open: False}
        drawn = redraw.render_views(tabs, "attention", copy_trace, copy_step + 1, values)  # closed pipeline: not drawn
        assert pipeline_component not in drawn
        assert drawn[plot_component].plot == attention.attention_view(*args[:-1], False).plot
    drawn = redraw.render_views(tabs, next_token.TAB_ID, copy_trace, copy_step + 1, {})
    assert drawn[candidates.outputs[0]].plot == next_token.candidates_view(copy_trace, copy_step + 1).plot
    drawn = redraw.render_views(tabs, "masks", copy_trace, copy_step + 1, {})
    assert drawn[tabs[3].outputs[0]].plot == positions.masks_view(copy_runner, copy_trace, copy_step + 1).plot
    assert redraw.render_views(tabs, "model", copy_trace, copy_step + 1, {}) == {}
    emptied = redraw.render_views(tabs, "attention", None, copy_step + 1, {})  # no trace: every view emptied
    assert emptied == {output: None for view in tabs for output in view.outputs}


def test_ablation_boxes_switch_off_the_heads_they_name(copy_model):
    """Ticked 1-based boxes, per layer of each kind in the registry's order -> those 0-based heads."""
    config = copy_model.config
    counts = [ATTENTION_KINDS[kind].num_layers(config) for kind in ATTENTION_KINDS]
    choices = [[] for _ in range(sum(counts))]
    choices[1] = [2]  # encoder layer 2, head 2
    choices[counts[0]] = [1, 4]  # decoder self-attention layer 1, heads 1 and 4
    choices[counts[0] + counts[1] + 1] = [3]  # cross-attention layer 2, head 3
    ablation = ablation_panel.ablation_from_choices(choices, config)
    assert set(ablation.encoder_heads) == {(1, 1)}
    assert set(ablation.decoder_self_heads) == {(0, 0), (0, 3)}
    assert set(ablation.cross_heads) == {(1, 2)}
