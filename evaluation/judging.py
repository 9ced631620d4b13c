"""LLM-as-judge jobs: a judge applied to a run (or to a run against another), executed by the
same engine as runs (claims, leases, shared concurrency, cache, retries, progress, cancel and
resume), with verdicts stored item by item beside the humans' labels.

A job has one Judgment per (prediction, repeat, order): pairwise jobs ask in both orders ("AB":
the run's output shown first, "BA": the other run's first) and store the verdict against the
canonical order. An answer that cannot be read is asked once more with the template's format
reminder; if that fails too, the judgment is stored as unparsed with both raw texts. A pass
judge's precheck (no final answer) settles an item without asking.

A job runs one judge version (evaluation.judge_versions), and its mode says how the judge
answers: "text", read by the template's parser; or "call", a forced call of the verdict
function (benchmarks.kit.judging.call_prompt), whose arguments are checked against the verdict's
JSON schema and read by the same parser (read_call). A malformed call is asked once more with
what was wrong, then kept as unparsed with the reason, as an unreadable text is. `raw` keeps a
call as `verdict(<arguments as sent>)`.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from benchmarks.kit import judging as pure
from benchmarks.kit.base import jsonb_text
from benchmarks.kit.judging import JudgeInput, JudgeTemplate, JudgmentRecord, Verdict
from benchmarks.kit.protocol import CallFailed, Context, Item, Outcome, Prompt
from benchmarks.kit.registry import judgment_formats
from benchmarks.services import samples_annotate
from config.dbstats import stats_after_bulk_write
from config.errors import ApplicationError, model_checked
from evaluation import lifecycle
from evaluation.judge_versions import version_for
from evaluation.models import Judge, JudgeJob, JudgeVersion, Judgment, Prediction, Run
from evaluation.selectors import items_by_sample_id, run_context
from evaluation.services import RunError, outputs_import
from evaluation.work.caller import Caller, EndpointConfig
from evaluation.work.engine import (
    DatabaseThread,
    ItemCalls,
    endpoint_config,
    exhausted_error,
    request_key,
)
from evaluation.work.limits import Lane
from evaluation.work.locks import Claimed, WorkTable

log = logging.getLogger(__name__)

JUDGMENTS = WorkTable(
    table="evaluation_judgment",
    parent="job_id",
    parent_table="evaluation_judgejob",
    columns=("sample_id", "prediction_id", "other_id", "repeat", "order"),
    written=(
        ("status", "text"),
        ("prompt", "jsonb"),
        ("raw", "text"),
        ("raw_first", "text"),
        ("values", "jsonb"),
        ("value", "double precision"),
        ("label", "text"),
        ("reasoning", "text"),
        ("error", "text"),
        ("latency_ms", "integer"),
        ("cached", "boolean"),
        ("usage", "jsonb"),
    ),
)


class JudgeError(ApplicationError):
    """A judge job cannot be launched or changed as asked; the message says why."""


def verdict_number(
    template: JudgeTemplate, verdict: Verdict, order: str
) -> tuple[float | None, str]:
    """The item-level number and label of a read verdict (see Judgment.value)."""
    values = verdict.values
    if template.kind == "pass":
        label = str(values.get("label", ""))
        return pure.PASS_VALUE.get(label), label
    if template.kind == "solvability":
        label = str(values.get("label", ""))
        return {"Solvable": 1.0, "Unsolvable": 0.0, "Unsure": 0.5}.get(label), label
    if template.kind == "pairwise":
        canonical = pure.canonical_preference(values.get("preferred"), order)
        return float(canonical), {1: "A", 0: "tie", -1: "B"}[canonical]
    # Pointwise: the judge's own Overall; none is made up from the other dimensions.
    overall = values.get("Overall")
    if isinstance(overall, (int, float)):
        return float(overall) / template.report_divisor, ""
    return None, ""


class JudgmentResult:
    def __init__(
        self,
        row_id: int,
        status: str,
        *,
        prompt: Any = None,
        raw: str = "",
        raw_first: str = "",
        verdict: Verdict | None = None,
        value: float | None = None,
        label: str = "",
        error: str = "",
        latency_ms: int | None = None,
        cached: bool = False,
        usage: dict[str, Any] | None = None,
    ) -> None:
        self.id = row_id
        self.status = status
        self.prompt = prompt
        self.raw = raw
        self.raw_first = raw_first
        self.verdict = verdict
        self.value = value
        self.label = label
        self.error = error
        self.latency_ms = latency_ms
        self.cached = cached
        self.usage = usage or {}

    def values(self) -> tuple[Any, ...]:
        """JUDGMENTS.written's values, then the row's id."""
        verdict = self.verdict
        return (
            self.status,
            jsonb_text(self.prompt),
            self.raw,
            self.raw_first,
            jsonb_text(verdict.values if verdict else {}),
            self.value,
            self.label,
            verdict.reasoning if verdict else "",
            self.error,
            self.latency_ms,
            self.cached,
            jsonb_text(self.usage),
            self.id,
        )


def _outcome(row: Mapping[str, Any]) -> Outcome:
    return Outcome(
        output=row["output"],
        answer=row["answer"],
        parsed=row["parsed"] is not False,
        trace=row["trace"] or [],
        note=row["note"],
    )


def outcomes_by_prediction(ids: Sequence[int]) -> dict[int, tuple[str, Outcome]]:
    rows = Prediction.objects.filter(pk__in=list(ids)).values(
        "id", "status", "output", "answer", "parsed", "trace", "note"
    )
    return {row["id"]: (row["status"], _outcome(row)) for row in rows}


def with_reminder(prompt: Prompt, answer: str, reminder: str) -> Prompt:
    """The same request, followed by the judge's unreadable answer and the format reminder."""
    messages = [
        *prompt.messages,
        {"role": "assistant", "content": answer},
        {"role": "user", "content": reminder},
    ]
    text = None
    if prompt.text is not None:
        text = f"{prompt.text}{answer}\n\n{reminder}\n"
    return Prompt(messages=messages, text=text, stop=prompt.stop, max_tokens=prompt.max_tokens)


