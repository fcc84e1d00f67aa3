"""The OPUS-MT page of the app (ui/models.py): `build_demo` with $ATTENTION_EXPLORER_OPUS_MT naming the small
Hub-style folders (tests/conftest.py `opus_mt_folder`) makes a second page, /opus-mt, that is the whole app over
OPUS-MT. What it shows is checked against `transformers` (the peer, tests/support/marian_hub_folder.py) and against
independent computations: its Translate and the API's equal the peer's `generate`, the panels that re-run the model
run on the checkpoint of the trace's direction, the positional-encoding view is the halves table computed here in
float64 and names its columns by it, and the Model tab shows the card's published scores as published.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import numpy as np
import pytest

from model.analysis import readouts
from model.analysis.corpus.attribution import attribute
from model.checkpoints.catalogue import OPUS_MT, OPUS_MT_ENV, OWN
from model.decoding.ablation import Ablation
from model.text import language
from serving import trace_from_lean
from serving.translation import notices, switch_direction
from ui import models, positions, session
from ui.explain.panels import PANELS
from ui.share_link import TABS
from visualizer.training import markdown_cell

from explain_page import ExplainPage
from helpers import api_function, figure_of, run_listener
from marian_hub_folder import CARD_ROWS, load_peer, load_peer_tokenizer, peer_greedy
from page_driver import PageDriver

PAGE = OPUS_MT.key  # the OPUS-MT page's path; the own model's page is ""
SENTENCES = {"de-en": "Der Hund läuft über die nasse Straße.", "en-de": "The dog runs across the wet street."}


@pytest.fixture(scope="module")
def demo(tiny_checkpoint, opus_mt_folder):
    from ui.app import build_demo

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(OPUS_MT_ENV, str(opus_mt_folder))
        patch.delenv(models.MODEL_ENV, raising=False)
        patch.delenv(models.PRELOAD_ENV, raising=False)
        return build_demo(tiny_checkpoint)


def page_translate(demo, text: str, direction: str, page: str = PAGE) -> tuple:
    """`page`'s Translate, as a visitor presses it (tests/support/page_driver.py) -> (trace, translation, trace
    file, notice) as the page shows them."""
    driver = PageDriver(demo, page)
    driver.load()
    driver.translate(text, direction)
    return driver.trace, driver.shown("translation"), driver.shown("download-trace"), driver.shown("notice")


@pytest.fixture(scope="module")
def traces(demo) -> dict:
    """The OPUS-MT page's Translate of SENTENCES, by direction: (trace, translation, trace file, notice)."""
    return {direction: page_translate(demo, text, direction) for direction, text in SENTENCES.items()}


def components(demo, elem_id: str, page: str = PAGE) -> list:
    return [
        block for block in demo.blocks.values() if getattr(block, "elem_id", None) == elem_id and block.page == page
    ]


def component(demo, elem_id: str, page: str = PAGE):
    [block] = components(demo, elem_id, page)
    return block


def elem_ids(demo, page: str = PAGE) -> set[str]:
    return {block.elem_id for block in demo.blocks.values() if getattr(block, "elem_id", None) and block.page == page}


def peer_generate(folder, text: str) -> tuple[list[int], list[int], str]:
    """(source ids, generated ids without the start token, translation) of `transformers`' greedy `generate`
    (marian_hub_folder.peer_greedy)."""
    tokenizer = load_peer_tokenizer(folder)
    source_ids, generated = peer_greedy(load_peer(folder), tokenizer, text)
    return source_ids, generated[0, 1:].tolist(), tokenizer.decode(generated[0], skip_special_tokens=True)


# --------------------------------------------------------------------------- the two pages
def test_each_model_is_a_whole_page_of_its_own(demo):
    assert [path for path, *_ in demo.pages] == ["", PAGE]
    assert set(demo.runners) == {OWN.key, OPUS_MT.key} and demo.runners[PAGE].model == OPUS_MT.key
    assert set(demo.runners[PAGE].by_direction) == {"de-en", "en-de"}
    assert component(demo, "model-choice", "").value == OWN.key and component(demo, "model-choice").value == PAGE
    for page in ("", PAGE):  # the whole app on each: every top-level tab and view
        assert {"source", "translate", "attention-plot", "pe-plot", "mask-plot", "metrics"} <= elem_ids(demo, page)


@pytest.mark.parametrize("direction", sorted(SENTENCES))
def test_the_page_translates_as_transformers_generates(demo, traces, opus_mt_folder, direction):
    trace, translation, path, notice = traces[direction]
    source_ids, output_ids, expected = peer_generate(opus_mt_folder / f"opus-mt-{direction}", SENTENCES[direction])
    assert trace.model == PAGE and trace.direction == direction
    assert trace.source_ids == source_ids and trace.output_ids == output_ids
    assert translation == trace.translation == expected
    assert trace.target_tokens[0] == "<pad>" and trace.source_tokens[-1] == "</s>"
    assert notice == session.notice_markdown(notices(trace))
    assert trace_from_lean(json.loads(Path(path).read_text(encoding="utf-8"))).output_ids == output_ids


