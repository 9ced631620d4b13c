"""A task is composed of its parts, never a branch on its name (protocol.Task): no module whose
functions a suite's tasks compose (found from the declared parts themselves) compares the task's
name with a literal, tests it against a collection, or looks behaviour up by it in a table. The
name stays usable as data (a seed, a message, the spec's own fields).

What reads as "the task's name": `<anything>.task.name` (the run's Context), a call of a
function whose name says it gives the task (`_task(ctx)`, `task_name(ctx)`), a variable or
parameter named so (`task`, `task_name`), and a variable a function assigned one of those to.
A run's options (UltraTool's `variant`) are not the task: a part may read them."""

from __future__ import annotations

import ast
import functools
import inspect
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from benchmarks.kit.protocol import Native, Task
from benchmarks.kit.registry import Suite, all_suites

ROOT = Path(__file__).resolve().parents[2]
NAMERS = {"_task", "task_name", "_task_name"}
NAMED = {"task", "task_name"}
# The suite's own tables of task declarations: looking a task's declaration up by its name is
# what Evaluator.part does, not a branch.
DECLARATIONS = {"TASKS", "FORMS"}


def _names_the_task(node: ast.AST, bound: frozenset[str] = frozenset()) -> bool:
    if isinstance(node, ast.Attribute) and node.attr == "name":
        inner = node.value
        return isinstance(inner, ast.Attribute) and inner.attr == "task"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id in NAMERS
    if isinstance(node, ast.Name):
        return node.id in NAMED or node.id in bound
    return False


def _bound(tree: ast.AST) -> frozenset[str]:
    """Variables assigned the task's name anywhere in the module (a name reused for another
    purpose would be flagged too: rename it)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and _names_the_task(node.value):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return frozenset(names)


def _is_table(node: ast.AST) -> bool:
    # A literal, a literal collection, or a module constant (UPPER_CASE) that is not the
    # suite's task declarations themselves.
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return all(isinstance(e, ast.Constant) for e in node.elts)
    if isinstance(node, ast.Name):
        return node.id.isupper() and node.id not in DECLARATIONS
    return False


def branches(tree: ast.AST) -> Iterator[tuple[int, str]]:
    bound = _bound(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_names_the_task(s, bound) for s in sides) and any(_is_table(s) for s in sides):
                yield node.lineno, "compares the task's name"
        elif isinstance(node, ast.Subscript):
            if _names_the_task(node.slice, bound) and _is_table(node.value):
                yield node.lineno, "looks behaviour up by the task's name"
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and _is_table(node.func.value)
            and node.args
            and _names_the_task(node.args[0], bound)
        ):
            yield node.lineno, "looks behaviour up by the task's name"


def _functions(holder: Task | Native) -> Iterator[Any]:
    for field in fields(holder):
        value = getattr(holder, field.name)
        if isinstance(value, Native):
            yield from _functions(value)
        elif callable(value):
            while isinstance(value, functools.partial):
                value = value.func
            yield value


def part_modules(suite: Suite) -> list[Path]:
    """The files of the functions the suite's tasks compose (the kit's defaults aside)."""
    found: set[Path] = set()
    for task in suite.evaluation:
        for function in _functions(task):
            path = Path(inspect.getfile(function)).resolve()
            if "suites" in path.parts:
                found.add(path)
    return sorted(found)


@pytest.mark.parametrize("suite", list(all_suites()), ids=lambda s: s.name)
def test_no_part_of_a_suites_tasks_branches_on_the_task_name(suite: Suite) -> None:
    modules = part_modules(suite)
    # (a suite without tasks, whose samples are traces to review, has no part to check)
    assert modules or not suite.evaluation, f"{suite.name}: no task part in its own modules"
    found = [
        f"{path.relative_to(ROOT)}:{line}: {what}"
        for path in modules
        for line, what in branches(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert not found, "\n".join(found)


def test_the_check_finds_each_kind_of_branch() -> None:
    source = """
if ctx.task.name == "planning": pass
if _task(ctx) in ("a", "b"): pass
settings = SETTINGS[ctx.task.name]
kind = REGION_KIND.get(ctx.task.name)
if ctx.task.name in WITH_TOOLS: pass
seed = f"{ctx.task.name}/{ctx.seed}"
spec = TASKS[ctx.task.name]
if ctx.task.name == other.name: pass
name = _task(ctx)
if name != "reference": pass
def score(task): return 1 if task == "multi_tool" else 0
if variant == "reference": pass
"""
    assert [line for line, _ in branches(ast.parse(source))] == [2, 3, 4, 5, 6, 11, 12]
