"""The description-rewriting experiment (MetaTool, papers/000 section 4.3, Figure 6) end to end:
an endpoint on the fake OpenAI server rewrites every tool description into a new tool
revision, the same run is repeated on it through a real worker, and the change of CSR per tool
and overall is what the fake's scripted answers make it."""

from __future__ import annotations

import csv
import json
import re
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from benchmarks.models import Benchmark, RevisedTool, Tool, ToolRevision
from benchmarks.services import benchmark_import
from evaluation.analyses import run_analyses_get
from evaluation.models import Prediction, Run
from evaluation.rewriting import RewritingError, rewrite_report, tool_descriptions_rewrite
from evaluation.services import RunError, run_rerun
from tests.evaluation.conftest import make_counting_benchmark, make_endpoint
from tests.evaluation.test_local_model import installed, llama_server  # noqa: F401 (fixtures)
from tests.fake_openai import FakeOpenAI
from tests.workers import celery_worker

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("broker")]

REWRITE = "Rewrite the description of this tool"
TOOL_LINE = re.compile(r"^\d+\. tool name: (.+?), tool description: (.*)$", re.MULTILINE)
LIST = re.compile(r"\[User's Query Start\]\n(.*?)\n\[User's Query End\]", re.DOTALL)


def content(request: dict[str, Any]) -> str:
    if "messages" in request:
        return "\n".join(str(m.get("content") or "") for m in request["messages"])
    return str(request.get("prompt") or "")


class Scripted:
    """Rewrites say "REWRITTEN for <tool>"; a selection names the gold tool when the tool list
    shows rewritten descriptions XOR the gold tool is in `right_before`, else another
    candidate. So a tool in right_before goes from 100 to 0, any other from 0 to 100."""

    def __init__(self, gold: dict[str, str], right_before: set[str]) -> None:
        self.gold = gold
        self.right_before = right_before
        self.selections: list[str] = []

    def __call__(self, request: dict[str, Any]) -> str:
        text = content(request)
        if REWRITE in text:
            name = re.search(r"^Tool name: (.+)$", text, re.MULTILINE)
            assert name is not None
            return f"New description: REWRITTEN for {name[1]}\n\nAnything after is dropped."
        self.selections.append(text)
        query = LIST.search(text)
        assert query is not None, text[:300]
        gold = self.gold[query[1].strip()]
        lines = TOOL_LINE.findall(text)
        rewritten = all(description.startswith("REWRITTEN") for _, description in lines)
        if rewritten != (gold in self.right_before):
            return f"{gold}. It fits the query."
        other = next(name for name, _ in lines if name != gold)
        return f"{other}. It fits the query."


def import_metatool(seeddata: Path) -> Benchmark:
    metatool = seeddata / "metatool"
    benchmark_import(
        suite="metatool",
        paths=[metatool / "all_clean_data_sample200.csv", metatool / "plugin_des.json"],
    )
    return Benchmark.objects.get(name="MetaTool")


def gold_of_queries(seeddata: Path) -> dict[str, str]:
    with (seeddata / "metatool" / "all_clean_data_sample200.csv").open(encoding="utf-8") as f:
        return {row["Query"].strip(): row["Tool"] for row in csv.DictReader(f)}


