"""State changes of the annotation app: campaigns and their questions, building items, checking
answers, members. (Giving items out and taking answers is annotation.assign; submitting answers
is annotation.submit.) What differs by campaign kind (the default questions, which sources a
kind takes, an item's fields) is asked of the kind (annotation.kinds); the item builders here
are what the kinds' item sources (annotation.sources) call.

Every service raises AnnotationError with a message for the person who asked.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import QuerySet

from annotation.assign import AnnotationError
from annotation.kinds import BuildRequest, kind_named, kind_of, kinds
from annotation.models import Campaign, Item, Member, Question
from annotation.roles import ANNOTATORS
from annotation.selectors import campaign_totals_forget, judged_output, sample_as_item
from annotation.traces import trace_dump
from benchmarks.kit.base import ImportFormatError, PublishedOutput, load_json
from benchmarks.kit.judging import canonical_preference
from benchmarks.kit.registry import get_suite
from benchmarks.kit.traces import NotATrace, Trace, with_schemas
from benchmarks.models import Benchmark, Sample, Tool
from config.dbstats import stats_after_bulk_write
from evaluation.models import Prediction, Run
from evaluation.selectors import evaluator_for
from evaluation.services import RunError, outputs_import


def campaign_create(
    *,
    name: str,
    kind: str,
    benchmark: Benchmark | None = None,
    labels_per_item: int | None = None,
    guidelines: str = "",
    user: Any = None,
    public_name: str = "",
    **fields: Any,
) -> Campaign:
    """A draft campaign with its kind's default questions and, unless given, the labels per
    item the installation can give (labels_per_item_default); a researcher may change both.
    `public_name` is the name its members see (Campaign.shown_name: blank, a blind campaign's
    is neutral). Raises
    AnnotationError for a kind the registry (annotation.kinds) does not know."""
    kind_named(kind)  # an unknown kind is refused first
    name = campaign_name_check(name)
    public_name = public_name_check(public_name)
    if Campaign.objects.filter(name=name).exists():
        raise AnnotationError(f"a campaign named {name!r} exists already", field="name")
    if labels_per_item is not None:
        labels_per_item_check(labels_per_item)
    campaign = Campaign(
        name=name,
        public_name=public_name,
        kind=kind,
        benchmark=benchmark,
        labels_per_item=labels_per_item or labels_per_item_default(kind),
        guidelines=guidelines,
        created_by=user if getattr(user, "is_authenticated", False) else None,
        **fields,
    )
    try:
        campaign.clean()
    except ValidationError as exc:
        problems = "; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())
        raise AnnotationError(problems, field=next(iter(exc.message_dict))) from None
    with transaction.atomic():
        campaign.save()
        questions_ensure(campaign)
    return campaign


MAX_LABELS_PER_ITEM = 100


def campaign_name_check(name: str) -> str:
    """The name stripped; refused empty or longer than the column."""
    name = name.strip()
    if not name:
        raise AnnotationError("give the campaign a name", field="name")
    if len(name) > 200:
        raise AnnotationError("the name is longer than 200 characters", field="name")
    return name


def public_name_check(public_name: str) -> str:
    """The name members see, stripped (blank: Campaign.shown_name's default); refused longer
    than the column."""
    public_name = public_name.strip()
    if len(public_name) > 200:
        raise AnnotationError(
            "the name annotators see is longer than 200 characters", field="public_name"
        )
    return public_name


def labels_per_item_default(kind: str) -> int:
    """A new campaign's labels per item: its kind's number (three per Turing and pairwise item,
    two per motivation item: CampaignKind.labels_per_item), but no more than the active users
    of the annotators group, who are the ones a campaign's annotators usually come from (a
    pairwise campaign on an installation of two annotators asks two labels per item, not
    three no item could get). An empty group leaves the kind's number."""
    wanted = kind_named(kind).labels_per_item
    annotators = (
        get_user_model().objects.filter(is_active=True, groups__name=ANNOTATORS).distinct().count()
    )
    return min(wanted, annotators) if annotators else wanted


