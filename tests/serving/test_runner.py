"""The page's model calls through ui/runner.py: the runner wired into build_demo, the model events in one
concurrency group, the pipeline figure drawn only while its accordion is open, the lean trace on the wire (it reads
back alone), the positional-encoding table served by /positional_encoding, and the tables of the Positions and
Masks views computed in this process.

Results through the page are compared with model.decoding.greedy.translate run here (the same checkpoint), array
for array; the table with the sinusoid formula of section 3.5 written out here.
"""

from __future__ import annotations

import inspect

import json
import math
from pathlib import Path

import gradio as gr
import numpy as np
import pytest

from model.decoding.ablation import Ablation
from model.decoding.greedy import translate
from model.decoding.trace import JSON_DECIMALS
from serving import Runner, trace_from_lean
from helpers import assert_same_trace
from page_driver import PageDriver
from ui import attention, build_demo, redraw, runner
from ui.common import Page
from ui.explain import branching, panel

GERMAN = "Zwei Hunde spielen im Schnee."
OWN_SENTENCE = (
    "Ein Hund läuft am Strand."  # not a built-in example (those are translated once, serving/example_cache.py)
)
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def page_demo(tiny_checkpoint):
    return build_demo(tiny_checkpoint)


def endpoint(demo: gr.Blocks, api_name: str):
    [block_fn] = [fn for fn in demo.fns.values() if fn.api_name == api_name]
    return block_fn


def sinusoids(positions: int, d_model: int) -> np.ndarray:
    """PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(...) (section 3.5), loop by loop."""
    table = np.zeros((positions, d_model))
    for pos in range(positions):
        for i in range(0, d_model, 2):
            angle = pos / 10000 ** (i / d_model)
            table[pos, i] = math.sin(angle)
            if i + 1 < d_model:
                table[pos, i + 1] = math.cos(angle)
    return table


# ------------------------------------------------------------------ the runner behind the page
def test_the_page_runs_its_model_calls_through_its_runner(page_demo, checkpoint, monkeypatch):
    calls = []
    real = Runner.call
    monkeypatch.setattr(
        Runner,
        "call",
        lambda self, job, *args, **kwargs: calls.append((self, job.name)) or real(self, job, *args, **kwargs),
    )
    driver = PageDriver(page_demo)
    driver.load()
    driver.translate(OWN_SENTENCE, "de-en")  # the page's Translate, as a visitor presses it
    trace = driver.trace
    assert calls == [(page_demo.runner, "translate")]
    assert_same_trace(trace, translate(checkpoint.model, checkpoint.tokenizer, OWN_SENTENCE, "de-en"))
    assert driver.shown("translation") == trace.translation and Path(driver.shown("download-trace")).exists()


def test_explain_runs_equal_the_model_run_here(page_demo, checkpoint):
    model = page_demo.runner
    trace = translate(checkpoint.model, checkpoint.tokenizer, GERMAN, "de-en")
    ablation = Ablation(cross_heads={(0, 0), (1, 1)})
    result = panel.intervene(model, trace, ablation)
    assert_same_trace(
        result.trace, translate(checkpoint.model, checkpoint.tokenizer, GERMAN, "de-en", ablation=ablation)
    )
    candidate = int(trace.candidate_ids[1][1])
    branched, step = branching.branch(model, trace, 2, candidate)
    assert step == 1 and branched.output_ids[1] == candidate
    assert_same_trace(
        branched,
        translate(checkpoint.model, checkpoint.tokenizer, GERMAN, "de-en", forced_prefix=branched.output_ids[:2]),
    )


def test_model_events_share_one_group_and_wait_for_a_model_slot(page_demo):
    """Every model-running listener (the page's and the API's) is in one group that takes many events from the queue
    at once, and waits for one of the MODEL_SLOTS model slots itself (ui/runner.py's in_model_slot: after its page's
    turn)."""
    grouped = [fn for fn in page_demo.fns.values() if fn.concurrency_id == runner.MODEL_EVENTS]
    names = {fn.name for fn in grouped}
    assert {"translate", "on_ablate", "on_branch", "on_beam", "on_run", "on_load", "translation_trace"} <= names
    limit = runner.MODEL_EVENTS_UNDER_WAY
    assert all(fn.concurrency_limit == limit and inspect.iscoroutinefunction(fn.fn) for fn in grouped)
    assert limit > 2 * runner.MODEL_SLOTS
    assert runner.SLOTS.count == runner.MODEL_SLOTS


# ------------------------------------------------------------------ the pipeline figure only when open
@pytest.fixture(scope="module")
def attention_tab(checkpoint):
    with gr.Blocks():
        trace_state, step, tab = gr.State(None), gr.Slider(1, 2), gr.State(attention.TAB_ID)
        with gr.Tabs() as tabs:
            page = Page(checkpoint, trace_state, step, tab, tabs)
            built = attention.build(page)
    return built


