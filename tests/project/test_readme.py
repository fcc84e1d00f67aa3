"""The README is a short front door that matches the tree and the shipped checkpoint.

- At most 10 KB (the Space page shows all of it).
- Its layout table lists every top-level folder and every package folder of the tree, and every path it
  lists exists.
- Its model table shows the shipped checkpoint's own numbers (config.json, metrics.json), and docs/training.md
  holds the scores table the model card's generator writes.
- The README and the guides in docs/ cite no issue numbers and no commit hashes: history is git's.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SHIPPED = ROOT / "checkpoints" / "de-en-small"
MAX_BYTES = 10 * 1024
NOT_IN_LAYOUT = {"__pycache__"}  # never part of the tree a reader sees

ISSUE_NUMBER = re.compile(r"\bissues?\s*#?\s*\d+|(?<![&\w])#\d+\b", re.IGNORECASE)
# 7 to 40 hex digits with at least one letter and one digit: an abbreviated or full commit hash
COMMIT_HASH = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b")
# a sentence that tells how the code was rather than what it is
HISTORY = re.compile(
    r"\b(the commit before|this branch|used to (?:be|run|keep|hold|live|show|draw|have)|no longer|previously|"
    r"formerly|(?:was|were) (?:removed|dropped)|now the only|the old (?:code|version|pool|way))\b",
    re.IGNORECASE,
)
RUN_RECORD = re.compile(r"\d{4}-\d{2}-\d{2}-")  # docs/training/<date>-<name>/: a dated record of one training run


def readme() -> str:
    return README.read_text(encoding="utf-8")


def section(text: str, heading: str) -> str:
    """The body of a `## heading` section, up to the next `## `."""
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.DOTALL | re.MULTILINE)
    assert match, f"README.md has no '## {heading}' section"
    return match.group(1)


def table_rows(text: str) -> list[list[str]]:
    """The cells of every Markdown table row in text, header and separator rows left out."""
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in text.splitlines()
        if line.strip().startswith("|")
    ]
    return [row for row in rows[2:] if not all(set(cell) <= set("-: ") for cell in row)]


def layout_paths() -> list[str]:
    """The paths of the Layout table's first column, as written (`model/core/`, `app.py`)."""
    paths = []
    for row in table_rows(section(readme(), "Layout")):
        match = re.fullmatch(r"`([^`]+)`", row[0])
        assert match, f"a Layout row must start with one `path`: {row[0]!r}"
        paths.append(match.group(1))
    return paths


def git_ignored_top_level() -> set[str]:
    """Top-level names .gitignore excludes (`/runs/`, `/data/`): not part of the project's tree."""
    lines = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    return {line.strip().strip("/") for line in lines if re.fullmatch(r"/?[\w.-]+/", line.strip())}


def tracked_files() -> list[str] | None:
    """git ls-files (paths relative to the root) in a git checkout, else None."""
    if not (ROOT / ".git").exists() or not shutil.which("git"):
        return None
    listing = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=False)
    return [name for name in listing.stdout.decode().split("\0") if name] if listing.returncode == 0 else None


def project_files() -> list[str]:
    """The project's files: tracked ones in a git checkout (so local leftovers do not count), else every file
    outside hidden and git-ignored top-level folders."""
    tracked = tracked_files()
    if tracked is not None:
        return [name for name in tracked if (ROOT / name).exists()]
    skipped = git_ignored_top_level() | NOT_IN_LAYOUT
    files = []
    for folder, children, names in os.walk(ROOT):
        children[:] = [name for name in children if not name.startswith(".") and name not in skipped]
        files += [(Path(folder) / name).relative_to(ROOT).as_posix() for name in names]
    return files


def folders_a_reader_must_find() -> set[str]:
    """Every top-level folder, and every package folder (one with __init__.py) outside tests/."""
    parts = [Path(name).parts for name in project_files()]
    top = {f"{p[0]}/" for p in parts if len(p) > 1 and not p[0].startswith(".")}
    packages = {
        "/".join(p[:-1]) + "/"
        for p in parts
        if len(p) > 1 and p[-1] == "__init__.py" and p[0] != "tests" and not p[0].startswith(".")
    }
    return top | packages


def test_readme_is_at_most_10_kb():
    size = len(README.read_bytes())
    assert size <= MAX_BYTES, f"README.md is {size} bytes; move details to docs/"


def test_layout_table_lists_only_what_exists():
    paths = layout_paths()
    assert len(paths) >= 10  # the table is there and parsed (a renamed heading would empty it)
    missing = [path for path in paths if not (ROOT / path).exists()]
    assert not missing, f"the README's layout table lists paths that do not exist: {missing}"
    assert all((ROOT / path).is_dir() for path in paths if path.endswith("/"))


