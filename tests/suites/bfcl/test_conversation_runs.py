"""BFCL's multi-turn tasks run end to end through the platform, in both modes: real entries of
the pinned bfcl-eval wheel imported (benchmark_import), launched (run_launch), answered by a fake
OpenAI-compatible endpoint that replays the ground truth (each step: the turn's ground-truth
calls, then an answer without a call that ends the turn), their calls executed with BFCL's own
classes, scored. The replay scores 100; one wrong call fails its turn, and the prediction keeps
that turn's verdict and state diff. Skipped, saying why, when the wheel cannot be had. A launch
without the wheel is refused, naming `manage.py fetch_bfcl`."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from benchmarks.kit.protocol import tool_mode
from benchmarks.models import Benchmark
from benchmarks.services import benchmark_import
from benchmarks.suites.bfcl import conversation
from benchmarks.suites.bfcl.decode import Call
from evaluation import services
from evaluation.models import Prediction, Run
from evaluation.selectors import items_by_sample_id, run_context
from tests.evaluation.conftest import execute_run, make_endpoint
from tests.fake_openai import FakeCall, FakeOpenAI, ToolRequest, oracle, tool_reply
from tests.suites.bfcl.real_wheel import real_wheel  # noqa: F401 - a fixture

pytestmark = pytest.mark.django_db(transaction=True)

CATEGORIES = conversation.MULTI_TURN_CATEGORIES
PER_CATEGORY = 2
WRONG = Call("mkdir", {"dir_name": "zz_not_asked_for"})


def _first_user(messages: list[dict[str, Any]]) -> str:
    return next(str(m.get("content")) for m in messages if m.get("role") == "user")


class Replay:
    """Answers each request of an item with the next step of its ground truth: the item is
    found by the request's first user message, the step by how many answers the request
    already holds (its assistant messages). `wrong`: turn 0's first step also makes WRONG."""

    def __init__(self, wrong: bool = False) -> None:
        self.wrong = wrong
        self.native = False
        self.steps: dict[str, list[list[Call]]] = {}
        self.requests: list[ToolRequest] = []

    def learn(self, run: Run) -> None:
        _, ctx = run_context(run)
        self.native = tool_mode(ctx) == "native"
        rows = list(run.predictions.values_list("sample_id", flat=True))
        for item in items_by_sample_id(rows).values():
            script = conversation.gold_steps(item)
            if self.wrong:
                script[0][0] = [*script[0][0], WRONG]
            question = item.input["question"]
            self.steps[_first_user(question[0])] = [step for turn in script for step in turn]

    def __call__(self, request: ToolRequest) -> Any:
        self.requests.append(request)
        messages = request.body["messages"]
        steps = self.steps[_first_user(messages)]
        done = sum(1 for m in messages if m.get("role") == "assistant")
        calls = steps[done] if done < len(steps) else []
        if self.native:
            return tool_reply(*(FakeCall(c.name, c.arguments) for c in calls)) if calls else ""
        return conversation.gold_text_of(calls)


def run_category(
    benchmark: Benchmark, category: str, mode: str, wrong: bool = False
) -> tuple[Run, Replay]:
    replay = Replay(wrong)
    with FakeOpenAI(responder=oracle(replay)) as server:
        endpoint = make_endpoint(server.base_url, name=f"replay-{category}-{mode}-{wrong}")
        run = services.run_launch(
            benchmark=benchmark, task=category, endpoint=endpoint, options={"tool_mode": mode}
        )
        replay.learn(run)
        execute_run(run)
    assert replay.requests
    return run, replay


