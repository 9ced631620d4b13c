"""WTU-Eval's analyses (papers/003): accuracy and call rate per dataset in each region, as
Table 1 and Table 7 give them (and a run beside its pair region's run of the same model:
without and with the tool pool, Table 1's columns), and the distribution of error types of
the failed traces (Fig. 4), by the suite's automatic classification and, beside it, by the
humans of an error-type campaign, with how often they agree.

A run is one region (its task, R1-R4) over one or several datasets (its splits), so a region's
row of the paper's table is the comparison of the runs of one task, one bar per run; the whole
table for one model (a row per dataset, a column per region) is `all_regions`, declared for every
region: the run shown beside the model's newest finished run of each other region
(AnalysisInput.inputs["model_runs"]).

Error types: the automatic type of a wrong item is its `errors[<type>]` score (evaluate.py,
`error_type`); the human types are the answers to the error-type campaign's question "types"
(questions.py), which names the paper's first type "incorrect_invocation" where the evaluator
tells wrong_answer and unnecessary_tool apart; both are read in the paper's five types (and
no_output, the endpoint's failure, which no human is asked about). The human labels come from
the platform (AnalysisInput.inputs["human_labels"]): per item, every current label's answers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.kit.analyses import (
    COUNT,
    GROUP,
    Analysis,
    AnalysisInput,
    AnalysisMetric,
    Row,
    ScoreBreakdown,
    breakdown,
    natural_key,
    rate,
    score_of,
)
from benchmarks.kit.protocol import Context, Scored
from benchmarks.suites.wtueval.evaluate import ERROR_TYPES, WITH_TOOLS

__all__ = ["ALL_REGIONS", "ANALYSES", "PAPER_TYPES", "automatic_type", "human_types", "paper_type"]

# The paper's five types (Table 4, Fig. 4) in its order, then the endpoint's failure.
PAPER_TYPES = (
    "incorrect_invocation",
    "null_content",
    "no_reasoning",
    "invalid_tool_repeated",
    "endless_retry",
    "no_output",
)
_INVOCATION = frozenset({"wrong_answer", "unnecessary_tool", "incorrect_invocation"})
HUMAN_KIND = "error_types"
HUMAN_QUESTION = "types"


def paper_type(code: str) -> str:
    """A type code of the evaluator or of the campaign, in the paper's five (and no_output)."""
    return "incorrect_invocation" if code in _INVOCATION else code


def automatic_type(record: Scored) -> str | None:
    """The paper type the evaluator gave a wrong item; None for an item it did not classify."""
    for code in ERROR_TYPES:
        if record.scores.get(f"errors[{code}]"):
            return paper_type(code)
    return None


def human_types(labels: Sequence[Mapping[str, Any]]) -> set[str] | None:
    """The types at least half of an item's labels chose (in the paper's five); None when no
    human labelled it."""
    if not labels:
        return None
    votes: dict[str, int] = {}
    for answers in labels:
        chosen = answers.get(HUMAN_QUESTION)
        chosen = chosen if isinstance(chosen, list) else [chosen] if chosen else []
        for code in {paper_type(str(c)) for c in chosen}:
            votes[code] = votes.get(code, 0) + 1
    return {code for code, count in votes.items() if 2 * count >= len(labels)}


def _labels_of(data: AnalysisInput, record: Scored) -> list[Mapping[str, Any]]:
    found = (data.inputs.get("human_labels") or {}).get(HUMAN_KIND) or {}
    return list(found.get((record.item.key, record.repeat)) or ())


def _classified(record: Scored, ctx: Context) -> bool:
    return automatic_type(record) is not None


def _error_types(data: AnalysisInput) -> list[Row]:
    wrong = [record for record in data.records if automatic_type(record) is not None]
    rows = breakdown(wrong, automatic_type, {}, order=PAPER_TYPES)
    labelled: list[tuple[Scored, set[str]]] = []
    for record in wrong:
        types = human_types(_labels_of(data, record))
        if types is not None:
            labelled.append((record, types))
    for row in rows:
        row["automatic"] = round(100.0 * row["n"] / len(wrong), 2)
        row["human"] = None
        row["agreement"] = None
    if labelled:
        for row in rows:
            code = row[GROUP]
            row["human"] = round(
                100.0 * sum(1 for _, types in labelled if code in types) / len(labelled), 2
            )
            mine = [types for record, types in labelled if automatic_type(record) == code]
            if mine:
                row["agreement"] = round(
                    100.0 * sum(1 for types in mine if code in types) / len(mine), 2
                )
    # The rows partition the classified items: a type that only humans gave has no row.
    return rows


