"""Every option a run can take is declared by its suite (per task where they differ), with its
kind, default, allowed values and a one-line description; the registry checks a run's options
against the declarations, the one check every way of launching goes through
(evaluation.services.run_options). This walks every suite, every task and every declared
option: the values it allows are accepted, every other value is refused naming the option."""

from __future__ import annotations

import math
from typing import Any

import pytest

from benchmarks.kit.protocol import Option, OptionError
from benchmarks.kit.registry import all_suites, get_suite, suite_names

TASKS = [(suite.name, task) for suite in all_suites() for task in suite.tasks]


def valid_values(option: Option) -> list[Any]:
    """Values the declaration says the option takes: its default, each choice, its bounds."""
    values: list[Any] = [option.default] if option.default is not None or option.nullable else []
    values.extend(option.choices)
    if option.nullable:
        values.append(None)
    if option.kind in ("integer", "number"):
        values.extend(bound for bound in (option.minimum, option.maximum) if bound is not None)
        if option.kind == "number":
            values.append(float(option.minimum if option.minimum is not None else 0.5))
    elif option.kind == "boolean":
        values.extend([True, False])
    elif option.kind == "names":
        values.extend([[], ["a tool", "another"]])
    elif option.kind == "text" and not option.choices:
        values.append("some text")
    return values


def invalid_values(option: Option) -> list[Any]:
    """Values the declaration refuses: another type, a value beside the choices, out of
    bounds, not a finite number; null unless it may be null."""
    values: list[Any] = [{"a": 1}]
    if not option.nullable:
        values.append(None)
    if option.kind == "text":
        values += [5, True, ["strict"], "nul\x00", "half \ud800 pair", "x" * 10_000]
        if option.choices:
            values += ["bogus", str(option.choices[0]).upper() + "?"]
    elif option.kind == "integer":
        values += ["3", 2.5, True, [1], 10**30]
        if option.minimum is not None:
            values.append(int(option.minimum) - 1)
        if option.maximum is not None:
            values.append(int(option.maximum) + 1)
    elif option.kind == "number":
        values += ["0.1", True, math.inf, math.nan, [0.1]]
        if option.minimum is not None:
            values.append(option.minimum - 1)
        if option.maximum is not None:
            values.append(option.maximum + 1)
    elif option.kind == "boolean":
        values += ["true", 1, 0, "yes"]
    elif option.kind == "names":
        values += ["a tool", [1], [None], ["x" * 10_000], ["nul\x00"]]
    return values


@pytest.mark.parametrize(("suite_name", "task"), TASKS)
def test_every_declared_option_takes_its_values_and_refuses_others_by_name(
    suite_name: str, task: str
) -> None:
    suite = get_suite(suite_name)
    declared = suite.options(task)
    names = [option.name for option in declared]
    assert len(names) == len(set(names)), f"{suite_name} {task} declares an option twice"
    for option in declared:
        assert option.description and option.description == option.description.strip()
        assert "\n" not in option.description, f"{option.name}: one line"
        assert option.problem(option.default) == "" or option.default is None
        for value in valid_values(option):
            assert suite.check_options(task, {option.name: value}) == {option.name: value}, (
                option.name,
                value,
            )
        for value in invalid_values(option):
            with pytest.raises(OptionError) as refused:
                suite.check_options(task, {option.name: value})
            assert refused.value.option == option.name
            assert f"option {option.name!r}" in str(refused.value), str(refused.value)
            allowed = option.allowed()
            assert allowed in str(refused.value), (str(refused.value), allowed)


@pytest.mark.parametrize(("suite_name", "task"), TASKS)
def test_an_option_the_task_does_not_declare_is_refused_listing_the_ones_it_has(
    suite_name: str, task: str
) -> None:
    suite = get_suite(suite_name)
    with pytest.raises(OptionError) as refused:
        suite.check_options(task, {"variant_typo": "strict"})
    assert refused.value.option == "variant_typo"
    message = str(refused.value)
    assert f"{suite_name} task {task!r} has no option 'variant_typo'" in message
    for option in suite.options(task):
        assert option.name in message


def test_the_platforms_options_are_every_tasks_and_served_tools_options_every_served_agents():
    for suite in all_suites():
        for task, spec in suite.tasks.items():
            names = {option.name for option in suite.options(task)}
            assert {"tool_mode", "trials"} <= names
            served = (
                spec.agent and suite.served_tools is not None and suite.served_tools.serves(task)
            )
            assert ({"down_tools", "down_mode"} <= names) == served, (suite.name, task)


def test_the_issues_examples_are_refused_before_anything_runs() -> None:
    # MTU-Bench's scorer raised on these while scoring, in the worker, long after launch
    mtubench = get_suite("mtubench")
    with pytest.raises(OptionError, match="option 'variant' must be one of reference, strict"):
        mtubench.check_options("S-S", {"variant": "bogus"})
    with pytest.raises(OptionError, match=r'option .variant. must be one of .*; got \["strict"\]'):
        mtubench.check_options("S-S", {"variant": ["strict"]})
    # an option of another task of the same suite is not this task's
    with pytest.raises(OptionError, match="has no option 'variant'"):
        get_suite("metatool").check_options("awareness", {"variant": "multi-choice"})
    assert get_suite("metatool").check_options("multi_tool", {"variant": "multi-choice"}) == {
        "variant": "multi-choice"
    }


def test_defaults_come_from_the_declarations() -> None:
    for name in suite_names():
        suite = get_suite(name)
        for task, spec in suite.tasks.items():
            assert spec.defaults == {option.name: option.default for option in spec.options}
            for option in spec.options:
                assert spec.default(option.name) == option.default
            assert spec.default("no such option") is None
            assert set(spec.defaults) <= {o.name for o in suite.options(task)}


def test_a_declaration_that_contradicts_itself_fails_when_the_suite_is_imported() -> None:
    with pytest.raises(ValueError, match="default"):
        Option("mode", "text", "c", "d", choices=("a", "b"))
    with pytest.raises(ValueError, match="kind"):
        Option("mode", "colour", "red", "d")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="description"):
        Option("n", "integer", 1, "")
