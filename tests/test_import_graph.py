"""The project's modules import each other without a cycle (lint-imports' `acyclic` contract,
tests/import_contracts.py), and an import inside a function says why it is not at the top."""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.import_contracts import cycles_shown, strongly_connected

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("config", "benchmarks", "evaluation", "annotation")


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


def test_the_contract_is_kept_by_the_project_and_broken_by_a_cycle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # lint-imports (make test) runs the contract over the project; here it is shown to see a
    # cycle made in a function's import, and to leave an annotation-only import alone.
    package = tmp_path / "loop"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("import loop.b\n")
    (package / "b.py").write_text("def f():\n    import loop.a\n")
    (package / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import loop.d\n"
    )
    (package / "d.py").write_text("import loop.c\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    shown = cycles_shown(["loop"])
    assert [text.splitlines()[0] for text in shown] == ["loop.a, loop.b"]
    assert "loop.b -> loop.a (line 2)" in shown[0]


def test_lint_imports_declares_the_no_cycle_contract_over_every_package() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    assert "acyclic: tests.import_contracts.AcyclicContract" in config["contract_types"]
    acyclic = [c for c in config["contracts"] if c["type"] == "acyclic"]
    assert [sorted(c["packages"]) for c in acyclic] == [sorted(PACKAGES)]
    assert not cycles_shown(list(PACKAGES))


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
