"""The checks every suite is held to, on the cases it declares (benchmarks/kit/conformance.py).
test_conformance.py runs them over every registered suite; test_toy_suite.py over a suite that
exists only in the test tree. Pure: no database.

- Every metric a suite's score() or aggregate() can return is declared on its task (MetricSpec:
  kind and direction), and every declaration is returned by some answer, on the suite's metric
  cases (items scored for a right answer, wrong ones, an unreadable one and a failed call).
- Every analysis it declares keeps the framework's promises (benchmarks/kit/analyses.py) on the
  suite's example run of its task:
  - the rows have the declared shape, one per group, in the analysis's order;
  - the groups' sizes add up to the records the analysis covers (all of them unless it says),
    or, for groups that are facets of the records rather than a partition (partition=False, a
    judge's dimensions), each is at most that;
  - a metric declared as the per-group version of a run metric (mean_of) averages, weighted by
    the groups' sizes, to that run metric as the suite's own aggregate gives it over the same
    records (to the rounding of two 2-decimal figures);
  - the example exercises the grouping: at least two groups.
- It has an exporter and the files to show it round-trips (test_conformance.py imports and
  exports them), or says why it has none.
- The judges it declares (Suite.judges) are the templates registered under their names, judge
  its own runs, and are named after it ("<suite>.<judge>").
- Every option a run of each task takes (Suite.options) is accepted at its default by the one
  check every launch goes through (Suite.check_options), and a value of the wrong kind is
  refused naming the option.
- Its demo data (benchmarks/demo/<suite>/manifest.json, what `make run` loads), where it has
  some, imports with its importer, and some task finds items in it (a run can be launched
  on it as it is); a suite without tasks (imported traces) reads each demo sample as a trace.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from benchmarks.kit.analyses import COUNT, GROUP, Analysis, AnalysisInput
from benchmarks.kit.conformance import AnalysisExample, Conformance, Files, conformance_of
from benchmarks.kit.judging import templates
from benchmarks.kit.protocol import (
    FAMILY,
    Context,
    Evaluator,
    Item,
    MetricSpec,
    OptionError,
    Scored,
    lookup_metric,
)
from benchmarks.kit.registry import Suite
from benchmarks.management.commands.seed_demo import DEMO_DIR as DEMO
from benchmarks.management.commands.seed_demo import read_manifest
from tests.conftest import SEEDDATA

ROOT = Path(__file__).resolve().parents[2]
FILES = Files(
    seeddata=SEEDDATA,
    demo=ROOT / "benchmarks" / "demo",
    fixtures=Path(__file__).resolve().parent / "fixtures",
)


@dataclass(frozen=True)
class Check:
    """One promise of one suite: `name` for the test's id, `run` raises if it is not kept."""

    name: str
    run: Callable[[], None]


def declared(suite: Suite) -> Conformance:
    found = conformance_of(suite)
    if found is None:
        pytest.fail(
            f"suite {suite.name} declares no conformance: add <suite>/conformance.py with "
            "CONFORMANCE and name it in its Suite(conformance=...)"
        )
    return found


def checks(suite: Suite) -> Iterator[Check]:
    """Every check of the suite's promises (what the module docstring lists)."""
    yield Check(f"{suite.name}-declares-conformance", lambda: check_declared(suite))
    yield Check(f"{suite.name}-exporter", lambda: check_exporter_declared(suite))
    yield Check(f"{suite.name}-judges", lambda: check_judges(suite))
    yield Check(f"{suite.name}-options", lambda: check_options(suite))
    yield Check(f"{suite.name}-demo", lambda: check_demo(suite))
    for task in Evaluator(suite).tasks:
        yield Check(f"{suite.name}-{task}-metrics", lambda task=task: check_metrics(suite, task))
    for task, analyses in suite.analyses.items():
        for analysis in analyses:
            yield Check(
                f"{suite.name}-{task}-{analysis.name}",
                lambda task=task, analysis=analysis: check_analysis(suite, task, analysis),
            )


def check_declared(suite: Suite) -> None:
    declared(suite)


# --- metrics ------------------------------------------------------------------------------------


def emitted(suite: Suite, task: str) -> tuple[set[str], set[str]]:
    """The per-item and run-level names the task's score() and aggregate() return on its
    cases."""
    evaluator = Evaluator(suite)
    spec = evaluator.task(task)
    per_item: set[str] = set()
    per_run: set[str] = set()
    for case in declared(suite).metric_cases(task, FILES):
        ctx = Context(task=spec, options=case.options)
        scored = []
        for item, outcome, context in case.items:
            scores = evaluator.score(outcome, item, ctx, context)
            per_item.update(scores)
            scored.append(Scored(item, outcome, scores, context))
        per_run.update(evaluator.aggregate(scored, ctx))
    return per_item, per_run


def undeclared(names: set[str], specs: dict[str, MetricSpec]) -> set[str]:
    return {name for name in names if lookup_metric(specs, name) is None}


def unreturned(names: set[str], specs: dict[str, MetricSpec]) -> set[str]:
    """Declarations no returned name falls under (a family needs one member)."""
    return {
        key
        for key in specs
        if not any(
            name == key or (key.endswith(FAMILY) and lookup_metric({key: specs[key]}, name))
            for name in names
        )
    }