def test_the_api_translates_with_the_model_it_is_asked_for(demo, traces):
    translate = functools.partial(run_listener, api_function(demo, "translate"))
    for direction, (trace, *_) in traces.items():
        answer = translate(SENTENCES[direction], direction, PAGE)
        assert answer == {"translation": trace.translation, "notices": list(notices(trace))}
    own = page_translate(demo, SENTENCES["de-en"], "de-en", page="")[0]
    assert own.model == OWN.key and translate(SENTENCES["de-en"], "de-en", OWN.key)["translation"] == own.translation


# --------------------------------------------------------------------------- the Model tab
def test_the_model_tab_shows_the_card_and_its_published_scores_as_published(demo):
    card = component(demo, "metrics").value
    assert "as published by Helsinki-NLP (the model card), not measured here" in card
    for direction, rows in CARD_ROWS.items():
        assert f"opus-mt-{direction}" in card
        for testset, bleu, chrf in rows:
            assert re.search(rf"\| {re.escape(markdown_cell(testset))} \| {bleu} \| {chrf} \|", card), testset
    assert "dataset *opus*" in card and "licence *cc-by-4.0*" in card
    config = component(demo, "model-config").value
    checkpoint = demo.runners[PAGE].checkpoint
    assert f"**This model: {checkpoint.model.num_parameters():,} parameters**" in config
    for row in ("swish", "halves: all sines, then cosines", "`<pad>` (never generated)", "`</s>` forced"):
        assert row in config
    assert str(checkpoint.path) not in config  # no server path on the page
    assert "curves-plot" not in elem_ids(demo)  # no empty plot: one line
    assert component(demo, "curves-note").value == (
        "OPUS-MT (Helsinki-NLP) has no training log here, so there are no training curves to show."
    )


def test_the_own_models_tab_keeps_its_metrics_and_curves(demo):
    assert component(demo, "metrics", "").value.startswith("**BLEU and chrF (metrics.json)**")
    assert "curves-plot" in elem_ids(demo, "") and not components(demo, "curves-note", "")
    config = component(demo, "model-config", "").value
    assert "swish" not in config and "halves" not in config  # the paper's choices: no rows that differ


# --------------------------------------------------------------------------- the Explain panels
def test_panels_that_need_the_own_model_say_so_in_one_line(demo):
    own_only = [panel for panel in PANELS if panel.own_model_only]
    assert {panel.id for panel in own_only} == {"film", "corpus-heads"}
    for panel in own_only:
        line = component(demo, f"{panel.id}-unavailable").value
        assert line.startswith("OPUS-MT (Helsinki-NLP) has no ") and "\n" not in line
    shown = {elem_id for elem_id in elem_ids(demo) if elem_id.startswith(("film-", "corpus-"))}
    assert shown == {"film-unavailable", "corpus-heads-unavailable"}  # no control, no "missing file" notice
    assert not [elem_id for elem_id in elem_ids(demo, "") if elem_id.endswith("-unavailable")]


@pytest.mark.parametrize("direction", sorted(SENTENCES))
def test_every_view_of_every_tab_draws_an_opus_mt_trace(demo, traces, direction):
    trace = traces[direction][0]
    page = ExplainPage(demo, trace, PAGE)
    for tab in TABS:
        page.values[page.tab] = tab
        for step in (1, trace.num_steps):
            page.values[page.step] = step
            page.draw()  # a failing view raises


@pytest.mark.parametrize("direction", sorted(SENTENCES))
def test_the_panels_that_rerun_the_model_run_the_traces_direction(demo, traces, direction):
    """Without positions, Switch heads off and Attribution on OPUS-MT: each on the checkpoint of the trace's
    direction (the other direction's has other ids), equal to the core's own computation on it."""
    trace = traces[direction][0]
    checkpoint = demo.runners[PAGE].by_direction[direction]
    page = ExplainPage(demo, trace, PAGE)
    page.draw()  # the Explain tab showing the trace, as when its buttons are pressed
    source, output = list(trace.source_ids), list(trace.output_ids)

    [kept] = page.press("nope-run", trace).values()
    expected = readouts.token_probabilities(checkpoint.model, source, output, Ablation(positional_encoding=False))
    np.testing.assert_allclose(kept["result"].changed_probs, expected, atol=1e-6)
    assert page.shown("nope-plot") is not None

    config = checkpoint.config
    choices = [[1] if index == 0 else [] for index in range(config.n_encoder_layers + 2 * config.n_decoder_layers)]
    page.press("ablate-run", trace, *choices)
    assert "Heads switched off" in page.shown("ablate-result")

    [kept] = page.press("attribution-run", trace).values()
    expected = attribute(checkpoint.model, source, output, 32)
    np.testing.assert_allclose(kept["result"].integrated_gradients, expected.integrated_gradients, atol=1e-6)


