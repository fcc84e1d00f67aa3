"""House rules of the code itself: no file over 400 lines and no function over 80 in the
packages and scripts (model/, ui/, visualizer/, serving/, scripts/), so each reads in one sitting."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHECKED = ["model", "ui", "visualizer", "serving", "scripts"]
MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 80


def python_files() -> list[Path]:
    return sorted(path for folder in CHECKED for path in (ROOT / folder).rglob("*.py"))


def test_the_checked_folders_hold_python_files():
    assert len(python_files()) > 50  # the rule is not vacuous (a moved folder would empty it)


def test_no_file_over_400_lines():
    long = {
        str(path.relative_to(ROOT)): n
        for path in python_files()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_FILE_LINES
    }
    assert not long, f"files over {MAX_FILE_LINES} lines (split them by what they hold): {long}"


def test_no_function_over_80_lines():
    long = {}
    for path in python_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1  # decorators not counted, docstring counted
                if length > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"] = length
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"
