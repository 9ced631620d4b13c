"""Reads of the annotation app: what an item shows, and progress."""

from __future__ import annotations

import contextlib
import functools
from dataclasses import asdict
from typing import Any

from django.core.cache import cache
from django.db.models import Avg, Count, IntegerField, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.http import Http404

from annotation import rows
from annotation.kinds import kind_of
from annotation.models import Assignment, Campaign, Item, Label, Member, Question
from benchmarks.kit.context import JudgedOutput, OutputSummary
from benchmarks.kit.protocol import Item as SuiteItem
from benchmarks.kit.registry import get_suite
from benchmarks.models import Benchmark, Sample, Tool
from config.access import checked_campaign


def campaign_get_for_user(
    user: Any, campaign_id: int, role: str | None = Member.Role.ANNOTATOR
) -> Campaign:
    """The campaign if the user is its member in this role (any role: None); a 404 otherwise,
    so that another campaign's existence is not revealed. Model permissions never stand in for
    membership (config.access): studio work is always asked of someone."""
    if not user.is_authenticated:
        raise Http404("no such campaign")
    # Every studio request asks this (next, submit, skip...): one statement written once, not
    # the ORM's compilation of a join and an EXISTS on each call (a sixth of a request's CPU).
    sql = _campaign_sql() + (" AND m.role = %s)" if role else ")")
    row = rows.fetch(sql, [campaign_id, user.pk, role] if role else [campaign_id, user.pk])
    if row is None:
        raise Http404("no such campaign")
    split = rows.width(Campaign)
    campaign = rows.instance(Campaign, row[:split])
    benchmark = None
    if row[split] is not None:  # the benchmark's id: a campaign of runs may have none
        benchmark = rows.instance(Benchmark, row[split:])
    Campaign._meta.get_field("benchmark").set_cached_value(campaign, benchmark)
    return campaign


@functools.cache
def _campaign_sql() -> str:
    """The campaign with its benchmark if the user is a member (the role's test is added)."""
    return (
        f"SELECT {rows.columns(Campaign, 'c')}, {rows.columns(Benchmark, 'b')}"  # noqa: S608 (the models' own names)
        f" FROM {Campaign._meta.db_table} c"
        f" LEFT JOIN {Benchmark._meta.db_table} b ON b.id = c.benchmark_id"
        f" WHERE c.id = %s AND EXISTS (SELECT 1 FROM {Member._meta.db_table} m"
        " WHERE m.campaign_id = c.id AND m.user_id = %s"
    )


def assignment_of(campaign: Campaign, user: Any, assignment_id: Any) -> Assignment | None:
    """The user's assignment in the campaign, with its item (None when there is no such
    assignment of theirs: another's, another campaign's, or no number)."""
    try:
        number = int(assignment_id)
    except (TypeError, ValueError):
        return None
    row = rows.fetch(_assignment_sql(), [number, campaign.pk, user.pk])
    if row is None:
        return None
    split = rows.width(Assignment)
    assignment = rows.instance(Assignment, row[:split])
    item = rows.instance(Item, row[split:])
    Assignment._meta.get_field("item").set_cached_value(assignment, item)
    return assignment


@functools.cache
def _assignment_sql() -> str:
    return (
        f"SELECT {rows.columns(Assignment, 'a')}, {rows.columns(Item, 'i')}"  # noqa: S608 (the models' own names)
        f" FROM {Assignment._meta.db_table} a JOIN {Item._meta.db_table} i ON i.id = a.item_id"
        " WHERE a.id = %s AND a.campaign_id = %s AND a.annotator_id = %s"
    )


def studio_campaign(
    request: Any, campaign_id: int, role: str | None = Member.Role.ANNOTATOR
) -> Campaign:
    """The campaign of a studio request: the one the access rule fetched when it let the
    request in (config.access), or else the same membership check again."""
    campaign = checked_campaign(request, campaign_id, role)
    if campaign is None:
        campaign = campaign_get_for_user(request.user, campaign_id, role)
    return campaign


def memberships(user: Any, campaign_id: int, role: str | None) -> QuerySet[Member]:
    """The user's memberships of a campaign in a role (any role: None)."""
    if not user.is_authenticated:
        return Member.objects.none()
    members = Member.objects.filter(campaign_id=campaign_id, user=user)
    return members.filter(role=role) if role else members


