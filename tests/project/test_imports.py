"""The import graph of the product: no circle anywhere, and a core that stands alone.

Every `import` and `from ... import` of the product's Python files counts, at any depth (inside a function,
under `if TYPE_CHECKING:`): a circle that only a late import or a type hint keeps from failing is still a
circle a reader has to untangle. `model/core/` (the paper's Transformer) imports nothing else of the project.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PRODUCT = ("app.py", "model", "serving", "ui", "visualizer", "lesson", "scripts", "benchmarks")
CORE = "model.core"


def module_name(path: Path, root: Path = REPO) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def product_files() -> list[Path]:
    files = []
    for entry in PRODUCT:
        path = REPO / entry
        files.extend([path] if path.is_file() else sorted(path.rglob("*.py")))
    return files


def imported_modules(path: Path, known: set[str], root: Path = REPO) -> set[str]:
    """The project's modules that `path` imports (a name imported from a package counts as its module if one)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    own = module_name(path, root)
    package = own if path.name == "__init__.py" else own.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        for name in names:
            while name and name not in known:  # `import model.core.attention` names the module itself
                name = name.rpartition(".")[0]
            if name:
                found.add(name)
    found.discard(own)
    return found


def import_graph() -> dict[str, set[str]]:
    files = product_files()
    known = {module_name(path) for path in files}
    return {module_name(path): imported_modules(path, known) for path in files}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle_in_the_product():
    assert circles(import_graph()) == []


def test_the_core_imports_nothing_else_of_the_project():
    graph = import_graph()
    core = {name: targets for name, targets in graph.items() if name == CORE or name.startswith(CORE + ".")}
    assert len(core) >= 6  # config, masks, positional, attention, layers, transformer
    outside = {name: sorted(t for t in targets if not t.startswith(CORE)) for name, targets in core.items()}
    assert {name: targets for name, targets in outside.items() if targets} == {}


def test_the_checker_sees_late_and_type_only_imports(tmp_path):
    """The graph counts an import inside a function and one under TYPE_CHECKING (the circles hide there)."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def f():\n    from pkg import b\n")
    (package / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import f\n")
    known = {"pkg", "pkg.a", "pkg.b"}
    graph = {module_name(p, tmp_path): imported_modules(p, known, tmp_path) for p in sorted(package.glob("*.py"))}
    assert graph["pkg.a"] == {"pkg.b"} and graph["pkg.b"] == {"pkg.a"}
    assert circles(graph) == [["pkg.a", "pkg.b"]]
