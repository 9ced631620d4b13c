"""Chat transcripts (benchmarks/suites/transcripts/): the demo file imported and read back as
traces, every malformed case refused naming its line and field, and the import all or nothing
through the platform's import service, with the benchmark and sample pages showing the result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from benchmarks.kit.base import MAX_RECORD_BYTES, ImportFormatError
from benchmarks.kit.context import JudgedOutput, ShownCall
from benchmarks.kit.protocol import Item
from benchmarks.kit.registry import get_suite
from benchmarks.kit.traces import NotATrace, Trace, TraceStep
from benchmarks.models import Benchmark, Sample, Tool
from benchmarks.services import benchmark_import
from benchmarks.suites.transcripts import import_files
from benchmarks.suites.transcripts.traces import trace
from tests.factories import make_researcher

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "benchmarks" / "demo" / "transcripts" / "transcripts.jsonl"


def as_item(record: Any) -> Item:
    return Item(
        split=record.split,
        external_id=record.external_id,
        input=record.input,
        reference=record.reference,
        kind=record.kind,
        candidate_tools=tuple(record.candidate_tools),
        metadata=record.metadata,
    )


def write(tmp_path: Path, *lines: Any, raw: str | None = None) -> Path:
    path = tmp_path / "logs.jsonl"
    text = raw if raw is not None else "".join(json.dumps(line) + "\n" for line in lines)
    path.write_text(text, encoding="utf-8")
    return path


def call(ident: str, name: str, arguments: Any) -> dict[str, Any]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": ident, "type": "function", "function": {"name": name, "arguments": text}}


# --- the demo file -------------------------------------------------------------------------------


def test_the_demo_reads_as_its_transcripts() -> None:
    # when
    bundle = import_files([DEMO])

    # then
    assert [(s.split, s.external_id, s.kind) for s in bundle.samples] == [
        ("default", "demo-1", "dialogue"),
        ("default", "demo-2", "dialogue"),
        ("default", "line-3", "dialogue"),
    ]
    first = bundle.samples[0]
    lines = DEMO.read_text(encoding="utf-8").splitlines()
    # the messages are stored as given, nothing escaped or rewritten
    assert first.input["messages"] == json.loads(lines[0])["messages"]
    assert first.input["query"] == "Is it warmer in Lisbon or in Oslo right now?"
    assert first.candidate_tools == ["get_weather", "convert_units"]
    assert first.metadata == {"agent": "demo-agent v1"}
    assert sorted({t.name for t in bundle.tools}) == ["convert_units", "get_weather"]


def test_a_demo_transcript_reads_as_one_step_per_assistant_message() -> None:
    bundle = import_files([DEMO])
    first, cut, bare = (trace(as_item(s), None) for s in bundle.samples)
    weather = bundle.tools[0].parameters
    assert first == Trace(
        steps=(
            TraceStep(
                label="step 1",
                calls=(
                    ShownCall("get_weather", {"city": "Lisbon"}, "step 1"),
                    ShownCall("get_weather", {"city": "Oslo"}, "step 1"),
                ),
                results=({"city": "Lisbon", "temp_c": 21}, {"city": "Oslo", "temp_c": 4}),
                user="Is it warmer in Lisbon or in Oslo right now?",
                auto_error=None,
            ),
            TraceStep(
                label="step 2",
                text="Lisbon is warmer: 21 °C against 4 °C in Oslo.",
                auto_error=None,
            ),
        ),
        final="Lisbon is warmer: 21 °C against 4 °C in Oslo.",
        schemas={"get_weather": weather, "convert_units": bundle.tools[1].parameters},
        auto_verdict=None,
    )
    # demo-2's second call is never answered: shown with no result, flagged
    assert [(s.label, s.results, s.auto_error) for s in cut.steps] == [
        ("step 1", ({"city": "Rome", "temp_c": 18},), None),
        ("step 2", (None,), "format"),
        ("step 3", (), None),
    ]
    assert cut.steps[0].text == "Let me look it up."
    assert bare.steps[0].results == ("6.21371",) and bare.schemas == {}


def test_a_result_answering_no_call_is_a_flagged_step_of_its_own(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "Checking.", "tool_calls": [call("a", "f", {})]},
            {"role": "tool", "tool_call_id": "zzz", "content": "stray"},
            {"role": "tool", "tool_call_id": "a", "content": "ok"},
            {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
        ],
    )
    got = trace(as_item(import_files([path]).samples[0]), None)
    assert [(s.label, s.calls, s.results, s.auto_error) for s in got.steps] == [
        ("step 1", (ShownCall("f", {}, "step 1"),), ("ok",), None),
        ("step 2: tool result without a call", (), ("stray",), "format"),
        ("step 3", (), (), None),
    ]
    assert got.final == "Done."


def test_a_transcript_is_a_sample_not_an_output() -> None:
    record = import_files([DEMO]).samples[0]
    with pytest.raises(NotATrace):
        trace(as_item(record), JudgedOutput(text="x"))
    with pytest.raises(NotATrace):
        trace(Item(split="d", external_id="1", input={"messages": "no"}), None)
    with pytest.raises(NotATrace):
        trace(Item(split="d", external_id="1", input={"messages": [{"role": "user"}]}), None)


# --- malformed lines ------------------------------------------------------------------------------

USER = {"role": "user", "content": "q"}
SAID = {"role": "assistant", "content": "a"}

MALFORMED: list[tuple[str, Any, int, str | None, str]] = [
    ("not a list or object", "just text", 2, None, "a list of messages or an object"),
    ("unknown key", {"messages": [USER, SAID], "msgs": []}, 2, None, "unknown key(s) msgs"),
    ("messages not a list", {"messages": {"role": "user"}}, 2, "messages", "non-empty list"),
    ("empty messages", {"messages": []}, 2, "messages", "non-empty list"),
    ("message not an object", [USER, "hello"], 2, "messages[1]", "a message object"),
    ("unknown role", [USER, {"role": "robot", "content": "x"}], 2, "messages[1].role", "robot"),
    ("content a number", [USER, {"role": "assistant", "content": 5}], 2, "messages[1].content", ""),
    (
        "content part without text",
        [USER, {"role": "assistant", "content": [{"type": "image_url"}]}],
        2,
        "messages[1].content[0]",
        "text part",
    ),
    (
        "arguments not JSON",
        [USER, {"role": "assistant", "tool_calls": [call("c", "f", "{city: Rome")]}],
        2,
        "messages[1].tool_calls[0].function.arguments",
        "is not JSON",
    ),
    (
        "arguments not an object",
        [USER, {"role": "assistant", "tool_calls": [call("c", "f", "[1, 2]")]}],
        2,
        "messages[1].tool_calls[0].function.arguments",
        "JSON object",
    ),
    (
        "call without a name",
        [USER, {"role": "assistant", "tool_calls": [{"id": "c", "function": {"arguments": "{}"}}]}],
        2,
        "messages[1].tool_calls[0].function.name",
        "tool name",
    ),
    (
        "call id twice",
        [USER, {"role": "assistant", "tool_calls": [call("c", "f", {}), call("c", "g", {})]}],
        2,
        "messages[1].tool_calls[1]",
        "given twice",
    ),
    (
        "calls from a user",
        [{"role": "user", "content": "q", "tool_calls": []}, SAID],
        2,
        "messages[0].tool_calls",
        "only assistant",
    ),
    (
        "tool result without its call id",
        [USER, {"role": "tool", "content": "r"}, SAID],
        2,
        "messages[1].tool_call_id",
        "the id of the call",
    ),
    ("no assistant", [USER], 2, "messages", "no assistant message"),
    ("no user", [SAID], 2, "messages", "no user message"),
    ("id a boolean", {"id": True, "messages": [USER, SAID]}, 2, "id", "a string or a number"),
    ("id twice", {"id": "one", "messages": [USER, SAID]}, 2, "id", "given twice"),
    ("tools not a list", {"messages": [USER, SAID], "tools": {}}, 2, "tools", "list of tools"),
    ("metadata a list", {"messages": [USER, SAID], "metadata": []}, 2, "metadata", "an object"),
]


@pytest.mark.parametrize(
    ("case", "line", "number", "field", "says"), MALFORMED, ids=[m[0] for m in MALFORMED]
)
def test_a_malformed_line_names_its_line_and_field(
    tmp_path: Path, case: str, line: Any, number: int, field: str | None, says: str
) -> None:
    # given: a good line first, the bad one second
    path = write(tmp_path, {"id": "one", "messages": [USER, SAID]}, line)

    # when
    with pytest.raises(ImportFormatError) as refused:
        import_files([path])

    # then
    error = refused.value
    assert error.line == number and error.field == field, str(error)
    assert says in str(error)
    assert str(path) in str(error)


def test_a_line_that_is_not_json_or_too_long_is_refused_with_its_line(tmp_path: Path) -> None:
    good = json.dumps([USER, SAID])
    path = write(tmp_path, raw=f'{good}\n[{{"role": "user"\n')
    with pytest.raises(ImportFormatError) as refused:
        import_files([path])
    assert refused.value.line == 2
    huge = write(
        tmp_path,
        raw=good + "\n" + json.dumps([USER, {**SAID, "content": "x" * (MAX_RECORD_BYTES + 1)}]),
    )
    with pytest.raises(ImportFormatError) as refused:
        import_files([huge])
    assert refused.value.line == 2 and "IMPORT_MAX_RECORD_BYTES" in str(refused.value)


def test_a_file_of_another_kind_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "logs.txt"
    other.write_text("[]")
    with pytest.raises(ImportFormatError, match="JSON Lines"):
        import_files([other])


# --- through the platform -------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_import_stores_everything_or_nothing(tmp_path: Path) -> None:
    # given: a good file and a bad one after it
    bad = write(tmp_path, [USER, {"role": "assistant", "tool_calls": [call("c", "f", "{x")]}])

    # when: both in one import
    with pytest.raises(ImportFormatError, match="line 1"):
        benchmark_import(suite="transcripts", paths=[DEMO, bad], benchmark_name="Logs")

    # then: nothing stored
    assert not Benchmark.objects.filter(name="Logs").exists()
    assert Sample.objects.count() == 0 and Tool.objects.count() == 0

    # and the demo alone is stored as read
    summary = benchmark_import(suite="transcripts", paths=[DEMO], benchmark_name="Logs")
    bench = Benchmark.objects.get(name="Logs")
    assert bench.suite == "transcripts"
    stored = Sample.objects.get(benchmark=bench, external_id="demo-1")
    assert stored.input == import_files([DEMO]).samples[0].input
    assert Tool.objects.filter(benchmark=bench).count() == 2
    assert summary is not None


@pytest.mark.django_db
def test_the_benchmark_and_sample_pages_show_a_transcript(client: Client) -> None:
    client.force_login(make_researcher())
    benchmark_import(suite="transcripts", paths=[DEMO], benchmark_name="Logs")
    bench = Benchmark.objects.get(name="Logs")
    page = client.get(f"/benchmarks/{bench.pk}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Is it warmer in Lisbon or in Oslo right now?" in html
    sample = Sample.objects.get(benchmark=bench, external_id="demo-1")
    page = client.get(f"/benchmarks/{bench.pk}/samples/{sample.pk}/")
    assert page.status_code == 200
    assert "get_weather" in page.content.decode()


def test_the_suite_has_no_tasks_and_reads_its_samples_as_traces() -> None:
    suite = get_suite("transcripts")
    assert suite.tasks == {} and suite.trace is trace
    assert [e.key for e in suite.step_errors] == [
        "wrong_tool",
        "wrong_argument",
        "hallucinated_result",
        "unnecessary_call",
        "missed_call",
        "format",
    ]