def campaigns_of(user: Any) -> QuerySet[Campaign]:
    """Campaigns the user takes part in (any role), with the roles and their own progress."""
    # Counted in subqueries: two Counts over joins would pair every item with every label
    # (minutes for a 100,000-item campaign with labels).
    return (
        Campaign.objects.filter(pk__in=Member.objects.filter(user=user).values("campaign_id"))
        .exclude(status=Campaign.Status.DRAFT)
        .annotate(
            n_items=_count(Item.objects.filter(campaign=OuterRef("pk"))),
            mine=_count(
                Label.objects.filter(campaign=OuterRef("pk"), annotator=user, is_current=True)
            ),
        )
        .order_by("-created_at")
    )


def campaigns_overview() -> QuerySet[Campaign]:
    """Every campaign, newest first, with its items, questions and annotators counted (in
    subqueries, as above), for the researcher's list and where each draft's setup stands."""
    return (
        Campaign.objects.select_related("benchmark", "created_by")
        .annotate(
            n_items=_count(Item.objects.filter(campaign=OuterRef("pk"))),
            n_questions=_count(Question.objects.filter(campaign=OuterRef("pk"))),
            n_annotators=_count(
                Member.objects.filter(campaign=OuterRef("pk"), role=Member.Role.ANNOTATOR)
            ),
        )
        .order_by("-created_at")
    )


def _count(rows: QuerySet) -> Coalesce:
    counted = rows.order_by().values("campaign_id").annotate(n=Count("*")).values("n")
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


# The campaign-wide counts under each annotator's progress are read on every next item; counting
# a 100,000-item campaign's rows each time took most of the request. They are kept this long,
# and a label that becomes current or stops being one moves the kept count at once
# (campaign_labels_counted), so the counter never lags the answers; the time bounds what a
# count read during an answer's commit may miss.
TOTALS_SECONDS = 5


def _totals_keys(campaign_id: int) -> tuple[str, str]:
    key = f"annotation:campaign-totals:{campaign_id}"
    return f"{key}:items", f"{key}:labels"


def campaign_totals(campaign: Campaign) -> tuple[int, int]:
    """(items, current labels) of a campaign, kept at most TOTALS_SECONDS (the item count is
    exact: building items forgets the kept counts; the label count follows each answer)."""
    keys = _totals_keys(campaign.pk)
    kept = cache.get_many(keys)
    if len(kept) != len(keys):
        counted = (campaign.items.count(), campaign.labels.filter(is_current=True).count())
        cache.set_many(dict(zip(keys, counted, strict=True)), TOTALS_SECONDS)
        return counted
    return int(kept[keys[0]]), int(kept[keys[1]])


def campaign_totals_forget(campaign_id: int) -> None:
    cache.delete_many(_totals_keys(campaign_id))


def campaign_labels_counted(campaign_id: int, change: int) -> None:
    """After a commit where `change` labels of the campaign became current (1) or stopped being
    current (-1): the kept count moves with them (a count not kept is read afresh next time)."""
    with contextlib.suppress(ValueError):
        cache.incr(_totals_keys(campaign_id)[1], change)


# The annotator's current labels in the campaign (on every next item's path: written once).
MINE_SQL = (
    "SELECT count(*) FROM annotation_label"
    " WHERE annotator_id = %s AND campaign_id = %s AND is_current"
)


def campaign_questions(campaign: Campaign) -> list[Question]:
    """The campaign's questions in their order (Question.Meta.ordering), as
    `campaign.questions.all()` gives them: from its prefetch when the campaign has one, else
    by a statement written once (every submit checks its answers against them)."""
    prefetched = getattr(campaign, "_prefetched_objects_cache", {}).get("questions")
    if prefetched is not None:
        return list(prefetched)
    return [rows.instance(Question, row) for row in rows.fetch_all(_questions_sql(), [campaign.pk])]


@functools.cache
def _questions_sql() -> str:
    return rows.select(Question, "q", 'WHERE q.campaign_id = %s ORDER BY q."order", q.id')