def check_metrics(suite: Suite, task: str) -> None:
    spec = Evaluator(suite).task(task)
    per_item, per_run = emitted(suite, task)
    assert not undeclared(per_item, dict(spec.item_metrics)), "per-item names without a MetricSpec"
    assert not undeclared(per_run, dict(spec.run_metrics)), "run-level names without a MetricSpec"
    assert not unreturned(per_item, dict(spec.item_metrics)), "per-item declarations never returned"
    assert not unreturned(per_run, dict(spec.run_metrics)), "run declarations never returned"


# --- analyses -----------------------------------------------------------------------------------

_EXAMPLES: dict[tuple[str, str], AnalysisExample] = {}


def example(suite: Suite, task: str) -> AnalysisExample:
    key = (suite.name, task)
    if key not in _EXAMPLES:
        builders = declared(suite).analysis_examples
        if task not in builders:
            pytest.fail(f"no example run of {suite.name} {task}: add one to its conformance")
        _EXAMPLES[key] = builders[task](FILES)
    return _EXAMPLES[key]


def check_analysis(suite: Suite, task: str, analysis: Analysis) -> None:
    run = example(suite, task)
    data = AnalysisInput(run.records, run.ctx, inputs=run.inputs)
    rows = analysis.run(data)
    groups = [row[GROUP] for row in rows]
    assert len(groups) >= 2, f"the example gives {analysis.name} only {groups}"
    assert len(set(groups)) == len(groups)
    assert groups == sorted(groups, key=analysis.sort_key)
    covered = analysis.covered(data)
    if not analysis.partition:
        # facets of the records (a judge's dimensions): each counts some of them
        assert all(row[COUNT] <= len(covered) for row in rows)
        return
    assert sum(row[COUNT] for row in rows) == len(covered)
    overall = run.evaluator.aggregate(covered, run.ctx)
    for metric in analysis.metrics:
        if metric.mean_of is None:
            continue
        expected = overall[metric.mean_of]
        assert expected is not None
        weighted = math.fsum(row[COUNT] * row[metric.name] for row in rows) / len(covered)
        assert weighted == pytest.approx(expected, abs=0.01), (metric.name, rows, expected)


# --- the exporter -------------------------------------------------------------------------------


def check_exporter_declared(suite: Suite) -> None:
    promised = declared(suite)
    if suite.exporter is None:
        assert promised.no_exporter, f"{suite.name} has no exporter and does not say why"
        assert promised.round_trip is None, f"{suite.name} declares a round trip, no exporter"
    else:
        assert not promised.no_exporter, f"{suite.name} has an exporter but says it has none"
        assert promised.round_trip is not None, (
            f"{suite.name} has an exporter: its conformance names the files it writes back"
        )


# --- judges -------------------------------------------------------------------------------------


def check_judges(suite: Suite) -> None:
    registered = templates()
    for template in suite.judges:
        assert registered.get(template.name) is template, f"{template.name} is not registered"
        assert template.name.startswith(f"{suite.name}."), f"{template.name} is not {suite.name}'s"
        assert not template.suites or suite.name in template.suites, (
            f"{template.name} does not judge {suite.name}'s runs"
        )


# --- options ------------------------------------------------------------------------------------

# A value of another kind than each option kind takes.
WRONG_KIND: dict[str, object] = {
    "text": 7,
    "integer": "seven",
    "number": "seven",
    "boolean": "yes",
    "names": "one name",
}


def check_options(suite: Suite) -> None:
    for task in suite.tasks:
        options = suite.options(task)
        defaults = {o.name: o.default for o in options if o.default is not None}
        assert suite.check_options(task, defaults) == defaults, f"{suite.name} {task}"
        for option in options:
            with pytest.raises(OptionError) as refused:
                suite.check_options(task, {option.name: WRONG_KIND[option.kind]})
            assert refused.value.option == option.name, f"{suite.name} {task} {option.name}"


# --- demo data ----------------------------------------------------------------------------------


def check_demo(suite: Suite) -> None:
    manifest_path = DEMO / suite.name / "manifest.json"
    if not manifest_path.exists():
        return
    manifest = read_manifest(manifest_path)
    assert manifest.suite == suite.name, f"{manifest_path} names suite {manifest.suite}"
    bundle = suite.import_files(manifest.files)
    splits = {record.split for record in bundle.samples}
    assert bundle.samples, f"{suite.name}'s demo holds no sample"
    if not suite.tasks:
        # A suite without tasks holds traces to review (imported logs): each sample is one.
        assert suite.trace is not None, f"{suite.name} has no tasks and no traces"
        for record in bundle.samples:
            item = Item(
                split=record.split,
                external_id=record.external_id,
                input=record.input,
                reference=record.reference,
                kind=record.kind,
                candidate_tools=tuple(record.candidate_tools),
                metadata=record.metadata,
            )
            assert suite.trace(item, None).steps, f"{record.source} reads as no trace"
        return
    # A task with no default split runs on the split its run names: any sample will do.
    runnable = [
        t for t, spec in suite.tasks.items() if not spec.splits or splits & set(spec.splits)
    ]
    assert runnable, f"{suite.name}'s demo has no sample of any task's default splits"
