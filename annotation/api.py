"""The annotation API: an annotator's campaigns, their next item, and submitting answers. The
same services as the pages (membership checks, leases, validation, idempotent submits); a
service's refusal is answered by DRF's exception handler (config.errors): 400 with what is
wrong and where."""

from __future__ import annotations

import uuid
from typing import Any

from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    extend_schema_view,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.viewsets import ViewSet

from annotation.agreement.data import available_raters
from annotation.agreement.services import MAX_RESAMPLES, params_from, report_request
from annotation.assign import item_next, item_skip
from annotation.kinds import kind_of
from annotation.models import AgreementReport, Assignment, Campaign, Member, Question
from annotation.selectors import (
    annotator_progress,
    assignment_of,
    campaigns_of,
    item_for_assignment,
    item_view,
    studio_campaign,
)
from annotation.services import SIDES
from annotation.submit import answers_submit
from config.http import RequestBody
from config.numbers import id_or_none


class QuestionSerializer(serializers.ModelSerializer):
    choices = serializers.SerializerMethodField()

    class Meta:
        model = Question
        fields = ["key", "text", "scale", "choices", "multiple", "min_choices", "max_choices"]

    @extend_schema_field(
        serializers.ListField(
            child=serializers.DictField(),
            help_text='{"value", "label", "key"} each; a pairwise question\'s values are the '
            "sides as shown to you: left, tie, right.",
        )
    )
    def get_choices(self, question: Question) -> list[dict[str, Any]]:
        # A pairwise question is answered by the side shown (the submit takes left / tie /
        # right): its stored choices name the canonical A and B, which annotators never see.
        if question.scale == Question.Scale.PAIRWISE:
            labels = kind_of(question.campaign).side_labels
            return [
                {"value": side, "label": label, "key": key}
                for side, label, key in zip(SIDES, labels, ("1", "2", "3"), strict=True)
            ]
        return list(question.choices)


class CampaignSerializer(serializers.ModelSerializer):
    # The name its members see (Campaign.shown_name), never the researcher's own.
    name = serializers.CharField(source="shown_name", read_only=True)
    items = serializers.IntegerField(source="n_items", read_only=True)
    mine = serializers.IntegerField(read_only=True, help_text="Items you have answered.")
    questions = QuestionSerializer(many=True, read_only=True)

    class Meta:
        model = Campaign
        fields = [
            "id",
            "name",
            "kind",
            "status",
            "labels_per_item",
            "items",
            "mine",
            "questions",
        ]


NextSerializer = inline_serializer(
    "NextItem",
    {
        "assignment": serializers.IntegerField(allow_null=True),
        "item": serializers.JSONField(
            help_text="What the item shows, by the campaign's kind; two sides in the order "
            "shown to you (left first), which is all a pairwise answer names; a step-level "
            "review's `review`: the trace's steps and the error types a wrong step may have."
        ),
        "progress": serializers.DictField(child=serializers.IntegerField()),
    },
)


class SubmitSerializer(RequestBody):
    assignment = serializers.IntegerField()
    answers = serializers.DictField(
        help_text="{question key: value}; pairwise as the side shown: left, tie or right; a "
        "step-level review's `steps` too: per step {right: true} or {right: false, error: "
        "<type>, call: {name, arguments} or null}."
    )
    token = serializers.UUIDField(help_text="One per item shown: resending it stores nothing.")
    note = serializers.CharField(required=False, allow_blank=True, max_length=5000)
    time_ms = serializers.IntegerField(required=False, min_value=0)
    next = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Answer with your next item too (as `next` gives it): one request per item.",
    )


class SkipSerializer(RequestBody):
    assignment = serializers.IntegerField()


def item_payload(assignment: Assignment, campaign: Campaign) -> dict[str, Any]:
    """The item as JSON: the same content the page shows, sides in the order shown."""
    item = item_for_assignment(assignment, campaign)
    view = item_view(item, assignment)
    payload: dict[str, Any] = {"id": item.pk, "position": item.position, "kind": view["kind"]}
    sample = view.get("sample")
    if sample is not None:
        payload["sample"] = {
            "id": sample.pk,
            "split": sample.split,
            "external_id": sample.external_id,
            "input": sample.input,
            # The gold, when the kind shows it (the suite's item context).
            "reference": view.get("gold"),
        }
        payload["tools"] = [
            {"name": t.name, "description": t.description, "parameters": t.parameters}
            for t in view.get("tools", [])
        ]
    if view.get("tool") is not None:
        tool = view["tool"]
        payload["tool"] = {"name": tool.name, "description": tool.description}
    for key in ("sides", "documentation", "arguments", "api", "choices", "failed", "review"):
        if key in view:
            payload[key] = view[key]
    return payload


def next_payload(campaign: Campaign, user: Any) -> dict[str, Any]:
    """The annotator's current or next item (NextSerializer): their live lease, or a new one."""
    assignment = item_next(campaign=campaign, user=user)
    progress = annotator_progress(campaign, user)
    if assignment is None:
        return {"assignment": None, "item": None, "progress": progress}
    # The order the sides are shown in stays on the server (the submit reads it from the
    # assignment): an annotator of a blind campaign is never told which side is which.
    return {
        "assignment": assignment.pk,
        "item": item_payload(assignment, campaign),
        "progress": progress,
    }


CAMPAIGN_ID = OpenApiParameter("id", int, OpenApiParameter.PATH, description="Campaign id.")


