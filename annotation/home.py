"""The home page ("/"): what needs attention. An annotator sees the campaigns they work in and
what each offers them; whoever may read campaigns sees every open campaign with its progress;
whoever may read runs and judge jobs sees those running now, with their progress, and the latest
runs. It reads all three apps, so it lives here, in the top layer."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, IntegerField, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from annotation.kinds import kind_of
from annotation.models import Campaign, Item, Label, Member
from annotation.selectors import campaigns_of
from annotation.views import campaign_row
from config.access import allows
from evaluation.models import JudgeJob, Judgment, Run
from evaluation.selectors import run_list, run_metric_rows, task_spec, with_progress

RECENT_RUNS = 8
SHOWN_CAMPAIGNS = 30


def _count(rows: QuerySet[Any]) -> Coalesce:
    # In subqueries: counting items and labels over joins would pair every item with every label.
    counted = rows.order_by().values("campaign_id").annotate(n=Count("*")).values("n")
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


def campaigns_in_progress() -> list[dict[str, Any]]:
    """Open and draft campaigns, newest first, each with its labels against the labels it needs
    (items times labels per item)."""
    campaigns = (
        Campaign.objects.exclude(status=Campaign.Status.CLOSED)
        .annotate(
            n_items=_count(Item.objects.filter(campaign=OuterRef("pk"))),
            n_labels=_count(Label.objects.filter(campaign=OuterRef("pk"), is_current=True)),
            n_annotators=_count(
                Member.objects.filter(campaign=OuterRef("pk"), role=Member.Role.ANNOTATOR)
            ),
        )
        .order_by("-status", "-created_at")[:SHOWN_CAMPAIGNS]
    )
    rows = []
    for campaign in campaigns:
        needed = campaign.n_items * campaign.labels_per_item
        rows.append(
            {
                "campaign": campaign,
                "kind_label": kind_of(campaign).label,
                "needed": needed,
                "labels": min(campaign.n_labels, needed) if needed else campaign.n_labels,
                "percent": 100 * min(campaign.n_labels, needed) / needed if needed else 0.0,
            }
        )
    return rows


def my_campaigns(user: Any) -> list[dict[str, Any]]:
    """The campaigns the user is a member of, with what each offers them now (the studio's
    own campaign list decides it: annotation.views.campaign_row)."""
    roles: dict[int, list[str]] = {}
    for campaign_id, role in Member.objects.filter(user=user).values_list("campaign_id", "role"):
        roles.setdefault(campaign_id, []).append(role)
    return [campaign_row(c, roles.get(c.pk, [])) for c in campaigns_of(user)]


def running_runs() -> list[Run]:
    return with_progress(run_list().filter(status=Run.Status.RUNNING).order_by("-created_at"))


def running_jobs() -> list[JudgeJob]:
    unsettled = Q(judgments__status__in=(Judgment.Status.PENDING, Judgment.Status.RUNNING))
    return list(
        JudgeJob.objects.filter(status=JudgeJob.Status.RUNNING)
        .select_related("judge", "run__benchmark")
        .annotate(
            n_total=Count("judgments"),
            n_settled=Count("judgments", filter=~unsettled),
            n_failed=Count("judgments", filter=Q(judgments__status=Judgment.Status.FAILED)),
        )
        .order_by("-created_at")
    )


def recent_runs() -> list[dict[str, Any]]:
    """The latest runs, each with its headline metric (the first its task declares)."""
    runs = with_progress(run_list().order_by("-created_at")[:RECENT_RUNS])
    rows = []
    for run in runs:
        metrics = run_metric_rows(run, task_spec(run)) if run.metrics else []
        rows.append({"run": run, "headline": metrics[0] if metrics else None})
    return rows


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    user = request.user
    can_runs = allows(user, "evaluation:run-list")
    can_jobs = allows(user, "evaluation:job-list")
    context: dict[str, Any] = {
        "runs": running_runs() if can_runs else [],
        "jobs": running_jobs() if can_jobs else [],
        "can_runs": can_runs,
        "can_jobs": can_jobs,
    }
    if request.GET.get("part") == "running":
        return render(request, "home.html#running", context)
    can_campaigns = user.has_perm("annotation.view_campaign")
    context.update(
        {
            "mine": my_campaigns(user),
            "campaigns": campaigns_in_progress() if can_campaigns else [],
            "can_campaigns": can_campaigns,
            "can_read_labels": allows(user, "annotation:progress", campaign_id=0),
            "recent": recent_runs() if can_runs else [],
            "can_launch": allows(user, "evaluation:run-new"),
        }
    )
    return render(request, "home.html", context)
