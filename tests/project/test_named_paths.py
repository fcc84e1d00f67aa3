"""Every repository path a text names exists: the docs, the README, the configuration (pytest.ini, scripts/test.sh,
.ci/run, ...), and in Python the comments and docstrings, and in product code its strings too (a test's strings may
name the made-up paths it builds, a planted fault's the wrong ones it plants). A path is a top-level folder of the repository followed by `/...`; a path with a
placeholder (`<name>`, `{name}`) is left out, and one that ends in `*` is a pattern that must match something. The
example files docs/adding-a-panel.md walks through are the new files it adds, named only there."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOP = sorted(path.name for path in ROOT.iterdir() if path.is_dir() and path.name not in (".git", "runs"))
NAMED = re.compile(rf"(?<![\w./-])((?:{'|'.join(map(re.escape, TOP))})/[\w./-]*[\w/])(\*?)")
TEXT = {".md", ".sh", ".ini", ".toml", ".txt", ".yml", ".yaml", ".cfg", ".js", ".css"}
SKIPPED = {".git", "runs", "__pycache__", "node_modules", ".pytest_cache", ".ruff_cache"}
GUIDE = ROOT / "docs" / "adding-a-panel.md"


def repository_files() -> list[Path]:
    return sorted(
        path
        for path in ROOT.rglob("*")
        if path.is_file()
        and not SKIPPED & set(path.relative_to(ROOT).parts)
        and (path.suffix in TEXT | {".py"} or path.relative_to(ROOT).as_posix() == ".ci/run")
    )


def python_texts(path: Path) -> list[str]:
    """Comments and docstrings; and every string outside tests/ and the planted faults."""
    source = path.read_text(encoding="utf-8")
    texts = [
        token.string
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    ]
    tree = ast.parse(source)
    if path.relative_to(ROOT).parts[0] == "tests" or path.name.startswith("mutation_faults"):
        nodes = [
            tree,
            *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))),
        ]
        texts += [doc for node in nodes if (doc := ast.get_docstring(node, clean=False))]
    else:
        texts += [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return texts


def named_paths(path: Path) -> set[tuple[str, bool]]:
    """(path, is a pattern) named in one file."""
    texts = python_texts(path) if path.suffix == ".py" else [path.read_text(encoding="utf-8")]
    found = set()
    for text in texts:
        for match in NAMED.finditer(text):
            named = match.group(1).rstrip(".")
            end = match.end(1)
            if not any(mark in text[max(0, match.start(1) - 1) : end + 1] for mark in "<>{}"):
                found.add((named, bool(match.group(2))))
    return found


def guide_new_files() -> set[str]:
    return set(re.findall(r"^```python\n# (\S+)\n", GUIDE.read_text(encoding="utf-8"), re.M))


def missing_paths() -> dict[str, list[str]]:
    missing: dict[str, list[str]] = {}
    for path in repository_files():
        allowed = (
            guide_new_files()
            if path in (GUIDE, ROOT / "tests" / "ui" / "explain" / "test_adding_a_panel.py")
            else set()
        )
        for named, pattern in named_paths(path):
            exists = any(ROOT.glob(named + "*")) if pattern else (ROOT / named).exists()
            if not exists and named not in allowed:
                missing.setdefault(named, []).append(str(path.relative_to(ROOT)))
    return missing


def test_the_check_finds_paths():
    named = {name for path in repository_files() for name, _ in named_paths(path)}
    assert {
        "scripts/test.sh",
        "docs/testing.md",
        "ui/explain/panels.py",
        "tests/support/provenance_fixtures.py",
    } <= named


def test_every_named_path_exists():
    missing = missing_paths()
    assert not missing, "paths named but not in the repository (name where the thing is now): " + "; ".join(
        f"{named} in {', '.join(files)}" for named, files in sorted(missing.items())
    )