ERROR_TYPE_DISTRIBUTION = Analysis(
    name="error_types",
    title="Error types of the wrong items, automatic and human",
    by="error_type",
    by_title="error type",
    metrics=(
        AnalysisMetric("automatic", "automatic (%)"),
        AnalysisMetric("human", "human (%)"),
        AnalysisMetric("agreement", "humans agree (%)"),
    ),
    compute=_error_types,
    covers=_classified,
    source="Fig. 4",
    description="Groups: the type the suite's classification gave each wrong item (the "
    "paper's five, wrong_answer and unnecessary_tool read as incorrect invocation); automatic: "
    "its share of the wrong items. Human: of the wrong items humans labelled in error-type "
    "campaigns on this run, the share at least half their labels gave the type. Humans "
    "agree: of the labelled items classified as the type, the share the humans gave it too.",
    group_order=PAPER_TYPES,
    inputs=("human_labels",),
    reads=(),  # the scores, and the key the labels are found by
)


def _by_dataset(region: str) -> Analysis:
    agent = region in ("R2", "R4")
    metrics = [AnalysisMetric("accuracy", "accuracy (%)", mean_of="accuracy")]
    per_item = {"accuracy": score_of("accuracy")}
    if agent:
        metrics.append(AnalysisMetric("call_rate", "call rate (%)", mean_of="call_rate"))
        per_item["call_rate"] = score_of("call_rate")
    if region == "R4":
        metrics.append(AnalysisMetric("tool_errors", "tool used (%)", mean_of="tool_errors"))
        per_item["tool_errors"] = score_of("tool_errors")

    def compute(data: AnalysisInput) -> list[Row]:
        return breakdown(data.records, lambda record: record.item.split, per_item)

    return Analysis(
        name="by_dataset",
        title=f"Accuracy{' and call rate' if agent else ''} per dataset ({region})",
        by="dataset",
        metrics=tuple(metrics),
        compute=compute,
        # What compute does, as data: the platform computes it in the database.
        score_breakdown=ScoreBreakdown(by_sample="split", scores={name: name for name in per_item}),
        source="Table 1" + (", Table 7 (call rate)" if agent else ""),
        description=f"Region {region}: "
        + {
            "R1": "tool datasets, no tools.",
            "R2": "tool datasets, with the tool pool.",
            "R3": "general datasets, no tools.",
            "R4": "general datasets, with the tool pool (any call is a mistake).",
        }[region]
        + " Comparing the runs of this region, one bar per run, gives the paper's table.",
    )


# A region and its pair: the same datasets without and with the tool pool (Table 1's columns).
PAIRS = {"R1": ("R1", "R2"), "R2": ("R1", "R2"), "R3": ("R3", "R4"), "R4": ("R3", "R4")}


def _mean(values: Sequence[float | None]) -> float | None:
    present = [float(v) for v in values if v is not None]
    return round(100.0 * sum(present) / len(present), 2) if present else None


