"""UI callbacks (the ui/ package), called directly on the tiny checkpoint: translate once, then every view
from the trace.

No server and no browser here (tests/browser/ drives the page); no network, no ../shared/data.
"""

from __future__ import annotations

from collections import Counter

import html

import json
import os
import shutil
import subprocess
from pathlib import Path

import gradio as gr
import numpy as np
import pytest
from helpers import api_function, figure_json, translated_trace, run_listener

import visualizer
from visualizer import steps
from model.text import language, limits
from model.decoding.trace import ATTENTION_KINDS
from page_driver import PageDriver
from serving import Runner
from serving.translation import notices, switch_direction
from ui import attention, build_demo, model_tab, next_token, positions, redraw, server, session, stepping
from ui.common import Page
from visualizer.tokens import token_chips

GERMAN = "Ein Mann fährt Fahrrad."
XSS = "<img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def demo(tiny_checkpoint) -> gr.Blocks:
    return build_demo(tiny_checkpoint)


# --------------------------------------------------------------------------- the page
def test_demo_exposes_translate_endpoint(demo):
    """/translate is the API's, once; the page's own Translate listener is private and draws the page."""
    visible = [d["api_name"] for d in demo.config["dependencies"] if d.get("api_visibility", "public") == "public"]
    assert visible.count("translate") == 1
    answer = run_listener(api_function(demo, "translate"), "Zwei Hunde spielen im Schnee.", "de-en")
    driver = PageDriver(demo)
    driver.load()
    driver.translate("Zwei Hunde spielen im Schnee.", "de-en")
    trace = driver.trace
    assert answer == {"translation": trace.translation, "notices": list(notices(trace))}
    assert driver.shown("translation") == trace.translation and Path(driver.shown("download-trace")).exists()
    assert driver.shown("notice") == session.notice_markdown(notices(trace))


def test_the_page_shows_its_notices(demo):
    """The page's Translate writes the notice: a sentence in the other language (and offers the switch), a source
    cut to MAX_SOURCE_TOKENS, no [EOS] within the length budget (the untrained tiny model rarely ends)."""
    driver = PageDriver(demo)
    driver.load()
    english = "The children are playing football in the park with their friends."
    driver.translate(english, "de-en")
    notice = driver.shown("notice")
    assert notice == session.notice_markdown(notices(driver.trace)) and switch_direction(driver.trace) == "en-de"
    assert "English" in notice and driver.prop("switch-direction", "visible") is True
    driver.click("switch-direction")  # translates the same sentence the other way
    assert driver.trace.direction == "en-de" and driver.value("direction") == "en-de"
    assert driver.trace.source_text == english
    driver.translate("Ein Mann fährt Fahrrad. " * 40, "de-en")
    notice = driver.shown("notice")
    assert driver.trace.source_truncated and f"{limits.MAX_SOURCE_TOKENS} subword tokens" in notice
    assert (driver.trace.stopped_by == "max_length") == ("without the model writing \\[EOS\\]" in notice)


def test_positional_encoding_endpoint_returns_a_json_object(demo, checkpoint):
    table = api_function(demo, "positional_encoding").fn()
    assert isinstance(table, dict)
    np.testing.assert_allclose(table["table"], checkpoint.model.positional_encoding.numpy(), atol=1e-4)
    assert (table["rows"], table["d_model"]) == (checkpoint.config.max_positions, checkpoint.config.d_model)
    assert np.asarray(table["table"]).shape == (table["rows"], table["d_model"])
    returns = demo.get_api_info()["named_endpoints"]["/positional_encoding"]["returns"]
    assert [entry["type"].get("type") for entry in returns] == ["object"]  # JSON, not a string of JSON


