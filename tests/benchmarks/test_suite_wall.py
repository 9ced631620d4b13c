"""The wall around the suites, as a test: outside benchmarks/suites/ no code names a suite, no
code imports a suite's own modules, and no code names a benchmark's split. What is specific to a
benchmark is asked of the registry through a capability (benchmarks/kit/registry.py).

Scanned: annotation/, evaluation/, benchmarks/ outside benchmarks/suites/, config/ (Python: string
literals other than docstrings, and imports) and templates/ (text). Demo data, migrations and
tests are left aside. Prose (docstrings, comments, help written for people) may name a benchmark
as people write it ("StableToolBench"); code may not use a suite's name ("stabletoolbench")."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.kit.registry import SUITE_MODULES, all_suites

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("annotation", "evaluation", "benchmarks", "config", "templates")
# Demo data (the files and the commands that seed them), migrations, and the command that fetches
# one benchmark's published files (fetch_bfcl: it exists for that benchmark alone).
LEFT_ASIDE = (
    "benchmarks/suites/",
    "benchmarks/demo/",
    "/commands/seed_demo",
    "/commands/fetch_bfcl",
    "/migrations/",
)
# The registered benchmarks (the generic suite is the platform's own format, not a benchmark).
SUITES = tuple(name for name in SUITE_MODULES if name != "generic")
NAME = re.compile(r"\b(" + "|".join(SUITES) + r")\b")
# Split names that are plain words any code may use for its own ends ("multiple": BFCL's
# category, and the HTML attribute and the question kind of a multiple choice).
COMMON_SPLITS = {"test", "dev", "train", "queries", "multiple"}
SPLITS = {
    split
    for suite in all_suites()
    if suite.name in SUITES
    for split in suite.splits
    if split not in COMMON_SPLITS
}

# What is left to move, as (path, what): each entry is a debt, not a licence. Empty when done.
ALLOWED: set[tuple[str, str]] = set()


def _files() -> Iterator[Path]:
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*")):
            rel = path.relative_to(ROOT).as_posix()
            if not path.is_file() or any(part in f"/{rel}" for part in LEFT_ASIDE):
                continue
            if path.suffix in (".py", ".html", ".txt", ".js"):
                yield path


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def _suite_module(module: str) -> str | None:
    parts = module.split(".")
    if parts[:2] == ["benchmarks", "suites"] and len(parts) > 2 and parts[2] in SUITE_MODULES:
        return module
    return None


def _python_findings(path: Path) -> Iterator[str]:
    tree = ast.parse(path.read_text("utf-8"), filename=str(path))
    docstrings = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _suite_module(alias.name):
                    yield f"import {alias.name}"
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if _suite_module(node.module):
                yield f"import {node.module}"
            elif node.module == "benchmarks.suites":
                for alias in node.names:
                    if alias.name in SUITE_MODULES:
                        yield f"import benchmarks.suites.{alias.name}"
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
        ):
            for match in NAME.finditer(node.value):
                yield f"suite name {match.group(1)!r}"
            if node.value in SPLITS:
                yield f"split {node.value!r}"


def _text_findings(path: Path) -> Iterator[str]:
    text = path.read_text("utf-8")
    for match in NAME.finditer(text):
        yield f"suite name {match.group(1)!r}"
    for split in SPLITS:
        if re.search(rf"(?<![\w-]){re.escape(split)}(?![\w-])", text):
            yield f"split {split!r}"


def findings() -> set[tuple[str, str]]:
    found = set()
    for path in _files():
        rel = path.relative_to(ROOT).as_posix()
        scan = _python_findings if path.suffix == ".py" else _text_findings
        for what in scan(path):
            found.add((rel, what))
    return found


def test_no_suite_name_suite_import_or_split_name_outside_the_suites() -> None:
    found = findings()
    unexpected = sorted(found - ALLOWED)
    assert not unexpected, (
        "benchmark specifics outside benchmarks/suites/ (ask the registry):\n"
        + ("\n".join(f"  {path}: {what}" for path, what in unexpected))
    )


def test_the_allowlist_only_holds_what_is_still_there() -> None:
    # A debt paid is struck off, so the list only ever shrinks.
    assert not sorted(ALLOWED - findings())


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('x = "stabletoolbench"\n', {"suite name 'stabletoolbench'"}),
        ('x = f"{a} ultratool-planning"\n', {"suite name 'ultratool'"}),
        ('x = "S-S"\n', {"split 'S-S'"}),
        (
            "from benchmarks.suites.mtubench.importer import SPLITS\n",
            {"import benchmarks.suites.mtubench.importer"},
        ),
        ("from benchmarks.suites import wtueval\n", {"import benchmarks.suites.wtueval"}),
        ("import benchmarks.suites.metatool\n", {"import benchmarks.suites.metatool"}),
        ('"""A StableToolBench stabletoolbench docstring."""\nx = "the test split"\n', set()),
        ("from benchmarks.kit.registry import get_suite\n", set()),
    ],
)
def test_the_scan_sees_names_imports_and_splits(tmp_path: Path, source: str, expected: set) -> None:
    path = tmp_path / "module.py"
    path.write_text(source)
    assert set(_python_findings(path)) == expected