def annotator_progress(campaign: Campaign, user: Any) -> dict[str, int]:
    """Items this annotator has answered (exact), and the campaign's items and labels (a few
    seconds old at most: campaign_totals)."""
    (mine,) = rows.fetch(MINE_SQL, [user.pk, campaign.pk]) or (0,)
    items, labels = campaign_totals(campaign)
    needed = items * campaign.labels_per_item
    return {
        "mine": mine,
        "items": items,
        "labels": labels,
        "needed": needed,
        "percent": round(100 * labels / needed) if needed else 0,
    }


def progress_by_annotator(campaign: Campaign) -> list[dict[str, Any]]:
    """Per annotator: labels given (current), skips, items held now, mean time on item."""
    rows = (
        Label.objects.filter(campaign=campaign, is_current=True)
        .values("annotator__username")
        .annotate(labels=Count("id"), mean_ms=Avg("time_ms"))
        .order_by("annotator__username")
    )
    skips = dict(
        Assignment.objects.filter(campaign=campaign, status=Assignment.Status.SKIPPED)
        .values_list("annotator__username")
        .annotate(n=Count("id"))
        .values_list("annotator__username", "n")
    )
    held = dict(
        Assignment.objects.filter(campaign=campaign, status=Assignment.Status.LEASED)
        .values_list("annotator__username")
        .annotate(n=Count("id"))
        .values_list("annotator__username", "n")
    )
    members = list(
        Member.objects.filter(campaign=campaign, role=Member.Role.ANNOTATOR)
        .values_list("user__username", flat=True)
        .order_by("user__username")
    )
    by_name: dict[str, dict[str, Any]] = {row["annotator__username"]: dict(row) for row in rows}
    return [
        {
            "username": name,
            "labels": by_name.get(name, {}).get("labels", 0),
            "mean_seconds": (by_name.get(name, {}).get("mean_ms") or 0) / 1000,
            "skips": skips.get(name, 0),
            "held": held.get(name, 0),
        }
        for name in dict.fromkeys([*members, *by_name])
    ]


# --- what an item shows -------------------------------------------------------------------------


def output_view(prediction: Any, summary: OutputSummary | None = None) -> dict[str, Any]:
    """One judged output as the templates (and the API) show it: the raw text, the trace, the
    error, and what its suite says a judge reads first (`summary`, plain data: facts, calls,
    steps, offered tools)."""
    shown = asdict(summary) if summary is not None else None
    text = shown.pop("text", None) if shown is not None else None
    return {
        # As its suite has a judge read it (OutputSummary.text), else as stored.
        "output": prediction.output if text is None else text,
        # False: its suite could not read it (the raw text is then what a judge reads first).
        "parsed": prediction.parsed,
        "summary": shown,
        "trace": prediction.trace or [],
        "error": prediction.error,
        "status": prediction.status,
    }


def judged_output(prediction: Any) -> JudgedOutput:
    """A prediction as its suite reads it to tell a judge what it says."""
    return JudgedOutput(
        task=prediction.run.task,
        context=prediction.context if isinstance(prediction.context, dict) else {},
        text=prediction.output,
        answer=prediction.answer,
        parsed=prediction.parsed,
        trace=prediction.trace if isinstance(prediction.trace, list) else [],
        scores=prediction.scores if isinstance(prediction.scores, dict) else {},
        tool_calls=prediction.tool_calls,
        note=prediction.note,
    )


