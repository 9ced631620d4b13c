"""BFCL's analysis of a run: why the items it got wrong are wrong, by the platform's error kind
of BFCL's checker's verdict (checker.ErrorKind: a decoding failure, a wrong count of calls, the
wrong function, a required parameter missing, an unexpected parameter, a wrong type, a wrong
value, a call where none was due, no call where one was), and items whose model call failed.
The same analysis for every task: the verdict is recomputed from the stored answer as the score
was (evaluate.verdict, in the run's mode)."""

from __future__ import annotations

from benchmarks.kit.analyses import Analysis, AnalysisInput, AnalysisMetric, Row, shares
from benchmarks.kit.protocol import Context, Scored
from benchmarks.suites.bfcl.checker import ERROR_KINDS
from benchmarks.suites.bfcl.evaluate import AST_CATEGORIES, verdict

__all__ = ["ANALYSES", "ERROR_TYPES", "error_type", "wrong"]

FAILED = "failed_call"
ERROR_TYPES: tuple[str, ...] = (*ERROR_KINDS, FAILED)


def wrong(record: Scored, ctx: Context) -> bool:
    """The items the run's accuracy counts as wrong (a failed call among them)."""
    return record.scores.get("accuracy") != 100.0


def error_type(record: Scored, ctx: Context) -> str:
    if record.outcome is None:
        return FAILED
    kind = verdict(record.outcome, record.item, ctx).kind
    return kind or "passed"


def _errors(data: AnalysisInput) -> list[Row]:
    records = [record for record in data.records if wrong(record, data.ctx)]
    return shares(records, lambda record: error_type(record, data.ctx), order=ERROR_TYPES)


ERRORS = Analysis(
    name="error_types",
    title="Error types of wrong answers",
    by="error_type",
    by_title="error type",
    metrics=(AnalysisMetric("share", "share of wrong answers (%)"),),
    compute=_errors,
    covers=wrong,
    group_order=ERROR_TYPES,
    description="Each wrong answer's error as BFCL's AST checker finds it (its first failing "
    "check), in the platform's kinds; failed_call: the endpoint gave no answer. n counts items.",
)

ANALYSES: dict[str, tuple[Analysis, ...]] = {category: (ERRORS,) for category in AST_CATEGORIES}