def real_entries(wheel: Path, folder: Path) -> list[Path]:
    """The first entries of each multi-turn category in the wheel, with their ground truth and
    the classes' docs, written as BFCL's files."""
    (folder / "possible_answer").mkdir(parents=True)
    (folder / "multi_turn_func_doc").mkdir()
    paths = []
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.namelist():
            if member.startswith("bfcl_eval/data/multi_turn_func_doc/"):
                name = member.rsplit("/", 1)[1]
                (folder / "multi_turn_func_doc" / name).write_bytes(archive.read(member))
        for category in CATEGORIES:
            name = f"BFCL_v4_{category}.json"
            for source, target in (
                (f"bfcl_eval/data/{name}", folder / name),
                (f"bfcl_eval/data/possible_answer/{name}", folder / "possible_answer" / name),
            ):
                lines = archive.read(source).decode("utf-8").splitlines()[:PER_CATEGORY]
                target.write_text("\n".join(lines) + "\n", encoding="utf-8")
            paths.append(folder / name)
    return paths


def test_the_ground_truth_replayed_scores_100_on_real_entries_in_both_modes(
    real_wheel: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    summary = benchmark_import(
        suite="bfcl", paths=real_entries(real_wheel, tmp_path), benchmark_name="BFCL MT real"
    )
    assert summary.samples == {category: PER_CATEGORY for category in CATEGORIES}
    benchmark = Benchmark.objects.get(name="BFCL MT real")
    for mode in ("text", "native"):
        for category in CATEGORIES:
            run, replay = run_category(benchmark, category, mode)
            assert run.status == Run.Status.DONE, run.error
            # every step of every entry asked once: the calls, then the answer that ends a turn
            assert len(replay.requests) == sum(len(steps) for steps in replay.steps.values())
            notes = list(run.predictions.values_list("note", "error"))
            assert run.metrics == {
                "accuracy": 100.0,
                "turn_accuracy": 100.0,
                "n": float(PER_CATEGORY),
            }, (category, mode, notes)
            assert not run.predictions.exclude(status=Prediction.Status.DONE).exists()


def test_one_wrong_call_fails_its_turn_and_the_prediction_keeps_the_state_diff(
    real_wheel: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    benchmark_import(
        suite="bfcl", paths=real_entries(real_wheel, tmp_path), benchmark_name="BFCL MT wrong"
    )
    benchmark = Benchmark.objects.get(name="BFCL MT wrong")
    for mode in ("text", "native"):
        run, _ = run_category(benchmark, "multi_turn_base", mode, wrong=True)
        assert run.status == Run.Status.DONE, run.error
        assert run.metrics["accuracy"] == 0.0
        for prediction in run.predictions.all():
            answer = prediction.answer
            first = answer["verdicts"][0]
            assert not first["passed"] and first["kind"] == "state", first
            created = [
                d
                for d in first["state_diff"]
                if "zz_not_asked_for" in json.dumps(d["model"])
                and "zz_not_asked_for" not in json.dumps(d["gold"])
            ]
            assert created, first["state_diff"]
            assert prediction.note.startswith("turn 0:")
            said = [row["error"] for row in prediction.trace if "error" in row]
            assert said[0].startswith("turn 0 failed: the state after turn 0 differs")
            assert prediction.scores["turn_accuracy"] < 100.0


def test_a_launch_without_the_wheel_is_refused_naming_fetch_bfcl(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    demo = Path(__file__).resolve().parents[3] / "benchmarks" / "demo" / "bfcl"
    benchmark_import(
        suite="bfcl", paths=[demo / "BFCL_v4_multi_turn_base.json"], benchmark_name="BFCL MT"
    )
    benchmark = Benchmark.objects.get(name="BFCL MT")
    monkeypatch.setattr(conversation, "ROOT", tmp_path)  # a checkout without .data/bfcl/
    with FakeOpenAI(responder=oracle(lambda request: "")) as server:
        endpoint = make_endpoint(server.base_url, name="no-wheel")
        with pytest.raises(services.RunError, match=r"manage\.py fetch_bfcl"):
            services.run_launch(benchmark=benchmark, task="multi_turn_base", endpoint=endpoint)
    assert not Run.objects.filter(benchmark=benchmark).exists()
