"""A pairwise campaign on two runs of a BFCL benchmark: each item shows the question, the
functions offered with their descriptions (carried by the sample, not the benchmark's tools),
the gold as acceptable-value lists and each output's decoded calls; a multi-turn output shows its
executed calls by turn with BFCL's verdict (benchmarks/suites/bfcl/context.py)."""

from __future__ import annotations

import pytest
from django.test import Client

from annotation import services
from annotation.models import Member
from benchmarks.kit.context import JudgedOutput
from benchmarks.kit.protocol import Item
from benchmarks.suites import bfcl
from tests.factories import make_user
from tests.suites.bfcl.test_runs import demo_benchmark, run_category

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_pairwise_campaign_on_two_bfcl_runs_shows_what_a_judge_needs(client: Client) -> None:
    benchmark = demo_benchmark()
    right, _ = run_category(benchmark, "simple_python", "native")
    wrong, _ = run_category(benchmark, "simple_python", "native", wrong=True)
    campaign = services.campaign_create(name="bfcl pairwise", kind="pairwise", benchmark=benchmark)
    campaign.show_gold = True
    campaign.save(update_fields=["show_gold"])
    assert services.items_from_runs(campaign=campaign, run_a=right, run_b=wrong) == 2
    annotator = make_user(username="judge")
    services.members_add(campaign=campaign, users=[annotator], role=Member.Role.ANNOTATOR)
    services.campaign_activate(campaign=campaign)
    client.force_login(annotator)
    page = client.get(f"/annotate/{campaign.pk}/").content.decode()
    # the question, whichever item comes first
    asked = [
        "Find the area of a triangle with a base of 10 units and a height of 5 units.",
        "What is the area of a circle",
    ]
    assert any(text in page for text in asked), page
    # the functions with their descriptions, from the sample's input
    assert "calculate_triangle_area" in page or "geometry.circle_area" in page
    assert "Calculate the area of a triangle" in page or "circle" in page
    # the gold as acceptable values, and both outputs' calls: the right one and the wrong one
    assert "acceptable values" in page
    assert "no_such_function" in page


def test_the_gold_and_outputs_as_a_judge_reads_them() -> None:
    single = Item(
        split="simple_python",
        external_id="x",
        input={
            "question": [[{"role": "user", "content": "<b>area?</b>"}]],
            "query": "<b>area?</b>",
            "functions": [{"name": "area", "description": "An area.", "parameters": {}}],
        },
        reference=[{"area": {"base": [10], "unit": ["cm", ""]}}],
        candidate_tools=["area"],
    )
    decoded = JudgedOutput(answer={"calls": [{"name": "area", "arguments": {"base": 10}}]})
    undecoded = JudgedOutput(answer={"calls": None, "failure": "not a list"}, parsed=True)
    context = bfcl.SUITE.context(single, show_gold=True, outputs=[decoded, undecoded])
    assert context.turns == [{"role": "user", "content": "<b>area?</b>"}]
    assert context.descriptions == {"area": "An area."}
    assert context.gold_view is not None and context.gold_view.calls is not None
    assert [(c.name, c.arguments) for c in context.gold_view.calls] == [
        ("area", {"base": [10], "unit": ["cm", ""]})
    ]
    assert [(c.name, c.arguments) for c in context.sides[0].calls or ()] == [("area", {"base": 10})]
    assert context.sides[1].facts == (("Not decoded", "not a list"),)
    assert bfcl.SUITE.context(single, show_gold=False).gold_view is None
    multi = Item(
        split="multi_turn_base",
        external_id="y",
        input={"question": [[{"role": "user", "content": "make it"}]], "functions": []},
        reference=[["mkdir(dir_name='a')"], ["cd('a')"]],
    )
    output = JudgedOutput(
        answer={"passed": False, "turn_accuracy": 0.5, "reason": "turn 1: state differs"},
        trace=[{"turn": 0, "step": 0, "action": "mkdir", "arguments": {"dir_name": "b"}}],
    )
    context = bfcl.SUITE.context(multi, show_gold=True, outputs=[output])
    assert context.gold_view is not None
    assert [(c.name, c.arguments, c.label) for c in context.gold_view.calls or ()] == [
        ("mkdir", {"dir_name": "a"}, "turn 1"),
        ("cd", {"argument 1": "a"}, "turn 2"),
    ]
    side = context.sides[0]
    assert side.facts == (
        ("Verdict", "failed"),
        ("Turns passed", "50%"),
        ("Why", "turn 1: state differs"),
    )
    assert [(c.name, c.label) for c in side.calls or ()] == [("mkdir", "turn 1")]