class JudgmentHandler:
    """Judgments of one job: build the judge's prompt for the outputs as shown, ask, read."""

    def __init__(
        self, job: JudgeJob, template: JudgeTemplate, ctx: Context, mode: str = "text"
    ) -> None:
        self.job = job
        self.template = template
        self.ctx = ctx
        self.calls = mode == JudgeVersion.Mode.CALL
        self.items: dict[int, Item] = {}
        self.outputs: dict[int, tuple[str, Outcome]] = {}
        self.report = {"done": 0, "unparsed": 0, "failed": 0}

    async def load(self, rows: Sequence[Claimed], db: DatabaseThread) -> None:
        samples = [r.sample_id for r in rows if r.sample_id not in self.items]
        if samples:
            self.items.update(await db.run(items_by_sample_id, samples))
        wanted = {
            pid
            for r in rows
            for pid in (r.data["prediction_id"], r.data["other_id"])
            if pid is not None and pid not in self.outputs
        }
        if wanted:
            self.outputs.update(await db.run(outcomes_by_prediction, sorted(wanted)))

    def judge_input(self, row: Claimed) -> JudgeInput:
        item = self.items[row.sample_id]
        if self.template.kind == "solvability":
            return JudgeInput(item=item, ctx=self.ctx)
        first = self.outputs[row.data["prediction_id"]][1]
        if self.template.kind != "pairwise":
            return JudgeInput(item=item, outputs=(first,), ctx=self.ctx)
        second = self.outputs[row.data["other_id"]][1]
        shown = (first, second) if row.data["order"] == "AB" else (second, first)
        return JudgeInput(item=item, outputs=shown, ctx=self.ctx)

    def salt(self, row: Claimed) -> str:
        # Repeats are separate questions to the cache (the request itself is the same).
        return f"judge-repeat-{row.data['repeat']}" if row.data["repeat"] else ""

    def first_request_keys(self, rows: Sequence[Claimed], config: Any) -> list[str]:
        keys = []
        for row in rows:
            try:
                prompt = self.template.build(self.judge_input(row))
            except Exception:  # noqa: S112 - answer() meets the same error and records it
                continue
            if self.calls:
                prompt = pure.call_prompt(prompt, self.template)
            keys.append(request_key(prompt, config, self.salt(row)))
        return keys

    async def answer(self, row: Claimed, caller: Caller, lane: Lane | None) -> JudgmentResult:
        started = time.monotonic()
        try:
            judge_input = self.judge_input(row)
            if self.template.precheck is not None:
                settled = self.template.precheck(judge_input)
                if settled is not None:
                    return self._read(row, settled, "", "", None, started, None)
            prompt = self.template.build(judge_input)
        except Exception as exc:
            log.exception("building judgment %s of job %s", row.id, self.job.pk)
            self.report["failed"] += 1
            return JudgmentResult(
                row.id, Judgment.Status.FAILED, error=f"{type(exc).__name__}: {exc}"[:2000]
            )
        calls = ItemCalls(caller, lane, self.salt(row))
        try:
            verdict, raw, raw_first = await self._ask(self.template, prompt, judge_input, calls)
            follow_up = self.template.follow_up
            if verdict.ok and follow_up and verdict.values.get("label") == follow_up[0]:
                # The first question's answer is kept as raw_first; the follow-up's label stands.
                second = pure.template_named(follow_up[1])
                asked = await self._ask(second, second.build(judge_input), judge_input, calls)
                if asked[0].ok:
                    first_label = verdict.values.get("label")
                    verdict, raw_first, raw = asked[0], raw, asked[1]
                    verdict.values = {
                        **verdict.values,
                        "first_label": first_label,
                        "follow_up": second.name,
                    }
        except CallFailed as exc:
            self.report["failed"] += 1
            return JudgmentResult(
                row.id,
                Judgment.Status.FAILED,
                prompt=calls.prompt,
                error=str(exc),
                latency_ms=int((time.monotonic() - started) * 1000),
                usage=calls.usage(),
            )
        return self._read(row, verdict, raw, raw_first, calls, started, calls.prompt)

    async def _ask(
        self, template: JudgeTemplate, prompt: Prompt, judge_input: JudgeInput, calls: ItemCalls
    ) -> tuple[Verdict, str, str]:
        """(verdict, raw, raw before the reminder): ask, and once more with the template's
        format reminder when the answer cannot be read."""
        if self.calls:
            return await self._ask_call(template, prompt, judge_input, calls)
        raw = await calls(prompt)
        verdict = self._parse(template, raw, judge_input)
        if verdict.ok:
            return verdict, raw, ""
        again = await calls(with_reminder(prompt, raw, template.reminder))
        return self._parse(template, again, judge_input), again, raw

    async def _ask_call(
        self, template: JudgeTemplate, prompt: Prompt, judge_input: JudgeInput, calls: ItemCalls
    ) -> tuple[Verdict, str, str]:
        """As _ask, through a forced call of the verdict function."""
        asked = pure.call_prompt(prompt, template)
        reply = await calls.reply(asked)
        raw = pure.call_text(reply.tool_calls, reply.text)
        verdict = self._read_call(template, reply.tool_calls, judge_input)
        if verdict.ok:
            return verdict, raw, ""
        again = await calls.reply(pure.call_reminder(asked, raw, verdict.error))
        second = self._read_call(template, again.tool_calls, judge_input)
        return second, pure.call_text(again.tool_calls, again.text), raw

    def _read_call(
        self, template: JudgeTemplate, tool_calls: Sequence[Mapping[str, Any]], judge_input: Any
    ) -> Verdict:
        try:
            return pure.read_call(template, tool_calls, judge_input)
        except Exception as exc:  # a parser's bug leaves the verdict unread, with the reason
            log.exception("judge template %s could not read a call", template.name)
            return Verdict(False, error=f"{type(exc).__name__} while reading the call: {exc}")

    def _parse(self, template: JudgeTemplate, raw: str, judge_input: JudgeInput) -> Verdict:
        try:
            return template.parse(raw, judge_input)
        except Exception as exc:  # a parser's bug leaves the verdict unread, with the reason
            log.exception("judge template %s could not parse", template.name)
            return Verdict(False, error=f"{type(exc).__name__} while parsing: {exc}")

    def _read(
        self,
        row: Claimed,
        verdict: Verdict,
        raw: str,
        raw_first: str,
        calls: ItemCalls | None,
        started: float,
        prompt: Any,
    ) -> JudgmentResult:
        replies = calls.replies if calls else []
        common: dict[str, Any] = {
            "prompt": prompt,
            "raw": raw,
            "raw_first": raw_first,
            "verdict": verdict,
            "latency_ms": int((time.monotonic() - started) * 1000),
            "cached": bool(replies) and all(r.cached for r in replies),
            "usage": calls.usage() if calls else {},
        }
        if not verdict.ok:
            self.report["unparsed"] += 1
            return JudgmentResult(
                row.id, Judgment.Status.UNPARSED, error=verdict.error or "unreadable", **common
            )
        value, label = verdict_number(self.template, verdict, row.data["order"])
        self.report["done"] += 1
        return JudgmentResult(
            row.id,
            Judgment.Status.DONE,
            value=value,
            label=label,
            error=verdict.error,
            **common,
        )

    def exhausted(self, row: Claimed) -> JudgmentResult:
        self.report["failed"] += 1
        return JudgmentResult(row.id, Judgment.Status.FAILED, error=exhausted_error(row))