def labels_per_item_check(labels_per_item: int) -> None:
    if not 1 <= labels_per_item <= MAX_LABELS_PER_ITEM:
        raise AnnotationError(
            f"labels per item: from 1 to {MAX_LABELS_PER_ITEM}", field="labels_per_item"
        )


def questions_ensure(campaign: Campaign) -> None:
    """The kind's default questions, for a campaign that has none."""
    if campaign.questions.exists():
        return
    for order, spec in enumerate(kind_of(campaign).questions()):
        Question.objects.create(campaign=campaign, order=order, **spec)


def members_add(*, campaign: Campaign, users: Sequence[Any], role: str) -> int:
    added = 0
    for user in users:
        _, created = Member.objects.get_or_create(campaign=campaign, user=user, role=role)
        added += created
    return added


def campaign_activate(*, campaign: Campaign) -> None:
    """Opens a campaign to its annotators (the setup page's last step and the admin's bulk
    action). Refuses one without items or annotators."""
    if not campaign.items.exists():
        raise AnnotationError("build the campaign's items before opening it", field="items")
    if not campaign.members.filter(role=Member.Role.ANNOTATOR).exists():
        raise AnnotationError("add annotators before opening the campaign", field="members")
    campaign.status = Campaign.Status.ACTIVE
    campaign.save(update_fields=["status", "updated_at"])


def campaign_close(*, campaign: Campaign) -> bool:
    """No more items are given out (labels already given stay). False if it was closed."""
    if campaign.status == Campaign.Status.CLOSED:
        return False
    campaign.status = Campaign.Status.CLOSED
    campaign.save(update_fields=["status", "updated_at"])
    return True


# --- building items -----------------------------------------------------------------------------


def items_build(*, campaign: Campaign, request: BuildRequest) -> int:
    """Items built the way the campaign's kind builds them from what the researcher gave (the
    setup page's items step and the admin's build form both call this); the number added."""
    return kind_of(campaign).build(campaign, request)


def _next_position(campaign: Campaign) -> int:
    last = campaign.items.order_by("-position").values_list("position", flat=True).first()
    return 0 if last is None else last + 1


def _add_items(campaign: Campaign, rows: Sequence[dict[str, Any]]) -> int:
    if not rows:
        raise AnnotationError("nothing to add: no item matches")
    start = _next_position(campaign)
    Item.objects.bulk_create(
        [Item(campaign=campaign, position=start + i, **row) for i, row in enumerate(rows)],
        batch_size=5000,
    )
    stats_after_bulk_write({Item._meta.db_table: len(rows)})
    transaction.on_commit(lambda: campaign_totals_forget(campaign.pk))
    return len(rows)


def _require_builder(campaign: Campaign, builder: str) -> None:
    """Refuses to build items in a way the campaign's kind does not take (its `builders`)."""
    if builder not in kind_of(campaign).builders:
        names = " or ".join(k.label.lower() for k in kinds().values() if builder in k.builders)
        raise AnnotationError(f"this builds items for {names} campaigns")


def items_from_split(*, campaign: Campaign, split: str, limit: int | None = None) -> int:
    """One item per sample of a split of the campaign's benchmark (refinement; a baseline
    from samples that carry their candidate tools)."""
    _require_builder(campaign, "split")
    if campaign.benchmark is None:
        raise AnnotationError("choose the campaign's benchmark first", field="benchmark")
    samples = _limited(
        Sample.objects.filter(benchmark=campaign.benchmark, split=split).order_by("id"), limit
    )
    kind = kind_of(campaign)
    rows = [kind.sample_item(sample, split) for sample in samples.only("id", "candidate_tools")]
    with transaction.atomic():
        return _add_items(campaign, rows)


MAX_LIMIT = 1_000_000_000


def _check_limit(limit: int | None) -> None:
    # (the upper bound keeps a mistyped limit from reaching the database as an overflow)
    if limit is not None and not 1 <= limit <= MAX_LIMIT:
        raise AnnotationError(f"the limit is a number from 1 to {MAX_LIMIT:,}", field="limit")


