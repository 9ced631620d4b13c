"""BFCL's AST categories run end to end through the platform, in both modes: imported
(benchmark_import), launched (run_launch), answered by a fake OpenAI-compatible endpoint, scored.

A gold oracle answers each item with its first acceptable values (evaluate.gold_text in text
mode, evaluate.gold_tool_calls in native mode; a declining sentence where no call is due): it
scores 100 on every AST category of the demo data (ours, benchmarks/demo/bfcl/) in native mode,
and in text mode on every category but Java and JavaScript, whose text answers count as decoding
failures (evaluate.py). A model that answers every item with a wrong call scores 0 where a call
is due. Then one real entry per AST category from the pinned bfcl-eval wheel, imported and
scored the same way (skipped, saying why, when the wheel cannot be had)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from benchmarks.kit.protocol import tool_mode
from benchmarks.models import Benchmark
from benchmarks.services import benchmark_import
from benchmarks.suites import bfcl
from evaluation import services
from evaluation.models import Prediction, Run
from evaluation.selectors import items_by_sample_id, run_context
from tests.evaluation.conftest import execute_run, make_endpoint
from tests.fake_openai import FakeCall, FakeOpenAI, ToolRequest, oracle, tool_reply
from tests.suites.bfcl.real_wheel import real_wheel  # noqa: F401 - a fixture

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "benchmarks" / "demo" / "bfcl"
AST = bfcl.AST_CATEGORIES
PYTHON = tuple(c for c in AST if c not in ("simple_java", "simple_javascript"))
NO_CALL = "None of the functions can be used here."


def _key(messages: Any) -> str:
    return json.dumps(messages, sort_keys=True, ensure_ascii=False)


class Oracle:
    """Answers each request with its item's gold (found by the request's messages), or with a
    wrong call when `wrong`."""

    def __init__(self, wrong: bool = False) -> None:
        self.wrong = wrong
        self.answers: dict[str, Any] = {}
        self.requests: list[ToolRequest] = []

    def learn(self, run: Run) -> None:
        evaluator, ctx = run_context(run)
        rows = list(run.predictions.values_list("sample_id", "context"))
        items = items_by_sample_id(sample_id for sample_id, _ in rows)
        native = tool_mode(ctx) == "native"
        for sample_id, context in rows:
            item = items[sample_id]
            if native:
                messages = evaluator.native_prompt(item, ctx, context).prompt.messages
                calls = [
                    FakeCall(c["function"]["name"], json.loads(c["function"]["arguments"]))
                    for c in bfcl.gold_tool_calls(item)
                ]
                answer: Any = tool_reply(*calls) if calls else NO_CALL
                if self.wrong:
                    answer = tool_reply(FakeCall("no_such_function", {"x": 1}))
            else:
                messages = evaluator.build_prompt(item, ctx, context).messages
                answer = "[no_such_function(x=1)]" if self.wrong else bfcl.gold_text(item)
            self.answers[_key(messages)] = answer

    def __call__(self, request: ToolRequest) -> Any:
        self.requests.append(request)
        return self.answers.get(_key(request.body["messages"]), "I do not know this request.")


def run_category(
    benchmark: Benchmark, category: str, mode: str, wrong: bool = False
) -> tuple[Run, Oracle]:
    gold = Oracle(wrong)
    with FakeOpenAI(responder=oracle(gold)) as server:
        endpoint = make_endpoint(server.base_url, name=f"fake-{category}-{mode}-{wrong}")
        run = services.run_launch(
            benchmark=benchmark, task=category, endpoint=endpoint, options={"tool_mode": mode}
        )
        gold.learn(run)
        execute_run(run)
    return run, gold


def demo_benchmark() -> Benchmark:
    manifest = json.loads((DEMO / "manifest.json").read_text("utf-8"))
    benchmark_import(
        suite="bfcl", paths=[DEMO / f for f in manifest["files"]], benchmark_name="BFCL demo"
    )
    return Benchmark.objects.get(name="BFCL demo")


def test_the_gold_oracle_scores_100_in_both_modes_on_every_demo_category() -> None:
    benchmark = demo_benchmark()
    for mode in ("text", "native"):
        for category in PYTHON if mode == "text" else AST:
            run, gold = run_category(benchmark, category, mode)
            assert run.status == Run.Status.DONE, run.error
            count = benchmark.samples.filter(split=category).count()
            assert run.metrics["accuracy"] == 100.0, (
                category,
                mode,
                run.metrics,
                list(run.predictions.values_list("note", "answer", "output", "tool_calls")),
            )
            assert run.metrics["n"] == count and run.metrics["unparsed"] == 0
            assert len(gold.requests) == count
            assert not run.predictions.exclude(status=Prediction.Status.DONE).exists()
            for request in gold.requests:
                if mode == "native":
                    # BFCL's FC names: no dot; and no system prompt of ours added
                    assert request.tools and all("." not in name for name in request.tools)
                    assert "You are an expert in composing functions" not in request.text
                else:
                    assert not request.tools
                    assert request.body["messages"][0]["content"].startswith(
                        "You are an expert in composing functions.You are given a question"
                    )


def test_text_mode_java_and_javascript_answers_count_as_decoding_failures() -> None:
    benchmark = demo_benchmark()
    for category in ("simple_java", "simple_javascript"):
        run, _ = run_category(benchmark, category, "text")
        count = benchmark.samples.filter(split=category).count()
        assert run.metrics == {"accuracy": 0.0, "n": count, "unparsed": count}
        prediction = run.predictions.first()
        assert prediction is not None and not prediction.parsed
        assert "tree-sitter" in prediction.note


def test_a_wrong_call_scores_0_where_a_call_is_due() -> None:
    benchmark = demo_benchmark()
    for mode in ("text", "native"):
        for category in ("simple_python", "parallel", "live_multiple", "irrelevance"):
            run, _ = run_category(benchmark, category, mode, wrong=True)
            assert run.metrics["accuracy"] == 0.0, (category, mode, run.metrics)
            assert run.metrics["unparsed"] == 0


def real_entries(wheel: Path, folder: Path) -> list[Path]:
    """The first entry of each AST category in the wheel, with its possible answer, written as
    BFCL's category files."""
    (folder / "possible_answer").mkdir(parents=True)
    paths = []
    with zipfile.ZipFile(wheel) as archive:
        for category in AST:
            name = f"BFCL_v4_{category}.json"
            first = archive.read(f"bfcl_eval/data/{name}").decode("utf-8").splitlines()[0]
            (folder / name).write_text(first + "\n", encoding="utf-8")
            answers = f"bfcl_eval/data/possible_answer/{name}"
            if answers in archive.namelist():
                line = archive.read(answers).decode("utf-8").splitlines()[0]
                (folder / "possible_answer" / name).write_text(line + "\n", encoding="utf-8")
            paths.append(folder / name)
    return paths


def test_one_real_entry_per_ast_category_from_the_wheel_is_imported_and_scored(
    real_wheel: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    summary = benchmark_import(
        suite="bfcl", paths=real_entries(real_wheel, tmp_path), benchmark_name="BFCL real"
    )
    assert summary.samples == {category: 1 for category in AST}
    benchmark = Benchmark.objects.get(name="BFCL real")
    sample = benchmark.samples.get(split="simple_python")
    assert sample.external_id == "simple_python_0"
    assert sample.metadata["provenance"]["files"]
    for mode in ("text", "native"):
        for category in PYTHON if mode == "text" else AST:
            run, gold = run_category(benchmark, category, mode)
            assert run.status == Run.Status.DONE, run.error
            assert run.metrics == {"accuracy": 100.0, "n": 1.0, "unparsed": 0.0}, (
                category,
                mode,
                run.predictions.values_list("note", "answer", "output"),
            )
            assert len(gold.requests) == 1
    for category in ("simple_java", "simple_javascript"):
        run, _ = run_category(benchmark, category, "text")
        assert run.metrics == {"accuracy": 0.0, "n": 1.0, "unparsed": 1.0}
