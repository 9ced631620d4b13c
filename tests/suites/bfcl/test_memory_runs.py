"""BFCL's memory tasks run end to end through the platform, in both modes, with BFCL's own
memory backends (from the pinned wheel): the demo scenario (benchmarks/demo/bfcl/, ours)
answered by a fake OpenAI-compatible model that keeps notes, and real entries of the wheel
answered by one that knows the accepted answers. Skipped, saying why, when the wheel cannot be
had.

The note-taking model, by hand: in each prerequisite entry it stores the first turn's user text
(kv: core_memory_add under a key made of the text's hash; rec_sum: memory_append) and answers
"Noted." to every turn; asked a question, it first looks at its memory (kv:
core_memory_list_keys; rec_sum: memory_retrieve), then answers with the memory it was shown in
the system prompt. The demo's first entry tells the dentist appointment (turn 0) and the
sister's name (turn 1, never stored); the second the gym (turn 0). So the dentist and gym
questions pass, the sister's fails: accuracy 66.67 over 3."""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from benchmarks.models import Benchmark
from benchmarks.services import benchmark_import
from evaluation import services
from evaluation.models import Prediction, Run
from tests.evaluation.conftest import execute_run, make_endpoint
from tests.fake_openai import FakeCall, FakeOpenAI, ToolRequest, oracle, tool_reply
from tests.suites.bfcl.real_wheel import real_wheel  # noqa: F401 - a fixture

pytestmark = pytest.mark.django_db(transaction=True)

DEMO = Path(__file__).resolve().parents[3] / "benchmarks" / "demo" / "bfcl"
SHOWN = "from previous interactions:\n"
FORMAT = "For your final answer to the user, you must respond in this format"
RESULTS = "[{'role': 'tool'"  # how text mode sends a step's results back, as a user message


def _said_by_user(message: dict[str, Any]) -> bool:
    content = str(message.get("content") or "")
    return message.get("role") == "user" and not content.startswith(RESULTS)


def _last_said(request: ToolRequest) -> str:
    return str([m for m in request.body["messages"] if _said_by_user(m)][-1]["content"])


def _shown_memory(system: str) -> str:
    return system.split(SHOWN, 1)[1].split("\n\n\n" + FORMAT, 1)[0].strip()


class NoteTaker:
    """The note-taking model of the module docstring."""

    def __init__(self, backend: str) -> None:
        self.backend = backend
        self.requests: list[ToolRequest] = []

    def _call(self, native: bool, name: str, arguments: dict[str, str]) -> Any:
        if native:
            return tool_reply(FakeCall(name, arguments))
        written = ", ".join(f"{key}={value!r}" for key, value in arguments.items())
        return f"[{name}({written})]"

    def __call__(self, request: ToolRequest) -> Any:
        self.requests.append(request)
        messages = request.body["messages"]
        native = bool(request.body.get("tools"))
        system = str(messages[0]["content"])
        fresh = _said_by_user(messages[-1])  # the first step of a turn
        if FORMAT in system:  # a question
            if fresh:
                look = "core_memory_list_keys" if self.backend == "kv" else "memory_retrieve"
                return self._call(native, look, {})
            return repr({"answer": _shown_memory(system), "context": "from my memory"})
        users = [m for m in messages if _said_by_user(m)]
        if fresh and len(users) == 1:
            text = str(users[0]["content"])
            if self.backend == "kv":
                key = "note_" + hashlib.sha256(text.encode()).hexdigest()[:8]
                return self._call(native, "core_memory_add", {"key": key, "value": text})
            return self._call(native, "memory_append", {"text": text + " "})
        return "Noted."


def _run(benchmark: Benchmark, task: str, mode: str, model: Any, name: str) -> Run:
    with FakeOpenAI(responder=oracle(model)) as server:
        endpoint = make_endpoint(server.base_url, name=name)
        run = services.run_launch(
            benchmark=benchmark, task=task, endpoint=endpoint, options={"tool_mode": mode}
        )
        execute_run(run)
    return run