def _limited(rows: QuerySet[Any], limit: int | None) -> QuerySet[Any]:
    """The first `limit` rows (all of them without a limit)."""
    _check_limit(limit)
    return rows[:limit] if limit else rows


def items_from_run(*, campaign: Campaign, run: Run, limit: int | None = None) -> int:
    """A human baseline of exactly what a run asked: one item per prediction, with the
    candidates the model was shown (the first `limit` predictions)."""
    _require_builder(campaign, "run")
    rows = []
    predictions = run.predictions.select_related("sample").order_by("position")
    for prediction in _limited(predictions, limit):
        candidates = (prediction.context or {}).get("candidates") or list(
            prediction.sample.candidate_tools
        )
        if not candidates:
            raise AnnotationError(
                f"prediction {prediction.pk} was shown no candidate tools", field="run"
            )
        rows.append(
            {
                "sample": prediction.sample,
                "prediction": prediction,
                "payload": {"choices": list(candidates)},
            }
        )
    with transaction.atomic():
        campaign.task = campaign.task or run.task
        campaign.save(update_fields=["task", "updated_at"])
        return _add_items(campaign, rows)


def items_from_tools(*, campaign: Campaign, limit: int | None = None) -> int:
    """One item per tool of the campaign's benchmark (tool motivation), the first `limit`
    by name."""
    _require_builder(campaign, "tools")
    if campaign.benchmark is None:
        raise AnnotationError("choose the campaign's benchmark first", field="benchmark")
    rows = [{"tool": tool} for tool in _limited(campaign.benchmark.tools.order_by("name"), limit)]
    with transaction.atomic():
        return _add_items(campaign, rows)


def items_from_runs(*, campaign: Campaign, run_a: Run, run_b: Run, limit: int | None = None) -> int:
    """One item per sample both runs answered (pairwise), A and B in the canonical order (the
    first `limit` in A's order)."""
    _require_builder(campaign, "runs")
    if run_a.pk == run_b.pk:
        raise AnnotationError("compare two different runs", field="run_b")
    if (run_a.benchmark_id, run_a.task) != (run_b.benchmark_id, run_b.task):
        raise AnnotationError("the two runs must be of the same benchmark and task", field="run_b")
    done = Prediction.Status.DONE
    # B's first line for a sample where an imported run repeats one (dict keeps the last).
    b_by_sample = dict(
        run_b.predictions.filter(status=done).order_by("-position").values_list("sample_id", "id")
    )
    rows = [
        {"sample_id": sample_id, "prediction_id": pid, "prediction_b_id": b_by_sample[sample_id]}
        for sample_id, pid in run_a.predictions.filter(status=done)
        .order_by("position")
        .values_list("sample_id", "id")
        if sample_id in b_by_sample
    ]
    _check_limit(limit)
    rows = rows[:limit] if limit else rows
    with transaction.atomic():
        campaign.run_a, campaign.run_b = run_a, run_b
        campaign.benchmark = campaign.benchmark or run_a.benchmark
        campaign.save(update_fields=["run_a", "run_b", "benchmark", "updated_at"])
        return _add_items(campaign, rows)


def _failed_predictions(run: Run, limit: int | None, fields: Sequence[str]) -> list[Prediction]:
    """A run's failed predictions in order: failed for good, or answered with a wrong result
    by the task's headline metric (the first `limit` of them)."""
    _check_limit(limit)
    headline = evaluator_for(run.benchmark).task(run.task).metrics[0]
    failed = []
    for prediction in run.predictions.order_by("position").only(
        "id", "sample_id", "status", "scores", *fields
    ):
        value = (prediction.scores or {}).get(headline)
        if prediction.status == Prediction.Status.FAILED or value in (0, 0.0, False):
            failed.append(prediction)
            if limit and len(failed) == limit:
                break
    return failed


