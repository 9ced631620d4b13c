"""The project's modules import each other without a cycle, counting the imports inside
functions (grimp reads every import statement of a module, wherever it stands), and an import
inside a function says why it is not at the top. Imports under `if TYPE_CHECKING:` are left
out: they are annotations, not dependencies at run time."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("config", "benchmarks", "evaluation", "annotation")


def strongly_connected(edges: Mapping[str, set[str]]) -> list[list[str]]:
    """Tarjan's components with more than one module (or a module importing itself), each
    sorted; iterative, so a deep chain of imports cannot exhaust the stack."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = counter
                    counter += 1
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(edges.get(successor, ())))))
                    advanced = True
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in edges.get(node, ()):
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_what_a_hand_drawn_graph_holds() -> None:
    edges = {
        "a": {"b"},
        "b": {"c"},
        "c": {"a", "d"},
        "d": {"e"},
        "e": set(),
        "f": {"f"},
        "g": {"d"},
    }
    assert sorted(strongly_connected(edges)) == [["a", "b", "c"], ["f"]]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []


def test_no_module_of_the_project_is_in_an_import_cycle() -> None:
    graph = grimp.build_graph(*PACKAGES, exclude_type_checking_imports=True, cache_dir=None)
    edges = {
        module: set(graph.find_modules_directly_imported_by(module)) for module in graph.modules
    }
    cycles = strongly_connected(edges)
    shown = []
    for cycle in cycles:
        lines = [
            f"  {importer} -> {imported} (line {detail['line_number']})"
            for importer in cycle
            for imported in sorted(edges[importer] & set(cycle))
            for detail in graph.get_import_details(importer=importer, imported=imported)[:1]
        ]
        shown.append("\n".join([", ".join(cycle), *lines]))
    assert not cycles, "import cycles:\n" + "\n\n".join(shown)


def function_imports(path: Path) -> Iterator[tuple[int, str, bool]]:
    """(line, statement, explained) for each import inside a function of the file: explained
    when a comment stands on its first line or right above the run of import statements it
    belongs to (one comment may give the reason for the imports that follow it)."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    seen: set[int] = set()  # a function inside a function is walked from both
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for block in ast.walk(function):
            body = getattr(block, "body", None)
            if not isinstance(body, list):
                continue
            first: ast.stmt | None = None
            for statement in body:
                if not isinstance(statement, ast.Import | ast.ImportFrom):
                    first = None
                    continue
                first = first or statement
                if statement.lineno in seen:
                    continue
                seen.add(statement.lineno)
                above = lines[first.lineno - 2].strip() if first.lineno > 1 else ""
                explained = "#" in lines[statement.lineno - 1] or above.startswith("#")
                yield statement.lineno, lines[statement.lineno - 1].strip(), explained


def test_an_import_inside_a_function_says_why_it_is_not_at_the_top() -> None:
    unexplained = [
        f"{path.relative_to(ROOT)}:{line}: {statement}"
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if "migrations" not in path.parts
        for line, statement, explained in function_imports(path)
        if not explained
    ]
    assert not unexplained, "imports inside functions with no reason given:\n" + "\n".join(
        unexplained
    )


HEAVY_TUPLE = (
    "def f():\n    # heavy\n    from json import (\n        dumps,\n    )\n    import csv\n"
)


@pytest.mark.parametrize(
    ("source", "explained"),
    [
        ("def f():\n    import json\n", [False]),
        ("def f():\n    # heavy: loaded on first use\n    import json\n", [True]),
        ("def f():\n    import json  # heavy\n", [True]),
        ("def f():\n    # heavy\n    import json\n    import csv\n", [True, True]),
        ("def f():\n    x = 1  # not about the import\n    import json\n", [False]),
        (HEAVY_TUPLE, [True, True]),
        ("def f():\n    def g():\n        import json\n", [False]),
        ("def f():\n    # heavy\n    import json\n    x = 1\n    import csv\n", [True, False]),
    ],
)
def test_the_reason_is_read_from_the_comment_above_or_beside(
    tmp_path: Path, source: str, explained: list[bool]
) -> None:
    module = tmp_path / "m.py"
    module.write_text(source)
    assert [found for _line, _statement, found in function_imports(module)] == explained