def test_demo_without_checkpoint_starts_and_explains(tmp_path):
    missing = tmp_path / "no-such-checkpoint"
    demo = build_demo(missing)
    texts = [c.get("props", {}).get("value") for c in demo.config["components"]]
    assert any(isinstance(t, str) and "No model loaded" in t and str(missing) in t for t in texts)
    with pytest.raises(gr.Error, match="No model is loaded"):
        [endpoint] = [fn for fn in demo.fns.values() if fn.name == "translate" and fn.api_visibility == "public"]
        run_listener(endpoint, GERMAN, "de-en")


def test_checkpoint_source_prefers_arguments_then_hub_then_directory_environment(monkeypatch, tmp_path):
    import app  # the launcher (its module-level demo loads the shipped checkpoint)

    monkeypatch.delenv(app.HUB_ENV, raising=False)
    monkeypatch.setenv(app.CHECKPOINT_ENV, str(tmp_path))
    assert app.checkpoint_source() == (str(tmp_path), False)
    assert app.checkpoint_source("elsewhere") == ("elsewhere", False)
    monkeypatch.setenv(app.HUB_ENV, "owner/name")  # Spaces has no command line: the Hub repo comes from here
    assert app.checkpoint_source() == ("owner/name", True)
    assert app.checkpoint_source("elsewhere") == ("elsewhere", False)
    assert app.checkpoint_source(hub="other/repo") == ("other/repo", True)
    monkeypatch.delenv(app.HUB_ENV)
    monkeypatch.delenv(app.CHECKPOINT_ENV)
    assert app.checkpoint_source() == (str(app.DEFAULT_CHECKPOINT), False)


def test_server_host_defaults_to_localhost(monkeypatch):
    monkeypatch.delenv(server.HOST_ENV, raising=False)
    monkeypatch.delenv("GRADIO_SERVER_NAME", raising=False)
    assert server.server_host() == "127.0.0.1"
    monkeypatch.setenv(server.HOST_ENV, "0.0.0.0")
    assert server.server_host() == "0.0.0.0"
    assert server.server_host("192.0.2.1") == "192.0.2.1"