def items_from_judged(
    *, campaign: Campaign, judged: Sequence[tuple[int, int, int | None]], limit: int | None = None
) -> int:
    """One item per judged item given, (sample, prediction, other prediction or None) as a
    judge saw it (A = the judged prediction, B = the other), in the order given (the first
    `limit`): the items a judge's calibration report chose (annotation.calibration.services).
    The items carry nothing of the judge's verdict. Each prediction must be an answer of its
    sample that is done; a pair's two answers must be of two runs of one benchmark and task."""
    _require_builder(campaign, "judged")
    _check_limit(limit)
    judged = list(judged)[:limit] if limit else list(judged)
    ids = {pid for _s, a, b in judged for pid in (a, b) if pid}
    found = {
        p.pk: p
        for p in Prediction.objects.filter(pk__in=ids, status=Prediction.Status.DONE)
        .select_related("run")
        .only("id", "sample_id", "run__id", "run__benchmark_id", "run__task")
    }
    rows = []
    for sample_id, a, b in judged:
        first, second = found.get(a), found.get(b) if b else None
        if first is None or (b and second is None):
            missing = a if first is None else b
            raise AnnotationError(f"prediction {missing} is not a finished answer")
        if first.sample_id != sample_id or (second is not None and second.sample_id != sample_id):
            raise AnnotationError(f"the answers {a} and {b} are not of sample {sample_id}")
        if (second is not None) != kind_of(campaign).sided:
            shown = "two answers" if kind_of(campaign).sided else "one answer"
            raise AnnotationError(f"a {campaign.kind} item shows {shown}: ({sample_id}, {a}, {b})")
        if second is not None and (
            (first.run.benchmark_id, first.run.task) != (second.run.benchmark_id, second.run.task)
            or first.run_id == second.run_id
        ):
            raise AnnotationError(f"the answers {a} and {b} are not of two runs of one task")
        row: dict[str, Any] = {"sample_id": sample_id, "prediction_id": a}
        if b:
            row["prediction_b_id"] = b
        rows.append(row)
    if not rows:
        raise AnnotationError("nothing to add: no judged item given")
    runs = {(found[a].run, found[b].run if b else None) for _s, a, b in judged}
    with transaction.atomic():
        if len(runs) == 1:
            # One pair of runs, as items_from_runs records it; several leave the fields blank.
            ((campaign.run_a, campaign.run_b),) = runs
        campaign.benchmark = campaign.benchmark or found[judged[0][1]].run.benchmark
        campaign.save(update_fields=["run_a", "run_b", "benchmark", "updated_at"])
        return _add_items(campaign, rows)


def items_from_answers(*, campaign: Campaign, run: Run, limit: int | None = None) -> int:
    """One item per finished answer of a run, in the run's order (the first `limit`)."""
    _require_builder(campaign, "answers")
    done = run.predictions.filter(status=Prediction.Status.DONE).order_by("position")
    rows = [
        {"sample_id": sample_id, "prediction_id": pk}
        for pk, sample_id in _limited(done.values_list("id", "sample_id"), limit)
    ]
    if not rows:
        raise AnnotationError(f"run {run.pk} has no finished answer", field="run")
    with transaction.atomic():
        campaign.benchmark = campaign.benchmark or run.benchmark
        campaign.save(update_fields=["benchmark", "updated_at"])
        return _add_items(campaign, rows)


def items_from_failures(*, campaign: Campaign, run: Run, limit: int | None = None) -> int:
    """One item per failed prediction of a run (error types): failed for good, or answered
    with a wrong result by the task's headline metric (the first `limit` of them)."""
    _require_builder(campaign, "failures")
    rows = [
        {"sample_id": prediction.sample_id, "prediction": prediction}
        for prediction in _failed_predictions(run, limit, ())
    ]
    with transaction.atomic():
        campaign.benchmark = campaign.benchmark or run.benchmark
        campaign.save(update_fields=["benchmark", "updated_at"])
        return _add_items(campaign, rows)


