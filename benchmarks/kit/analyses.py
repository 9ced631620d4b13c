"""The analyses a benchmark's paper draws from a run, declared by its suite: pure, no Django.

A suite declares, per task, the breakdowns its paper explains its headline numbers with
(MTU-Bench's accuracy by dialogue turn, MetaTool's CSR by candidate list length ...) as
`Analysis` objects in its registry entry (`Suite(..., analyses={task: (Analysis, ...)})`).
An analysis is a pure function from a run's per-item records to rows:

    compute(AnalysisInput) -> [{"group": VALUE, "n": N, METRIC: VALUE, ...}, ...]

- `AnalysisInput.records` are the run's items as `aggregate` sees them (protocol.Scored: the
  sample as an Item with its input, reference, metadata and candidate tools; the outcome with
  the parsed answer, the output text and the trace; the per-item scores; the context `prepare`
  fixed at launch; the item's cluster and repeat). A failed item has `outcome=None`.
- `AnalysisInput.ctx` is the run's Context (task, options, seed, the benchmark's tools).
- Rows come back in the groups' natural order (1, 2, 3 turns; list lengths ascending; buckets
  by their lower bound): `breakdown` below sorts with `natural_key`, unless the analysis gives
  its own order (error types in the paper's order).
- `n` is the number of records in the group. The groups partition the records the analysis
  `covers` (every record by default): their sizes add up to the number of covered records.
- A metric declared with `mean_of=RUN_METRIC` is a mean over the group's items of a per-item
  value whose mean over all the run's (covered) items is the run's RUN_METRIC: the size-weighted
  mean of the groups equals the run's figure. A generic test holds every declared analysis of
  every suite to both properties.
- Values are percentages rounded to 2 decimals where the metric says `percent` (the way runs
  report them), None where a group has no value.

The platform (evaluation/analyses.py) computes every analysis of a run's task from the stored
predictions, keeps the result until the run changes, and serves it as a page, a CSV and the
`run_analysis` command. Adding an analysis means writing the function and declaring it; nothing
outside the suite changes.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from benchmarks.kit.protocol import Context, Item, Scored

ChartKind = Literal["bar", "line"]
SeriesKind = Literal["run", "model"]
Row = dict[str, Any]

# Keys every row has besides its metrics.
GROUP = "group"
COUNT = "n"


@dataclass(frozen=True, slots=True)
class AnalysisMetric:
    """One number per group.

    mean_of: the run-level metric this is the per-group version of (see the module's
    docstring); None when the groups' values do not average to a run figure (a share of the
    wrong items, a count).
    percent: reported as a percentage (0-100, 2 decimals), as the run reports `mean_of`."""

    name: str
    title: str = ""
    mean_of: str | None = None
    percent: bool = True

    @property
    def label(self) -> str:
        return self.title or self.name


@dataclass(frozen=True, slots=True)
class AnalysisInput:
    """What an analysis reads: the run's records and its context. New fields only ever come
    with defaults, so an analysis written today keeps working."""

    records: Sequence[Scored]
    ctx: Context
    # What the platform hands, by name, to the analyses that ask for it (Analysis.inputs)
    # beyond the run's own records: "baseline" (the records of the run this one repeats on
    # other tool descriptions, evaluation.Run.rerun_of), "judgments" (the verdicts of the
    # run's judges), "model_runs" (the records of the same model's newest finished run of each
    # other task: {task: records}), "human_labels" (the labels humans gave the run's outputs
    # in campaigns, annotation/analysis_inputs.py). An input the platform
    # cannot give is absent: an analysis works without it (a test's example run has none).
    inputs: Mapping[str, Any] = field(default_factory=dict)


# The parts of a record an analysis may declare it reads beyond the always-read ones (its
# item's split, id and kind, its scores, its repeat, whether it was answered): the item's
# "input", "reference", "candidate_tools" and "metadata" (the record's cluster is read with all
# four, else it is the item's key), the answer's "outcome" (output, parsed answer, note, tool
# calls), its parsed "answer" alone and its "trace", and the item's "context".
ITEM_PARTS = ("input", "reference", "candidate_tools", "metadata")
RECORD_PARTS = (*ITEM_PARTS, "answer", "outcome", "trace", "context")


def parts_read(analyses: Iterable[Analysis]) -> tuple[str, ...] | None:
    """The parts of the records these analyses read, together (None: all of them)."""
    found: set[str] = set()
    for analysis in analyses:
        if analysis.reads is None:
            return None
        found.update(analysis.reads)
    return tuple(part for part in RECORD_PARTS if part in found)


# The records of one group with the same values counted: (the values their sample has of
# ScoreBreakdown.reads, in its order; how many records; their values of ScoreBreakdown.scores,
# in its order).
Counted = tuple[tuple[Any, ...], int, tuple[float | None, ...]]

# The values of a sample a breakdown may group by: a fixed vocabulary the platform reads in the
# database (evaluation/selectors.py), each read here as the records give it.
SAMPLE_COLUMNS = ("split", "kind")
SAMPLE_JSON = ("metadata", "input", "reference")
SAMPLE_VALUES = (*SAMPLE_COLUMNS, *SAMPLE_JSON, "tool_count", "id_suffix")
SAMPLE_GROUPS = SAMPLE_COLUMNS


@dataclass(frozen=True, slots=True)
class SampleValue:
    """One value of a record's sample, from SAMPLE_VALUES:
    - "split", "kind": the sample's split or kind;
    - "metadata", "input", "reference": the JSON value found at `path` (object keys, in turn)
      inside that field of the sample, None where a key is absent or the value on the way is not
      an object;
    - "tool_count": how many candidate tools the sample offers (len of Item.candidate_tools);
    - "id_suffix": the part of the sample's id after its last "_", before any "#" ("M-S_7_2#1"
      gives "2")."""

    field: str
    path: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.field not in SAMPLE_VALUES:
            raise ValueError(
                f"sample value {self.field!r}: choose one of {', '.join(SAMPLE_VALUES)}"
            )
        if bool(self.path) != (self.field in SAMPLE_JSON) or not all(
            isinstance(key, str) and key for key in self.path
        ):
            raise ValueError(
                f"sample value {self.field!r}: a path of keys is given for "
                f"{', '.join(SAMPLE_JSON)} (and only for them)"
            )

    def of(self, item: Item) -> Any:
        """The value as the records give it (what the database's reading must equal)."""
        if self.field in SAMPLE_COLUMNS:
            return getattr(item, self.field)
        if self.field == "tool_count":
            return len(item.candidate_tools)
        if self.field == "id_suffix":
            return item.external_id.partition("#")[0].rsplit("_", 1)[-1]
        found: Any = getattr(item, self.field)
        for key in self.path:
            found = found.get(key) if isinstance(found, Mapping) else None
        return found


@dataclass(frozen=True, slots=True)
class RecordValue:
    """A value of a record (its sample, its answer, its scores) in the run's context that a
    suite's pure function gives, `of(record, ctx)`, JSON: None, a bool, a number or a text. The
    platform computes it once per stored answer and keeps it with the answer
    (evaluation.Prediction.derived, under `name`), computes it again when the answer, its
    sample or the benchmark's tools change, and counts the records by it in the database, as
    by a SampleValue: an error type of a wrong answer, the depth of the gold plan. `name` is
    unique among the suite's record values; a new definition takes a new name (values stored
    under the old one are not computed again)."""

    name: str
    of: Callable[[Scored, Context], Any]

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z][a-z0-9_]*", self.name):
            raise ValueError(f"record value name {self.name!r}: lower-case letters, digits, _")


