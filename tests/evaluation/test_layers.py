"""The evaluation app's imports, read from its source: no import cycle between its modules
(counting imports inside functions too, which once held a cycle of seven modules together), and
evaluation/work/ below the services."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "evaluation"


def module_name(path: Path) -> str:
    name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    return name.removesuffix(".__init__")


def modules() -> dict[str, Path]:
    found = {}
    for path in APP.rglob("*.py"):
        if "migrations" not in path.parts and "management" not in path.parts:
            found[module_name(path)] = path
    return found


def imports(path: Path, known: set[str]) -> set[str]:
    """The app's modules that `path` imports, anywhere in the file."""
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        targets.update(name for name in names if name in known)
    return targets


def graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imports(path, set(found)) - {name} for name, path in found.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in edges.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_the_evaluation_modules_import_each_other_without_a_cycle() -> None:
    assert cycles(graph()) == []


def test_work_imports_nothing_above_it() -> None:
    allowed = {"evaluation.models", "evaluation.credentials"}
    for name, targets in graph().items():
        if name.startswith("evaluation.work"):
            above = {t for t in targets if not t.startswith("evaluation.work")} - allowed
            assert above == set(), f"{name} imports {sorted(above)}"


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