# --------------------------------------------------------------------------- stepping
def run_step_buttons(cases: list[tuple[str, int, int, bool]]) -> list[int]:
    """The step buttons' own JavaScript (ui/js/keys.js `moveStep`, which each button's click runs), in Node on a
    fake slider: cases of (move, slider value, slider max, slider disabled) -> the slider's value after the click,
    and whether it sent its input event (the one action that draws a step) only when the step moved."""
    from ui.page_script import SCRIPTS

    keys = (SCRIPTS / "keys.js").read_text(encoding="utf-8")
    script = "let document;\n" + keys + "\nconst out = [];\n"
    for move, value, last, disabled in cases:
        slider = json.dumps({"value": "" if value is None else str(value), "max": str(last), "disabled": disabled})
        script += (
            f"{{ const range = Object.assign({slider}, {{sent: 0, dispatchEvent() {{ this.sent += 1; }}}});\n"
            f"  document = {{querySelector: () => range}};\n"
            f"  moveStep({json.dumps(move)});\n"
            f"  out.push([Number(range.value) || 1, range.sent]); }}\n"
        )
    result = subprocess.run(
        ["node", "-e", script + "console.log(JSON.stringify(out));"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={**os.environ, "NODE_OPTIONS": ""},
    )
    moved = json.loads(result.stdout)
    assert all(sent == (value != (case[1] or 1)) for (value, sent), case in zip(moved, cases)), moved
    return [value for value, _ in moved]


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js runs the buttons' JavaScript here")
def test_step_buttons_move_within_the_slider():
    """The one step rule is the JavaScript the buttons run (no Python copy): clamped to 1..last, and a disabled
    slider (no trace, or a one-step trace) stays where it is."""
    cases = [
        ("prev", 1, 5, False),
        ("next", 1, 5, False),
        ("next", 5, 5, False),
        ("first", 3, 5, False),
        ("last", 1, 5, False),
        ("prev", 4, 5, False),
        ("next", 2, 1, False),
        ("next", 3, 5, True),
        ("next", None, 5, False),
        ("last", 2, 3, False),
    ]
    assert run_step_buttons(cases) == [1, 2, 5, 1, 5, 3, 1, 3, 2, 3]


def test_the_play_timer_moves_one_step_and_stops_at_the_end(trace):
    steps = stepping.Stepping("slider", "info", "playing", "timer", "play")  # names stand in for the components
    assert steps.tick(trace, 1, True)["slider"] == min(2, trace.num_steps)
    at_end = steps.tick(trace, trace.num_steps - 1, True)
    assert at_end["slider"] == trace.num_steps and at_end["playing"] is False  # the last step stops playback
    assert stepping.clamp_step(trace, 10_000) == trace.num_steps and stepping.clamp_step(trace, -5) == 1
    assert stepping.clamp_step(None, 7) == 1


def test_step_html_shows_prefix_and_chosen_token(trace):
    step = min(3, trace.num_steps)
    text = stepping.step_html(trace, step)
    assert f"Step {step} of {trace.num_steps}" in text
    assert text.count('<span class="tok') == step + 1  # the prefix [BOS] y1 .. plus the chosen token
    assert f"{float(trace.entropy[step - 1]):.2f} bits" in text
    assert f"“{html.escape(trace.translation)}”</span>" in text  # the whole translation (a phone's bar shows it)


def test_candidates_view_highlights_the_greedy_choice(trace, monkeypatch):
    seen = {}
    original = visualizer.candidates_chart

    def spy(tokens, probs, chosen_index, **kwargs):
        seen.update(tokens=tokens, probs=probs, chosen=chosen_index, **kwargs)
        return original(tokens, probs, chosen_index, **kwargs)

    monkeypatch.setattr(steps, "candidates_chart", spy)  # the view draws through visualizer/steps.py
    step = min(2, trace.num_steps)
    figure = figure_json(next_token.candidates_view(trace, step))
    assert seen["tokens"][seen["chosen"]] == trace.output_tokens[step - 1]
    assert seen["chosen"] == 0  # greedy picks the most probable candidate
    assert seen["entropy_bits"] == pytest.approx(float(trace.entropy[step - 1]))
    assert figure["config"]["displayModeBar"] is True
    assert figure["config"]["toImageButtonOptions"]["format"] == "png"


# --------------------------------------------------------------------------- views from the trace only
@pytest.fixture
def no_model(monkeypatch):
    """After the first translation, any further model call fails the test."""

    def must_not_run(*args, **kwargs):
        raise AssertionError("re-rendering must not run the model")

    monkeypatch.setattr(Runner, "call", must_not_run)  # every model computation of the page


@pytest.fixture
def drawn(monkeypatch) -> list[tuple[str, np.ndarray, list, list]]:
    """Record (function, weights, queries, keys) for every attention figure drawn; still draw it."""
    calls = []
    for name in ("attention_heatmap", "attention_grid"):
        original = getattr(visualizer, name)

        def spy(weights, queries, keys, *, _name=name, _original=original, **kwargs):
            calls.append((_name, np.asarray(weights), list(queries), list(keys), kwargs))
            return _original(weights, queries, keys, **kwargs)

        monkeypatch.setattr(visualizer, name, spy)
    return calls


@pytest.mark.parametrize("kind", list(ATTENTION_KINDS))
@pytest.mark.parametrize("head", ["all", "mean", "1", "4"])
def test_attention_views_have_the_shapes_of_the_step(trace, no_model, drawn, kind, head):
    step = min(3, trace.num_steps)
    value = attention.attention_view(trace, step, kind, 2, head)
    assert figure_json(value)["data"], "the figure has traces"
    name, weights, queries, keys, kwargs = drawn[-1]
    S, L, H = len(trace.source_tokens), trace.encoder_attention.shape[0], trace.encoder_attention.shape[1]
    expected = {"encoder": (S, S), "decoder_self": (step, step), "cross": (step, S)}[kind]
    assert (len(queries), len(keys)) == expected
    if head == "all":
        assert name == "attention_grid" and weights.shape == (L, H, *expected)
    else:
        assert name == "attention_heatmap" and weights.shape == expected
        np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-4)  # softmax rows, also for the mean
    assert kwargs["highlight_query"] == (None if kind == "encoder" else step - 1)