Read = SampleValue | RecordValue


def _one_value(value: Any) -> Hashable | None:
    return value if isinstance(value, Hashable) else None


@dataclass(frozen=True, slots=True)
class ScoreBreakdown:
    """An analysis whose rows are `breakdown`'s over stored scores, declared as data: records
    grouped by values of their sample (`by_sample`: a SampleValue, several, or the name of a
    column in SAMPLE_COLUMNS), each metric the mean of a stored per-item score (`scores`: metric
    name -> score name, read as `score_of` reads it), over the records whose `covered_by` score
    is present (not None; None: every record), as percentages when `percent`. A read may be a
    RecordValue instead: a value of the whole record, stored with its answer.

    `share`: the name of one more metric, each group's share (%) of the records in the groups
    (`shares`'s figure), for a distribution of the covered records (error types).

    `group` makes a record's group of its sample's values (one argument per value read; None
    leaves the record out), as the analysis's own grouping does; without it, the one value read
    is the group. It is Python, called once per distinct combination of values (a handful), never
    SQL: the database only reads the declared values.

    The platform computes such rows in the database, the records counted by their sample's
    values and their scores' values (a run of a million items is not read into Python); the
    analysis's `compute` stays its definition, and the tests hold every declared breakdown to
    giving the same rows."""

    by_sample: str | Read | tuple[Read, ...]
    scores: Mapping[str, str]
    covered_by: str | None = None
    percent: bool = True
    group: Callable[..., Hashable | None] | None = None
    share: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.by_sample, str) and self.by_sample not in SAMPLE_COLUMNS:
            raise ValueError(
                f"score_breakdown by {self.by_sample!r}: choose one of "
                f"{', '.join(SAMPLE_COLUMNS)}, or a SampleValue"
            )
        if not self.reads:
            raise ValueError("score_breakdown by no value of the sample")
        if self.group is None and len(self.reads) != 1:
            raise ValueError("score_breakdown by several values of the sample needs a group")

    @property
    def reads(self) -> tuple[Read, ...]:
        """The sample's (or record's) values the records are grouped by, in order."""
        if isinstance(self.by_sample, str):
            return (SampleValue(self.by_sample),)
        if isinstance(self.by_sample, SampleValue | RecordValue):
            return (self.by_sample,)
        return tuple(self.by_sample)

    @property
    def record_values(self) -> tuple[RecordValue, ...]:
        """The reads that are values of the record (stored with its answer)."""
        return tuple(value for value in self.reads if isinstance(value, RecordValue))

    def read(self, item: Item) -> tuple[Any, ...]:
        """The values of `reads` the item has, as the records give them (reads of the sample
        only: read_record reads values of the record too)."""
        found = []
        for value in self.reads:
            if isinstance(value, RecordValue):
                raise ValueError("a breakdown by values of the record reads the record")
            found.append(value.of(item))
        return tuple(found)

    def read_record(self, record: Scored, ctx: Context) -> tuple[Any, ...]:
        """The values of `reads` the record has (in the run's context)."""
        return tuple(
            value.of(record, ctx) if isinstance(value, RecordValue) else value.of(record.item)
            for value in self.reads
        )

    def group_of(self, values: Sequence[Any]) -> Hashable | None:
        """The group of a record whose sample has these values of `reads`."""
        if self.group is None:
            return _one_value(values[0])
        return self.group(*values)

    def rows(
        self, counted: Iterable[Counted], *, order: Sequence[Hashable] | None = None
    ) -> list[Row]:
        """The rows `breakdown` gives of the records these counts stand for: each group's n
        and, per metric, `rate` of its values (each value as many times as counted)."""
        names = list(self.scores)
        groups: dict[Hashable, tuple[list[int], list[list[float | None]]]] = {}
        made: dict[tuple[Any, ...], Hashable | None] = {}
        for read, count, values in counted:
            key = _frozen(read)
            if key not in made:
                made[key] = self.group_of(read)
            group = made[key]
            if group is None:
                continue
            size, columns = groups.setdefault(group, ([0], [[] for _ in names]))
            size[0] += count
            for column, value in zip(columns, values, strict=True):
                if value is not None:
                    column.extend(itertools.repeat(value, count))
        rows: list[Row] = []
        for key in _ordered(groups, order):
            size, columns = groups[key]
            row: Row = {GROUP: key, COUNT: size[0]}
            for name, column in zip(names, columns, strict=True):
                row[name] = rate(column, percent=self.percent)
            rows.append(row)
        if self.share is not None:
            total = sum(row[COUNT] for row in rows)
            for row in rows:
                row[self.share] = round(100.0 * row[COUNT] / total, 2) if total else None
        return rows