def test_the_pipeline_figure_is_drawn_only_while_open(attention_tab, checkpoint):
    view = attention_tab.view
    attention_plot, pipeline_plot = view.outputs
    kind, layer, head, _show_all, pipeline_open, view_as, _keep_token = view.controls
    assert isinstance(pipeline_open, gr.State) and pipeline_open.value is False  # closed at first
    trace = translate(checkpoint.model, checkpoint.tokenizer, GERMAN, "de-en")
    values = {kind: "cross", layer: 1, head: "2", pipeline_open: False, view_as: "heatmap"}
    for step in (1, 2, 3):  # stepping with the accordion closed redraws one figure
        assert set(redraw.render_views([view], attention.TAB_ID, trace, step, values)) == {attention_plot}
    drawn = redraw.render_views([view], attention.TAB_ID, trace, 2, {**values, pipeline_open: True})
    assert set(drawn) == {attention_plot, pipeline_plot}
    assert "layer 1, head 2" in json.loads(drawn[pipeline_plot].plot)["layout"]["title"]["text"]


def test_opening_the_accordion_redraws_and_closing_stops(page_demo):
    """Opening the accordion is one action of the page: its listener keeps it open and draws the figure in the same
    answer; then each step draws it, until closing stops that (nothing listens to the state's change)."""
    accordion = next(block for block in page_demo.blocks.values() if getattr(block, "elem_id", None) == "pipeline-box")
    assert accordion.open is False
    driver = PageDriver(page_demo)
    driver.load()
    driver.translate(GERMAN, "de-en")
    driver.input("step", 1)
    assert "pipeline-plot" not in driver.input("step", 2)  # closed: not drawn
    [state] = driver.on("pipeline-box", "expand").fn.action.outputs
    assert all((state._id, "change") not in fn.targets for fn in page_demo.fns.values())
    opened = driver.event("pipeline-box", "expand")
    assert driver.values[state] is True and opened["pipeline-plot"] is not None
    assert driver.input("step", 3)["pipeline-plot"] is not None  # open: each step draws it
    closed = driver.event("pipeline-box", "collapse")
    assert driver.values[state] is False and "pipeline-plot" not in closed
    assert "pipeline-plot" not in driver.input("step", 2)


# ------------------------------------------------------------------ the lean trace on the wire
def test_positional_encoding_endpoint_serves_the_models_table(page_demo, checkpoint):
    data = endpoint(page_demo, "positional_encoding").fn()  # a dict: JSON for API clients
    config = checkpoint.config
    assert (data["rows"], data["d_model"]) == (config.max_positions, config.d_model)
    # 4 decimals of the float32 table the model uses (float32 angles: within ~5e-5 more at position 255)
    np.testing.assert_allclose(data["table"], sinusoids(config.max_positions, config.d_model), atol=1e-4)
    np.testing.assert_allclose(data["table"], checkpoint.model.positional_encoding.numpy(), atol=1e-4)


def test_the_lean_trace_file_reads_back_alone(page_demo):
    driver = PageDriver(page_demo)
    driver.load()
    driver.translate(GERMAN, "de-en")
    trace, path = driver.trace, driver.shown("download-trace")  # the page's download
    again = trace_from_lean(json.loads(Path(path).read_text(encoding="utf-8")))
    assert again.output_tokens == trace.output_tokens and again.translation == trace.translation
    np.testing.assert_allclose(again.encoder_attention, trace.encoder_attention, atol=0.5 * 10**-JSON_DECIMALS + 1e-6)


def test_the_views_tables_come_from_this_process(checkpoint, monkeypatch):
    """The PE rows and the padded batch of the Positions and Masks views: no job, equal to the model's own."""
    model = Runner(checkpoint)
    monkeypatch.setattr(Runner, "call", lambda *args, **kwargs: pytest.fail("a job for a table"))
    rows = model.positional_encoding(40)
    assert np.array_equal(rows, checkpoint.model.positional_encoding[:40].numpy())
    assert model.positional_encoding(10**6).shape[0] == checkpoint.config.max_positions


@pytest.mark.slow
def test_the_api_answers_with_a_lean_trace_and_serves_the_table(tiny_checkpoint, checkpoint, tmp_path):
    """`python3 app.py` through gradio_client: /translate, /translation_trace, then /positional_encoding."""
    from gradio_client import Client

    from scripts.app_process import started_app

    with started_app(tiny_checkpoint, tmp_path / "app.log") as (url, _process):
        client = Client(url, verbose=False, download_files=str(tmp_path), analytics_enabled=False)
        translation = client.predict(GERMAN, "de-en", api_name="/translate")["translation"]
        lean = client.predict(GERMAN, "de-en", api_name="/translation_trace")
        table = np.asarray(client.predict(api_name="/positional_encoding")["table"])
    expected = translate(checkpoint.model, checkpoint.tokenizer, GERMAN, "de-en")
    assert translation == expected.translation
    np.testing.assert_allclose(table, checkpoint.model.positional_encoding.numpy(), atol=1e-4)
    again = trace_from_lean(lean)
    assert again.output_ids == expected.output_ids
    np.testing.assert_allclose(again.cross_attention, expected.cross_attention, atol=0.5 * 10**-JSON_DECIMALS + 1e-6)