def test_decoder_triangle_grows_with_the_step(trace, no_model, drawn):
    for step in range(1, trace.num_steps + 1):
        attention.attention_view(trace, step, "decoder_self", 1, "1")
        weights = drawn[-1][1]
        assert weights.shape == (step, step)
        assert np.allclose(np.triu(weights, k=1), 0.0)  # nothing above the diagonal: no peeking ahead


def test_mean_of_heads_and_single_head_pick_the_right_layer(trace, no_model, drawn):
    attention.attention_view(trace, 1, "encoder", 2, "mean")
    np.testing.assert_allclose(drawn[-1][1], trace.encoder_attention[1].mean(0), rtol=1e-6)
    attention.attention_view(trace, 1, "encoder", 2, "3")
    np.testing.assert_array_equal(drawn[-1][1], trace.encoder_attention[1, 2])
    attention.attention_view(trace, 1, "encoder", 99, "99")  # out-of-range controls clamp, never crash
    np.testing.assert_array_equal(drawn[-1][1], trace.encoder_attention[-1, -1])


@pytest.mark.parametrize("kind", list(ATTENTION_KINDS))
@pytest.mark.parametrize("head", ["all", "2"])
def test_pipeline_view_uses_scores_mask_and_weights_of_one_head(trace, no_model, monkeypatch, kind, head):
    seen = {}
    original = visualizer.attention_pipeline

    def spy(scores, mask, weights, queries, keys, **kwargs):
        seen.update(scores=scores, mask=mask, weights=weights, queries=queries, keys=keys, **kwargs)
        return original(scores, mask, weights, queries, keys, **kwargs)

    monkeypatch.setattr(visualizer, "attention_pipeline", spy)
    step = min(2, trace.num_steps)
    figure_json(attention.pipeline_view(trace, step, kind, 1, head))
    h = 0 if head == "all" else 1
    scores = {"encoder": trace.encoder_scores, "decoder_self": trace.decoder_self_scores, "cross": trace.cross_scores}[
        kind
    ]
    rows = len(trace.source_tokens) if kind == "encoder" else step
    np.testing.assert_array_equal(seen["scores"], scores[0, h, :rows, : seen["scores"].shape[1]])
    assert (
        seen["scores"].shape == seen["mask"].shape == seen["weights"].shape == (len(seen["queries"]), len(seen["keys"]))
    )
    assert seen["mask"].dtype == bool
    assert ("head 1 stands in" in seen["title"]) == (head == "all")


def test_positions_and_masks_views(checkpoint, trace, no_model):
    model_runner = Runner(checkpoint)
    assert figure_json(positions.positions_view(model_runner, trace))["data"]
    assert figure_json(positions.masks_view(model_runner, trace, trace.num_steps))["data"]


@pytest.fixture(scope="module")
def tab_views(checkpoint):
    """The TabViews of the next-token, attention, positions and masks tabs, built as the page builds them."""
    with gr.Blocks():
        trace_state, step, tab = gr.State(None), gr.Slider(1, 2), gr.State("next")
        with gr.Tabs() as tabs:
            page = Page(checkpoint, trace_state, step, tab, tabs, Runner(checkpoint))
            views = [next_token.build(page), attention.build(page).view, *positions.build(page)]
    return {view.tab_id: view for view in views}