def _frozen(value: Any) -> Any:
    """A hashable stand-in of a JSON value (to call `group` once per distinct one)."""
    if isinstance(value, Mapping):
        return ("{}", tuple(sorted((str(k), _frozen(v)) for k, v in value.items())))
    if isinstance(value, list | tuple):
        return ("[]", tuple(_frozen(v) for v in value))
    return (type(value).__name__, value)


@dataclass(frozen=True)
class Analysis:
    """One figure of a paper, as a suite declares it for a task.

    name: a key (letters, digits, underscores), unique within the task; the CSV and the
      command's JSON use it.
    title: what the page's section is called ("CSR by candidate list length").
    by: the grouping field, as the rows' "group" is named in the command's JSON and the CSV's
      header ("turn", "tools", "error_type").
    metrics: the numbers per group; the chart draws the first.
    compute: the pure function (AnalysisInput -> rows).
    chart: "bar" (categories) or "line" (an ordered, numeric-like axis).
    covers(record, ctx): which records the groups partition (None: all of them), e.g. only the
      wrong turns for an error-type breakdown, or the items a run's figure counts.
    series: how a comparison of several runs draws it: one line or bar per run ("run"), or
      per model, pooling the runs of one model ("model"), for groupings that are constant
      within a run (a run of MetaTool's scenario task has one scenario list: the paper's lines
      join a model's runs over the lists).
    source: the figure or table of the paper it redraws ("Fig. 5a").
    description: one or two sentences a reader of the page needs (how groups are made).
    by_title: the grouping in words, for axes and table heads (default: `by`).
    group_order: the groups' order where it is not the natural one."""

    name: str
    title: str
    by: str
    metrics: tuple[AnalysisMetric, ...]
    compute: Callable[[AnalysisInput], list[Row]]
    chart: ChartKind = "bar"
    covers: Callable[[Scored, Context], bool] | None = None
    series: SeriesKind = "run"
    source: str = ""
    description: str = ""
    by_title: str = ""
    # The groups' order where it is not the natural one (the paper's order of error types);
    # rows follow it, groups it does not list come after in natural order.
    group_order: tuple[Any, ...] = ()
    # names of the AnalysisInput.inputs it reads (the platform fetches only those asked for)
    inputs: tuple[str, ...] = ()
    # False: the groups are facets every covered record may have (a judge's dimensions), each
    # counting the records with a value on it, rather than a partition of the records
    partition: bool = True
    # `compute` declared as data, when it is a plain breakdown of stored scores by a field of
    # the sample: the platform then computes the rows in the database, without reading the
    # run's records (ScoreBreakdown)
    score_breakdown: ScoreBreakdown | None = None
    # The parts of the records `compute` reads (RECORD_PARTS), of its own run's and of those
    # its inputs give ("baseline", "model_runs"): the platform reads only those (None: all).
    # A record always has its item's split, id and kind, its scores, its repeat and whether
    # it was answered (an answered record whose outcome is not read has an empty Outcome).
    reads: tuple[str, ...] | None = None
    # With a score_breakdown that reads the "baseline" input (the run this one repeats on other
    # tool descriptions): the rows are this function of the breakdown's rows over the run and
    # over the run it repeats ([] without one), which adds the metrics the scores do not give
    beside_baseline: Callable[[list[Row], list[Row]], list[Row]] | None = None

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z][a-z0-9_]*", self.name):
            raise ValueError(f"analysis name {self.name!r}: lower-case letters, digits, _")
        if not self.metrics:
            raise ValueError(f"analysis {self.name!r} declares no metric")
        names = [m.name for m in self.metrics]
        if len(set(names)) != len(names) or {GROUP, COUNT} & set(names):
            raise ValueError(f"analysis {self.name!r}: metric names must be unique, not group/n")
        if self.chart not in ("bar", "line"):
            raise ValueError(f"analysis {self.name!r}: chart must be bar or line")
        if self.series not in ("run", "model"):
            raise ValueError(f"analysis {self.name!r}: series must be run or model")
        if self.reads is not None and not set(self.reads) <= set(RECORD_PARTS):
            raise ValueError(
                f"analysis {self.name!r}: reads {self.reads}: choose among "
                f"{', '.join(RECORD_PARTS)}"
            )
        plain = self.score_breakdown
        given = {*plain.scores, *([plain.share] if plain.share else [])} if plain else set()
        beside = self.beside_baseline is not None
        if beside and (plain is None or self.inputs != ("baseline",)):
            raise ValueError(
                f"analysis {self.name!r}: beside_baseline goes with a score_breakdown that reads"
                " the baseline input"
            )
        if plain is not None and (
            (not given <= set(names) if beside else given != set(names))
            or (plain.share is not None and plain.share in plain.scores)
            or (self.inputs and not beside)
            or not self.partition
        ):
            raise ValueError(
                f"analysis {self.name!r}: its score_breakdown must name a score for each metric"
                " (and a breakdown of scores reads no inputs and partitions the records)"
            )

    def sort_key(self, group: Any) -> tuple[Any, ...]:
        """Where a group goes among the rows: group_order first, then natural order."""
        if group in self.group_order:
            return (0, self.group_order.index(group))
        return (1, natural_key(group))

    @property
    def axis(self) -> str:
        return self.by_title or self.by.replace("_", " ")

    def covered(self, data: AnalysisInput) -> list[Scored]:
        """The records whose groups the rows give."""
        if self.covers is None:
            return list(data.records)
        return [record for record in data.records if self.covers(record, data.ctx)]

    def run(self, data: AnalysisInput) -> list[Row]:
        """The rows, checked: each has the group, a whole n >= 1, and every declared metric (a
        number or None), nothing else; ValueError naming the analysis otherwise."""
        rows = self.compute(data)
        return [self._checked(row) for row in rows]

    def run_counted(
        self, counted: Iterable[Counted], baseline: Iterable[Counted] = ()
    ) -> list[Row]:
        """The rows of its score_breakdown from the records' values counted (see
        ScoreBreakdown.rows), beside those of the baseline's records when it declares
        beside_baseline, checked as `run` checks them."""
        spec = self.score_breakdown
        if spec is None:
            raise ValueError(f"analysis {self.name!r} declares no score_breakdown")
        order = self.group_order or None
        rows = spec.rows(counted, order=order)
        if self.beside_baseline is not None:
            rows = self.beside_baseline(rows, spec.rows(baseline, order=order))
        return [self._checked(row) for row in rows]

    def _checked(self, row: Mapping[str, Any]) -> Row:
        where = f"analysis {self.name!r}"
        if not isinstance(row, Mapping) or GROUP not in row or COUNT not in row:
            raise ValueError(f"{where}: a row without group and n: {row!r}")
        count = row[COUNT]
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(f"{where}: group {row[GROUP]!r} has n={count!r}")
        expected = {GROUP, COUNT, *(m.name for m in self.metrics)}
        if set(row) != expected:
            raise ValueError(f"{where}: row keys {sorted(row)} are not {sorted(expected)}")
        for metric in self.metrics:
            value = row[metric.name]
            if value is not None and (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not math.isfinite(value)
            ):
                raise ValueError(f"{where}: {metric.name}={value!r} for group {row[GROUP]!r}")
        return {GROUP: row[GROUP], COUNT: count, **{m.name: row[m.name] for m in self.metrics}}


