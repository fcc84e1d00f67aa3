"""The Python snippets of docs/deploy.md and of the model card run as written, from the project folder, with the
Hub replaced by the local stand-in (tests/support/local_hub.py): the card's snippet both as shipped (a local folder)
and as pushed (a repo id)."""

from __future__ import annotations

import re
from pathlib import Path

import local_hub
import pytest

from model.checkpoints.model_card import usage_python

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "checkpoints" / "de-en-small"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, re.S)


@pytest.fixture
def hub(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)  # the snippets name checkpoints/de-en-small, as a reader in the project folder would
    return local_hub.install(monkeypatch, tmp_path / "hub")


def run(snippet: str) -> dict:
    namespace: dict = {"__name__": "snippet"}
    exec(compile(snippet, "<snippet>", "exec"), namespace)  # noqa: S102 - the docs' own code
    return namespace


def test_the_deploy_docs_python_runs(hub, capsys):
    (snippet,) = python_blocks((ROOT / "docs" / "deploy.md").read_text(encoding="utf-8"))
    names = run(snippet)
    assert capsys.readouterr().out.strip()  # the translation it prints
    assert "config.json" in hub.files("you/attention-explorer-de-en")
    assert sum(p.numel() for p in names["model"].parameters()) == sum(
        p.numel() for p in names["checkpoint"].model.parameters()
    )


def test_the_model_cards_python_runs_as_shipped_and_as_pushed(hub, capsys):
    (shipped,) = python_blocks((SHIPPED / "README.md").read_text(encoding="utf-8"))
    run(shipped)
    local = capsys.readouterr().out.strip()
    from model import Transformer

    Transformer.from_pretrained(SHIPPED).push_to_hub("you/model")
    pushed_card = hub.files("you/model")["README.md"].decode()
    (pushed,) = python_blocks(pushed_card)
    assert pushed.strip() == usage_python("you/model", hub=True)
    run(pushed)
    assert capsys.readouterr().out.strip() == local and local  # the same weights, the same translation
