"""docs/adding-a-panel.md followed to the letter: in a copy of the repository, each file its code blocks name is
written (the job appended to serving/jobs.py), docs/views.md's list is written anew as it says, and then the new
panel's own test passes there, the panel-list checks pass, ruff finds nothing, and nothing else changed: three
files, one declaration, the panel's test and the generated list."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
GUIDE = ROOT / "docs" / "adding-a-panel.md"
COPIED = [
    "README.md",
    "app.py",
    "pytest.ini",
    "ruff.toml",
    "docs",
    "model",
    "scripts",
    "serving",
    "lesson",
    "tests",
    "ui",
    "visualizer",
]
BLOCK = re.compile(r"^```python\n# (\S+)( \(appended\))?\n(.*?)^```", re.M | re.S)
PLACES = {"model/analysis/encoder_norms.py", "serving/jobs.py", "visualizer/norms.py", "ui/explain/encoder_norms.py"}
PANEL_TEST = "tests/ui/explain/test_encoder_norms.py"
GENERATED = "docs/views.md"


def guide_files() -> list[tuple[str, bool, str]]:
    """(path, appended?, code) of every code block of the guide that names its file."""
    return [(path, bool(appended), code) for path, appended, code in BLOCK.findall(GUIDE.read_text(encoding="utf-8"))]


def digests(root: Path) -> dict[str, str]:
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in root.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }


def run(command: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600)


def test_the_guide_names_three_files_one_declaration_and_a_test():
    assert {path for path, _, _ in guide_files()} == PLACES | {PANEL_TEST}
    assert [path for path, appended, _ in guide_files() if appended] == ["serving/jobs.py"]


@pytest.mark.slow
def test_following_the_guide_adds_a_panel_that_passes_its_test(tmp_path):
    copy = tmp_path / "repo"
    copy.mkdir()
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, copy / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy(source, copy / name)
    before = digests(copy)
    for path, appended, code in guide_files():
        target = copy / path
        assert appended == target.exists(), f"{path}: the guide's new files are new, the declaration goes in a file"
        target.write_text((target.read_text(encoding="utf-8") + "\n\n" if appended else "") + code, encoding="utf-8")
    written = run([sys.executable, "-m", "scripts.views_doc"], copy)
    assert written.returncode == 0, written.stderr

    after = digests(copy)
    changed = {path for path in after if before.get(path) != after[path]}
    assert changed == PLACES | {PANEL_TEST, GENERATED}
    assert "- **Encoder norms**: one bar per source token" in (copy / GENERATED).read_text(encoding="utf-8")
    lint = run([sys.executable, "-m", "ruff", "check", *sorted(PLACES | {PANEL_TEST})], copy)
    assert lint.returncode == 0, lint.stdout
    openings = "tests/ui/explain/test_explain_openings.py::test_every_panel_opens_with_one_sentence_and_folds_the_rest"
    tests = [PANEL_TEST, "tests/project/test_explain_panels_in_docs.py", openings]
    passed = run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-m", "", *tests], copy)
    assert passed.returncode == 0, passed.stdout[-3000:] + passed.stderr[-2000:]