def job_execute(job_id: int, first: int, last: int) -> dict[str, int]:
    """Judge the pending judgments at positions first..last of a job (see
    lifecycle.execute_chunk)."""
    return lifecycle.execute_chunk(JUDGE_JOBS, job_id, first, last)


def _job_config(job: JudgeJob) -> EndpointConfig:
    endpoint = job.judge.endpoint
    assert endpoint is not None
    return endpoint_config(endpoint, params={**endpoint.default_params, **job.judge.params})


def _job_handler(job: JudgeJob) -> JudgmentHandler:
    _, ctx = run_context(job.run)
    # A job made without a version (outside judge_launch) answers in text, as before versions.
    mode = job.version.mode if job.version is not None else JudgeVersion.Mode.TEXT
    return JudgmentHandler(job, pure.template_named(job.judge.template), ctx, mode)


# --- services -----------------------------------------------------------------------------------


def chunk_size() -> int:
    return lifecycle.chunk_size()


JUDGE_FIELDS = ("name", "template", "endpoint", "params", "answer_mode")


def judge_create(
    *,
    name: str,
    template: str,
    endpoint: Any,
    params: dict | None = None,
    answer_mode: str = Judge.AnswerMode.CALL,
) -> Judge:
    """A judge from a registered template (raises JudgeError for an unknown one)."""
    return judge_save(
        name=name,
        template=template,
        endpoint=endpoint,
        params=params or {},
        answer_mode=answer_mode,
    )