@pytest.mark.parametrize("task", ["memory_kv", "memory_rec_sum"])
def test_the_demo_scenario_remembered_by_a_note_taker(
    task: str,
    real_wheel: Path,  # noqa: F811 - the backends come from it
) -> None:
    backend = task.removeprefix("memory_")
    benchmark_import(suite="bfcl", paths=[DEMO / "BFCL_v4_memory.json"], benchmark_name="Mem")
    benchmark = Benchmark.objects.get(name="Mem")
    for mode in ("text", "native"):
        model = NoteTaker(backend)
        run = _run(benchmark, task, mode, model, f"notes-{task}-{mode}")
        assert run.status == Run.Status.DONE, run.error
        assert run.metrics == {"accuracy": 66.67, "n": 3.0}, (mode, run.metrics)
        predictions = {p.sample.external_id: p for p in run.predictions.select_related("sample")}
        assert {k: p.scores["accuracy"] for k, p in predictions.items()} == {
            "memory_demo_0-notetaker-0": 100.0,
            "memory_demo_1-notetaker-1": 0.0,
            "memory_demo_2-notetaker-2": 100.0,
        }
        assert not run.predictions.exclude(status=Prediction.Status.DONE).exists()
        # One prerequisite run served every question: the replays of the prerequisite phase
        # were answered from the response cache. 5 prerequisite requests (entry 0: store and
        # "Noted.", then "Noted."; entry 1: store and "Noted."), then 2 per question.
        assert len(model.requests) == 5 + 3 * 2, mode
        # each question was asked, after the memory prompt and the answer format
        questions = [r for r in model.requests if FORMAT in str(r.body["messages"][0]["content"])]
        assert {_last_said(r) for r in questions} == {
            "When is my dentist appointment?",
            "What is my sister's name?",
            "Which gym do I train at now?",
        }
        digests = {p.answer["memory_digest"] for p in predictions.values()}
        assert len(digests) == 1
        sister = predictions["memory_demo_1-notetaker-1"]
        answer = sister.answer
        assert answer["passed"] is False and answer["answers"] == ["Priya"]
        assert sister.note == "none of the accepted answers is in the final answer"
        remembered = json.dumps(answer["memory"])
        assert "March 3" in remembered and "Iron Temple" in remembered
        assert "Priya" not in remembered
        assert [entry["id"] for entry in answer["prereq"]] == [
            f"memory_{backend}_prereq_demo_0-notetaker-0",
            f"memory_{backend}_prereq_demo_1-notetaker-1",
        ]
        first_call = answer["prereq"][0]["turns"][0][0][0]
        assert first_call.startswith("core_memory_add(" if backend == "kv" else "memory_append(")
        assert answer["calls"] == [
            ["core_memory_list_keys()" if backend == "kv" else "memory_retrieve()"]
        ]
        phases = [(row["phase"], row["entry"]) for row in sister.trace]
        assert phases[0] == ("prereq", f"memory_{backend}_prereq_demo_0-notetaker-0")
        assert phases[-1] == ("question", f"memory_{backend}_demo_1-notetaker-1")
        looked = [row for row in sister.trace if row["phase"] == "question" and "action" in row]
        seen = looked[0]["observation"]
        if backend == "kv":
            assert len(json.loads(seen)["keys"]) == 2  # the two stored notes
        else:
            assert "Iron Temple" in seen and "March 3" in seen
        # The snapshot is carried: entry 1 starts from entry 0's memory, the question from both.
        systems = [str(r.body["messages"][0]["content"]) for r in model.requests]
        entry_one = next(s for s in systems if "no content" not in s and FORMAT not in s)
        assert "March 3" in _shown_memory(entry_one)
        assert "Iron Temple" not in _shown_memory(entry_one)
        if mode == "text":
            assert systems[0].startswith("You are an expert in composing functions.")
        else:
            assert systems[0].startswith("You are a personal organization assistant.")
            assert all(r.body.get("tools") for r in model.requests)


