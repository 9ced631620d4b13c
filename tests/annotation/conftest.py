"""Campaign fixtures: a motivation campaign over N tools, annotators as members."""

from __future__ import annotations

from typing import Any

from annotation import services
from annotation.models import Campaign, Member
from tests.factories import make_benchmark, make_tool, make_user


def motivation_campaign(
    *, tools: int, labels_per_item: int, annotators: int
) -> tuple[Campaign, list[Any]]:
    benchmark = make_benchmark()
    for i in range(tools):
        make_tool(benchmark=benchmark, name=f"tool{i:04d}", description=f"Tool {i}")
    campaign = services.campaign_create(
        name=f"motivation-{benchmark.pk}",
        kind="motivation",
        benchmark=benchmark,
        labels_per_item=labels_per_item,
    )
    services.items_from_tools(campaign=campaign)
    users = [make_user() for _ in range(annotators)]
    services.members_add(campaign=campaign, users=users, role=Member.Role.ANNOTATOR)
    services.campaign_activate(campaign=campaign)
    return campaign, users