def test_layout_table_lists_every_folder_and_package():
    required = folders_a_reader_must_find()
    assert {"model/", "model/core/", "ui/explain/", "tests/"} <= required  # the walk finds the tree
    unlisted = sorted(required - set(layout_paths()))
    assert not unlisted, f"folders missing from the README's layout table: {unlisted}"


def test_the_checks_recognise_issue_numbers_and_hashes():
    for text in ("as issue 12 asked", "Issues 15 and 24", "see #12.", "(issue #30)"):
        assert ISSUE_NUMBER.search(text), text
    for text in ("commit `ee3c4e3`", "20bb03e5b776e606e6e0a8c4448a14d34f32d782"):
        assert COMMIT_HASH.search(text), text
    for text in ("7,577,600 parameters", "29081022 tokens", "## Heading", "&#x27;", "a facade", "step 12000"):
        assert not ISSUE_NUMBER.search(text) and not COMMIT_HASH.search(text), text


@pytest.mark.parametrize(
    "path", [README, *sorted((ROOT / "docs").rglob("*.md"))], ids=lambda path: path.relative_to(ROOT).as_posix()
)
def test_docs_cite_no_issue_numbers_or_commit_hashes(path):
    text, name = path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix()
    assert not ISSUE_NUMBER.findall(text), f"{name} cites issue numbers: history belongs to git"
    assert not COMMIT_HASH.findall(text), f"{name} cites commit hashes: history belongs to git"
    if not RUN_RECORD.search(name):
        assert not HISTORY.findall(text), (
            f"{name} tells history ({HISTORY.findall(text)}): say what is, git keeps what was"
        )


def test_the_history_check_recognises_narratives():
    for text in ("the commit before the pool was removed", "Run 2: this branch", "it used to keep a pool"):
        assert HISTORY.search(text), text
    for text in ("the Plotly data object was replaced", "one process, which is what the app runs", "now"):
        assert not HISTORY.search(text), text


def test_model_table_shows_the_shipped_checkpoints_numbers():
    config = json.loads((SHIPPED / "config.json").read_text())
    metrics = json.loads((SHIPPED / "metrics.json").read_text())
    rows = {row[0]: row[1] for row in table_rows(section(readme(), "The model"))}
    layers = f"{config['n_encoder_layers']} + {config['n_decoder_layers']} layers"
    for expected in (
        layers,
        f"d_model {config['d_model']}",
        f"{config['n_heads']} heads",
        f"d_ff {config['d_ff']}",
        f"dropout {config['dropout']}",
    ):
        assert expected in rows["architecture"], expected
    assert rows["parameters"].startswith(f"{metrics['parameters']:,} ")
    assert f"{config['vocab_size']:,} " in rows["vocabulary"]
    tatoeba_pairs = re.search(r"Tatoeba \(([\d,]+) pairs\)", rows["data"]).group(1)
    assert f"{tatoeba_pairs} pairs" in metrics["training_data"]
    assert (
        f"{metrics['step']:,} steps, {metrics['tokens']:,} tokens, {metrics['training_seconds']:,.0f} s"
        in rows["training"]
    )
    for row, split in (
        ("test_2016_flickr BLEU, greedy / beam 4", "test_2016_flickr"),
        ("Tatoeba held out (3,000 pairs), greedy / beam 4", "tatoeba/holdout"),
    ):
        scores = metrics["scores"][split]
        expected = "; ".join(
            f"{name} {scores[direction]['greedy']['bleu']} / {scores[direction]['beam4']['bleu']}"
            for direction, name in (("de-en", "de → en"), ("en-de", "en → de"))
        )
        assert rows[row] == expected


def test_front_matter_names_both_data_sets_and_what_each_licence_covers():
    text = readme()
    front = re.match(r"---\n(.*?)\n---\n", text, re.DOTALL).group(1)
    assert "bentrevett/multi30k" in front and "tatoeba" in front.lower()
    licences = section(text, "Licences")
    assert "MIT" in licences and "research" in licences and "CC BY 2.0 FR" in licences
    assert "Tatoeba, tatoeba.org" in licences


def test_training_docs_scores_table_is_the_generated_one():
    """docs/training.md's scores block is model_card.results_table of the shipped metrics.json, verbatim."""
    from model.checkpoints.model_card import results_table

    text = (ROOT / "docs" / "training.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- scores: [^>]*-->\n(.*?)\n<!-- /scores -->", text, re.DOTALL)
    assert block, "docs/training.md has no <!-- scores: ... --> ... <!-- /scores --> block"
    expected = results_table(json.loads((SHIPPED / "metrics.json").read_text()))
    assert "| val |" in expected  # the shipped checkpoint is scored: the table is not the "not scored" line
    assert block.group(1).strip() == expected.strip(), f"regenerate the block; it should read:\n{expected}"