class Knower:
    """A model that says nothing to the prerequisite conversation and answers each question
    with its first accepted answer (`wrong`: these questions with "I do not know")."""

    def __init__(self, answers: dict[str, str], wrong: frozenset[str] = frozenset()) -> None:
        self.answers = answers
        self.wrong = wrong
        self.requests: list[ToolRequest] = []

    def __call__(self, request: ToolRequest) -> Any:
        self.requests.append(request)
        messages = request.body["messages"]
        if FORMAT not in str(messages[0]["content"]):
            return "Thanks, good to know."
        question = _last_said(request)
        said = "I do not know" if question in self.wrong else self.answers[question]
        return repr({"answer": said, "context": "you told me"})


QUESTIONS = 2


def real_memory_entries(wheel: Path, folder: Path) -> tuple[Path, dict[str, str], int]:
    """The wheel's first QUESTIONS notetaker questions with their answers, its memory docs and
    the notetaker prerequisite conversation, written as BFCL's files; each question's text with
    its first accepted answer; the prerequisite conversation's turns."""
    for sub in ("possible_answer", "multi_turn_func_doc", "memory_prereq_conversation"):
        (folder / sub).mkdir(parents=True)
    with zipfile.ZipFile(wheel) as archive:

        def read(name: str) -> list[str]:
            return archive.read(f"bfcl_eval/data/{name}").decode("utf-8").splitlines()

        for backend in ("kv", "vector", "rec_sum"):
            name = f"multi_turn_func_doc/memory_{backend}.json"
            (folder / name).write_text("\n".join(read(name)) + "\n", encoding="utf-8")
        prereq = read("memory_prereq_conversation/memory_notetaker.json")
        (folder / "memory_prereq_conversation" / "memory_notetaker.json").write_text(
            "\n".join(prereq) + "\n", encoding="utf-8"
        )
        entries = [json.loads(line) for line in read("BFCL_v4_memory.json")]
        chosen = [e for e in entries if e["scenario"] == "notetaker"][:QUESTIONS]
        truths = {
            json.loads(line)["id"]: json.loads(line)
            for line in read("possible_answer/BFCL_v4_memory.json")
        }
    (folder / "BFCL_v4_memory.json").write_text(
        "".join(json.dumps(e) + "\n" for e in chosen), encoding="utf-8"
    )
    (folder / "possible_answer" / "BFCL_v4_memory.json").write_text(
        "".join(json.dumps(truths[e["id"]]) + "\n" for e in chosen), encoding="utf-8"
    )
    answers = {e["question"][0][-1]["content"]: truths[e["id"]]["ground_truth"][0] for e in chosen}
    turns = sum(len(json.loads(line)["question"]) for line in prereq)
    return folder / "BFCL_v4_memory.json", answers, turns


def test_real_memory_entries_answered_right_and_wrong(
    real_wheel: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    path, answers, turns = real_memory_entries(real_wheel, tmp_path)
    summary = benchmark_import(suite="bfcl", paths=[path], benchmark_name="Mem real")
    assert summary.samples == {"memory": QUESTIONS}
    benchmark = Benchmark.objects.get(name="Mem real")
    first = next(iter(answers))
    for task in ("memory_kv", "memory_rec_sum"):
        for mode in ("text", "native"):
            right = Knower(answers)
            run = _run(benchmark, task, mode, right, f"knows-{task}-{mode}")
            assert run.status == Run.Status.DONE, run.error
            assert run.metrics == {"accuracy": 100.0, "n": float(QUESTIONS)}
            # the prerequisite turns once (then from the cache), one request per question
            assert len(right.requests) == turns + QUESTIONS
            wrong = Knower(answers, wrong=frozenset({first}))
            run = _run(benchmark, task, mode, wrong, f"forgets-{task}-{mode}")
            assert run.metrics == {"accuracy": 50.0, "n": float(QUESTIONS)}
            failed = run.predictions.get(scores__accuracy=0.0)
            assert failed.answer["final_answer"].startswith("{'answer': 'I do not know'")