def judge_save(*, judge: Judge | None = None, commit: bool = True, **fields: Any) -> Judge:
    """Set JUDGE_FIELDS on a judge (a new one unless given), its kind from its template, and
    save it, checked by the model's rules. The admin's form, the judge pages and judge_create
    all come here, and a saved judge gets its version of what it now is (judge_versions.
    version_for: a new one when a pinned field changed, none for an unchanged save). Raises
    JudgeError naming the field: an unknown template, a taken name, parameters that are not an
    object. With commit=False nothing is saved (a form's checks)."""
    unknown = sorted(set(fields) - set(JUDGE_FIELDS))
    if unknown:
        raise JudgeError(f"unknown judge field(s): {', '.join(unknown)}")
    if judge is None:
        judge = Judge()
    for name, value in fields.items():
        setattr(judge, name, value)
    try:
        spec = pure.template_named(judge.template)
    except ValueError as exc:
        raise JudgeError(str(exc), field="template") from None
    judge.kind = spec.kind
    model_checked(judge, JudgeError, json_objects={"params": '{"temperature": 0}'})
    if commit:
        with transaction.atomic():
            judge.save()
            version_for(judge)
    return judge


def judge_launch(
    *,
    judge: Judge,
    run: Run,
    against: Run | None = None,
    repeats: int = 3,
    user: Any = None,
    budget: Decimal | None = None,
) -> JudgeJob:
    """One judgment per prediction (pairwise: per sample both runs answered, in both orders),
    `repeats` times, and queue them on the judging queue.

    Raises JudgeError when the template does not fit the run's benchmark and task, a pairwise
    judge has no second run (or one of another benchmark or task), a run is not finished, or
    the judge's endpoint is not ready."""
    template = _template(judge)
    if judge.endpoint is None:
        raise JudgeError(f"judge {judge.name!r} has no endpoint (its verdicts were imported)")
    if judge.endpoint.status != judge.endpoint.Status.READY:
        raise JudgeError(f"the judge's endpoint {judge.endpoint.name!r} is not ready")
    if repeats < 1:
        raise JudgeError("repeat at least once")
    if problem := lifecycle.budget_error(budget):
        raise JudgeError(problem)
    _check_run(template, run)
    if template.kind == "pairwise":
        if against is None:
            raise JudgeError("a pairwise judge compares two runs: give the other one (--against)")
        _check_run(template, against)
        if (against.benchmark_id, against.task) != (run.benchmark_id, run.task):
            raise JudgeError("both runs must be of the same benchmark and task")
        if against.pk == run.pk:
            raise JudgeError("compare a run with another run")
    elif against is not None:
        raise JudgeError(f"a {template.kind} judge judges one run; drop --against")
    pairs = _judged_pairs(run, against)
    if not pairs:
        raise JudgeError("nothing to judge: the runs share no answered sample")
    with transaction.atomic():
        version = version_for(judge)
        job = JudgeJob.objects.create(
            judge=judge,
            run=run,
            against=against,
            repeats=repeats,
            budget=budget,
            version=version,
            created_by=user if getattr(user, "is_authenticated", False) else None,
        )
        orders = ["AB", "BA"] if against is not None else [""]
        written = _write_judgments(job, pairs, repeats, orders)
        lifecycle.launch(JUDGE_JOBS, job.pk, written)
    return job