def test_only_the_open_tab_is_drawn(trace, no_model, tab_views):
    views = list(tab_views.values())
    kind, layer, head, _show_all, pipeline_open, view_as, keep_token = tab_views["attention"].controls
    values = {kind: "cross", layer: 1, head: "1", pipeline_open: True, view_as: "heatmap", keep_token: None}
    for tab in ("next", "attention", "positions", "masks"):
        drawn = redraw.render_views(views, tab, trace, 1, values)
        assert set(drawn) == set(tab_views[tab].outputs), tab
        assert all(value is not None and not isinstance(value, dict) for value in drawn.values())
    # without a trace (before a translation, after an error) every view of every tab is emptied
    assert redraw.render_views(views, "next", None, 1, values) == {
        output: None for view in views for output in view.outputs
    }
    assert redraw.render_views(views, "model", trace, 1, values) == {}  # the Model tab draws itself when opened
    masks = redraw.render_views(
        views, "masks", trace, 2, {kind: "encoder", layer: 1, head: "all", pipeline_open: False, view_as: "lines"}
    )
    assert set(masks) == set(tab_views["masks"].outputs)


def test_every_listener_draws_every_view_with_the_latest_values(demo):
    """Each user action is one listener, always_last, whose outputs are the step panel and every view; a plain
    change of a control (a layer, a head) or of the step is the `redraw` action."""
    drawn = {"step-info", "candidates-plot", "attention-plot", "pipeline-plot", "pe-plot", "mask-plot"}
    listeners = [fn for fn in demo.fns.values() if fn.page == "" and hasattr(fn.fn, "action")]
    for listener in listeners:
        assert listener.trigger_mode == "always_last", listener.name
        assert drawn <= {getattr(block, "elem_id", None) for block in listener.outputs}, listener.name
    triggers = {
        (demo.blocks[block_id].elem_id, event)
        for fn in listeners
        if fn.name == "redraw"
        for block_id, event in fn.targets
    }
    assert {("step", "input"), ("layer", "input"), ("head", "input"), ("attention-view", "input")} <= triggers


def test_no_action_is_answered_by_two_listeners(demo):
    """An action wired to several events is one listener (gr.on): as separate listeners their answers could land
    out of order and an earlier event's answer win (the lines view's token menu hidden after "lines" was chosen)."""
    actions = [fn.fn.action for fn in demo.fns.values() if hasattr(fn.fn, "action") and fn.fn.action.fn is not None]
    wired = Counter(
        (fn.page, fn.fn.action.fn) for fn in demo.fns.values() if hasattr(fn.fn, "action") and fn.fn.action.fn
    )
    assert len(actions) > 20 and [key for key, count in wired.items() if count > 1] == []
    [translate] = [fn for fn in demo.fns.values() if fn.name == "translate" and hasattr(fn.fn, "action")]
    triggers = {(demo.blocks[block_id].elem_id, event) for block_id, event in translate.targets}
    assert triggers == {("translate", "click"), ("source", "submit")}


def test_the_lines_token_menu_follows_the_sentence_the_kind_and_the_drawing(demo):
    """The lines view's token menu is shown, and its choices set, in the answer of the action that changed what it
    follows: choosing "lines", another kind, another sentence."""
    driver = PageDriver(demo)
    driver.load()
    driver.open_tab("attention")
    driver.input("attention-view", "heatmap")
    assert driver.prop("lines-token", "visible") is False
    answer = driver.input("attention-view", "lines")
    assert "lines-token" in answer and driver.prop("lines-token", "visible") is True
    driver.input("attention-kind", "encoder")
    assert driver.prop("lines-token", "choices") == attention.token_choices(driver.trace, "encoder")
    answer = driver.translate(GERMAN, "de-en")
    assert "lines-token" in answer and driver.prop("lines-token", "visible") is True
    assert driver.trace.source_text == GERMAN
    assert driver.prop("lines-token", "choices") == attention.token_choices(driver.trace, "encoder")
    assert driver.value("lines-token") in driver.choices("lines-token")