@extend_schema_view(
    next=extend_schema(parameters=[CAMPAIGN_ID]),
    submit=extend_schema(parameters=[CAMPAIGN_ID]),
    skip=extend_schema(parameters=[CAMPAIGN_ID]),
)
class CampaignViewSet(ViewSet):
    """Campaigns you annotate; `next` gives your current item, `submit` stores your answers."""

    throttle_scope = "annotation"
    lookup_value_regex = "[0-9]+"

    def _campaign(self, request: Request, pk: Any) -> Campaign:
        try:
            return studio_campaign(request, int(pk), Member.Role.ANNOTATOR)
        except (Http404, ValueError):
            # Another campaign, or no campaign: the same answer, so neither is revealed.
            raise NotFound("no such campaign") from None

    @extend_schema(responses=CampaignSerializer(many=True))
    def list(self, request: Request) -> Response:
        campaigns = campaigns_of(request.user).prefetch_related("questions")
        return Response(CampaignSerializer(campaigns, many=True).data)

    @extend_schema(request=None, responses=NextSerializer)
    @action(detail=True, methods=["post"])
    def next(self, request: Request, pk: Any = None) -> Response:
        return Response(next_payload(self._campaign(request, pk), request.user))

    @extend_schema(
        request=SubmitSerializer,
        responses=inline_serializer(
            "Submitted",
            {
                "label": serializers.IntegerField(),
                "created": serializers.BooleanField(),
                "next": serializers.JSONField(
                    required=False,
                    help_text='With `"next": true` only: your next item, as `next` gives it.',
                ),
            },
        ),
    )
    @action(detail=True, methods=["post"], throttle_scope="annotation-submit")
    def submit(self, request: Request, pk: Any = None) -> Response:
        campaign = self._campaign(request, pk)
        body = SubmitSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        assignment = assignment_of(campaign, request.user, data["assignment"])
        if assignment is None:
            raise NotFound("no such item for you")
        label, created = answers_submit(
            campaign=campaign,
            assignment=assignment,
            user=request.user,
            raw=data["answers"],
            token=uuid.UUID(str(data["token"])),
            note=data.get("note", ""),
            time_ms=data.get("time_ms"),
        )
        answer: dict[str, Any] = {"label": label.pk, "created": created}
        if data["next"]:
            # What the studio page does after a submit: the next item in the same answer.
            answer["next"] = next_payload(campaign, request.user)
        return Response(answer, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)

    @extend_schema(request=SkipSerializer, responses=None)
    @action(detail=True, methods=["post"])
    def skip(self, request: Request, pk: Any = None) -> Response:
        campaign = self._campaign(request, pk)
        body = SkipSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        item_skip(
            campaign=campaign, assignment_id=body.validated_data["assignment"], user=request.user
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- agreement reports --------------------------------------------------------------------------


REPORT_PARAMETERS = [
    OpenApiParameter(
        "metric",
        str,
        many=True,
        description="A per-item score of the items' predictions (a count or flag is refused).",
    ),
    OpenApiParameter("judge", str, many=True, description="A judge that judged the items."),
    OpenApiParameter("question", str, many=True, description="Only these questions."),
    OpenApiParameter(
        "resamples",
        {"type": "integer", "minimum": 0, "maximum": MAX_RESAMPLES},
        description="Bootstrap resamples (default 1000).",
    ),
]


class AgreementViewSet(ViewSet):
    """Agreement between a campaign's annotators, judges and metrics (researchers). `list`
    names the campaigns and the raters each can be compared with; `retrieve` gives the report:
    200 with it, or 202 with its progress while a worker computes it (ask again)."""

    lookup_value_regex = "[0-9]+"

    @extend_schema(
        responses=inline_serializer(
            "AgreementCampaign",
            {
                "id": serializers.IntegerField(),
                "name": serializers.CharField(),
                "kind": serializers.CharField(),
                "metrics": serializers.ListField(
                    child=serializers.CharField(),
                    help_text="The per-item scores that may rate (better one way).",
                ),
                "judges": serializers.ListField(child=serializers.CharField()),
                "lower_is_better": serializers.ListField(
                    child=serializers.CharField(),
                    help_text="Of the metrics, those compared with the sign turned.",
                ),
                "not_raters": serializers.DictField(
                    child=serializers.CharField(),
                    help_text="The items' other per-item values (counts, flags, undeclared "
                    "names) and why each is not compared.",
                ),
            },
            many=True,
        )
    )
    def list(self, request: Request) -> Response:
        return Response(
            [
                {"id": c.pk, "name": c.name, "kind": c.kind, **available_raters(c)}
                for c in Campaign.objects.exclude(status=Campaign.Status.DRAFT).order_by("pk")
            ]
        )

    @extend_schema(
        parameters=[OpenApiParameter("id", int, OpenApiParameter.PATH), *REPORT_PARAMETERS],
        responses={
            200: OpenApiResponse(
                OpenApiTypes.OBJECT, description="The report (see docs/agreement.md)."
            ),
            202: inline_serializer(
                "AgreementPending",
                {
                    "status": serializers.CharField(),
                    "done": serializers.IntegerField(),
                    "total": serializers.IntegerField(),
                },
            ),
            409: inline_serializer(
                "AgreementFailed",
                {"status": serializers.CharField(), "error": serializers.CharField()},
            ),
        },
    )
    def retrieve(self, request: Request, pk: Any = None) -> Response:
        # an id no bigint holds names no campaign
        campaign = Campaign.objects.filter(pk=id_or_none(pk) or 0).first()
        if campaign is None:
            raise NotFound("no such campaign")
        report = report_request(campaign, params_from(request.query_params))
        if report.status == AgreementReport.Status.DONE:
            return Response(report.data)
        if report.status == AgreementReport.Status.FAILED:
            return Response(
                {"status": report.status, "error": report.error},
                status=status.HTTP_409_CONFLICT,
            )
        return Response(
            {"status": report.status, "done": report.done, "total": report.total},
            status=status.HTTP_202_ACCEPTED,
        )