# --------------------------------------------------------------------------- positions, tokens, notices
def test_the_positional_view_is_the_halves_table_and_names_its_columns_by_it(demo, traces):
    """The figure's table equals sin | cos computed here in float64 (Marian's layout), and every drawn wave is
    named sin or cos as its column is: the first d_model/2 sines, the rest cosines (sin 0 = 0, cos 0 = 1)."""
    trace = traces["de-en"][0]
    figure = figure_of(positions.positions_view(demo.runners[PAGE], trace))
    z = np.asarray(figure["data"][0]["z"], dtype=np.float64)
    n_positions, d_model = z.shape
    frequencies = 1.0 / 10000.0 ** (2 * np.arange(d_model // 2) / d_model)  # (D/2,)
    angles = np.arange(n_positions)[:, None] * frequencies  # (P, D/2)
    np.testing.assert_allclose(z, np.concatenate([np.sin(angles), np.cos(angles)], axis=1), atol=1e-6)
    waves = [series for series in figure["data"] if series["type"] == "scatter"]
    kinds = set()
    for wave in waves:
        dim, kind = re.fullmatch(r"dim (\d+) \((sin|cos)\)", wave["name"]).groups()
        kinds.add(kind)
        assert kind == ("sin" if int(dim) < d_model // 2 else "cos")
        assert z[0, int(dim)] == (0.0 if kind == "sin" else 1.0)
        shifted = np.asarray(wave["y"], dtype=np.float64) - z[:, int(dim)]
        np.testing.assert_allclose(shifted, shifted[0], atol=1e-6)  # the column itself, offset for stacking
    assert kinds == {"sin", "cos"}
    half = d_model // 2
    assert figure["layout"]["xaxis"]["title"]["text"] == f"dimension (0–{half - 1} sin, {half}–{d_model - 1} cos)"
    about = [
        block.value
        for block in demo.blocks.values()
        if block.page == PAGE and "lays it out in halves" in str(getattr(block, "value", ""))
    ]
    assert len(about) == 1  # the tab's text says so too


def test_chips_mark_the_marian_special_tokens_and_notices_name_its_end_token(traces):
    trace = traces["de-en"][0]
    chips = session.tokens_html(trace)
    assert '<span class="tok special">&lt;/s&gt;</span>' in chips
    assert '<span class="tok">&lt;/s&gt;</span>' not in chips
    limited = type(trace)(**{**vars(trace), "stopped_by": "max_length"})
    assert "without the model writing </s>" in " ".join(notices(limited))
    imposed = " ".join(notices(type(trace)(**{**vars(trace), "stopped_by": "eos_at_limit"})))
    assert "the model chose no end, so its decoding rule wrote </s> at the last step" in imposed
    assert "without the model writing" not in imposed and notices(trace) == ()
    assert "\\</s\\>" in session.notice_markdown(notices(limited))  # on the page: a token, not a tag


def test_guard_rails_say_only_what_holds_for_opus_mt(demo):
    """No target tag and no own training data on OPUS-MT: the wrong-language notice says the model translates one
    direction, a long sentence is not measured against the own model's training sentences, and characters the
    vocabulary lacks (written as <unk>, no byte fallback) are flagged."""
    trace, _, _, notice = page_translate(
        demo, "The children are playing football in the park with their friends.", "de-en"
    )
    # what the model wrote, read from its output; no word of a target tag (OPUS-MT has none)
    said = language.what_came_out(trace.translation, "de-en")
    assert said in " ".join(notices(trace)) and "target tag" not in notice and "tag" not in said
    assert switch_direction(trace) == "en-de" and notice == session.notice_markdown(notices(trace))
    [rail] = language.guard_rails(trace.source_text, trace.source_tokens, "de-en", own_model=False)  # no output read
    assert "This model translates German into English only" in rail.message and "target tag" not in rail.message
    trace, _, _, notice = page_translate(demo, "Der Hund läuft über die nasse Straße. " * 4, "de-en")
    assert language.LONG_SOURCE_SUBWORDS < len(trace.source_tokens) and not trace.source_truncated
    assert "training" not in notice and "Multi30k" not in notice
    trace, _, _, notice = page_translate(demo, "東京 東京 東京 東京", "de-en")
    assert trace.source_tokens.count("<unk>") >= 2 and "are the unknown token <unk>" in " ".join(notices(trace))
    assert notice == session.notice_markdown(notices(trace))


def test_a_job_without_a_trace_runs_on_its_directions_checkpoint(demo):
    """The paper's sentences are English: on OPUS-MT their job runs on opus-mt-en-de (its default direction)."""
    from model.analysis.paper_figures import PAPER_FIGURES
    from serving import jobs

    runner = demo.runners[PAGE]
    assert runner.direction_of_call(jobs.paper_figures, (PAPER_FIGURES,), {}) == "en-de"
    assert runner.direction_of_call(jobs.token_probabilities, ([1], [2]), {"direction": "de-en"}) == "de-en"