def _template(judge: Judge) -> JudgeTemplate:
    try:
        return pure.template_named(judge.template)
    except ValueError as exc:
        raise JudgeError(str(exc)) from None


def _check_run(template: JudgeTemplate, run: Run) -> None:
    if not template.applies_to(run.benchmark.suite, run.task):
        raise JudgeError(
            f"judge template {template.name} does not judge {run.benchmark.suite} {run.task} runs"
        )
    if run.status != Run.Status.DONE:
        raise JudgeError(f"run {run.pk} is {run.status}; judge finished runs")


def _judged_pairs(run: Run, against: Run | None) -> list[tuple[int, int, int | None]]:
    """(sample, prediction, the other run's prediction or None) of each judged item, in the
    run's order: every prediction of the run, or with `against` each answered one whose sample
    the other run answered too, paired with the other run's first answer of that sample. Two
    reads of one table each, linear whatever the planner's statistics say."""
    # Every prediction, repeats included: a run imported with on_duplicate=reference scores a
    # sample's further lines as items of their own, so they are judged as items too.
    mine = run.predictions.order_by("position").values_list("sample_id", "id", "status")
    if against is None:
        return [(sample_id, prediction_id, None) for sample_id, prediction_id, _ in mine]
    done = Prediction.Status.DONE
    # The other run's answer for a sample: its first line (dict keeps the last of these).
    others = dict(
        against.predictions.filter(status=done).order_by("-position").values_list("sample_id", "id")
    )
    return [
        (sample_id, prediction_id, others[sample_id])
        for sample_id, prediction_id, status in mine
        if status == done and sample_id in others
    ]


