"""One lifecycle for runs and judge jobs (evaluation.lifecycle): each behaviour once, run over
both kinds of work. Real PostgreSQL and the test broker's queues."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import redis
from django.conf import settings
from django.contrib.auth.models import Permission
from django.test import Client
from django.utils import timezone

from benchmarks.kit.judging import Verdict
from benchmarks.kit.protocol import Outcome
from evaluation import inference, judging, lifecycle, services
from evaluation.lifecycle import Control, WorkKind
from evaluation.models import Endpoint, Judge, JudgeJob, Judgment, Prediction, Run
from evaluation.work import engine
from tests.evaluation.conftest import make_counting_benchmark, make_endpoint
from tests.factories import make_superuser, make_user
from tests.fake_openai import FakeOpenAI

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("broker")]

KINDS = {"run": services.RUNS, "job": judging.JUDGE_JOBS}


def queued(queue: str) -> int:
    return int(redis.from_url(settings.CELERY_BROKER_URL).llen(queue))


class Work:
    """Rows of one kind of work made directly: a parent and its items in given statuses."""

    def __init__(self, tmp_path: Path) -> None:
        self.benchmark = make_counting_benchmark(tmp_path, 6)
        self.samples = list(self.benchmark.samples.order_by("id"))
        self.endpoint = make_endpoint("http://127.0.0.1:9/v1")

    def run(
        self,
        statuses: Sequence[str],
        *,
        status: str = Run.Status.RUNNING,
        endpoint: Endpoint | None = None,
        launched: bool = True,
    ) -> Run:
        run = Run.objects.create(
            benchmark=self.benchmark,
            task="answer",
            split="default",
            endpoint=(endpoint or self.endpoint) if launched else None,
            source=Run.Source.LAUNCHED if launched else Run.Source.IMPORTED,
            model_name="m",
            status=status,
        )
        for position, item_status in enumerate(statuses):
            Prediction.objects.create(
                run=run,
                sample=self.samples[position],
                position=position,
                status=item_status,
                attempts=0 if item_status == "pending" else 1,
                output="Answer: 1" if item_status == "done" else "",
                error="gave up" if item_status == "failed" else "",
                scores={"accuracy": 0.0} if item_status in ("done", "failed") else {},
            )
        return run

    def job(
        self,
        statuses: Sequence[str],
        *,
        status: str = JudgeJob.Status.RUNNING,
        endpoint: Endpoint | None = None,
        launched: bool = True,
    ) -> JudgeJob:
        run = self.run(["done"] * len(statuses), status=Run.Status.DONE)
        judge = Judge.objects.create(
            name=f"judge-{Judge.objects.count()}",
            template="generic.pairwise",
            kind=Judge.Kind.PAIRWISE,
            endpoint=(endpoint or self.endpoint) if launched else None,
        )
        job = JudgeJob.objects.create(
            judge=judge,
            run=run,
            repeats=1,
            source=JudgeJob.Source.LAUNCHED if launched else JudgeJob.Source.IMPORTED,
            status=status,
        )
        for prediction, item_status in zip(
            run.predictions.order_by("position"), statuses, strict=True
        ):
            # Pairwise, against the run itself: enough for the lifecycle.
            Judgment.objects.create(
                job=job,
                sample_id=prediction.sample_id,
                prediction=prediction,
                other=prediction,
                order="AB",
                position=prediction.position,
                status=item_status,
                attempts=0 if item_status == "pending" else 1,
                error="unreadable" if item_status in ("failed", "unparsed") else "",
            )
        return job

    def make(self, kind: str, statuses: Sequence[str], **fields: Any) -> Any:
        return self.run(statuses, **fields) if kind == "run" else self.job(statuses, **fields)


@pytest.fixture
def work(tmp_path: Path) -> Work:
    return Work(tmp_path)


def items(kind: WorkKind, parent: Any) -> list[tuple[str, int, str]]:
    rows = getattr(parent, kind.items).order_by("position")
    return list(rows.values_list("status", "attempts", "error"))


@pytest.mark.parametrize("name", KINDS)
def test_cancel_stops_a_running_parent_and_keeps_its_pending_items(name: str, work: Work) -> None:
    kind = KINDS[name]
    parent = work.make(name, ["done", "pending", "pending"])
    # when
    assert lifecycle.cancel(kind, parent) is True
    # then
    parent.refresh_from_db()
    assert parent.status == "cancelled"
    assert [status for status, _, _ in items(kind, parent)] == ["done", "pending", "pending"]
    # and a second cancel changes nothing
    assert lifecycle.cancel(kind, parent) is False


@pytest.mark.parametrize("name", KINDS)
def test_resume_queues_the_chunks_that_hold_pending_items(
    name: str, work: Work, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    # given chunks of two positions, pending items in chunks 0-1 and 4-5
    settings.EVALUATION_CHUNK_SIZE = 2
    kind = KINDS[name]
    parent = work.make(name, ["done", "pending", "done", "done", "pending", "pending"])
    kind.parent._default_manager.filter(pk=parent.pk).update(
        status="cancelled", error="stopped", finished_at=timezone.now()
    )
    # when
    with django_capture_on_commit_callbacks(execute=True):
        count = lifecycle.resume(kind, parent)
    # then
    assert count == 3
    parent.refresh_from_db()
    assert (parent.status, parent.error, parent.finished_at) == ("running", "", None)
    assert queued(kind.queue) == 2


@pytest.mark.parametrize("name", KINDS)
def test_a_launch_queues_its_chunks_before_the_statistics_are_refreshed(
    name: str, work: Work, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    # given chunks of two positions, and a launch of six items committed
    settings.EVALUATION_CHUNK_SIZE = 2
    kind = KINDS[name]
    parent = work.make(name, ["pending"] * 6)
    with django_capture_on_commit_callbacks() as callbacks:
        lifecycle.launch(kind, parent.pk, 6)
    # when only the first thing done after the commit has run
    callbacks[0]()
    # then every chunk is queued: no worker waits for the ANALYZE of the items' table
    assert queued(kind.queue) == 3


@pytest.mark.parametrize("name", KINDS)
def test_retry_asks_the_kinds_failed_items_again(name: str, work: Work) -> None:
    kind = KINDS[name]
    statuses = ["done", "failed", "unparsed"] if name == "job" else ["done", "failed", "failed"]
    parent = work.make(name, statuses, status="done")
    # when
    count = lifecycle.resume(kind, parent, retry_failed=True)
    # then the failed items (and a judge's unreadable answers) are pending, claims reset
    assert count == 2
    assert items(kind, parent)[1:] == [("pending", 0, ""), ("pending", 0, "")]
    assert items(kind, parent)[0][0] == "done"


@pytest.mark.parametrize("name", KINDS)
def test_imported_work_cannot_be_resumed(name: str, work: Work) -> None:
    kind = KINDS[name]
    parent = work.make(name, ["done"], status="done", launched=False)
    with pytest.raises(kind.error, match="nothing to resume"):
        lifecycle.resume(kind, parent)
    parent.refresh_from_db()
    assert parent.status == "done"


@pytest.mark.parametrize("name", KINDS)
def test_resuming_with_nothing_pending_finalizes(
    name: str, work: Work, django_capture_on_commit_callbacks: Any
) -> None:
    kind = KINDS[name]
    parent = work.make(name, ["done", "done"], status="cancelled")
    with django_capture_on_commit_callbacks(execute=True):
        assert lifecycle.resume(kind, parent) == 0
    parent.refresh_from_db()
    assert parent.status == "done"
    assert queued(kind.queue) == 0


@pytest.mark.parametrize("name", KINDS)
def test_finalize_waits_for_every_item_and_runs_once(name: str, work: Work) -> None:
    kind = KINDS[name]
    parent = work.make(name, ["done", "running"])
    assert lifecycle.finalize(kind, parent.pk) is False
    getattr(parent, kind.items).update(status="done")
    assert lifecycle.finalize(kind, parent.pk) is True
    assert lifecycle.finalize(kind, parent.pk) is False
    parent.refresh_from_db()
    assert parent.status == "done"


@pytest.mark.parametrize("name", KINDS)
def test_an_unset_key_variable_fails_the_parent_with_the_reason(
    name: str, work: Work, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    monkeypatch.delenv("LIFECYCLE_UNSET_API_KEY", raising=False)
    settings.ENDPOINT_KEY_VARIABLES = ["LIFECYCLE_UNSET_API_KEY"]
    keyed = make_endpoint(
        "http://127.0.0.1:9/v1", name="keyed", api_key_env="LIFECYCLE_UNSET_API_KEY"
    )
    kind = KINDS[name]
    parent = work.make(name, ["pending"], endpoint=keyed)
    # when a worker takes its chunk
    report = lifecycle.chunk(kind, parent.pk, 0, 99)
    # then
    assert report == {f"failed_{kind.words.noun}": 1}
    parent.refresh_from_db()
    assert parent.status == "failed"
    assert "LIFECYCLE_UNSET_API_KEY" in parent.error and "is not set" in parent.error
    assert items(kind, parent) == [("pending", 0, "")]


ANSWERS = {"run": "Answer: 1", "job": '{"better": "1", "reason": "same"}'}


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("name", KINDS)
def test_an_item_whose_worker_was_lost_is_answered_exactly_once_more(name: str, work: Work) -> None:
    kind = KINDS[name]
    with FakeOpenAI(responder=lambda request: ANSWERS[name]) as server:
        live = make_endpoint(server.base_url, name="live")
        # given an item held by a worker that died (its lease ran out after one claim)
        parent = work.make(name, ["running", "done"], endpoint=live)
        getattr(parent, kind.items).filter(position=0).update(
            claim=uuid.uuid4(), lease_until=timezone.now() - timedelta(seconds=1)
        )
        # when its chunk is delivered again
        report = lifecycle.chunk(kind, parent.pk, 0, 99)
        # then it is answered once, on its second claim, and the parent is finished
        assert report["claimed"] == 1
        assert items(kind, parent)[0] == ("done", 2, "")
        parent.refresh_from_db()
        assert parent.status == "done"
        # and a further delivery asks nothing
        assert lifecycle.chunk(kind, parent.pk, 0, 99) == {"skipped": 1}
        assert server.total == 1


def test_recover_takes_back_lost_items_of_both_kinds_and_queues_their_chunks(
    work: Work,
) -> None:
    # given a run and a job each with an item whose lease ran out (its worker was lost), one
    # whose worker is alive, and a cancelled run with a lost item
    lost, alive = timezone.now() - timedelta(seconds=5), timezone.now() + timedelta(minutes=5)
    run = work.run(["running", "running", "done"])
    job = work.job(["running", "running"])
    stopped = work.run(["running"], status="cancelled")
    for parent, kind in ((run, services.RUNS), (job, judging.JUDGE_JOBS), (stopped, services.RUNS)):
        rows = getattr(parent, kind.items)
        rows.filter(position=0).update(lease_until=lost, attempts=2)
        rows.filter(position=1).update(lease_until=alive)
    # when
    report = lifecycle.recover([services.RUNS, judging.JUDGE_JOBS])
    # then
    assert report == {"predictions": 1, "runs": 1, "judgments": 1, "jobs": 1}
    for parent, kind in ((run, services.RUNS), (job, judging.JUDGE_JOBS)):
        rows = getattr(parent, kind.items).order_by("position")
        assert list(rows.values_list("status", "attempts", "claim"))[:2] == [
            ("pending", 2, None),
            ("running", 1, None),
        ]
        assert queued(kind.queue) == 1
    assert stopped.predictions.get().status == "running"


def test_the_page_controls_follow_the_state(work: Work) -> None:
    kind = services.RUNS
    running = work.run(["pending"])
    progress = {"failed": 0}
    assert lifecycle.controls(kind, running, progress, can_change=True) == [
        Control("cancel", "Cancel run")
    ]
    assert lifecycle.controls(kind, running, progress, can_change=False) == []
    stopped = work.run(["failed"], status="cancelled")
    assert lifecycle.controls(kind, stopped, {"failed": 1}, can_change=True) == [
        Control("resume", "Resume"),
        Control("retry", "Retry failed items"),
    ]
    imported = work.run(["done"], status="done", launched=False)
    assert lifecycle.controls(kind, imported, progress, can_change=True) == []
    # a finished parent has nothing pending: no Resume, only asking its failures again
    finished = work.run(["done", "done"], status="done")
    assert lifecycle.controls(kind, finished, {"done": 2, "failed": 0}, can_change=True) == []
    job = work.job(["unparsed"], status="done")
    assert lifecycle.controls(judging.JUDGE_JOBS, job, {"unparsed": 1}, can_change=True) == [
        Control("retry", "Ask again the unread and failed"),
    ]


@pytest.mark.parametrize("name", ["run", "job"])
def test_a_finished_parent_is_not_resumed_but_its_failures_are_asked_again(
    name: str, work: Work
) -> None:
    # given a finished parent with one failed item
    kind = KINDS[name]
    failed = "failed" if name == "run" else "unparsed"
    parent = work.make(name, ["done", failed], status="done")
    # when it is resumed: refused with what to do instead, and it stays finished
    with pytest.raises(kind.error, match="finished: nothing is pending"):
        lifecycle.resume(kind, parent)
    parent.refresh_from_db()
    assert parent.status == "done"
    # while its failures can be asked again
    assert lifecycle.resume(kind, parent, retry_failed=True) == 1
    parent.refresh_from_db()
    assert parent.status == "running"


# --- one page skeleton, one progress partial, one admin mixin -----------------------------

PAGES = {
    "run": ("runs", "change_run", "Cancel run"),
    "job": ("judging", "change_judgejob", "Cancel"),
}


def login(client: Client, *permissions: str) -> None:
    user = make_user()
    for codename in ("view_run", "view_prediction", "view_judgejob", "view_judgment", *permissions):
        user.user_permissions.add(Permission.objects.get(codename=codename))
    client.force_login(user)


@pytest.mark.parametrize("name", KINDS)
def test_the_page_cancels_and_resumes_with_the_change_permission(
    name: str, work: Work, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    prefix, permission, cancel_label = PAGES[name]
    parent = work.make(name, ["done", "pending"])
    noun = KINDS[name].words.noun.capitalize()
    # without the permission: neither the button nor the action
    login(client)
    assert f">{cancel_label}</button>" not in client.get(f"/{prefix}/{parent.pk}/").content.decode()
    assert client.post(f"/{prefix}/{parent.pk}/cancel/").status_code == 403
    # with it
    login(client, permission)
    assert f">{cancel_label}</button>" in client.get(f"/{prefix}/{parent.pk}/").content.decode()
    response = client.post(f"/{prefix}/{parent.pk}/cancel/", follow=True)
    assert f"{noun} cancelled." in response.content.decode()
    page = response.content.decode()
    assert ">Resume</button>" in page and f">{cancel_label}</button>" not in page
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/{prefix}/{parent.pk}/resume/", follow=True)
    assert f"{noun} resumed: 1 {KINDS[name].words.item}(s) queued." in response.content.decode()
    assert client.post(f"/{prefix}/{parent.pk}/explode/").status_code == 404


@pytest.mark.parametrize("name", KINDS)
def test_the_progress_partial_polls_only_while_running(
    name: str, work: Work, client: Client
) -> None:
    prefix = PAGES[name][0]
    parent = work.make(name, ["done", "pending"])
    login(client)

    def partial() -> str:
        response = client.get(
            f"/{prefix}/{parent.pk}/?part=progress", headers={"HX-Request": "true"}
        )
        return response.content.decode()

    html = partial()
    assert html.lstrip().startswith('<section id="progress"')
    assert f'hx-get="/{prefix}/{parent.pk}/?part=progress"' in html
    assert "<strong>1</strong> to go" in html and "of 2 (50.00%)" in html
    lifecycle.cancel(KINDS[name], parent)
    assert "hx-trigger" not in partial()


@pytest.mark.parametrize("name", KINDS)
def test_the_admin_actions_cancel_and_resume(
    name: str, work: Work, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    kind = KINDS[name]
    model = kind.parent._meta.model_name
    running = work.make(name, ["pending"])
    imported = work.make(name, ["done"], status="done", launched=False)
    client.force_login(make_superuser())

    def action(action: str, *parents: Any) -> str:
        response = client.post(
            f"/admin/evaluation/{model}/",
            {"action": action, "_selected_action": [p.pk for p in parents]},
            follow=True,
        )
        assert response.status_code == 200
        return response.content.decode()

    changelist = client.get(f"/admin/evaluation/{model}/").content.decode()
    assert "0/1" in changelist and "1/1" in changelist
    assert f"1 {kind.words.noun}(s) cancelled." in action(f"cancel_{kind.words.noun}s", running)
    with django_capture_on_commit_callbacks(execute=True):
        html = action(f"resume_{kind.words.noun}s", running, imported)
    noun = kind.words.noun.capitalize()
    assert f"{noun} {running.pk}: 1 {kind.words.item}(s) queued." in html
    assert f"{noun} {imported.pk}: " in html and "nothing to resume" in html
    running.refresh_from_db()
    assert running.status == "running"
    assert queued(kind.queue) == 1


# Texts an array parameter must carry as given: its own syntax, SQL's NULL, escapes, a newline.
AWKWARD = ['{"a": "}"}', "NULL", 'x\\y "q" {1,2}', "línea\nnext ✓", ""]


def _answers(name: str, ids: Sequence[int], texts: Sequence[Any] = AWKWARD) -> list[Any]:
    if name == "run":
        return [
            inference.Result(
                id=pk,
                status="done",
                outcome=Outcome(output=text, answer={"text": text}, trace=[{"note": text}]),
                scores={"accuracy": 100.0},
                latency_ms=n,
                usage={"calls": 1},
                prompt={"messages": [{"role": "user", "content": text}]},
            )
            for n, (pk, text) in enumerate(zip(ids, texts, strict=False))
        ]
    return [
        judging.JudgmentResult(
            pk,
            "done",
            prompt={"messages": [{"role": "user", "content": text}]},
            raw=text,
            verdict=Verdict(ok=True, values={"label": text}, reasoning=text),
            value=0.5,
            label="pass",
            latency_ms=n,
        )
        for n, (pk, text) in enumerate(zip(ids, texts, strict=False))
    ]


@pytest.mark.parametrize("name", KINDS)
def test_what_postgresql_cannot_store_in_an_answer_is_written_as_escapes_and_null(
    name: str, work: Work
) -> None:
    # given answers (a model's, as its suite or judge template read them) holding a NUL, a lone
    # surrogate, and numbers JSON cannot write (Python reads 1e999 as Infinity)
    kind = KINDS[name]
    parent = work.make(name, ["running"] * 2)
    rows = getattr(parent, kind.items).order_by("position")
    token = uuid.uuid4()
    rows.update(claim=token, lease_until=timezone.now() + timedelta(minutes=5))
    ids = list(rows.values_list("id", flat=True))
    answers = _answers(name, ids, ["a\x00b \ud800", ""])
    infinite = {"messages": [{"role": "user", "content": float("inf")}]}
    answers[1].prompt = infinite
    if name == "run":
        answers[1].outcome.answer = {"text": float("-inf")}
    else:
        answers[1].verdict.values = {"label": float("nan")}
    # when they are written, then nothing is refused: the characters are stored as their
    # escapes, the numbers as null (as JavaScript's JSON.stringify writes them)
    assert engine.write(token, answers, [], kind.table) == 2
    text, number = (getattr(parent, kind.items).get(pk=pk) for pk in ids)
    shown = "a\\u0000b \\ud800"
    assert text.prompt == {"messages": [{"role": "user", "content": shown}]}
    assert number.prompt == {"messages": [{"role": "user", "content": None}]}
    if name == "run":
        assert (text.output, text.answer, number.answer) == (shown, {"text": shown}, {"text": None})
    else:
        assert (text.raw, text.values, text.reasoning) == (shown, {"label": shown}, shown)
        assert number.values == {"label": None}


@pytest.mark.parametrize("name", KINDS)
def test_a_batch_of_answers_is_written_where_the_claim_is_still_held(name: str, work: Work) -> None:
    kind = KINDS[name]
    parent = work.make(name, ["running"] * 5)
    rows = getattr(parent, kind.items).order_by("position")
    token = uuid.uuid4()
    rows.update(claim=token, lease_until=timezone.now() + timedelta(minutes=5))
    ids = list(rows.values_list("id", flat=True))
    # given the third item lost to another execution (its lease ran out, it was claimed again)
    taken = uuid.uuid4()
    rows.filter(pk=ids[2]).update(claim=taken)
    # when this execution writes its five answers in one batch
    written = engine.write(token, _answers(name, ids), [], kind.table)
    # then four are stored, as given, and freed; the other is left to its new holder
    assert written == 4
    stored = {row.pk: row for row in getattr(parent, kind.items).all()}
    for n, pk in enumerate(ids):
        row = stored[pk]
        if n == 2:
            assert (row.status, row.claim) == ("running", taken)
            continue
        assert (row.status, row.claim, row.lease_until, row.latency_ms) == ("done", None, None, n)
        assert row.prompt == {"messages": [{"role": "user", "content": AWKWARD[n]}]}
        if name == "run":
            assert (row.output, row.answer, row.trace) == (
                AWKWARD[n],
                {"text": AWKWARD[n]},
                [{"note": AWKWARD[n]}],
            )
        else:
            assert (row.raw, row.values, row.reasoning) == (
                AWKWARD[n],
                {"label": AWKWARD[n]},
                AWKWARD[n],
            )