def _with_and_without(region: str) -> Analysis:
    without, with_tools = PAIRS[region]
    own = "without" if region == without else "with"

    def compute(data: AnalysisInput) -> list[Row]:
        siblings = data.inputs.get("model_runs") or {}
        sides = {
            "without": data.records if own == "without" else siblings.get(without) or (),
            "with": data.records if own == "with" else siblings.get(with_tools) or (),
        }
        by_dataset: dict[str, dict[str, list[Scored]]] = {}
        for side, records in sides.items():
            for record in records:
                by_dataset.setdefault(record.item.split, {}).setdefault(side, []).append(record)
        rows: list[Row] = []
        for dataset in sorted({record.item.split for record in data.records}):
            parts = by_dataset.get(dataset, {})

            def rate(side: str, name: str, parts: dict[str, list[Scored]] = parts) -> float | None:
                return _mean([r.scores.get(name) for r in parts.get(side, ())])

            rows.append(
                {
                    GROUP: dataset,
                    COUNT: len(parts.get(own, ())),
                    "accuracy_without": rate("without", "accuracy"),
                    "accuracy_with": rate("with", "accuracy"),
                    "call_rate_with": rate("with", "call_rate"),
                }
            )
        return rows

    return Analysis(
        name="with_and_without_tools",
        title=f"Accuracy per dataset without ({without}) and with ({with_tools}) the tool pool",
        by="dataset",
        metrics=(
            AnalysisMetric(
                "accuracy_without",
                f"accuracy, {without} (%)",
                mean_of="accuracy" if own == "without" else None,
            ),
            AnalysisMetric(
                "accuracy_with",
                f"accuracy, {with_tools} (%)",
                mean_of="accuracy" if own == "with" else None,
            ),
            AnalysisMetric(
                "call_rate_with",
                f"call rate, {with_tools} (%)",
                mean_of="call_rate" if own == "with" else None,
            ),
        ),
        compute=compute,
        source="Table 1",
        description=f"This run's datasets, beside the same model's newest finished "
        f"{PAIRS[region][1] if own == 'without' else PAIRS[region][0]} run of this benchmark "
        "(same tool mode): the paper's table, a region pair per dataset; n is this run's "
        "items.",
        inputs=("model_runs",),
        reads=(),  # each run's datasets (splits) and scores
    )


REGIONS = ("R1", "R2", "R3", "R4")
# Table 1's columns (and Table 7's call rate): (metric, region, per-item score)
REGION_COLUMNS = tuple(
    (f"{score}_{region.lower()}", region, score)
    for region in REGIONS
    for score in ("accuracy", "call_rate")
    if score == "accuracy" or region in WITH_TOOLS
)


def _all_regions(data: AnalysisInput) -> list[Row]:
    """A row per dataset of the four regions' runs (this run for its own region, the model's
    newest finished run of each other one): accuracy, and call rate where tools are offered;
    None for a region with no run on the dataset. n: the most items any region's run has on
    the dataset (the runs of a dataset normally ask the same questions)."""
    runs = {**(data.inputs.get("model_runs") or {}), data.ctx.task.name: data.records}
    by_dataset: dict[str, dict[str, list[Scored]]] = {}
    for region in REGIONS:
        for record in runs.get(region) or ():
            by_dataset.setdefault(record.item.split, {}).setdefault(region, []).append(record)
    rows: list[Row] = []
    for dataset in sorted(by_dataset, key=natural_key):
        parts = by_dataset[dataset]
        row: Row = {GROUP: dataset, COUNT: max(len(records) for records in parts.values())}
        for name, region, score in REGION_COLUMNS:
            row[name] = rate([score_of(score)(record) for record in parts.get(region, ())])
        rows.append(row)
    return rows


ALL_REGIONS = Analysis(
    name="all_regions",
    title="Accuracy and call rate per dataset in the four regions",
    by="dataset",
    metrics=tuple(
        AnalysisMetric(name, f"{region} {score.replace('_', ' ')} (%)")
        for name, region, score in REGION_COLUMNS
    ),
    compute=_all_regions,
    source="Table 1, Table 7 (call rate)",
    description="The paper's table for this run's model: this run in its region and the same "
    "model's newest finished run of each other region of this benchmark (same tool mode). "
    "A region without such a run, or without the dataset, is left empty. n is the most items "
    "a region's run has on the dataset.",
    inputs=("model_runs",),
    reads=(),  # each run's datasets (splits) and scores
    # a row per dataset of four runs, not a partition of this run's items
    partition=False,
)


ANALYSES: dict[str, tuple[Analysis, ...]] = {
    "R1": (_by_dataset("R1"), _with_and_without("R1"), ALL_REGIONS),
    "R2": (_by_dataset("R2"), _with_and_without("R2"), ERROR_TYPE_DISTRIBUTION, ALL_REGIONS),
    "R3": (_by_dataset("R3"), _with_and_without("R3"), ALL_REGIONS),
    "R4": (_by_dataset("R4"), _with_and_without("R4"), ERROR_TYPE_DISTRIBUTION, ALL_REGIONS),
}