# A job's pending judgments, `repeats` x the items x the orders, in one statement: the items
# are three arrays, the repeats a series and the orders an array, and a judgment's position
# is (repeat, item, order) counted in that order. Only set-returning functions, so no plan
# depends on a table's statistics. Binary array parameters (%b): the text form would have
# every id turned into text and parsed again.
_JUDGMENTS_INSERT = """
INSERT INTO evaluation_judgment (
    job_id, version_id, sample_id, prediction_id, other_id, repeat, "order", position, status,
    attempts, raw, raw_first, "values", label, reasoning, error, cached, usage, updated_at
)
SELECT %s, %s, item.sample_id, item.prediction_id, item.other_id, r.repeat, side.name,
    (r.repeat * %s + item.n - 1) * %s + side.n - 1, 'pending',
    0, '', '', '{}', '', '', '', false, '{}', now()
FROM unnest(%b::bigint[], %b::bigint[], %b::bigint[])
        WITH ORDINALITY AS item(sample_id, prediction_id, other_id, n)
    CROSS JOIN generate_series(0, %s - 1) AS r(repeat)
    CROSS JOIN unnest(%s::text[]) WITH ORDINALITY AS side(name, n)
"""


def _write_judgments(
    job: JudgeJob, pairs: Sequence[tuple[int, int, int | None]], repeats: int, orders: list[str]
) -> int:
    """Write the job's pending judgments of `pairs` (see _JUDGMENTS_INSERT); returns how many.
    Building 1,200 model instances for bulk_create took most of a judge job's launch."""
    samples, predictions, others = (list(column) for column in zip(*pairs, strict=True))
    with connection.cursor() as cursor:
        cursor.execute(
            _JUDGMENTS_INSERT,
            [
                job.pk,
                job.version_id,
                len(pairs),
                len(orders),
                samples,
                predictions,
                others,
                repeats,
                orders,
            ],
        )
        return int(cursor.rowcount)


def job_records(job: JudgeJob) -> list[JudgmentRecord]:
    rows = job.judgments.values_list(
        "sample__split",
        "sample__external_id",
        "repeat",
        "order",
        "status",
        "values",
        "value",
        "label",
    )
    return [
        JudgmentRecord(
            sample=f"{split}/{external_id}",
            repeat=repeat,
            order=order,
            ok=status == Judgment.Status.DONE,
            values=values or {},
            value=value,
            label=label,
        )
        for split, external_id, repeat, order, status, values, value, label in rows
    ]


def job_metrics(job: JudgeJob) -> dict[str, Any]:
    template = _template(job.judge)
    records = job_records(job)
    metrics: dict[str, Any] = pure.summarize(template, records)
    if template.with_pass_labels is not None and job.against_id:
        labels = [_pass_labels(job.run_id), _pass_labels(job.against_id)]
        if all(labels):
            preferences: dict[str, list[tuple[int | None, int | None]]] = {}
            for repeat in sorted({r.repeat for r in records}):
                orders: dict[str, dict[str, int | None]] = {}
                for r in records:
                    if r.repeat == repeat:
                        verdict = int(r.value) if r.ok and r.value is not None else None
                        orders.setdefault(r.sample, {})[r.order] = verdict
                for sample, pair in orders.items():
                    preferences.setdefault(sample, []).append((pair.get("AB"), pair.get("BA")))
            metrics.update(template.with_pass_labels(labels[0], labels[1], preferences))
    return metrics


def _pass_labels(run_id: int) -> dict[str, list[str]]:
    """The run's pass labels per sample over the repeats of its latest finished pass job of
    the same family (empty when it has none)."""
    job = (
        JudgeJob.objects.filter(
            run_id=run_id, judge__kind=Judge.Kind.PASS, status=JudgeJob.Status.DONE
        )
        .order_by("-finished_at")
        .first()
    )
    if job is None:
        return {}
    labels: dict[str, list[str]] = {}
    for record in sorted(job_records(job), key=lambda r: r.repeat):
        if record.ok:
            labels.setdefault(record.sample, []).append(record.label)
    return labels


def job_finalize(*, job_id: int) -> bool:
    """When every judgment of a running job is settled, compute its metrics and mark it
    done. Idempotent."""
    return lifecycle.finalize(JUDGE_JOBS, job_id)


