"""app.py as Gradio's hot reload runs it (`gradio app.py`): a module-level `demo`. Gradio re-executes the file's
source on every change (gradio.utils.watchfn); this test does the same, twice."""

from __future__ import annotations

import types
from pathlib import Path

import gradio as gr

import app

APP_FILE = Path(__file__).resolve().parents[2] / "app.py"


def test_the_module_level_demo_runs_the_model_in_process():
    assert isinstance(app.demo, gr.Blocks) and app.demo.runner is not None


def test_a_reload_re_executes_the_file(monkeypatch):
    monkeypatch.setenv(app.RELOAD_ENV, str(APP_FILE.parent))
    module = types.ModuleType("app")
    module.__file__ = str(APP_FILE)
    demos = []
    for _ in range(2):  # as gradio.utils.watchfn: exec(source, module.__dict__), then getattr(module, "demo")
        exec(compile(APP_FILE.read_text(encoding="utf-8"), str(APP_FILE), "exec"), module.__dict__)
        demos.append(module.demo)
    assert demos[0] is not demos[1]