def item_view(
    item: Item, assignment: Assignment | None, *, order: str | None = None
) -> dict[str, Any]:
    """Everything a kind's template shows about an item (all text is escaped by the
    templates): what a human needs beside the outputs, as the sample's suite says (its item
    context: the query or the dialogue's turns, the candidate tools with their descriptions,
    the gold when the campaign shows it, and a summary of each judged output: `judged`, in the
    canonical order), and what the campaign's kind adds (CampaignKind.item_view).

    A sided kind's `sides` come in the order shown to the person who asked: the assignment's
    (an annotator), or `order` ("AB" / "BA": an adjudicator's, annotation.adjudication.
    shown_order), named Left and Right; with neither, in the canonical order, named A and B
    (what a researcher reads). The order itself is never in the view: it stays on the server,
    and a side says nothing of what made it (sides_alike)."""
    kind = kind_of(item.campaign)
    if assignment is not None:
        order = assignment.shown_order or "AB"
    view: dict[str, Any] = {
        "kind": kind.name,
        "item": item,
        "side_names": ("Left", "Right") if order else ("A", "B"),
    }
    sample = item.sample
    predictions = [getattr(item, relation) for relation in kind.judged]
    predictions = [p for p in predictions if p is not None]
    if sample is not None:
        context = get_suite(sample.benchmark.suite).context(
            sample_as_item(sample),
            show_gold=kind.shows_gold(item.campaign),
            outputs=[judged_output(p) for p in predictions],
        )
        view["sample"] = sample
        view["query"], view["turns"], view["gold"] = context.query, context.turns, context.gold
        view["gold_view"] = asdict(context.gold_view) if context.gold_view is not None else None
        summaries: list[OutputSummary | None] = list(context.sides)
        # Every tool the item or a side names, described in one query whatever their number.
        names = list(
            dict.fromkeys([*context.candidates, *(n for s in context.sides for n in s.offered)])
        )
        tools = {
            t.name: t for t in Tool.objects.filter(benchmark_id=sample.benchmark_id, name__in=names)
        }
        # A tool the benchmark does not hold (one the platform serves) is shown by its name.
        view["tools"] = [
            tools.get(n) or Tool(name=n, description=context.descriptions.get(n, ""))
            for n in context.candidates
        ]
        view["tool_descriptions"] = {name: tool.description for name, tool in tools.items()}
    else:
        summaries = []
    summaries += [None] * (len(predictions) - len(summaries))
    view["judged"] = [output_view(p, s) for p, s in zip(predictions, summaries, strict=False)]
    present_alike(view)
    kind.item_view(item, assignment, view)
    if kind.sided and order == "BA" and "sides" in view:
        view["sides"] = list(reversed(view["sides"]))
    return view


def present_alike(view: dict[str, Any]) -> None:
    """Every judged output of an item in the same sections under the same labels, whatever
    made it (a text or a native run, one whose text was read or not), so that nothing but
    what each output says tells the sides of a blind comparison apart:

    - the tools offered: a suite names a side's own list only where it differs from the
      item's (OutputSummary.offered). When every output was offered the same list, the item
      shows it once and no side shows one; otherwise every side shows its own (the item's,
      for a side that names none; possibly empty) in the same form (`offered_per_side`), and
      the item shows every tool either was offered, not one side's list;
    - the raw text and the trace: every side has the section when any has it (`traced`)."""
    judged = view["judged"]
    descriptions = view.get("tool_descriptions", {})
    candidates = [tool.name for tool in view.get("tools", [])]
    offered = [list((side["summary"] or {}).get("offered") or candidates) for side in judged]
    per_side = len({tuple(names) for names in offered}) > 1
    view["offered_per_side"] = per_side
    view["traced"] = any(side["trace"] for side in judged)
    if per_side:
        every = list(dict.fromkeys(name for names in offered for name in names))
        known = {tool.name: tool for tool in view.get("tools", [])}
        view["tools"] = [
            known.get(name) or Tool(name=name, description=descriptions.get(name, ""))
            for name in every
        ]
    for side, names in zip(judged, offered, strict=True):
        shown = names if per_side else []
        side["offered"] = [{"name": n, "description": descriptions.get(n, "")} for n in shown]
        if side["summary"] is not None:
            side["summary"]["offered"] = shown


def sample_as_item(sample: Sample) -> SuiteItem:
    """A sample as its suite sees it."""
    return SuiteItem(
        split=sample.split,
        external_id=sample.external_id,
        input=sample.input if isinstance(sample.input, dict) else {},
        reference=sample.reference,
        kind=sample.kind,
        candidate_tools=tuple(sample.candidate_tools or ()),
        metadata=sample.metadata or {},
    )


def item_for_assignment(assignment: Assignment, campaign: Campaign) -> Item:
    """The assignment's item with what its campaign's kind shows, and `campaign` as its
    campaign (not read again)."""
    # Only what the kind's items point at is joined (every next item reads one), and a
    # sample's benchmark (its suite gives the item's context).
    kind = kind_of(campaign)
    relations = kind.relations
    if "sample" in relations:
        relations = (*relations, "sample__benchmark")
    # A judged prediction's run gives its task (what its answer means).
    relations = (*relations, *(f"{relation}__run" for relation in kind.judged))
    item = Item.objects.select_related(*relations).get(pk=assignment.item_id)
    item.campaign = campaign
    return item