def _job_summary(job: JudgeJob) -> list[str]:
    job.metrics = job_metrics(job)
    return ["metrics"]


def _job_refusal(job: JudgeJob) -> str:
    if job.source != JudgeJob.Source.LAUNCHED:
        return "imported judgments have nothing to resume"
    return ""


JUDGE_JOBS = lifecycle.WorkKind(
    words=lifecycle.Words(
        noun="job", item="judgment", cancel="Cancel", retry="Ask again the unread and failed"
    ),
    parent=JudgeJob,
    item=Judgment,
    items="judgments",
    table=JUDGMENTS,
    chunk_task="evaluation.tasks.judge_chunk",
    queue="judging",
    fetch=lambda job_id: (
        JudgeJob.objects.select_related("judge__endpoint", "run__benchmark", "version")
        .filter(pk=job_id)
        .first()
    ),
    endpoint=lambda job: job.judge.endpoint,
    config=_job_config,
    handler=_job_handler,
    finish=_job_summary,
    finish_related=("judge",),
    retry=(Judgment.Status.FAILED, Judgment.Status.UNPARSED),
    error=JudgeError,
    resume_refusal=_job_refusal,
)


def solvability_mark(*, jobs: Sequence[JudgeJob]) -> dict[str, int]:
    """Mark samples solvable or not by the vote of several solvability judges (one finished
    job each, on the same samples): each judge's vote on a sample is its most frequent label
    over the repeats; a sample is solvable when every judge votes Solvable (the paper's "more
    than two" of three). Writes metadata["solvable"] and metadata["solvability_votes"]."""
    if not jobs:
        raise JudgeError("select the solvability jobs to vote")
    for job in jobs:
        if job.judge.kind != Judge.Kind.SOLVABILITY:
            raise JudgeError(f"job {job.pk} is not a solvability judge's")
        if job.status != JudgeJob.Status.DONE:
            raise JudgeError(f"job {job.pk} is {job.status}; vote with finished jobs")
    if len({job.judge_id for job in jobs}) != len(jobs):
        raise JudgeError("one job per judge: a judge votes once")
    votes: dict[int, dict[str, str]] = {}
    for job in jobs:
        labels: dict[int, Counter[str]] = {}
        for sample_id, label in job.judgments.filter(status=Judgment.Status.DONE).values_list(
            "sample_id", "label"
        ):
            labels.setdefault(sample_id, Counter())[label] += 1
        for sample_id, counter in labels.items():
            votes.setdefault(sample_id, {})[job.judge.name] = counter.most_common(1)[0][0]
    decided: dict[int, dict[str, Any]] = {}
    counts = {"solvable": 0, "unsolvable": 0, "undecided": 0}
    for sample_id, by_judge in votes.items():
        if len(by_judge) < len(jobs):
            counts["undecided"] += 1
            continue
        solvable = pure.majority_solvable(list(by_judge.values()), more_than=len(jobs) - 1)
        decided[sample_id] = {"solvable": solvable, "solvability_votes": by_judge}
        counts["solvable" if solvable else "unsolvable"] += 1
    samples_annotate(values=decided)
    return counts


# --- published judgments ------------------------------------------------------------------------


