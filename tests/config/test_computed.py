"""One lifecycle for computed results (config.computed): a kind of result is added by its
declaration alone. The declaration here exists only in this test and keeps its rows in the
agreement reports' table (a campaign's name, counted): it is computed at once when small and
queued when large, kept while its inputs' fingerprint is the same and computed again when it
changes, waited for while a lease lasts and taken back once it ran out, its failures recorded
as it declares, and the sweep knows it without being told."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
import redis
from django.conf import settings
from django.utils import timezone

from annotation.models import AgreementReport, Campaign
from config import background
from config.computed import Computed, Computing, Failure, counted, touched
from tests.workers import flush_test_broker

pytestmark = [pytest.mark.django_db]

QUEUE = "computed-test"
TASK = "tests.config.test_computed.letters"


class Refused(Exception):
    """An error that is the inputs' fault, in this test's declaration."""


@pytest.fixture
def broker() -> Iterator[None]:
    flush_test_broker()
    yield
    flush_test_broker()


def queued() -> int:
    return int(redis.from_url(settings.CELERY_BROKER_URL).llen(QUEUE))


class Letters:
    """The test's computed result: how many letters a campaign's name has. `during` runs inside
    each computation (after its progress is written), `computed` counts the computations."""

    def __init__(self) -> None:
        self.computed = 0
        self.during: Callable[[Campaign], None] = lambda campaign: None
        self.cleaned: list[int] = []

    def compute(self, campaign: Campaign, computing: Computing) -> dict[str, Any]:
        self.computed += 1
        computing.progress(1, 2)
        self.during(campaign)
        if campaign.name.startswith("refuse"):
            raise Refused("a name that cannot be counted")
        if campaign.name.startswith("boom"):
            raise RuntimeError("the counter broke")
        return {"data": {"letters": len(campaign.name), "fingerprint": computing.fingerprint}}

    def failure(self, campaign: Campaign, exc: Exception) -> Failure:
        if isinstance(exc, Refused):
            return Failure(f"refused: {exc}", {"total": 7}, expected=True)
        return Failure(f"{type(exc).__name__}: {exc}", reraise=campaign.name == "boom loud")


@pytest.fixture
def letters(
    monkeypatch: pytest.MonkeyPatch, broker: None
) -> Iterator[tuple[Computed[Any], Letters]]:
    # The declaration registers itself with the sweep, which in these tests knows it alone (the
    # agreement reports' own kind sweeps the same table); the registry is restored afterwards.
    background.kinds()  # every app's kinds registered first, into the registry kept
    monkeypatch.setattr(background, "_KINDS", {})
    own = Letters()
    declared: Computed[Campaign] = Computed(
        name="campaign name letters",
        model=AgreementReport,
        task=TASK,
        queue=QUEUE,
        waiting=AgreementReport.Status.PENDING,
        lost=lambda attempts: f"lost {attempts} times",
        done=AgreementReport.Status.DONE,
        related=("campaign",),
        inputs=lambda row: row.campaign,
        fingerprint=lambda campaign: f"name={campaign.name}",
        small=lambda campaign: len(campaign.name) <= 10,
        compute=own.compute,
        failure=own.failure,
        progress_fields=counted,
        started=touched,
        ended=touched,
        cleanup=lambda row: own.cleaned.append(row.pk),
        timed=True,
    )
    yield declared, own


def a_campaign(name: str) -> Campaign:
    return Campaign.objects.create(name=name, kind="pairwise")


def ask(declared: Computed[Any], campaign: Campaign, **options: Any) -> AgreementReport:
    campaign.refresh_from_db()
    row: AgreementReport = declared.request(
        {"campaign": campaign, "key": "letters"}, campaign, fields={"params": {}}, **options
    )
    return row


def expire(row: AgreementReport) -> None:
    AgreementReport.objects.filter(pk=row.pk).update(
        lease_until=timezone.now() - timedelta(seconds=1)
    )


def test_the_declaration_alone_makes_it_known_to_the_sweep(letters: Any) -> None:
    declared, _ = letters
    kinds = {kind.name: kind for kind in background.kinds()}
    assert kinds["campaign name letters"].work is declared
    assert kinds["campaign name letters"].tasks == (TASK,)


def test_a_small_result_is_computed_at_once_and_kept_while_its_inputs_are_the_same(
    letters: Any,
) -> None:
    declared, own = letters
    campaign = a_campaign("short")
    row = ask(declared, campaign)
    assert (row.status, row.data["letters"], row.attempts) == ("done", 5, 1)
    assert (row.done, row.total, row.lease_until) == (1, 2, None)
    assert row.fingerprint == row.data["fingerprint"] == "name=short"
    assert row.seconds is not None and row.error == ""
    # asked for again with the same inputs: the stored result, not computed again
    again = ask(declared, campaign)
    assert again.pk == row.pk and own.computed == 1 and queued() == 0


def test_a_large_result_is_queued_and_waited_for_while_its_lease_lasts(
    letters: Any, django_capture_on_commit_callbacks: Any
) -> None:
    declared, own = letters
    campaign = a_campaign("a rather long name")
    with django_capture_on_commit_callbacks(execute=True):
        row = ask(declared, campaign)
    assert (row.status, row.attempts) == ("pending", 0) and queued() == 1
    assert row.lease_until > timezone.now()
    # while the message's lease lasts, another request waits for it rather than queue it again
    with django_capture_on_commit_callbacks(execute=True):
        assert ask(declared, campaign).status == "pending"
    assert queued() == 1 and own.computed == 0
    # the worker's task body computes it; a second delivery finds it done
    done = declared.execute(row.pk)
    assert (done.status, done.data["letters"]) == ("done", len("a rather long name"))
    assert declared.execute(row.pk).status == "done" and own.computed == 1
    assert declared.execute(10**9) is None


def test_inline_says_at_once_or_queued_whatever_the_size(
    letters: Any, django_capture_on_commit_callbacks: Any
) -> None:
    declared, _ = letters
    assert ask(declared, a_campaign("a rather long name"), inline=True).status == "done"
    with django_capture_on_commit_callbacks(execute=True):
        assert ask(declared, a_campaign("short"), inline=False).status == "pending"
    assert queued() == 1


def test_changed_inputs_compute_it_again(letters: Any) -> None:
    declared, own = letters
    campaign = a_campaign("short")
    first = ask(declared, campaign)
    Campaign.objects.filter(pk=campaign.pk).update(name="shorter")
    second = ask(declared, campaign)
    assert second.pk == first.pk and own.computed == 2
    assert (second.status, second.data["letters"], second.fingerprint) == (
        "done",
        7,
        "name=shorter",
    )


def test_a_result_computed_from_older_inputs_is_not_stored_as_fresh(letters: Any) -> None:
    declared, own = letters
    campaign = a_campaign("short")

    def renamed_and_asked_meanwhile(campaign: Campaign) -> None:
        # A request saw newer inputs while this computation ran, and asked for it anew.
        AgreementReport.objects.filter(campaign=campaign).update(
            fingerprint="name=newer", **declared.fresh()
        )

    own.during = renamed_and_asked_meanwhile
    row = ask(declared, campaign)
    assert (row.status, row.fingerprint, row.data) == ("pending", "name=newer", None)
    assert own.cleaned == []


def test_a_result_is_stored_only_for_the_inputs_the_row_asks_for(letters: Any) -> None:
    declared, own = letters
    campaign = a_campaign("short")
    row = ask(declared, campaign, inline=False)

    def newer_inputs_asked_for_and_taken_by_another_worker(campaign: Campaign) -> None:
        Campaign.objects.filter(pk=campaign.pk).update(name="shorter")
        assert ask(declared, campaign, inline=False).fingerprint == "name=shorter"
        # the next worker holds it as this one's attempt number: only the fingerprint differs
        assert declared.claim(row.pk).attempt == 1

    own.during = newer_inputs_asked_for_and_taken_by_another_worker
    after = declared.execute(row.pk)
    assert (after.status, after.fingerprint, after.data) == ("running", "name=shorter", None)


def test_a_row_whose_lease_ran_out_is_taken_back_by_the_next_request(
    letters: Any, django_capture_on_commit_callbacks: Any
) -> None:
    declared, own = letters
    campaign = a_campaign("a rather long name")
    with django_capture_on_commit_callbacks(execute=True):
        row = ask(declared, campaign)
    # its worker took it and died: running, under a lease that ran out
    assert declared.claim(row.pk) is not None
    assert ask(declared, campaign).status == "running" and own.computed == 0
    expire(row)
    taken = ask(declared, campaign, inline=True)
    assert (taken.status, taken.attempts, own.computed) == ("done", 1, 1)


def test_a_lost_message_is_sent_again_by_a_request_once_its_lease_ran_out(
    letters: Any, django_capture_on_commit_callbacks: Any
) -> None:
    declared, _ = letters
    campaign = a_campaign("a rather long name")
    with django_capture_on_commit_callbacks(execute=True):
        row = ask(declared, campaign)
    flush_test_broker()  # the broker lost the message
    expire(row)
    with django_capture_on_commit_callbacks(execute=True):
        assert ask(declared, campaign).status == "pending"
    assert queued() == 1


def test_force_computes_it_here_while_a_live_worker_holds_it(letters: Any) -> None:
    declared, own = letters
    campaign = a_campaign("a rather long name")
    row = ask(declared, campaign, inline=False)
    assert declared.claim(row.pk) is not None
    assert ask(declared, campaign, inline=True).status == "running"
    assert ask(declared, campaign, inline=True, force=True).status == "done"
    assert own.computed == 1


def test_the_sweep_takes_back_what_a_lost_worker_held(letters: Any) -> None:
    declared, _ = letters
    row = ask(declared, a_campaign("a rather long name"), inline=False)
    assert declared.claim(row.pk) is not None
    expire(row)
    background.recover()
    row.refresh_from_db()
    assert (row.status, row.attempts) == ("pending", 1) and queued() == 1


def test_an_error_that_is_the_inputs_fault_is_recorded_as_declared(
    letters: Any, caplog: pytest.LogCaptureFixture
) -> None:
    declared, own = letters
    row = ask(declared, a_campaign("refuse me"))
    assert (row.status, row.error) == ("failed", "refused: a name that cannot be counted")
    # the declared fields, with the progress it had made and no lease
    assert (row.done, row.total, row.lease_until, row.data) == (1, 7, None, None)
    assert own.cleaned == [row.pk]
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


def test_an_unexpected_error_is_recorded_logged_and_raised_when_declared(
    letters: Any, caplog: pytest.LogCaptureFixture
) -> None:
    declared, _ = letters
    row = ask(declared, a_campaign("boom"))
    assert (row.status, row.error, row.lease_until) == (
        "failed",
        "RuntimeError: the counter broke",
        None,
    )
    assert any("the counter broke" in str(r.exc_info) for r in caplog.records if r.exc_info)
    campaign = a_campaign("boom loud")
    with pytest.raises(RuntimeError, match="the counter broke"):
        ask(declared, campaign)
    loud = AgreementReport.objects.get(campaign=campaign)
    assert (loud.status, loud.error) == ("failed", "RuntimeError: the counter broke")
    # asked for again once its inputs are mended: computed anew
    Campaign.objects.filter(pk=campaign.pk).update(name="fixed")
    assert ask(declared, campaign).status == "done"
