"""Judge versions and forced verdict calls: a judge asked through a forced call of `verdict`
gives the text judge's verdicts on the same answers; a change of any pinned field (prompt,
model, endpoint, parameters, schema, mode) makes a new version and an unchanged save does
not; every judgment records its version; malformed calls are kept unparsed with the reason."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from benchmarks.kit import judging as pure
from benchmarks.kit.generic_judges import PAIRWISE
from evaluation import judging, services
from evaluation.judge_versions import answer_mode, pinned
from evaluation.models import Endpoint, Judge, JudgeJob, JudgeVersion, Judgment, Run
from tests.evaluation.conftest import (
    execute_job,
    execute_run,
    make_counting_benchmark,
    make_endpoint,
)
from tests.factories import make_superuser
from tests.fake_openai import FakeCall, FakeOpenAI, Reply, tool_reply

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("broker")]

CHOICE = {"type": "function", "function": {"name": "verdict"}}


@pytest.fixture
def two_runs(tmp_path: Path, fake_server: FakeOpenAI) -> tuple[Run, Run]:
    benchmark = make_counting_benchmark(tmp_path, 6)
    first = services.run_launch(
        benchmark=benchmark,
        task="answer",
        endpoint=make_endpoint(fake_server.base_url),
        split="default",
    )
    execute_run(first)
    with FakeOpenAI(responder=lambda request: "Answer: 0") as other:
        second = services.run_launch(
            benchmark=benchmark,
            task="answer",
            endpoint=make_endpoint(other.base_url, name="other", model="other-model"),
            split="default",
        )
        execute_run(second)
    return first, second


def decide(request: dict[str, Any]) -> dict[str, str]:
    """A judge that reads the answers: the one that is not "Answer: 0" is better; on the
    questions about 2 and 4 it calls a tie."""
    # chat: the user message; the Responses API: the input's first item (its instructions
    # are the system message)
    turns = request.get("messages") or request.get("input")
    text = next(t["content"] for t in turns if t.get("role") == "user")
    if "after 2?" in text or "after 4?" in text:
        return {"better": "tie", "reason": "both will do"}
    first = text.split("Answer 1:\n", 1)[1].split("\n", 1)[0]
    return {"better": "2" if first == "Answer: 0" else "1", "reason": "it counts"}


def judge_on(server: FakeOpenAI, name: str, mode: str, style: str = "chat") -> Judge:
    endpoint = make_endpoint(server.base_url, name=f"e-{name}", model=f"m-{name}", style=style)
    return judging.judge_create(
        name=name, template="generic.pairwise", endpoint=endpoint, answer_mode=mode
    )


def verdicts(job: JudgeJob) -> dict[tuple[int, int, str], tuple[str, float | None, str]]:
    return {
        (j.prediction_id, j.repeat, j.order): (j.status, j.value, j.label)
        for j in job.judgments.all()
    }


def test_forced_calls_give_the_text_judges_verdicts(two_runs: tuple[Run, Run]) -> None:
    run_a, run_b = two_runs
    with FakeOpenAI(responder=lambda r: json.dumps(decide(r))) as server:
        text_job = judging.judge_launch(
            judge=judge_on(server, "texter", "text"), run=run_a, against=run_b, repeats=2
        )
        execute_job(text_job)
        text_records = server.records()
    with FakeOpenAI(responder=lambda r: FakeCall("verdict", decide(r)), keep_bodies=True) as s:
        call_job = judging.judge_launch(
            judge=judge_on(s, "caller", "call"), run=run_a, against=run_b, repeats=2
        )
        execute_job(call_job)
        call_records = s.records()
    assert text_job.version is not None and call_job.version is not None
    assert (text_job.version.mode, call_job.version.mode) == ("text", "call")
    # 6 samples x 2 orders x 2 repeats, each asked once, every one read
    assert len(text_records) == len(call_records) == 24
    assert verdicts(call_job) == verdicts(text_job)
    assert set(verdicts(call_job).values()) == {
        ("done", 1.0, "A"),
        ("done", 0.0, "tie"),
    }
    assert call_job.metrics == text_job.metrics
    assert call_job.metrics["win"] == pytest.approx(66.67) and call_job.metrics["tie"] == (
        pytest.approx(33.33)
    )
    # text asks without tools; the forced call declares verdict, names it, sends no stop
    assert all(r.tools == () and r.tool_choice is None for r in text_records)
    assert all(r.tools == ("verdict",) and r.tool_choice == CHOICE for r in call_records)
    body = call_records[0].body
    assert body is not None and "stop" not in body
    assert body["tools"][0]["function"]["parameters"] == pure.verdict_schema(PAIRWISE)
    # the reasons come through the call
    assert set(call_job.judgments.values_list("reasoning", flat=True)) == {
        "it counts",
        "both will do",
    }
    # asked again (its server gone), the calls come from the response cache, read the same
    judge = Judge.objects.get(name="caller")
    again = judging.judge_launch(judge=judge, run=run_a, against=run_b, repeats=2)
    execute_job(again)
    assert again.version == call_job.version
    assert again.judgments.filter(cached=True).count() == 24
    assert verdicts(again) == verdicts(call_job)


def test_forced_calls_through_the_responses_api_give_the_same_verdicts(
    two_runs: tuple[Run, Run],
) -> None:
    run_a, run_b = two_runs
    with FakeOpenAI(responder=lambda r: json.dumps(decide(r))) as server:
        text_job = judging.judge_launch(
            judge=judge_on(server, "texter", "text"), run=run_a, against=run_b, repeats=1
        )
        execute_job(text_job)
    with FakeOpenAI(responder=lambda r: FakeCall("verdict", decide(r)), keep_bodies=True) as s:
        judge = judge_on(s, "responder", "call", style=Endpoint.Style.RESPONSES)
        call_job = judging.judge_launch(judge=judge, run=run_a, against=run_b, repeats=1)
        execute_job(call_job)
        records = s.records()
    assert call_job.version is not None and call_job.version.mode == "call"
    assert verdicts(call_job) == verdicts(text_job)
    assert all(r.path.endswith("/responses") for r in records)
    assert all(r.tool_choice == {"type": "function", "name": "verdict"} for r in records)


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ("I prefer the first one.", "no call of verdict"),
        (tool_reply(("judge", {"better": "1", "reason": "x"})), "called 'judge', not verdict"),
        (tool_reply(("verdict", '{"better": "1", ')), "the arguments are not JSON"),
        (tool_reply(("verdict", "[1]")), "not a JSON object"),
        (tool_reply(("verdict", {"better": "3", "reason": "x"})), "better: '3' is not one of"),
        (tool_reply(("verdict", {"better": "1"})), "'reason' is a required property"),
        (
            tool_reply(("verdict", {"better": "1", "reason": "x", "score": 3})),
            "Additional properties are not allowed",
        ),
        (
            tool_reply(("verdict", {"better": "1", "reason": "x"}), ("verdict", {})),
            "2 calls; one call of verdict",
        ),
    ],
)
def test_a_malformed_call_is_asked_again_then_kept_unparsed_with_the_reason(
    two_runs: tuple[Run, Run], answer: Any, said: str
) -> None:
    run_a, run_b = two_runs
    with FakeOpenAI(responder=lambda r: answer) as server:
        job = judging.judge_launch(
            judge=judge_on(server, "bad", "call"), run=run_a, against=run_b, repeats=1
        )
        execute_job(job)
        records = server.records()
    # each judgment asked twice: the second time told what was wrong, the call still forced
    assert len(records) == 2 * 12
    assert all(r.tool_choice == CHOICE for r in records)
    told = [r.content for r in records if "That was not a valid call of verdict: " in r.content]
    assert len(told) == 12 and all(said in content for content in told)
    judgments = list(job.judgments.all())
    assert {j.status for j in judgments} == {Judgment.Status.UNPARSED}
    assert all(said in j.error and j.value is None for j in judgments)
    assert all(j.raw == j.raw_first for j in judgments)
    assert job.metrics["unparsed_or_failed"] == 12.0


def test_a_call_read_on_the_second_asking_keeps_the_first(two_runs: tuple[Run, Run]) -> None:
    run_a, run_b = two_runs

    def once_wrong(request: dict[str, Any]) -> Reply:
        if "That was not a valid call" in json.dumps(request["messages"]):
            return tool_reply(("verdict", {"better": "tie", "reason": "fixed"}))
        return tool_reply(("verdict", {"better": "A"}))

    with FakeOpenAI(responder=once_wrong) as server:
        job = judging.judge_launch(
            judge=judge_on(server, "twice", "call"), run=run_a, against=run_b, repeats=1
        )
        execute_job(job)
    judgment = job.judgments.order_by("position").first()
    assert judgment is not None
    assert (judgment.status, judgment.label, judgment.reasoning) == ("done", "tie", "fixed")
    assert judgment.raw_first == 'verdict({"better": "A"})'
    assert judgment.raw == 'verdict({"better": "tie", "reason": "fixed"})'


def test_every_verdict_function_reads_as_its_text_does() -> None:
    """Each registered template: arguments valid against its schema, given as a call and as
    the same JSON text, read to the same verdict."""
    from benchmarks.kit.judging import JudgeInput
    from benchmarks.kit.protocol import Item, Outcome

    item = Item(split="s", external_id="1", input={"query": "q"})
    outcome = Outcome(output="o")
    examples = {
        "pass": {"label": "Unsure"},
        "solvability": {"label": "Unsolvable"},
        "pairwise": {"better": "2"},
    }
    for name, template in sorted(pure.templates().items()):
        schema = pure.verdict_schema(template)
        properties = schema["properties"]
        if "answer_status" in properties:
            arguments: dict[str, Any] = {"answer_status": "Unsure"}
        elif "task_status" in properties:
            arguments = {"task_status": "Unsolvable"}
        elif "is_solved" in properties:
            arguments = {"is_solved": False}
        elif "index" in properties:
            arguments = {"index": 1}
        elif template.kind == "pointwise":
            arguments = {d: 3 + i % 5 for i, d in enumerate(template.dimensions)}
        else:
            arguments = dict(examples[template.kind])
        arguments["reason"] = "because"
        judge_input = JudgeInput(item=item, outputs=(outcome, outcome))
        call = {"function": {"name": "verdict", "arguments": json.dumps(arguments)}}
        by_call = pure.read_call(template, [call], judge_input)
        by_text = template.parse(json.dumps(arguments), judge_input)
        assert by_call.ok and by_call == by_text, name


def test_a_new_version_for_each_pinned_change_and_none_for_an_unchanged_save(
    fake_server: FakeOpenAI,
) -> None:
    endpoint = make_endpoint(fake_server.base_url, name="e", model="m")
    judge = judging.judge_create(name="j", template="generic.pairwise", endpoint=endpoint)
    assert list(judge.versions.values_list("number", "mode")) == [(1, "call")]

    def numbers() -> list[int]:
        return list(judge.versions.order_by("number").values_list("number", flat=True))

    # an unchanged save: no new version
    judging.judge_save(judge=judge, params={})
    assert numbers() == [1]
    # parameters, mode, template (prompt and schema): each a new version
    judging.judge_save(judge=judge, params={"temperature": 0})
    judging.judge_save(judge=judge, answer_mode="text")
    judging.judge_save(judge=judge, template="stabletoolbench.preference")
    assert numbers() == [1, 2, 3, 4]
    v2, v3, v4 = (judge.versions.get(number=n) for n in (2, 3, 4))
    assert v2.pinned["params"] == {"temperature": 0} and v3.mode == "text"
    assert v4.pinned["schema"]["properties"]["index"]["type"] == "number"
    assert v4.pinned["prompt"]["description"] != v3.pinned["prompt"].get("description")
    # the endpoint's model and parameters, saved through its service: the next version
    services.endpoint_save(endpoint=endpoint, model="m2", default_params={"top_p": 1})
    latest = judge.versions.get(number=5)
    assert (latest.model, latest.pinned["params"]) == ("m2", {"top_p": 1, "temperature": 0})
    # back to a state seen before: that version again, not a new one
    judging.judge_save(judge=judge, template="generic.pairwise", answer_mode="call")
    # a change made beside the services (a template's text, an endpoint row): met at launch
    # or the next save
    Endpoint.objects.filter(pk=endpoint.pk).update(model="m", default_params={})
    judge.refresh_from_db()
    judging.judge_save(judge=judge)
    assert numbers() == [1, 2, 3, 4, 5, 6]
    # an endpoint saved without a change that a version pins: no new version
    services.endpoint_save(endpoint=Endpoint.objects.get(pk=endpoint.pk), max_concurrency=2)
    assert numbers() == [1, 2, 3, 4, 5, 6]
    assert pinned(judge) == judge.versions.get(number=2).pinned
    # a version is never changed
    with pytest.raises(ValueError, match="never changed"):
        v2.save()


@pytest.fixture
def editable_template() -> Iterator[dict[str, str]]:
    """A template registered for the test whose prompt text the test edits (as a change of
    the text in the code would)."""
    texts = {"system": "Judge fairly."}
    pure.register(replace(PAIRWISE, name="test.editable", texts=lambda: dict(texts)))
    yield texts
    pure.TEMPLATES.pop("test.editable", None)


def test_a_prompt_change_makes_a_new_version_at_the_next_launch(
    two_runs: tuple[Run, Run], editable_template: dict[str, str]
) -> None:
    run_a, run_b = two_runs
    with FakeOpenAI(responder=lambda r: FakeCall("verdict", decide(r))) as server:
        judge = judging.judge_create(
            name="edited",
            template="test.editable",
            endpoint=make_endpoint(server.base_url, name="e-edit", model="m-edit"),
        )
        first = judging.judge_launch(judge=judge, run=run_a, against=run_b, repeats=1)
        again = judging.judge_launch(judge=judge, run=run_a, against=run_b, repeats=1)
        editable_template["system"] = "Judge fairly, and prefer the shorter answer."
        edited = judging.judge_launch(judge=judge, run=run_a, against=run_b, repeats=1)
        for job in (first, again, edited):
            execute_job(job)
    assert first.version == again.version and first.version is not None
    assert edited.version is not None and edited.version.number == 2
    assert edited.version.pinned["prompt"]["system"].endswith("prefer the shorter answer.")
    assert first.version.pinned["prompt"]["system"] == "Judge fairly."
    # every judgment records its job's version
    for job in (first, again, edited):
        assert set(job.judgments.values_list("version", flat=True)) == {job.version_id}


def test_an_endpoint_that_cannot_declare_tools_keeps_the_text_path(
    fake_server: FakeOpenAI,
) -> None:
    completion = make_endpoint(
        fake_server.base_url, name="base", model="b", style=Endpoint.Style.COMPLETION
    )
    judge = judging.judge_create(name="j", template="generic.pairwise", endpoint=completion)
    assert judge.answer_mode == "call" and answer_mode(judge) == "text"
    assert judge.versions.get().mode == JudgeVersion.Mode.TEXT
    responses = make_endpoint(
        fake_server.base_url, name="r", model="b", style=Endpoint.Style.RESPONSES
    )
    judging.judge_save(judge=judge, endpoint=responses)
    assert answer_mode(judge) == "call" and judge.versions.get(number=2).mode == "call"


def test_imported_verdicts_record_their_version() -> None:
    from django.core.management import call_command

    from tests.evaluation.test_judging import FIXTURE, import_demo_ultratool

    import_demo_ultratool()
    call_command(
        "import_judgments",
        "ultratool-planning",
        str(FIXTURE / "planning_evaluations.jsonl"),
        "--name",
        "m",
    )
    job = JudgeJob.objects.get()
    assert job.version is not None
    assert (job.version.mode, job.version.model, job.version.pinned["endpoint"]) == (
        "text",
        "",
        None,
    )
    assert set(job.judgments.values_list("version", flat=True)) == {job.version_id}


def test_the_judge_page_lists_its_versions_and_the_job_page_names_one(
    two_runs: tuple[Run, Run],
) -> None:
    run_a, run_b = two_runs
    with FakeOpenAI(responder=lambda r: FakeCall("verdict", decide(r))) as server:
        judge = judge_on(server, "paged", "call")
        judging.judge_save(judge=judge, params={"temperature": 0})
        job = judging.judge_launch(judge=judge, run=run_a, against=run_b, repeats=1)
        execute_job(job)
    client = Client()
    client.force_login(make_superuser())
    page = client.get(f"/judges/{judge.pk}/").content.decode()
    assert "Its versions" in page
    rows = page.split("Its versions", 1)[1].split("Judges with this template", 1)[0]
    assert rows.index("v2") < rows.index("v1")
    assert "{&#x27;temperature&#x27;: 0}" in rows and ">12<" in rows
    listed = client.get("/judges/").content.decode()
    assert re.search(r">paged</a></th>.*?<td>v2</td>", listed, re.DOTALL)
    job_page = client.get(f"/judging/{job.pk}/").content.decode()
    assert "v2, answering by forced function call" in job_page


def test_the_admin_saves_a_judge_through_the_service_and_its_versions() -> None:
    endpoint = make_endpoint("http://127.0.0.1:9/v1", name="e", model="m")
    judge = judging.judge_create(name="j", template="generic.pairwise", endpoint=endpoint)
    client = Client()
    client.force_login(make_superuser())
    data = {
        "name": "j",
        "template": "generic.pairwise",
        "endpoint": endpoint.pk,
        "params": "{}",
        "answer_mode": "call",
    }
    unchanged = client.post(f"/admin/evaluation/judge/{judge.pk}/change/", data)
    assert unchanged.status_code == 302, unchanged.content.decode()[-2000:]
    assert judge.versions.count() == 1
    changed = client.post(
        f"/admin/evaluation/judge/{judge.pk}/change/", {**data, "answer_mode": "text"}
    )
    assert changed.status_code == 302
    assert list(judge.versions.values_list("number", "mode")) == [(1, "call"), (2, "text")]
    shown = client.get(f"/admin/evaluation/judge/{judge.pk}/change/").content.decode()
    assert shown.index("<li>v2 · Text · m") < shown.index("<li>v1 · Forced function call · m")


def test_the_page_defines_a_judge_answering_in_text_as_its_first_version() -> None:
    endpoint = make_endpoint("http://127.0.0.1:9/v1", name="e", model="m")
    client = Client()
    client.force_login(make_superuser())
    form = client.get("/judges/new/").content.decode()
    assert 'name="answer_mode"' in form and '<option value="call" selected>' in form
    defined = client.post(
        "/judges/new/",
        {
            "name": "texter",
            "template": "generic.pairwise",
            "endpoint": endpoint.pk,
            "params": "",
            "answer_mode": "text",
        },
    )
    assert defined.status_code == 302
    judge = Judge.objects.get(name="texter")
    assert list(judge.versions.values_list("number", "mode")) == [(1, "text")]
    refused = client.post(
        "/judges/new/",
        {"name": "x", "template": "generic.pairwise", "endpoint": endpoint.pk, "answer_mode": "?"},
    )
    assert refused.status_code == 400 and "Select a valid choice" in refused.content.decode()