def test_the_experiment_rewrites_every_tool_reruns_the_items_and_reports_the_change(
    tmp_path: Path, seeddata: Path
) -> None:
    # given the published queries and tools, and a script whose answers are known
    benchmark = import_metatool(seeddata)
    originals = dict(Tool.objects.filter(benchmark=benchmark).values_list("name", "description"))
    gold = gold_of_queries(seeddata)
    # right before the rewriting: the tools whose names sort before "N"
    right_before = {name for name in originals if name < "N"}
    script = Scripted(gold, right_before)
    with FakeOpenAI(responder=script) as server, celery_worker(tmp_path, concurrency=1):
        make_endpoint(server.base_url, name="rewriter")
        # when the command launches the similar-choices task, rewrites, reruns and waits
        out = StringIO()
        call_command(
            "rewrite_tool_descriptions",
            "MetaTool",
            "--endpoint",
            "rewriter",
            "--task",
            "similar",
            "--limit",
            "12",
            "--seed",
            "3",
            "--wait",
            "--json",
            stdout=out,
        )
    result = json.loads(out.getvalue())

    # then every tool has a rewritten description in revision 1, and keeps its own
    revision = ToolRevision.objects.get(benchmark=benchmark)
    assert result["tool_revision"] == revision.number == 1
    revised = dict(
        RevisedTool.objects.filter(revision=revision).values_list("tool__name", "description")
    )
    assert set(revised) == set(originals) and len(revised) == 199
    assert all(text == f"REWRITTEN for {name}" for name, text in revised.items())
    assert dict(Tool.objects.filter(benchmark=benchmark).values_list("name", "description")) == (
        originals
    )
    assert "rewriter" in revision.note and "rewrite_description.txt" in revision.note

    # the rerun repeats the same items with the same candidate lists, on the revision
    before = Run.objects.get(pk=result["before_run"])
    after = Run.objects.get(pk=result["run"])
    assert before.status == after.status == Run.Status.DONE
    assert before.tool_revision is None and after.tool_revision == revision
    assert after.rerun_of == before
    rows = {
        run.pk: list(
            Prediction.objects.filter(run=run)
            .order_by("position")
            .values_list("sample_id", "context")
        )
        for run in (before, after)
    }
    assert rows[before.pk] == rows[after.pk] and len(rows[before.pk]) == 12
    # the prompts of the first run show the imported descriptions, the rerun's the new ones
    assert len(script.selections) == 24
    shown = [TOOL_LINE.findall(text) for text in script.selections]
    assert sum(all(d.startswith("REWRITTEN") for _, d in lines) for lines in shown) == 12
    assert sum(not any(d.startswith("REWRITTEN") for _, d in lines) for lines in shown) == 12

    # and the change is what the script makes it: with k of the n items on right_before's
    # tools, CSR goes from 100k/n to 100(n-k)/n, a change of (n-2k)/k x 100 percent
    samples = [sample for sample, _ in rows[before.pk]]
    golds = [
        s.reference["tool"]
        for s in sorted(benchmark.samples.filter(pk__in=samples), key=lambda s: s.pk)
    ]
    n, k = len(golds), sum(1 for g in golds if g in right_before)
    assert 0 < k < n, golds  # the seed picks items on both sides
    report = result["report"]
    assert report == rewrite_report(after)
    overall = report["overall"]
    assert overall["n_before"] == overall["n_after"] == n
    # (the runs' own CSR is the same, rounded to two places)
    assert overall["before"] == pytest.approx(100 * k / n)
    assert overall["after"] == pytest.approx(100 * (n - k) / n)
    assert before.metrics["CSR"] == pytest.approx(overall["before"], abs=0.005)
    assert after.metrics["CSR"] == pytest.approx(overall["after"], abs=0.005)
    assert overall["change_percent"] == pytest.approx((n - 2 * k) / k * 100)
    per_tool = {row["group"]: row for row in report["tools"]}
    assert set(per_tool) == set(golds)
    for tool, row in per_tool.items():
        assert row["n_before"] == row["n_after"] == golds.count(tool)
        if tool in right_before:
            assert (row["before"], row["after"], row["change_percent"]) == (100.0, 0.0, -100.0)
        else:
            assert (row["before"], row["after"], row["change_percent"]) == (0.0, 100.0, None)
            assert row["change_points"] == 100.0

    # and the rerun's analyses page shows the same per tool, beside the run it repeats
    rows = run_analyses_get(after, inline=True).data["analyses"]["rewriting_by_tool"]["rows"]
    assert {
        row["group"]: (row["n"], row["CSR_before"], row["CSR"], row["change_percent"])
        for row in rows
    } == {
        tool: (r["n_after"], r["before"], r["after"], r["change_percent"])
        for tool, r in per_tool.items()
    }
    # the run it repeats has no before
    rows = run_analyses_get(before, inline=True).data["analyses"]["rewriting_by_tool"]["rows"]
    assert {row["CSR_before"] for row in rows} == {None}