# --- helpers for suites -------------------------------------------------------------------------

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def natural_key(value: Any) -> tuple[Any, ...]:
    """Sort key of a group value: numbers by value; text by its words and numbers in turn
    ("top 5" < "top 10", "10-19" < "100-109"); None last."""
    if value is None:
        return (2,)
    if isinstance(value, bool):
        return (0, float(value), "")
    if isinstance(value, int | float):
        return (0, float(value), "")
    text = str(value)
    parts: list[tuple[int, Any]] = []
    position = 0
    for match in _NUMBER.finditer(text):
        if match.start() > position:
            parts.append((1, text[position : match.start()].lower()))
        parts.append((0, float(match.group())))
        position = match.end()
    if position < len(text):
        parts.append((1, text[position:].lower()))
    return (1, tuple(parts), text)


def rate(values: Sequence[float | None], *, percent: bool = True) -> float | None:
    """The mean of the present values, as a percentage when `percent` (fractions x 100),
    rounded to 2 decimals as runs report; None when none is present."""
    present = [float(v) for v in values if v is not None]
    if not present:
        return None
    value = math.fsum(present) / len(present)
    return round(100.0 * value if percent else value, 2)


PerItem = Callable[[Scored], float | None]


def score_of(name: str) -> PerItem:
    """A per-item value read from the stored scores."""

    def value(record: Scored) -> float | None:
        found = record.scores.get(name)
        return float(found) if isinstance(found, int | float) else None

    return value


