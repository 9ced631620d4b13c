"""Numbers no column can take, in every JSON file kind each suite reads (issue 27): NaN, 1e999
(Infinity as a float) and a whole number of more digits than Python converts (4,300). Each import
stops naming the file, the line and the field, through the service, `import_benchmark` and a
browser import's job, and imports nothing (a long number was a traceback in the CLI and
"stopped unexpectedly (ValueError)" in the browser).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from benchmarks.kit.base import ImportFormatError
from benchmarks.services import benchmark_import
from tests.benchmarks.test_import_characters import (
    AWARENESS,
    GENERIC_RECORD,
    METATOOL_BASE,
    MTU_RECORD,
    STB_QUERY,
    WTU_RECORD,
    Case,
    jsonl,
    nothing_stored,
    one_per_line,
    ultra_record,
    write,
)

pytestmark = pytest.mark.django_db

PLACE = '"@@number"'  # a JSON string a case puts where the number goes
NUMBERS = {
    "NaN": ("NaN", "the number NaN"),
    "1e999": ("1e999", "the number 1e999 (Infinity as a float)"),
    "4,301 digits": ("9" * 4301, "a whole number of 4,301 digits (more than 4,300)"),
}


def placed(text: str, number: str) -> str:
    return text.replace(PLACE, number)


NUMBER = "@@number"
CASES: dict[str, Callable[[str], Case]] = {
    "metatool awareness (JSON)": lambda n: Case(
        "metatool",
        {
            **METATOOL_BASE,
            "Task1_awareness.json": placed(
                one_per_line([AWARENESS[0], {**AWARENESS[1], "score": NUMBER}]), n
            ),
        },
        "Task1_awareness.json",
        3,
        "score",
    ),
    "mtubench (JSON Lines)": lambda n: Case(
        "mtubench",
        {
            "S-S_eval.jsonl": placed(
                jsonl(MTU_RECORD, {**MTU_RECORD, "id": "S-S_1", "n": NUMBER}), n
            )
        },
        "S-S_eval.jsonl",
        2,
        "n",
    ),
    "stabletoolbench (JSON)": lambda n: Case(
        "stabletoolbench",
        {"G1_instruction.json": placed(one_per_line([{**STB_QUERY, "n": NUMBER}]), n)},
        "G1_instruction.json",
        2,
        "n",
    ),
    "ultratool (JSON Lines)": lambda n: Case(
        "ultratool",
        {"test.json": placed(jsonl({**ultra_record(), "n": NUMBER}), n)},
        "test.json",
        1,
        "n",
    ),
    "wtueval (JSON Lines)": lambda n: Case(
        "wtueval",
        {"questions.jsonl": placed(jsonl(WTU_RECORD, {**WTU_RECORD, "id": 2, "n": NUMBER}), n)},
        "questions.jsonl",
        2,
        "n",
    ),
    "generic (JSON Lines)": lambda n: Case(
        "generic",
        {"mine.jsonl": placed(jsonl({**GENERIC_RECORD, "metadata": {"n": NUMBER}}), n)},
        "mine.jsonl",
        1,
        "n",
    ),
    # Arguments given as JSON text: the number is read when that text is.
    "generic arguments text": lambda n: Case(
        "generic",
        {
            "mine.jsonl": jsonl(
                {
                    **GENERIC_RECORD,
                    "tool_calls": [{"name": "get_weather", "arguments": '{"days": ' + n + "}"}],
                }
            )
        },
        "mine.jsonl",
        1,
        "tool_calls[0].arguments",
    ),
}


@pytest.mark.parametrize("number", list(NUMBERS))
@pytest.mark.parametrize("name", list(CASES))
def test_the_service_and_the_command_name_file_line_and_field(
    tmp_path: Path, name: str, number: str
) -> None:
    literal, says = NUMBERS[number]
    case = CASES[name](literal)
    paths = write(tmp_path, case.files)
    with pytest.raises(ImportFormatError) as err:
        benchmark_import(suite=case.suite, paths=paths)
    error = err.value
    assert says in error.message
    assert error.file is not None and Path(error.file).name == case.file
    assert (error.line, error.field) == (case.line, case.field)
    assert nothing_stored()
    with pytest.raises(CommandError) as cli:
        call_command("import_benchmark", case.suite, *map(str, paths), stdout=io.StringIO())
    message = str(cli.value)
    assert message.startswith("Nothing imported.")
    assert f"{case.file}, line {case.line}, field {case.field!r}" in message
    assert says in message
    assert nothing_stored()