def test_a_second_rewriting_is_revision_two_and_a_cached_answer_costs_no_call(
    seeddata: Path,
) -> None:
    benchmark = import_metatool(seeddata)
    script = Scripted({}, set())
    with FakeOpenAI(responder=script) as server:
        endpoint = make_endpoint(server.base_url, name="rewriter")
        seen: list[tuple[int, int]] = []
        first = tool_descriptions_rewrite(
            benchmark=benchmark, endpoint=endpoint, progress=lambda d, t: seen.append((d, t))
        )
        assert server.count_for(REWRITE) == 199
        second = tool_descriptions_rewrite(benchmark=benchmark, endpoint=endpoint)
        assert server.count_for(REWRITE) == 199  # every answer came from the response cache
    assert (first.number, second.number) == (1, 2)
    assert seen[-1] == (199, 199) and len(seen) == 199
    assert RevisedTool.objects.filter(revision=second).count() == 199


def test_the_experiment_refuses_what_it_cannot_do_and_stores_nothing(
    tmp_path: Path, seeddata: Path
) -> None:
    counting = make_counting_benchmark(tmp_path, 3)
    benchmark = import_metatool(seeddata)
    with FakeOpenAI(responder=Scripted({}, set())) as server:
        endpoint = make_endpoint(server.base_url, name="rewriter")
        # a suite without the experiment
        with pytest.raises(RewritingError, match="declares no description-rewriting") as err:
            tool_descriptions_rewrite(benchmark=counting, endpoint=endpoint)
        assert err.value.field == "benchmark"
        # a budget of 100 tokens is spent long before 199 tools are rewritten
        with pytest.raises(RewritingError, match="budget 100 was reached after") as err:
            tool_descriptions_rewrite(benchmark=benchmark, endpoint=endpoint, budget=100)
        assert err.value.field == "budget"
    # an endpoint that refuses every request (a 400 is not retried)
    with FakeOpenAI(responder=Scripted({}, set()), faults={"400": 1.0}) as server:
        refusing = make_endpoint(server.base_url, name="refusing")
        with pytest.raises(RewritingError, match=r"the rewriting of tool .* failed") as err:
            tool_descriptions_rewrite(benchmark=benchmark, endpoint=refusing)
        assert err.value.field == "endpoint"
    assert not ToolRevision.objects.exists()
    # and the command says so without a traceback
    with pytest.raises(CommandError, match="no endpoint 'nowhere'"):
        call_command("rewrite_tool_descriptions", "MetaTool", "--endpoint", "nowhere")
    with pytest.raises(CommandError, match="declares no description-rewriting"):
        call_command("rewrite_tool_descriptions", counting.name, "--endpoint", "rewriter")
    # a task whose prompts show no description is refused before anything is launched
    with pytest.raises(CommandError, match="task 'awareness' shows no tool descriptions"):
        call_command(
            "rewrite_tool_descriptions", "MetaTool", "--endpoint", "rewriter", "--task", "awareness"
        )
    assert not Run.objects.exists()


def test_only_a_launched_run_is_repeated_and_only_on_its_own_benchmarks_tools(
    tmp_path: Path, seeddata: Path
) -> None:
    benchmark = import_metatool(seeddata)
    counting = make_counting_benchmark(tmp_path, 3)
    other = ToolRevision.objects.create(benchmark=counting, number=1)
    imported = Run.objects.create(benchmark=benchmark, task="similar", source=Run.Source.IMPORTED)
    with pytest.raises(RunError, match="imported") as err:
        run_rerun(run=imported, tool_revision=None)
    assert err.value.field == "run"
    with FakeOpenAI(responder=Scripted({}, set())) as server:
        endpoint = make_endpoint(server.base_url)
        launched = Run.objects.create(benchmark=benchmark, task="similar", endpoint=endpoint)
        with pytest.raises(RunError, match="not of") as err:
            run_rerun(run=launched, tool_revision=other)
        assert err.value.field == "tool_revision"


# --- the local model --------------------------------------------------------------------------

# Four of the published tools and their published queries, written in the published formats
# (the files are read from the seed data at test time, not kept in the repository).
LOCAL_TOOLS = ("FinanceTool", "JobTool", "TripTool", "WeatherTool")