def breakdown(
    records: Sequence[Scored],
    group_of: Callable[[Scored], Hashable | None],
    metrics: Mapping[str, PerItem],
    *,
    percent: bool | Mapping[str, bool] = True,
    order: Sequence[Hashable] | None = None,
) -> list[Row]:
    """Rows of per-group means: `group_of(record)` names a record's group (None leaves the
    record out: the analysis does not cover it), each metric is the mean of its per-item
    values over the group (items without a value are skipped), as a percentage when `percent`
    says so. Groups in `order` when given (unlisted groups after, naturally ordered), else in
    natural order."""
    groups: dict[Hashable, list[Scored]] = {}
    for record in records:
        key = group_of(record)
        if key is not None:
            groups.setdefault(key, []).append(record)
    rows: list[Row] = []
    for key in _ordered(groups, order):
        members = groups[key]
        row: Row = {GROUP: key, COUNT: len(members)}
        for name, value_of in metrics.items():
            as_percent = percent if isinstance(percent, bool) else percent.get(name, True)
            row[name] = rate([value_of(member) for member in members], percent=as_percent)
        rows.append(row)
    return rows


def _ordered(groups: Iterable[Hashable], order: Sequence[Hashable] | None) -> list[Hashable]:
    """Groups in `order` (unlisted ones after), each part in natural order."""
    rank = {key: index for index, key in enumerate(order or ())}
    return sorted(groups, key=lambda k: (rank.get(k, len(rank)), natural_key(k)))


def shares(
    records: Sequence[Scored],
    group_of: Callable[[Scored], Hashable | None],
    *,
    name: str = "share",
    order: Sequence[Hashable] | None = None,
) -> list[Row]:
    """Rows of a distribution: each group's n and its share (%) of the covered records."""
    rows = breakdown(records, group_of, {}, order=order)
    total = sum(row[COUNT] for row in rows)
    for row in rows:
        row[name] = round(100.0 * row[COUNT] / total, 2) if total else None
    return rows


def bucket(value: float, width: int) -> str:
    """A bucket label "lo-hi" of integer width `width` holding `value` (0-9, 10-19 ...)."""
    low = int(value // width) * width
    return f"{low}-{low + width - 1}"