def _trace_hook(campaign: Campaign, benchmark: Benchmark | None, field: str) -> Any:
    """The trace hook of the benchmark's suite; AnnotationError when it reads no traces."""
    if benchmark is None:
        raise AnnotationError("choose the campaign's benchmark first", field="benchmark")
    suite = get_suite(benchmark.suite)
    if suite.trace is None:
        raise AnnotationError(
            f"{benchmark.name}'s outputs cannot be reviewed step by step: its suite "
            f"({suite.name}) does not read them as traces",
            field=field,
        )
    return suite.trace


def _called(trace: Trace) -> set[str]:
    return {call.name for step in trace.steps for call in step.calls}


def _stored_schemas(benchmark: Benchmark, read: Sequence[tuple[Sample, Any, Trace]]) -> Any:
    """(sample, trace) -> the schemas the benchmark stores of the tools the sample offers or the
    trace calls (a hook sees one sample, never the stored tools), read in one query."""
    names = set()
    for sample, _prediction, trace in read:
        names |= set(sample.candidate_tools or ()) | _called(trace)
    stored = dict(
        Tool.objects.filter(benchmark=benchmark, name__in=names).values_list("name", "parameters")
    )

    def known(sample: Sample, trace: Trace) -> dict[str, Any]:
        wanted = set(sample.candidate_tools or ()) | _called(trace)
        return {name: schema for name, schema in stored.items() if name in wanted and schema}

    return known


def items_from_traces(
    *,
    campaign: Campaign,
    run: Run | None = None,
    split: str = "",
    failed_only: bool = False,
    limit: int | None = None,
) -> int:
    """Step-level review: one item per trace, read by the suite's trace hook and frozen in the
    item (annotation.traces.trace_dump), so that every annotator reviews the same steps. From a
    run: each of its answered predictions, or with `failed_only` its failed or wrong ones (as
    error types takes them); from a split of the campaign's benchmark (no run): each sample,
    when its samples are themselves traces (imported transcripts). The first `limit`.

    Raises AnnotationError when the benchmark's suite reads no traces, or naming the prediction
    or sample that holds none (the suite's reason)."""
    _require_builder(campaign, "traces")
    if run is not None:
        hook = _trace_hook(campaign, run.benchmark, "run")
        fields = ("output", "answer", "parsed", "trace", "context", "tool_calls", "note")
        if failed_only:
            predictions = _failed_predictions(run, limit, fields)
        else:
            _check_limit(limit)
            answered = run.predictions.filter(
                status__in=[Prediction.Status.DONE, Prediction.Status.FAILED]
            )
            predictions = list(_limited(answered.order_by("position").only(*fields), limit))
        samples = Sample.objects.in_bulk([p.sample_id for p in predictions])
        read = []
        for prediction in predictions:
            sample = samples[prediction.sample_id]
            prediction.run = run
            try:
                trace = hook(sample_as_item(sample), judged_output(prediction))
            except NotATrace as exc:
                raise AnnotationError(
                    f"prediction {prediction.pk} (sample {sample.external_id}) has no trace "
                    f"to review: {exc}",
                    field="run",
                ) from None
            read.append((sample, prediction, trace))
        known = _stored_schemas(run.benchmark, read)
        rows = [
            {
                "sample": sample,
                "prediction": prediction,
                "payload": {"trace": trace_dump(with_schemas(trace, known(sample, trace)))},
            }
            for sample, prediction, trace in read
        ]
        with transaction.atomic():
            campaign.benchmark = campaign.benchmark or run.benchmark
            campaign.task = campaign.task or run.task
            campaign.save(update_fields=["benchmark", "task", "updated_at"])
            return _add_items(campaign, rows)
    hook = _trace_hook(campaign, campaign.benchmark, "split")
    split_samples = _limited(
        Sample.objects.filter(benchmark=campaign.benchmark, split=split).order_by("id"), limit
    )
    transcripts = []
    for sample in split_samples:
        try:
            transcripts.append((sample, None, hook(sample_as_item(sample), None)))
        except NotATrace as exc:
            raise AnnotationError(
                f"sample {sample.external_id} of split {split} is not a trace to review: {exc} "
                "(build the items from a run's predictions instead)",
                field="split",
            ) from None
    assert campaign.benchmark is not None  # _trace_hook refused a campaign without one
    known = _stored_schemas(campaign.benchmark, transcripts)
    rows = [
        {
            "sample": sample,
            "payload": {"trace": trace_dump(with_schemas(trace, known(sample, trace)))},
        }
        for sample, _none, trace in transcripts
    ]
    with transaction.atomic():
        return _add_items(campaign, rows)