# --------------------------------------------------------------------------- escaping
def test_tokens_are_escaped(checkpoint):
    trace = translated_trace(checkpoint, XSS, "en-de")
    for text in (session.tokens_html(trace), stepping.step_html(trace, trace.num_steps)):
        assert "<img" not in text
    assert "&lt;" in session.tokens_html(trace)
    assert token_chips([XSS]) == f'<span class="tok">{XSS.replace("<", "&lt;").replace(">", "&gt;")}</span>'


# --------------------------------------------------------------------------- model tab
def test_model_tab_config_metrics_and_curves(checkpoint, tiny_checkpoint, tmp_path):
    text = model_tab.config_markdown(checkpoint)
    assert f"{checkpoint.model.num_parameters():,} parameters" in text
    assert f"checkpoint `{tiny_checkpoint.name}`" in text and str(tiny_checkpoint.parent) not in text  # no server path
    from ui.text import REPOSITORY, public_path

    assert public_path(REPOSITORY / "checkpoints" / "de-en-small") == "checkpoints/de-en-small"
    assert "`d_model`" in text and f"| {checkpoint.config.d_model} |" in text
    assert model_tab.training_view(checkpoint) == (  # the fixture has no training_log.json
        None,
        "No `training_log.json` beside this checkpoint, so there are no training curves to show.",
    )

    directory = tmp_path / "with-log"
    shutil.copytree(tiny_checkpoint, directory)
    log = {
        "train": {
            "step": [1, 2, 3],
            "loss": [9.0, 7.5, 6.0],
            "learning_rate": [1e-4, 2e-4, 3e-4],
            "tokens_per_second": [1000.0, 1100.0, 1050.0],
        },
        "validation": {"step": [3], "loss": [6.5], "bleu_de_en": [1.2], "bleu_en_de": [0.9]},
    }
    (directory / "training_log.json").write_text(json.dumps(log), encoding="utf-8")
    figure, note = model_tab.training_view(session.load_model(str(directory)))
    assert figure_json(figure)["data"] and note == ""


def test_importing_the_ui_loads_no_model():
    """build_demo(checkpoint) is what loads a model: importing every ui module loads none (and not app.py)."""
    import subprocess
    import sys

    code = (
        "import importlib, pkgutil, sys\n"
        "import model, model.checkpoints.checkpoint as c\n"
        "calls = []\n"
        "c.load_checkpoint = c.load_local_checkpoint = model.load_checkpoint = lambda *a, **k: calls.append(a)\n"
        "import ui, ui.explain\n"
        "for package in (ui, ui.explain):\n"
        "    for info in pkgutil.iter_modules(package.__path__):\n"
        "        importlib.import_module(f'{package.__name__}.{info.name}')\n"
        "from ui.session import load_model\n"
        "assert calls == [] and load_model.cache_info().misses == 0, calls\n"
        "assert 'app' not in sys.modules\n"
        "print('ok')\n"
    )
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-2000:]


def test_the_step_slider_clamps_a_step_from_the_previous_sentence():
    """A step beyond a new, shorter trace's range reaches the listeners clamped (Gradio's slider refused
    the whole event, which left a stale plot); the page's front end still draws Gradio's own slider."""
    from ui.step_slider import StepSlider

    slider = StepSlider(1, 7, value=1, step=1)
    assert slider.preprocess(9) == 7 and slider.preprocess(0) == 1 and slider.preprocess(4) == 4
    assert slider.get_block_name() == "slider"
    with pytest.raises(gr.Error):
        gr.Slider(1, 7, step=1).preprocess(9)  # what it replaces


# --------------------------------------------------------------------------- one check a click, menus, Translate
def action_named(demo, name: str):
    """The declared action (ui/common.py Action) of the page's listener called `name`."""
    return next(fn for fn in demo.fns.values() if fn.name == name and fn.page == "" and hasattr(fn.fn, "action"))


