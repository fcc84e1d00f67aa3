"""Every file of the shipped checkpoint, broken four ways (cut off, emptied, made invalid UTF-8, replaced by a
folder), never stops the app: a required file's problem is one plain line naming it (the page's "No model loaded"
message), an optional file's is said by the view that needs it while the rest of the page works.

The loader layer (model/checkpoints/reading.py and the views' readers) runs the whole matrix; build_demo runs one
case per file (a whole page over the shipped model takes seconds)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from model.analysis.corpus.store import corpus_status
from model.checkpoints.checkpoint import CheckpointError, load_local_checkpoint
from tests.support.page_driver import PageDriver, component
from ui import build_demo, model_tab
from ui.explain import film_view
from ui.explain.corpus_figures import CorpusData

SHIPPED = Path(__file__).resolve().parents[2] / "checkpoints" / "de-en-small"
REQUIRED = [
    "config.json",
    "tokenizer.json",
    "model.safetensors.index.json",
    *sorted(path.name for path in SHIPPED.glob("model-*-of-*.safetensors")),
]
OPTIONAL = ["README.md", "film.npz", "corpus_heads.npz", "metrics.json", "training_log.json"]
WAYS = ["cut_off", "emptied", "invalid_utf8", "a_folder"]
# what the line says for each way: a file that is still a file of its kind, read as text or as an archive
SAYS = {"emptied": "is empty", "a_folder": "is a folder, not a file"}


def test_the_matrix_covers_every_file_of_the_shipped_checkpoint():
    assert sorted(REQUIRED + OPTIONAL) == sorted(path.name for path in SHIPPED.iterdir())


def broken_copy(tmp_path: Path, name: str, way: str) -> Path:
    """The shipped checkpoint in tmp_path, its files linked (never written), `name` a broken file of its own."""
    directory = tmp_path / "de-en-small"
    directory.mkdir()
    for path in SHIPPED.iterdir():
        if path.name != name:
            (directory / path.name).symlink_to(path)
    data, broken = (SHIPPED / name).read_bytes(), directory / name
    if way == "cut_off":
        broken.write_bytes(data[: len(data) // 2])
    elif way == "emptied":
        broken.write_bytes(b"")
    elif way == "invalid_utf8":
        broken.write_bytes(b"\xff\xfe\xfa" + data[3:])  # never UTF-8; a zip or safetensors header destroyed too
    else:
        broken.mkdir()
    return directory


def assert_plain_line(line: str, name: str, way: str, directory: Path) -> None:
    """One line that names the file, says what is wrong, and shows no server path, traceback or library advice."""
    assert name in line and "\n" not in line, line
    assert str(directory) not in line and str(SHIPPED) not in line and "/tmp" not in line, line
    assert "Traceback" not in line and "safe=False" not in line and "Error:" not in line, line
    assert SAYS.get(way, "") in line, line


@pytest.fixture(scope="module")
def shipped():
    return load_local_checkpoint(SHIPPED)


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("name", REQUIRED)
def test_a_broken_required_file_is_one_plain_line_naming_it(tmp_path, name, way):
    directory = broken_copy(tmp_path, name, way)
    with pytest.raises(CheckpointError) as raised:
        load_local_checkpoint(directory)
    line = str(raised.value)
    assert line.startswith(name), line
    assert_plain_line(line, name, way, directory)


def optional_problem(name: str, directory: Path, shipped) -> str:
    """What the view that needs the file says (its HTML or Markdown), read the way the page reads it."""
    if name == "film.npz":
        frames, message = film_view.load(directory)
        assert frames is None
        return message
    if name == "corpus_heads.npz":
        data, message = CorpusData(dataclasses.replace(shipped, path=directory)).get()
        assert data is None and corpus_status(directory / name, shipped.model)[1].startswith("unreadable")
        return message
    if name == "training_log.json":
        figure, note = model_tab.training_view(dataclasses.replace(shipped, path=directory))
        assert figure is None
        return note
    checkpoint = load_local_checkpoint(directory)  # metrics.json: the model loads, its scores are said to be broken
    assert checkpoint.metrics == {}
    return model_tab.metrics_markdown(checkpoint)


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("name", [name for name in OPTIONAL if name != "README.md"])
def test_a_broken_optional_file_is_said_by_its_view(tmp_path, shipped, name, way):
    directory = broken_copy(tmp_path, name, way)
    message = optional_problem(name, directory, shipped)
    line = next(
        line for line in message.replace("<p>", "\n").splitlines() if name in line and SAYS.get(way, "") in line
    )
    assert_plain_line(line, name, way, directory)


@pytest.mark.parametrize("way", WAYS)
def test_a_broken_model_card_changes_nothing_the_app_reads(tmp_path, shipped, way):
    checkpoint = load_local_checkpoint(broken_copy(tmp_path, "README.md", way))
    assert checkpoint.metrics == shipped.metrics and checkpoint.problems == {}


# --------------------------------------------------------------------------- the page, one case per file
PAGE_CASES = [
    ("config.json", "invalid_utf8"),
    ("tokenizer.json", "a_folder"),
    ("model.safetensors.index.json", "emptied"),
    (REQUIRED[3], "cut_off"),
    ("film.npz", "cut_off"),
    ("corpus_heads.npz", "cut_off"),
    ("metrics.json", "invalid_utf8"),
    ("training_log.json", "invalid_utf8"),
    ("README.md", "a_folder"),
]


@pytest.mark.parametrize("name, way", PAGE_CASES)
def test_the_page_starts_and_says_what_is_wrong(tmp_path, name, way):
    directory = broken_copy(tmp_path, name, way)
    demo = build_demo(directory)
    error = component(demo, "checkpoint-error")
    if name in REQUIRED:  # the page's own message: "No model loaded." and the line
        assert error.visible and "No model loaded" in error.value
        assert_plain_line(error.value.split("No model loaded.** ", 1)[1].split(". ", 1)[0], name, way, directory)
        return
    assert not error.visible
    page = PageDriver(demo)
    page.load()
    page.translate("Zwei Hunde spielen im Schnee.")
    assert page.shown("translation").strip()  # Translate works
    says = {
        "film.npz": lambda: component(demo, "film-missing").value,
        "corpus_heads.npz": lambda: component(demo, "corpus-missing").value,
        "metrics.json": lambda: component(demo, "metrics").value,
        "training_log.json": lambda: page.open_tab(model_tab.TAB_ID) and page.shown("training-log-note"),
        "README.md": lambda: f"{name} {SAYS[way]}",  # nothing on the page reads the card
    }[name]()
    assert_plain_line(next(line for line in says.splitlines() if name in line), name, way, directory)
