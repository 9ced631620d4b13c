"""import_benchmark end to end: all or nothing, idempotent, clear errors, JSON totals."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from benchmarks.models import Benchmark, Sample, Tool

pytestmark = pytest.mark.django_db

TOOLS = {"WeatherTool": "Weather forecasts.", "BookTool": "Find books."}


def tool_file(folder: Path) -> Path:
    path = folder / "plugin_des.json"
    path.write_text(json.dumps(TOOLS), encoding="utf-8")
    return path


def query_file(folder: Path, body: bytes | str, name: str = "all_clean_data.csv") -> Path:
    path = folder / name
    path.write_bytes(body if isinstance(body, bytes) else body.encode("utf-8"))
    return path


GOOD_CSV = "Query,Tool\nWill it rain tomorrow?,WeatherTool\nFind me a novel.,BookTool\n"


def run(*args: str) -> dict:
    out = io.StringIO()
    call_command("import_benchmark", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def database_state() -> tuple:
    return (
        list(Benchmark.objects.values_list("name", "updated_at").order_by("name")),
        list(
            Tool.objects.values_list(
                "benchmark__name", "name", "description", "updated_at"
            ).order_by("benchmark__name", "name")
        ),
        list(
            Sample.objects.values_list(
                "benchmark__name", "split", "external_id", "input", "updated_at"
            ).order_by("id")
        ),
    )


@pytest.fixture
def existing(tmp_path: Path) -> tuple:
    """A benchmark already in the database, which a failed import must leave exactly as it was."""
    folder = tmp_path / "existing"
    folder.mkdir()
    run("metatool", str(tool_file(folder)), str(query_file(folder, GOOD_CSV)))
    return database_state()


def test_json_prints_totals_and_reimport_changes_nothing(tmp_path: Path) -> None:
    paths = [str(tool_file(tmp_path)), str(query_file(tmp_path, GOOD_CSV))]
    first = run("metatool", *paths, "--benchmark", "Mine")
    assert first["benchmark"] == "Mine"
    assert first["tools"] == 2
    assert sum(first["samples"].values()) == 2
    before = database_state()
    assert run("metatool", *paths, "--benchmark", "Mine") == first
    assert database_state() == before  # not even updated_at moved


def bad_input(folder: Path, case: str) -> tuple[list[Path], list[str]]:
    """The files of one bad-input case (only those: cases share file names) and the fragments
    its error must contain."""
    t = lambda: tool_file(folder)  # noqa: E731 - written only by the cases that use it
    cases = {
        "invalid utf-8": lambda: (
            [t(), query_file(folder, b"Query,Tool\nok,WeatherTool\ncaf\xe9,BookTool\n", "a.csv")],
            ["a.csv", "line 3", "UTF-8"],
        ),
        "bom inside": lambda: (
            [t(), query_file(folder, "Query,Tool\nok,WeatherTool\n\ufeffx,BookTool\n", "b.csv")],
            ["b.csv", "line 3", "byte-order mark"],
        ),
        "empty file": lambda: ([t(), query_file(folder, "", "c.csv")], ["c.csv", "empty"]),
        "missing column": lambda: (
            [t(), query_file(folder, "Query\nWill it rain?\n", "d.csv")],
            ["d.csv", "line 1", "Tool"],
        ),
        "duplicate ids": lambda: (
            [
                t(),
                query_file(
                    folder, "row_index,Query,Tool\n1,a,WeatherTool\n1,b,BookTool\n", "e.csv"
                ),
            ],
            ["e.csv", "line 3", "duplicate id '1'", "line 2"],
        ),
        "mistyped tool description": lambda: (
            [
                query_file(
                    folder, json.dumps({"WeatherTool": ["not", "a", "string"]}), "plugin_des.json"
                ),
                query_file(folder, GOOD_CSV, "f.csv"),
            ],
            ["plugin_des.json", "WeatherTool"],
        ),
        "two megabyte field": lambda: (
            [
                t(),
                query_file(folder, b"Query,Tool\n" + b"q" * (2 << 20) + b",BookTool\n", "g.csv"),
            ],
            ["g.csv", "line 2", "Query", "limit", "per field"],
        ),
        # Over the record limit too: the row is refused before the csv module splits it.
        "fifty megabyte row": lambda: (
            [
                t(),
                query_file(folder, b"Query,Tool\n" + b"q" * (50 << 20) + b",BookTool\n", "g.csv"),
            ],
            ["g.csv", "line 2", "limit", "per record"],
        ),
        "deeply nested json": lambda: (
            [query_file(folder, "[" * 50_000 + "]" * 50_000, "plugin_des.json")],
            ["plugin_des.json", "nested"],
        ),
        "unknown file": lambda: ([query_file(folder, "{}", "mystery.txt")], ["mystery.txt"]),
    }
    return cases[case]()


@pytest.mark.parametrize(
    "case",
    [
        "invalid utf-8",
        "bom inside",
        "empty file",
        "missing column",
        "duplicate ids",
        "mistyped tool description",
        "two megabyte field",
        "fifty megabyte row",
        "deeply nested json",
        "unknown file",
    ],
)
def test_bad_input_names_the_place_and_changes_nothing(
    tmp_path: Path, existing: tuple, case: str
) -> None:
    # given a good file beside the bad one, in one call
    folder = tmp_path / "bad"
    folder.mkdir()
    files, fragments = bad_input(folder, case)
    good = query_file(tmp_path, GOOD_CSV.replace("tomorrow", "today"), "good.csv")
    # when
    with pytest.raises(CommandError) as err:
        call_command("import_benchmark", "metatool", str(good), *map(str, files), "--json")
    # then
    message = str(err.value)
    assert message.startswith("Nothing imported.")
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    assert database_state() == existing


def test_benchmark_of_another_suite_is_refused(tmp_path: Path, existing: tuple) -> None:
    Benchmark.objects.create(name="Dialogues", suite="mtubench")
    before = database_state()
    with pytest.raises(CommandError, match="holds 'mtubench' data"):
        call_command(
            "import_benchmark",
            "metatool",
            str(tool_file(tmp_path)),
            str(query_file(tmp_path, GOOD_CSV)),
            "--benchmark",
            "Dialogues",
        )
    assert database_state() == before