def items_from_turing_pairs(*, campaign: Campaign, pairs: Sequence[Any]) -> int:
    """Turing-test items from the virtual API server's (real, simulated) pairs, each with its
    API's documentation (evaluation.TuringPair)."""
    _require_builder(campaign, "api_pairs")
    rows = [
        {
            "payload": {
                "api": pair.api.function or f"{pair.api.tool}/{pair.api.api}",
                "documentation": pair.api.documentation or {"name": pair.api.api},
                "arguments": pair.arguments,
                "real": pair.real,
                "simulated": pair.simulated,
            }
        }
        for pair in pairs
    ]
    with transaction.atomic():
        return _add_items(campaign, rows)


TURING_KEYS = ("documentation", "arguments", "real", "simulated")


def items_from_pairs_file(
    *, campaign: Campaign, path: Path, limit: int | None = None, name: str = ""
) -> int:
    """Turing-test items from a JSON file: a list of {"documentation": object or text,
    "arguments": object, "real": response, "simulated": response, "api"?: name} (or an
    object holding that list under "pairs"). All or nothing: a bad record is refused with its
    index and field. The first `limit` records are built (all are checked). `name`: the file's
    name as its owner knows it (an upload's), in place of where it was saved."""
    _require_builder(campaign, "api_pairs")
    _check_limit(limit)
    shown = name or str(path)
    try:
        records = load_json(Path(path))
    except ImportFormatError as exc:
        raise AnnotationError(str(exc).replace(str(path), shown), field="pairs") from None
    if isinstance(records, dict) and "pairs" in records:
        records = records["pairs"]
    if not isinstance(records, list) or not records:
        raise AnnotationError(
            f"{shown}: expected a non-empty list of response pairs", field="pairs"
        )
    rows = []
    for index, record in enumerate(records):
        where = f"{shown}, record {index}"
        if not isinstance(record, dict):
            raise AnnotationError(f"{where}: expected an object", field="pairs")
        missing = [key for key in TURING_KEYS if key not in record]
        if missing:
            raise AnnotationError(f"{where}: missing {', '.join(missing)}", field="pairs")
        if not isinstance(record["arguments"], dict):
            raise AnnotationError(f"{where}, field 'arguments': not an object", field="pairs")
        payload = {key: record[key] for key in (*TURING_KEYS, "api") if key in record}
        rows.append({"payload": payload})
    rows = rows[:limit] if limit else rows
    with transaction.atomic():
        return _add_items(campaign, rows)


# --- answers ------------------------------------------------------------------------------------


def item_choices(item: Item) -> list[str]:
    return [str(c) for c in (item.payload or {}).get("choices", [])]


