"""House rules of the code itself: no file over 400 lines and no function over 80 in every product file (each
top-level folder holding Python but tests/, so model/, ui/, visualizer/, serving/, scripts/ and benchmarks/, and the
top-level app.py), so each reads in one sitting."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOT_PRODUCT = {"tests"}  # the tests have their own shape (long parametrised tables of cases)
MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 80


def product_folders() -> list[Path]:
    """Every top-level folder that holds Python, but the tests (and hidden ones)."""
    return sorted(
        path
        for path in ROOT.iterdir()
        if path.is_dir() and not path.name.startswith(".") and path.name not in NOT_PRODUCT and any(path.rglob("*.py"))
    )


def python_files() -> list[Path]:
    files = [path for folder in product_folders() for path in folder.rglob("*.py")]
    return sorted([*files, *ROOT.glob("*.py")])


def test_every_product_folder_and_app_py_is_checked():
    folders = {path.name for path in product_folders()}
    assert {"model", "ui", "visualizer", "serving", "scripts", "benchmarks"} <= folders
    assert ROOT / "app.py" in python_files()
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