def write_small_metatool(seeddata: Path, folder: Path) -> list[Path]:
    tools = json.loads((seeddata / "metatool" / "plugin_des.json").read_text(encoding="utf-8"))
    folder.mkdir()
    (folder / "plugin_des.json").write_text(
        json.dumps({name: tools[name] for name in LOCAL_TOOLS}), encoding="utf-8"
    )
    source = seeddata / "metatool" / "all_clean_data_sample200.csv"
    with (
        source.open(encoding="utf-8") as f,
        (folder / "all_clean_data.csv").open("w", encoding="utf-8", newline="") as out,
    ):
        reader = csv.DictReader(f)
        writer = csv.DictWriter(out, fieldnames=reader.fieldnames or [])
        writer.writeheader()
        writer.writerows(row for row in reader if row["Tool"] in LOCAL_TOOLS)
    return [folder / "plugin_des.json", folder / "all_clean_data.csv"]


@pytest.mark.slow
@pytest.mark.timeout(1500)  # 17 minutes once for eight tools on a machine shared by seven
def test_the_local_model_rewrites_the_descriptions_and_the_run_is_repeated_on_them(
    tmp_path: Path,
    llama_server: str,  # noqa: F811 (the fixture imported above)
    seeddata: Path,
) -> None:
    from config import localmodel
    from evaluation.models import Endpoint

    # given four published tools and their queries, and the real base model
    benchmark_import(suite="metatool", paths=write_small_metatool(seeddata, tmp_path / "mt"))
    Endpoint.objects.create(
        name="local-test",
        base_url=llama_server,
        model=localmodel.MODEL_ALIAS,
        style=Endpoint.Style.COMPLETION,
        default_params={"temperature": 0, "max_tokens": 32},
        max_concurrency=1,
        timeout_seconds=120,
    )
    with celery_worker(tmp_path, concurrency=1):
        # when the model rewrites, and a similar-choices run of three items is repeated
        out = StringIO()
        call_command(
            "rewrite_tool_descriptions",
            "MetaTool",
            "--endpoint",
            "local-test",
            "--task",
            "similar",
            "--option",
            "n=3",
            "--limit",
            "3",
            "--seed",
            "1",
            "--wait",
            "--json",
            stdout=out,
        )
    result = json.loads(out.getvalue())
    # then the revision holds the model's own texts (poor or not), the runs finished, and the
    # report compares them on the same three items
    revision = ToolRevision.objects.get(number=result["tool_revision"])
    revised = dict(revision.tools.values_list("tool__name", "description"))
    assert revised, revision.note
    assert set(revised) <= set(LOCAL_TOOLS)
    assert all(text.strip() and len(text) <= 2000 for text in revised.values())
    before = Run.objects.get(pk=result["before_run"])
    after = Run.objects.get(pk=result["run"])
    assert before.status == after.status == Run.Status.DONE, (before.error, after.error)
    assert after.tool_revision == revision and after.rerun_of == before
    report = result["report"]
    # (an unread answer counts as wrong: unparsed="wrong" by default)
    assert report["overall"]["n_before"] == report["overall"]["n_after"] == 3
    assert sum(row["n_after"] for row in report["tools"]) == 3
    print("\nrewritten:", json.dumps(revised, indent=1), "\nreport:", json.dumps(report))
    for row in (report["overall"], *report["tools"]):
        for side in ("before", "after"):
            assert row[side] is None or 0 <= row[side] <= 100


def test_the_command_prints_the_report_as_a_table() -> None:
    from evaluation.management.commands.rewrite_tool_descriptions import Command

    report = {
        "run": 2,
        "before_run": 1,
        "tool_revision": 1,
        "metric": "CSR",
        "overall": {"group": "overall", "n_before": 4, "n_after": 4, "before": 50.0,
                    "after": 75.0, "change_points": 25.0, "change_percent": 50.0},
        "tools": [{"group": "Weather", "n_before": 1, "n_after": 1, "before": 0.0,
                   "after": 100.0, "change_points": 100.0, "change_percent": None}],
    }  # fmt: skip
    out = StringIO()
    command = Command(stdout=out)
    command.write_report(report)
    lines = out.getvalue().splitlines()
    assert lines[0] == ("CSR on tool revision 1 (run 2) against the imported descriptions (run 1):")
    assert lines[2].split() == ["overall", "4", "50.00", "75.00", "+50.00%"]
    assert lines[3].split() == ["Weather", "1", "0.00", "100.00", "n/a"]