def test_a_translate_click_checks_its_input_once(demo, monkeypatch):
    import serving.translation as translation

    calls = []
    real = translation.refusal
    monkeypatch.setattr(translation, "refusal", lambda *args: calls.append(args[0]) or real(*args))
    driver = PageDriver(demo)
    driver.load()
    calls.clear()
    driver.translate(GERMAN, "de-en")
    assert calls == [GERMAN]  # the click's one check, in the one Translate action
    trace = driver.trace
    answer = driver.translate("", "de-en")
    assert calls == [GERMAN, ""]
    assert {key for key in answer if isinstance(key, str)} == {"notice"}  # one message: the notice
    assert driver.trace is trace


def test_a_translate_checks_its_language_once(demo, monkeypatch):
    """The guard rails' language detector runs once per text a Translate checks (the sentence; the translation,
    where the sentence looks like the other language), though the notices and the header's direction switch both
    read them."""
    import model.text.language as language
    import serving.translation as translation

    getattr(translation.tripped_rails, "cache_clear", lambda: None)()  # checked afresh, whatever ran before
    detected = []
    real = language.detect_language
    monkeypatch.setattr(language, "detect_language", lambda text: detected.append(text) or real(text))
    driver = PageDriver(demo)
    driver.load()
    detected.clear()
    sentence = "Der Hund schläft heute im Garten."  # not the start-up example: checked afresh
    driver.translate(sentence, "de-en")
    assert detected == [sentence]
    english = "The dog is sleeping in the garden today."  # English under German -> English: its output checked too
    driver.translate(english, "de-en")
    assert detected[1:] == [english, driver.trace.translation]


def test_menus_dismissed_without_a_choice_change_nothing(demo):
    """A menu closed with Tab, Escape or a click elsewhere sends no choice: its action returns gr.skip() and its
    listener answers nothing (not fewer values than it declares: Gradio then marks every output with an error)."""
    on_open = action_named(demo, "on_open")
    assert on_open.fn.action.fn(None) == gr.skip() and on_open.fn.action.fn("") == gr.skip()
    assert set(on_open.fn.action.fn("2/3").values()) == {2, "3"}
    assert action_named(demo, "on_ranked").fn.action.fn(None) == gr.skip()
    example = action_named(demo, "example").fn.action.fn
    assert example("") == gr.skip() and example(None) == gr.skip()
    driver = PageDriver(demo)
    driver.load()
    for elem_id in ("examples", "grid-open-head", "compare-ranking"):
        assert driver.input(elem_id, None) == {}, elem_id  # the whole listener: nothing sent


def test_after_translate_the_view_shows_the_whole_translation(demo):
    """A translation puts the slider at the last step (a row per output token), its range with it, in the same
    answer; a refused input (no trace) changes neither."""
    driver = PageDriver(demo)
    driver.load()
    answer = driver.translate(GERMAN, "de-en")
    trace = driver.trace
    assert driver.value("step") == trace.num_steps and driver.prop("step", "maximum") == max(trace.num_steps, 2)
    assert "step" in answer
    answer = driver.translate("", "de-en")
    assert "step" not in answer and driver.value("step") == trace.num_steps


def test_the_page_script_is_its_js_files_and_parses(tmp_path):
    """ui/page_script.py hands Gradio the .js files of ui/js/ as one function, which Node parses."""
    from ui.page_script import SCRIPTS, page_script

    script = page_script()
    for path in sorted(SCRIPTS.glob("*.js")):
        assert path.read_text(encoding="utf-8").strip() in script, path.name
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    (tmp_path / "page.js").write_text(f"const install = {script};\n", encoding="utf-8")
    subprocess.run(["node", "--check", str(tmp_path / "page.js")], check=True)


def test_a_sentence_with_a_comparison_sign_is_not_markup():
    assert not [rail for rail in language.guard_rails("Tom ist < 3 Jahre alt.", ["▁a"] * 5, "de-en")]
