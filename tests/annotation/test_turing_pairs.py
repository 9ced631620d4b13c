"""From the virtual API server to the agreement report: cached real responses paired with
simulated ones (make_turing_pairs), a Turing campaign built from the pairs in the admin,
annotators answering in the studio's Turing interface, and the report's win/tie/lose shares per
dimension."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from annotation import services
from annotation.agreement.services import report_params, report_request
from annotation.models import Assignment, Campaign, Label, Member
from benchmarks.models import Benchmark
from benchmarks.services import benchmark_import
from evaluation.models import ApiResponse, TuringPair, VirtualApi
from evaluation.virtualapi.cache import apis_from_benchmark, cache_import
from tests.evaluation.conftest import make_simulator
from tests.factories import make_superuser, make_user
from tests.fake_openai import FakeOpenAI

pytestmark = pytest.mark.django_db

DEMO = Path(__file__).resolve().parents[2] / "benchmarks" / "demo" / "stabletoolbench"


def simulated_reply(body: dict[str, Any]) -> str:
    return json.dumps({"error": "", "response": {"simulated": True, "note": "<b>plausible</b>"}})


def demo_server() -> None:
    manifest = json.loads((DEMO / "manifest.json").read_text())
    benchmark_import(suite="stabletoolbench", paths=[DEMO / f for f in manifest["files"]])
    apis_from_benchmark(Benchmark.objects.get(suite="stabletoolbench"))
    cache_import(DEMO / "response_cache", origin=ApiResponse.Origin.REAL)


def test_pairs_become_a_turing_campaign_that_experts_answer_and_the_report_shares(
    settings: Any,
) -> None:
    demo_server()
    # Annotators see an API under ToolBench's name; the Tool's key adds its category.
    tides = VirtualApi.objects.get(tool="tide_tables_demo_for_Weather", api="tide_times")
    assert tides.function == "tide_times_for_tide_tables_demo"
    with FakeOpenAI(responder=simulated_reply) as server:
        make_simulator(settings, server.base_url, model="sim-model")
        out = io.StringIO()
        call_command("make_turing_pairs", "--limit", "3", "--json", stdout=out)
    made = json.loads(out.getvalue())
    assert made["pairs"] == 3 and made["apis"] == 3  # one call per API first
    pairs = list(TuringPair.objects.select_related("api"))
    for pair in pairs:
        real = ApiResponse.objects.get(api=pair.api, key=pair.key)
        assert pair.real == real.response and pair.simulated["simulated"] is True
        assert pair.api.documentation  # shown to the annotators
    # the simulated answers did not replace the real ones in the cache
    assert not ApiResponse.objects.filter(origin="simulated").exists()

    # the admin action builds the campaign
    admin = Client()
    admin.force_login(make_superuser())
    response = admin.post(
        "/admin/evaluation/turingpair/",
        {"action": "build_campaign", "_selected_action": [p.pk for p in pairs]},
    )
    assert response.status_code == 302
    campaign = Campaign.objects.get(kind="turing")
    assert campaign.items.count() == 3 and campaign.labels_per_item == 3
    annotators = [make_user(), make_user(), make_user()]
    services.members_add(campaign=campaign, users=annotators, role=Member.Role.ANNOTATOR)
    services.campaign_activate(campaign=campaign)

    # every annotator answers every pair in the studio: the real response is the one on the
    # left for the first of them, whatever order each was shown
    for annotator in annotators:
        client = Client()
        client.force_login(annotator)
        page = client.get(f"/annotate/{campaign.pk}/").content.decode()
        for _ in range(3):
            assert "&lt;b&gt;plausible&lt;/b&gt;" in page  # the simulated text, escaped
            action = re.search(r'hx-post="(/annotate/\d+/submit/\d+/)"', page).group(1)
            token = re.search(r'name="token" value="([^"]+)"', page).group(1)
            assignment = Assignment.objects.get(pk=int(action.rstrip("/").rsplit("/", 1)[1]))
            real_side = "left" if assignment.shown_order == "AB" else "right"
            page = client.post(
                action,
                {"overall": real_side, "format": "tie", "relevance": real_side, "token": token},
                HTTP_HX_REQUEST="true",
            ).content.decode()
    assert Label.objects.filter(campaign=campaign).count() == 9

    report = report_request(campaign, report_params(resamples=50), inline=True)
    shares = {d["key"]: d["shares"] for d in report.data["turing"]}
    assert shares["overall"]["real better"]["value"] == pytest.approx(1.0)
    assert shares["format"]["tie"]["value"] == pytest.approx(1.0)
    assert shares["relevance"]["simulated better"]["value"] == pytest.approx(0.0)
    assert {d["votes"] for d in report.data["turing"]} == {9}


def test_a_call_the_simulator_does_not_answer_makes_no_pair(settings: Any) -> None:
    demo_server()
    with FakeOpenAI(faults={"500": 1.0}) as server:
        make_simulator(settings, server.base_url, max_attempts=1)
        err = io.StringIO()
        with pytest.raises(CommandError, match="answered none"):
            call_command("make_turing_pairs", "--limit", "2", "--json", stderr=err)
    assert not TuringPair.objects.exists()  # no pair with an empty simulated side
    lines = err.getvalue().splitlines()
    assert len(lines) == 2 and all("no simulated answer, no pair" in line for line in lines)


def test_a_second_round_pairs_only_calls_not_paired_yet(settings: Any) -> None:
    demo_server()
    real = ApiResponse.objects.filter(origin="real", error="").exclude(response=None)
    assert real.values("api_id").distinct().count() >= 3
    with FakeOpenAI(responder=simulated_reply) as server:
        make_simulator(settings, server.base_url, model="sim-model")
        for limit in ("2", "1000"):
            call_command("make_turing_pairs", "--limit", limit, "--json", stdout=io.StringIO())
        with pytest.raises(CommandError, match="no cached call"):
            call_command("make_turing_pairs", "--json", stdout=io.StringIO())
    pairs = set(TuringPair.objects.values_list("api_id", "key"))
    assert len(pairs) == TuringPair.objects.count()  # none paired twice
    assert pairs == set(real.values_list("api_id", "key"))  # every clean real call once
    assert server.total == len(pairs)
