"""StableToolBench's judging through the platform, on its published example outputs: pass jobs
with the follow-up question after an Unsure, then a preference job whose SoWR lets the pass
labels decide first; and its published pass-rate labels imported as judged runs
(import_judgments stabletoolbench-pass), whose SoPR and SoWR are checked by hand."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from benchmarks.models import Benchmark
from benchmarks.services import benchmark_import
from benchmarks.suites.stabletoolbench import judges
from evaluation import judging
from evaluation.models import JudgeJob, Judgment, Run
from evaluation.services import predictions_import
from tests.evaluation.conftest import execute_job, make_endpoint
from tests.fake_openai import FakeCall, FakeOpenAI

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("broker")]


@pytest.fixture
def runs(seeddata: Path) -> tuple[Run, Run]:
    stb = seeddata / "stabletoolbench"
    benchmark_import(
        suite="stabletoolbench",
        paths=[
            stb / "solvable_queries/test_instruction/G1_instruction.first50.json",
            stb / "solvable_queries/test_query_ids/G1_instruction.json",
        ],
    )
    benchmark = Benchmark.objects.get(name="StableToolBench")
    converted = stb / "data_example/model_predictions_converted"
    cot, dfs = (
        predictions_import(
            benchmark=benchmark,
            task="pass_rate",
            path=converted / method / "G1_instruction.json",
            name=method,
        )
        for method in ("virtual_chatgpt_cot", "virtual_chatgpt_dfs")
    )
    return cot, dfs


def text_of(request: dict[str, Any]) -> str:
    return json.dumps(request.get("messages") or request.get("prompt"))


def judge(server: FakeOpenAI, template: str, name: str) -> Any:
    endpoint = make_endpoint(server.base_url, name=f"e-{name}", model=f"m-{name}")
    # Text: these judges answer as the responders below write (test_judge_versions asks
    # through forced calls).
    return judging.judge_create(name=name, template=template, endpoint=endpoint, answer_mode="text")


def test_pass_then_preference_on_the_published_examples(runs: tuple[Run, Run]) -> None:
    cot, dfs = runs
    assert (cot.metrics["answered"], dfs.metrics["answered"]) == (66.67, 100.0)

    def pass_judge(request: dict[str, Any]) -> str:
        text = text_of(request)
        if "parse_answer_status" in text:  # the follow-up: the details decide
            return '{"reason": "the tools failed", "answer_status": "Unsolved"}'
        if "gmhikaru" in text:
            return '{"reason": "cannot tell", "answer_status": "Unsure"}'
        return '{"reason": "answers it", "answer_status": "Solved"}'

    with FakeOpenAI(responder=pass_judge) as server:
        passer = judge(server, "stabletoolbench.pass", "pass")
        jobs = [judging.judge_launch(judge=passer, run=run, repeats=3) for run in runs]
        for job in jobs:
            execute_job(job)
    cot_job, dfs_job = jobs
    # CoT: 588 has no final answer (Unsolved without asking), 608 Unsure -> details Unsolved,
    # 1073 Solved: SoPR 1/3; DFS: 608 Unsolved by the follow-up, the rest Solved: 2/3.
    assert cot_job.metrics["SoPR"] == pytest.approx(33.33)
    assert dfs_job.metrics["SoPR"] == pytest.approx(66.67)
    assert cot_job.metrics["SoPR_std"] == 0.0
    followed = Judgment.objects.filter(job=cot_job, values__first_label="Unsure")
    assert followed.count() == 3  # query 608 in each of the three repeats
    assert all(j.label == "Unsolved" and "Unsure" in j.raw_first for j in followed)
    unasked = Judgment.objects.filter(job=cot_job, sample__external_id="588")
    assert {(j.label, j.raw) for j in unasked} == {("Unsolved", "")}

    def prefer_second_shown(request: dict[str, Any]) -> str:
        return '{"reason": "more complete", "index": 1}'

    with FakeOpenAI(responder=prefer_second_shown) as server:
        chooser = judge(server, "stabletoolbench.preference", "pref")
        job = judging.judge_launch(judge=chooser, run=dfs, against=cot, repeats=1)
        execute_job(job)
    assert job.status == JudgeJob.Status.DONE
    # the judge only follows position: every judged item is a tie ...
    assert job.metrics["tie"] == 100.0 and job.metrics["position_bias"] == 0.0
    assert job.metrics["second_position_bias"] == 100.0
    # ... but SoWR lets the pass labels decide first: DFS Solved / CoT Unsolved on 588 (the
    # labels over three repeats, by majority), 1073 both Solved (the judge: a tie), 608 both
    # Unsolved (a tie): one win of three.
    assert job.metrics["SoWR"] == pytest.approx(33.33)
    assert job.metrics["SoWR_tie"] == pytest.approx(66.67)
    assert job.metrics["SoWR_by_labels"] == 1


def test_the_pass_judge_through_forced_calls_gives_the_text_judges_verdicts(
    runs: tuple[Run, Run],
) -> None:
    """check_answer_status asked as StableToolBench asks it, a forced function call, and as
    text: the same decisions give the same verdicts, the follow-up after an Unsure included."""

    def decide(request: dict[str, Any]) -> dict[str, str]:
        text = text_of(request)
        if "parse_answer_status" in text:
            return {"reason": "the tools failed", "answer_status": "Unsolved"}
        if "gmhikaru" in text:
            return {"reason": "cannot tell", "answer_status": "Unsure"}
        return {"reason": "answers it", "answer_status": "Solved"}

    def verdicts(job: JudgeJob) -> dict[tuple[int, int], tuple[str, str, Any]]:
        return {
            (j.prediction_id, j.repeat): (j.status, j.label, j.values.get("first_label"))
            for j in job.judgments.all()
        }

    jobs = {}
    with FakeOpenAI(responder=lambda r: json.dumps(decide(r))) as server:
        texter = judge(server, "stabletoolbench.pass", "pass-text")
        jobs["text"] = [judging.judge_launch(judge=texter, run=run, repeats=2) for run in runs]
        for job in jobs["text"]:
            execute_job(job)
    with FakeOpenAI(responder=lambda r: FakeCall("verdict", decide(r)), keep_bodies=True) as s:
        endpoint = make_endpoint(s.base_url, name="e-pass-call", model="m-pass-call")
        caller = judging.judge_create(
            name="pass-call", template="stabletoolbench.pass", endpoint=endpoint
        )
        jobs["call"] = [judging.judge_launch(judge=caller, run=run, repeats=2) for run in runs]
        for job in jobs["call"]:
            execute_job(job)
        records = s.records()
    assert [job.version.mode for job in jobs["call"]] == ["call", "call"]
    assert [job.version.mode for job in jobs["text"]] == ["text", "text"]
    for text_job, call_job in zip(jobs["text"], jobs["call"], strict=True):
        assert verdicts(call_job) == verdicts(text_job)
        assert call_job.metrics == text_job.metrics
    assert jobs["call"][0].metrics["SoPR"] == pytest.approx(33.33)
    # every request declared the verdict function, with the published parameters and reason
    assert records and all(r.tools == ("verdict",) for r in records)
    assert all(
        r.tool_choice == {"type": "function", "function": {"name": "verdict"}} for r in records
    )
    first = records[0].body
    assert first is not None and "stop" not in first
    parameters = first["tools"][0]["function"]["parameters"]
    assert parameters["properties"]["answer_status"]["enum"] == ["Unsure", "Unsolved", "Solved"]
    assert parameters["required"] == ["answer_status", "reason"]
    # the raw answer keeps the call as sent
    asked = call_job.judgments.exclude(raw="").first()
    assert asked is not None and asked.raw.startswith('verdict({"reason": ')


# --- published pass-rate results through import_judgments --------------------------------------


def import_judgments(*args: str) -> dict[str, Any]:
    out = io.StringIO()
    call_command("import_judgments", "stabletoolbench-pass", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def prefer_second_shown(request: dict[str, Any]) -> str:
    return '{"reason": "more complete", "index": 1}'


def test_published_labels_give_the_published_sopr_and_decide_sowr(seeddata: Path) -> None:
    # given the G1_instruction queries and the published example's pass-rate results
    stb = seeddata / "stabletoolbench"
    benchmark_import(
        suite="stabletoolbench",
        paths=[
            stb / "solvable_queries/test_instruction/G1_instruction.first50.json",
            stb / "solvable_queries/test_query_ids/G1_instruction.json",
        ],
    )
    example = stb / "data_example"
    results = example / "pass_rate_results"

    # when both methods' labels are imported (DFS with its converted answers)
    cot = import_judgments(
        str(results / "virtual_chatgpt_cot/G1_instruction_virtual_chatgpt_cot.json"),
        "--name",
        "virtual_chatgpt_cot",
    )
    dfs = import_judgments(
        str(results / "virtual_chatgpt_dfs/G1_instruction_virtual_chatgpt_dfs.json"),
        "--name",
        "virtual_chatgpt_dfs",
        "--answers",
        str(example / "model_predictions_converted/virtual_chatgpt_dfs/G1_instruction.json"),
    )

    # then each job's SoPR is what eval_pass_rate.py prints for these labels: CoT 588 Unsolved
    # and 1073, 608 Solved in each of three rounds, 2/3 every round; DFS all Solved
    assert cot["judge"] == "published stabletoolbench-pass judge" and cot["items"] == 3
    assert {k: cot["metrics"][k] for k in ("SoPR", "SoPR_std", "Solved", "Unsolved")} == {
        "SoPR": 66.67,
        "SoPR_std": 0.0,
        "Solved": 66.67,
        "Unsolved": 33.33,
    }
    assert (cot["metrics"]["repeats"], cot["metrics"]["judgments"]) == (3, 9)
    assert (dfs["metrics"]["SoPR"], dfs["metrics"]["SoPR_std"]) == (100.0, 0.0)
    cot_run, dfs_run = Run.objects.get(pk=cot["run"]), Run.objects.get(pk=dfs["run"])
    assert cot_run.source == Run.Source.IMPORTED and cot_run.task == "pass_rate"
    assert cot_run.metrics["answered"] == 66.67  # 588's answer ends without Finish
    job = JudgeJob.objects.get(run=cot_run)
    assert job.source == JudgeJob.Source.IMPORTED and job.judge.endpoint is None
    first = Judgment.objects.get(job=job, sample__external_id="588", repeat=0)
    assert (first.label, first.value, first.raw) == ("Unsolved", 0.0, "AnswerStatus.Unsolved")
    # the DFS run holds the converted answers, the CoT run the answers rebuilt from the steps
    messi = dfs_run.predictions.get(sample__external_id="588")
    assert json.loads(messi.output)["method"] == "DFS_woFilter_w2"
    assert json.loads(cot_run.predictions.get(sample__external_id="588").output)["method"] == (
        "virtual_chatgpt_cot"
    )

    # and a preference job lets the published labels decide first: 588 is DFS Solved against
    # CoT Unsolved, a win; 1073 and 608 are Solved on both sides, and this judge only ever
    # picks the answer shown second, a tie once both orders are asked: SoWR 1/3
    with FakeOpenAI(responder=prefer_second_shown) as server:
        chooser = judge(server, "stabletoolbench.preference", "pref")
        preference = judging.judge_launch(judge=chooser, run=dfs_run, against=cot_run, repeats=1)
        execute_job(preference)
    assert preference.metrics["SoWR"] == 33.33 and preference.metrics["SoWR_tie"] == 66.67
    assert preference.metrics["SoWR_by_labels"] == 1


# Our own queries and results in the published formats, labelled so that the figures need the
# rounds (an Unsure, labels that change between rounds) and the SoWR rule (an Unsure that wins).
QUERIES = {
    "31": "[q1] How many kettles are in Leeds?",
    "32": "[q2] How many kettles are in York?",
    "33": "[q3] How many kettles are in Hull?",
    "34": "[q4] How many kettles are in Ripon?",
}
ALPHA = {  # per query, the label of rounds 0, 1, 2
    "31": ("Solved", "Solved", "Solved"),
    "32": ("Unsure", "Solved", "Unsolved"),
    "33": ("Unsolved", "Unsolved", "Unsure"),
    "34": ("Solved", "Unsure", "Unsolved"),
}
BETA = {
    "31": ("Solved", "Solved", "Solved"),
    "32": ("Solved", "Solved", "Solved"),
    "33": ("Unsolved", "Unsolved", "Unsolved"),
    "34": ("Unsolved", "Unsolved", "Solved"),
}


def write_queries(folder: Path) -> list[Path]:
    api = {
        "category_name": "Devices",
        "tool_name": "Kettle Census",
        "api_name": "Count",
        "api_description": "Counts kettles in a town.",
        "required_parameters": [
            {"name": "town", "type": "STRING", "description": "", "default": ""}
        ],
        "optional_parameters": [],
        "method": "GET",
    }
    queries = [
        {"api_list": [api], "query": text, "relevant APIs": [["Kettle Census", "Count"]],
         "query_id": int(query_id)}
        for query_id, text in QUERIES.items()
    ]  # fmt: skip
    files = [
        folder / "test_instruction" / "G2_instruction.json",
        folder / "test_query_ids" / "G2_instruction.json",
    ]
    for path, content in zip(files, (queries, dict.fromkeys(QUERIES, 0)), strict=True):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(content, indent=1), encoding="utf-8")
    return files


def write_results(folder: Path, method: str, labels: dict[str, tuple[str, ...]]) -> Path:
    """A pass_rate_results file as eval_pass_rate.py writes it; each answer counts with the tool
    and gives a final answer naming the method."""
    records = {}
    for query_id, text in QUERIES.items():
        town = text.split(" in ", 1)[1].rstrip("?")
        call = {
            "name": "count_for_kettle_census",
            "arguments": json.dumps({"town": town}, indent=2),
            "response": json.dumps({"error": "", "response": {"kettles": 12}}),
        }
        finish = {
            "name": "Finish",
            "arguments": json.dumps(
                {"return_type": "give_answer", "final_answer": f"{method}: 12 kettles in {town}."},
                indent=2,
            ),
            "response": "",
        }
        records[query_id] = {
            "query": text,
            "tool_names": ["count_for_kettle_census", "Finish"],
            "answer_steps": f"Step 1: {call!r}\nStep 2: {finish!r}",
            "final_step": f"Final step: {finish!r}",
            # written as the reference does: round numbers as keys, in no particular order
            "is_solved": {str(r): f"AnswerStatus.{labels[query_id][r]}" for r in (2, 0, 1)},
        }
    path = folder / "pass_rate_results" / method / f"G2_instruction_{method}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(records, indent=4), encoding="utf-8")
    return path


def alpha_first_on_leeds(request: dict[str, Any]) -> str:
    """A preference judge: on q1 it prefers alpha's answer wherever it is shown; on every other
    query it picks the first answer shown."""
    user = str(request["messages"][-1]["content"])
    if "[q1]" not in user:
        return '{"reason": "the first", "index": 0}'
    second = user.split("\n\nAnswer_1:\n", 1)[1]
    return json.dumps({"reason": "alpha", "index": 1 if "ALPHA:" in second else 0})


def test_sopr_and_sowr_from_published_format_labels_hand_checked(tmp_path: Path) -> None:
    benchmark_import(suite="stabletoolbench", paths=write_queries(tmp_path / "queries"))
    alpha = import_judgments(
        str(write_results(tmp_path, "ALPHA", ALPHA)), "--name", "alpha", "--task", "preference"
    )
    beta = import_judgments(
        str(write_results(tmp_path, "BETA", BETA)), "--name", "beta", "--task", "preference"
    )

    # SoPR per round (Solved 1, Unsure 0.5, Unsolved 0, over the 4 queries):
    #   alpha: (1 + .5 + 0 + 1)/4 = .625, (1 + 1 + 0 + .5)/4 = .625, (1 + 0 + .5 + 0)/4 = .375
    #          mean 54.17 %, population std sqrt(((1/12)^2 * 2 + (1/6)^2) / 3) = 11.79 %
    #   beta:  .5, .5, .75: mean 58.33 %, std 11.79 %
    assert alpha["metrics"]["SoPR"] == pytest.approx(54.17, abs=0.005)
    assert alpha["metrics"]["SoPR_std"] == pytest.approx(11.79, abs=0.005)
    assert beta["metrics"]["SoPR"] == pytest.approx(58.33, abs=0.005)
    assert beta["metrics"]["SoPR_std"] == pytest.approx(11.79, abs=0.005)
    # Shares per round, averaged: alpha Solved 2, 2, 1 of 4; Unsure 1 each round.
    assert alpha["metrics"]["Solved"] == pytest.approx(41.67, abs=0.005)
    assert alpha["metrics"]["Unsure"] == 25.0
    # The suite's pure function, written after eval_pass_rate.py, agrees.
    by_query = {q: list(labels) for q, labels in ALPHA.items()}
    assert round(100 * judges.sopr(by_query)["sopr"], 2) == 54.17
    runs = Run.objects.get(pk=alpha["run"]), Run.objects.get(pk=beta["run"])
    assert {run.task for run in runs} == {"preference"}

    # SoWR of alpha against beta. Each side's label is its most frequent over the rounds (a
    # three-way tie is Unsure): alpha Solved, Unsure, Unsolved, Unsure; beta Solved, Solved,
    # Unsolved, Unsolved. q2: beta's Solved beats alpha's Unsure (loss); q4: alpha's Unsure
    # beats beta's Unsolved (win, the code's rule); q1 both Solved and q3 both Unsolved go to
    # the judge: q1 alpha in both orders (win), q3 the first shown each time (tie).
    with FakeOpenAI(responder=alpha_first_on_leeds) as server:
        chooser = judge(server, "stabletoolbench.preference", "pref")
        job = judging.judge_launch(judge=chooser, run=runs[0], against=runs[1], repeats=1)
        execute_job(job)
    assert {k: job.metrics[k] for k in ("SoWR", "SoWR_tie", "SoWR_loss", "SoWR_by_labels")} == {
        "SoWR": 50.0,
        "SoWR_tie": 25.0,
        "SoWR_loss": 25.0,
        "SoWR_by_labels": 2,
    }


def test_a_bad_results_file_imports_nothing(tmp_path: Path) -> None:
    benchmark_import(suite="stabletoolbench", paths=write_queries(tmp_path / "queries"))
    path = write_results(tmp_path, "ALPHA", ALPHA)
    records = json.loads(path.read_text("utf-8"))

    records["33"]["query"] = "How many teapots are in Hull?"
    path.write_text(json.dumps(records), encoding="utf-8")
    with pytest.raises(CommandError, match=r"Nothing imported\..*record 33: field query is not"):
        import_judgments(str(path), "--name", "alpha")

    records["33"]["query"] = QUERIES["33"]
    records["35"] = {**records["33"], "query": "[q5] How many kettles are in Selby?"}
    path.write_text(json.dumps(records), encoding="utf-8")
    with pytest.raises(CommandError, match="no sample 35 in group G2_instruction"):
        import_judgments(str(path), "--name", "alpha")

    del records["35"]
    path.write_text(json.dumps(records), encoding="utf-8")
    answers = tmp_path / "converted" / "G2_instruction.json"
    answers.parent.mkdir()
    answer = {"method": "ReAct@1", "total_steps": 0, "final_answer": "", "answer_details": []}
    converted = {"31": {"query": QUERIES["31"], "available_tools": [], "answer": answer}}
    answers.write_text(json.dumps(converted), encoding="utf-8")
    with pytest.raises(CommandError, match="no answer to query 32"):
        import_judgments(str(path), "--name", "alpha", "--answers", str(answers))
    assert not Run.objects.exists() and not JudgeJob.objects.exists()
