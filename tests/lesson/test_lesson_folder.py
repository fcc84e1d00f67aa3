"""The lesson folder as a whole: what it holds, that it names nothing outside itself, its size for five sentences
of about 20 tokens on the shipped model (at most 5 MB), its zip, and the command line (scripts/export_lesson.py)."""

from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile

import pytest

from lesson.writer import COPIED, read_sentence, zipped
from lesson_folder import lesson_folder
from model import load_checkpoint
from model.checkpoints.paths import DEFAULT_CHECKPOINT
from scripts import export_lesson

FIVE_SENTENCES = [  # about 20 subword tokens each with the shipped tokenizer
    "Ein Mann mit einem roten Hut fährt mit seinem alten Fahrrad langsam die lange Straße entlang.",
    "Zwei kleine Hunde spielen im frischen Schnee vor einem großen Haus am Rand der Stadt.",
    "Eine junge Frau in einem roten Kleid singt heute Abend auf einer kleinen Bühne im Park.",
    "Drei Kinder sitzen an einem langen Tisch und essen zusammen Kuchen mit ihrer Großmutter.",
    "Ein älterer Mann liest am Morgen die Zeitung, während seine Katze neben ihm auf dem Sofa schläft.",
]
MAX_BYTES = 5_000_000
URL = re.compile(r"(?i)\b(?:https?|wss?|ftp):|(?:src|href|url)\s*[=(]\s*['\"]?\s*//|@import")


@pytest.fixture(scope="module")
def folder(checkpoint, tmp_path_factory):
    index, _ = lesson_folder(checkpoint, tmp_path_factory.mktemp("lesson") / "lesson")
    return index.parent


def page_texts(folder) -> dict[str, str]:
    """Every file the page is made of, the sentences' data unpacked; Plotly's bundle apart (test below)."""
    texts = {
        str(path.relative_to(folder)): path.read_text("utf-8")
        for path in folder.rglob("*")
        if path.is_file() and path.name not in ("plotly-cartesian.min.js", "PLOTLY-LICENSE.txt")
    }
    for i in range(len(list((folder / "data").glob("sentence-*.js")))):
        texts[f"sentence {i + 1} unpacked"] = json.dumps(read_sentence(folder, i), ensure_ascii=False)
    return texts


def test_the_folder_holds_the_page_its_scripts_and_each_sentence(folder):
    names = sorted(str(path.relative_to(folder)) for path in folder.rglob("*") if path.is_file())
    assert names == sorted([*COPIED, "index.html", "data/lesson.js", "data/sentence-1.js", "data/sentence-2.js"])
    html = (folder / "index.html").read_text("utf-8")
    for script in ("plotly-cartesian.min.js", "figures.js", "data/lesson.js", "data/sentence-1.js", "player.js"):
        assert f'<script src="{script}" defer></script>' in html
    assert "<title>Test lesson</title>" in html


def test_the_page_names_no_url_outside_its_folder(folder):
    found = {name: URL.findall(text) for name, text in page_texts(folder).items()}
    assert not any(found.values()), {name: hits for name, hits in found.items() if hits}
    references = re.findall(r'(?:src|href)="([^"]+)"', (folder / "index.html").read_text("utf-8"))
    assert references and all((folder / ref).is_file() for ref in references)  # every one a file of the folder


def test_a_url_would_be_found(folder, tmp_path):
    """The check above can fail: the pattern finds the ways a page names a server."""
    for text in ('<script src="https://cdn.plot.ly/x.js">', "fetch('http://a.b')", "url(//fonts.x/y)", "@import 'x'"):
        assert URL.search(text), text


def test_plotly_is_the_vendored_bundle_unchanged(folder):
    readme = (COPIED["plotly-cartesian.min.js"].parent / "README.md").read_text("utf-8")
    digest = hashlib.sha256((folder / "plotly-cartesian.min.js").read_bytes()).hexdigest()
    assert f"`{digest}`" in readme and "4.1.1" in (folder / "plotly-cartesian.min.js").read_text("utf-8")[:200]
    assert "MIT License" in (folder / "PLOTLY-LICENSE.txt").read_text("utf-8")


def test_a_title_is_escaped(checkpoint, tmp_path):
    from lesson import page

    html = page.index_html('<img src=x onerror="alert(1)">', 1)
    assert "<img" not in html and "&lt;img" in html


def test_the_zip_holds_the_folder(folder):
    with zipfile.ZipFile(io.BytesIO(zipped(folder))) as archive:
        names = set(archive.namelist())
        assert f"{folder.name}/index.html" in names and f"{folder.name}/data/sentence-2.js" in names
        assert archive.read(f"{folder.name}/player.js") == (folder / "player.js").read_bytes()


def test_five_sentences_of_about_20_tokens_on_the_shipped_model_take_at_most_5_mb(tmp_path):
    checkpoint = load_checkpoint(DEFAULT_CHECKPOINT)
    sentences = [("", "", text) for text in FIVE_SENTENCES]
    index, lesson = lesson_folder(checkpoint, tmp_path / "five", sentences)
    assert all(18 <= len(s.trace.source_tokens) <= 26 for s in lesson), [len(s.trace.source_tokens) for s in lesson]
    size = sum(path.stat().st_size for path in index.parent.rglob("*") if path.is_file())
    assert size <= MAX_BYTES, f"{size:,} bytes"


def test_the_command_line_exports_a_lesson(tiny_checkpoint, tmp_path, capsys):
    out = tmp_path / "cli"
    argv = ["--out", str(out), "--checkpoint", str(tiny_checkpoint), "--title", "Week 3", "--heading", "First"]
    assert export_lesson.main([*argv, "--note", "Look at head 2.", "Ein Hund läuft.", "Wie spät ist es?"]) == 0
    assert "2 sentences" in capsys.readouterr().out
    first, second = read_sentence(out, 0), read_sentence(out, 1)
    assert (first["title"], first["note"], first["source"]) == ("First", "Look at head 2.", "Ein Hund läuft.")
    assert (second["title"], second["note"]) == ("Wie spät ist es?", "")
    assert "<title>Week 3</title>" in (out / "index.html").read_text("utf-8")


def test_the_command_line_refuses_a_bad_sentence(tiny_checkpoint, tmp_path, capsys):
    assert export_lesson.main(["--out", str(tmp_path / "x"), "--checkpoint", str(tiny_checkpoint), "   "]) == 2
    assert "error:" in capsys.readouterr().err
    assert not (tmp_path / "x" / "index.html").exists()


def test_the_lesson_package_is_pure_of_gradio_and_the_page():
    """lesson/ builds on model/ and visualizer/ only: importing it loads neither Gradio nor ui/ (a fresh process)."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    probe = "import sys, lesson.writer; print(sorted(m for m in sys.modules if m.split('.')[0] in ('gradio', 'ui')))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
