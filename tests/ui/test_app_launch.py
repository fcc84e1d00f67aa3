"""app.py as Gradio's hot reload runs it (`gradio app.py`): a module-level `demo`, and no worker processes
started by the first run or added by any reload. Gradio re-executes the file's source in the module `app`
on every change (gradio.utils.watchfn); this test does the same, twice."""

from __future__ import annotations

import types
from pathlib import Path

import gradio as gr

import app

APP_FILE = Path(__file__).resolve().parents[2] / "app.py"


def test_the_module_level_demo_runs_the_model_in_process():
    assert isinstance(app.demo, gr.Blocks) and app.demo.runner.pool is None


def test_a_reload_re_executes_the_file_and_starts_no_workers(monkeypatch):
    monkeypatch.setenv(app.RELOAD_ENV, str(APP_FILE.parent))
    module = types.ModuleType("app")
    module.__file__ = str(APP_FILE)
    demos = []
    for _ in range(2):  # as gradio.utils.watchfn: exec(source, module.__dict__), then getattr(module, "demo")
        exec(compile(APP_FILE.read_text(encoding="utf-8"), str(APP_FILE), "exec"), module.__dict__)
        demos.append(module.demo)
    assert demos[0] is not demos[1] and all(demo.runner.pool is None for demo in demos)


def test_the_first_run_under_gradio_reload_starts_no_pool(monkeypatch):
    monkeypatch.delenv(app.RELOAD_ENV, raising=False)
    monkeypatch.setattr(app, "default_workers", lambda: 2)
    assert app.workers_for(None) == 2 and app.workers_for(0) == 0
    monkeypatch.setenv(app.RELOAD_ENV, str(APP_FILE.parent))
    assert app.workers_for(None) == 0 and app.workers_for(3) == 3  # an explicit --workers still wins