def judgments_import(
    *,
    fmt: str,
    path: Any,
    name: str,
    benchmark: Any,
    judge_name: str = "",
    user: Any = None,
    answers: Any = None,
    task: str = "",
) -> JudgeJob:
    """Published judge outputs as a judged run: the run (the model's outputs, scored as any
    imported run) and a finished judge job whose judgments carry the published verdicts, one
    per item and round (repeat = round), each matched to its imported sample. `fmt` is a
    judgment format of the benchmark's suite (registry.judgment_formats: the suite's reader
    says what the file holds, the template, the run's task; `answers` and `task` go to a reader
    that takes them). All or nothing; raises JudgeError, RunError or ImportFormatError naming
    the file, line and field. Each item must be a sample of its split with the same question."""
    formats = judgment_formats()
    if fmt not in formats:
        raise JudgeError(f"unknown format {fmt!r}; formats: {', '.join(formats)}")
    suite, reader = formats[fmt]
    if benchmark.suite != suite.name:
        raise JudgeError(
            f"{benchmark.name} is a {benchmark.suite} benchmark; {fmt} is {suite.name}'s"
        )
    if not reader.takes_answers and (answers or task):
        takers = ", ".join(f for f, (_s, r) in formats.items() if r.takes_answers) or "none"
        raise JudgeError(f"{fmt} takes no answers file and no task ({takers} does)")
    published = reader.read(Path(path), Path(answers) if answers else None, task)
    if not published.items:
        raise JudgeError(f"{path} holds no evaluation")
    items = published.items
    split = items[0].split
    queries = dict(
        benchmark.samples.filter(
            split=split, external_id__in=[i.external_id for i in items]
        ).values_list("external_id", "input__query")
    )
    for item in items:
        query = queries.get(item.external_id)
        if query is None:
            raise RunError(
                f"{item.source}: no sample {item.external_id} in {published.where} of "
                f"{benchmark.name}"
            )
        if not _same_text(query, item.query):
            raise RunError(
                f"{item.source}: field {published.query_field} is not the question of sample "
                f"{item.name} ({str(query)[:80]!r}){published.mismatch_hint}"
            )
    template = pure.template_named(published.template)
    rounds = published.rounds
    with transaction.atomic():
        run = _imported_run(benchmark, published.task, [i.output for i in items], name, user)
        job = _imported_job(
            template, run, judge_name or f"published {fmt} judge", len(rounds), user
        )
        predictions = dict(run.predictions.values_list("sample__external_id", "id"))
        samples = dict(run.predictions.values_list("sample__external_id", "sample_id"))
        judgments: list[Judgment] = []
        for number in rounds:
            for item in items:
                verdict = item.verdicts[number]
                value, label = verdict_number(template, verdict, "")
                judgments.append(
                    Judgment(
                        job=job,
                        version=job.version,
                        sample_id=samples[item.external_id],
                        prediction_id=predictions[item.external_id],
                        repeat=number,
                        position=len(judgments),
                        status=Judgment.Status.DONE,
                        raw=item.raw[number],
                        values=verdict.values,
                        value=value,
                        label=label,
                        reasoning=verdict.reasoning,
                        error=verdict.error,
                    )
                )
        _finish_imported(job, judgments)
    return job


def _same_text(stored: Any, published: str) -> bool:
    return " ".join(str(stored).split()) == " ".join(published.split())


def _imported_run(benchmark: Any, task: str, outputs: Sequence[Any], name: str, user: Any) -> Run:
    return outputs_import(benchmark=benchmark, task=task, outputs=outputs, name=name, user=user)


def _imported_job(
    template: JudgeTemplate, run: Run, judge_name: str, repeats: int, user: Any
) -> JudgeJob:
    """The finished-to-be job of imported verdicts, under a judge without an endpoint (made on
    first use; an existing judge of that name must use the same template)."""
    judge, _ = Judge.objects.get_or_create(
        name=judge_name, defaults={"template": template.name, "kind": template.kind}
    )
    if judge.template != template.name:
        raise JudgeError(f"judge {judge.name!r} uses {judge.template}, not {template.name}")
    return JudgeJob.objects.create(
        judge=judge,
        run=run,
        repeats=repeats,
        version=version_for(judge),
        source=JudgeJob.Source.IMPORTED,
        created_by=user if getattr(user, "is_authenticated", False) else None,
    )


def _finish_imported(job: JudgeJob, judgments: Sequence[Judgment]) -> None:
    Judgment.objects.bulk_create(judgments, batch_size=5000)
    stats_after_bulk_write({Judgment._meta.db_table: len(judgments)})
    job.metrics = job_metrics(job)
    job.status = JudgeJob.Status.DONE
    job.finished_at = timezone.now()
    job.save(update_fields=["metrics", "status", "finished_at", "updated_at"])