def answers_clean(
    *, questions: Sequence[Question], item: Item, raw: dict[str, Any], shown_order: str
) -> dict[str, Any]:
    """The answers to store, from what the form sent: every value checked against its scale;
    pairwise answers given as the side shown ("left" / "tie" / "right") are stored against
    the canonical order (1 A better, 0 tie, -1 B better). Raises AnnotationError naming the
    question."""
    answers: dict[str, Any] = {}
    for question in questions:
        value = raw.get(question.key)
        empty = value is None or value == "" or value == []
        if empty:
            if question.required and not (question.multiple and question.min_choices == 0):
                raise AnnotationError(f"{question.text}: choose an answer", field=question.key)
            if question.multiple:
                answers[question.key] = []
            continue
        if question.scale == Question.Scale.PAIRWISE:
            answers[question.key] = _pairwise(question, value, shown_order)
            continue
        allowed = (
            item_choices(item)
            if question.scale == Question.Scale.ITEM_CHOICES
            else [str(c["value"]) for c in question.choices]
        )
        values = [str(v) for v in (value if isinstance(value, list) else [value])]
        unknown = [v for v in values if v not in allowed]
        if unknown:
            raise AnnotationError(
                f"{question.text}: {', '.join(unknown)} is not a choice", field=question.key
            )
        if question.multiple:
            # In the order of the choices: the same choices are the same answer.
            chosen = set(values)
            values = [v for v in allowed if v in chosen]
            if len(values) < question.min_choices:
                raise AnnotationError(
                    f"{question.text}: choose at least {question.min_choices}", field=question.key
                )
            if question.max_choices is not None and len(values) > question.max_choices:
                raise AnnotationError(
                    f"{question.text}: choose at most {question.max_choices}", field=question.key
                )
            answers[question.key] = values
        else:
            if len(values) != 1:
                raise AnnotationError(f"{question.text}: choose one answer", field=question.key)
            answers[question.key] = _typed(question, values[0])
    return answers


def _typed(question: Question, value: str) -> Any:
    for choice in question.choices:
        if str(choice["value"]) == value:
            return choice["value"]
    return value


SIDES = {"left": 0, "tie": None, "right": 1}


def _pairwise(question: Question, value: Any, shown_order: str) -> int:
    if value not in SIDES:
        raise AnnotationError(f"{question.text}: answer left, tie or right", field=question.key)
    return canonical_preference(SIDES[value], shown_order or "AB")


# --- the human baseline -------------------------------------------------------------------------


def baseline_runs_build(*, campaign: Campaign) -> list[Any]:
    """Each annotator's answers as a run of the campaign's task, scored by the suite like a
    model's (MetaTool C.5's human baseline): the chosen tools written as a model would answer
    ("None" for no tool), against the candidates the item showed. Re-building replaces the
    campaign's earlier baseline runs. Raises AnnotationError if there is nothing to score."""
    if not kind_of(campaign).scored_as_runs:
        raise AnnotationError("only a human baseline's answers are scored as runs")
    if campaign.benchmark is None or not campaign.task:
        raise AnnotationError("the campaign needs its benchmark and task (build it from a run)")
    labels = (
        campaign.labels.filter(is_current=True)
        .select_related("item__sample", "item__prediction", "annotator")
        .order_by("annotator__username", "item__position")
    )
    by_annotator: dict[Any, list[Any]] = {}
    for label in labels:
        by_annotator.setdefault(label.annotator, []).append(label)
    if not by_annotator:
        raise AnnotationError("no answer to score yet")
    prefix = f"Human baseline · {campaign.name} · "
    runs = []
    with transaction.atomic():
        Run.objects.filter(name__startswith=prefix, source=Run.Source.IMPORTED).delete()
        for annotator, answered in by_annotator.items():
            outputs, contexts, options = [], [], {}
            for label in answered:
                sample = label.item.sample
                tools = label.answers.get("tools") or []
                outputs.append(
                    PublishedOutput(
                        external_id=sample.external_id,
                        split=sample.split,
                        output=", ".join(tools) if tools else "None",
                        source=f"label {label.pk}",
                    )
                )
                prediction = label.item.prediction
                context = dict(prediction.context) if prediction is not None else {}
                context.setdefault("candidates", item_choices(label.item))
                contexts.append(context)
                if prediction is not None:
                    options = prediction.run.launch_options
            try:
                runs.append(
                    outputs_import(
                        benchmark=campaign.benchmark,
                        task=campaign.task,
                        outputs=outputs,
                        contexts=contexts,
                        options=options,
                        name=f"{prefix}{annotator.get_username()}",
                        model_name=f"human:{annotator.get_username()}",
                        # A baseline of a run that scored a sample's repeats (an import with
                        # on_duplicate=reference) has an item per repeat: each answer counts.
                        on_duplicate="reference",
                    )
                )
            except RunError as exc:
                raise AnnotationError(str(exc)) from None
    return runs
