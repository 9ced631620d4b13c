"""Our AST checker and decoders against BFCL's own checker, case by case, on fixtures we wrote
(fixtures/ast_cases.jsonl, test data in BFCL's entry format) whose verdicts BFCL's code gave
(fixtures/ast_parity.jsonl, produced by official_ast_verdicts.py; see fixtures/README.md); and
our Prompt decoder against BFCL's reading of our texts (decode_cases.jsonl, decode_parity.jsonl)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from benchmarks.suites.bfcl.checker import CATEGORIES, Verdict, check, kind_of, language_of
from benchmarks.suites.bfcl.decode import (
    KWARGS,
    Call,
    DecodeFailure,
    decode_prompt,
    decode_tool_calls,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _lines(name: str) -> list[dict[str, Any]]:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


CASES = _lines("ast_cases.jsonl")
OFFICIAL = {row["id"]: row["official"] for row in _lines("ast_parity.jsonl")}


def ours(case: dict[str, Any]) -> Verdict:
    output = case["output"]
    if case["mode"] == "prompt":
        decoded = decode_prompt(output)
    else:
        decoded = decode_tool_calls(output["tool_calls"], output["content"])
    category = case["category"]
    return check(
        decoded,
        case["function"],
        case["ground_truth"],
        category=category,
        language=language_of(category),
        underscore_names=case["mode"] == "fc",
    )


def test_every_case_has_an_official_verdict_and_the_set_is_broad() -> None:
    assert [case["id"] for case in CASES] == list(OFFICIAL)
    assert len(CASES) >= 60
    assert {case["category"] for case in CASES} == set(CATEGORIES)
    assert {case["mode"] for case in CASES} == {"prompt", "fc"}
    verdicts = Counter(official["valid"] for official in OFFICIAL.values())
    assert verdicts[True] >= 20 and verdicts[False] >= 20


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_our_verdict_is_bfcls(case: dict[str, Any]) -> None:
    official = OFFICIAL[case["id"]]
    verdict = ours(case)
    assert verdict.valid == official["valid"], verdict.messages
    assert verdict.detail == official["error_type"]
    if not official["valid"]:
        candidates = tuple(official.get("candidates", ()))
        assert verdict.candidates == candidates
        assert verdict.kind == kind_of(official["error_type"], candidates)
    else:
        assert verdict.kind is None


READINGS = _lines("decode_parity.jsonl")


def _as_bfcl(decoded: tuple[Call, ...]) -> list[dict[str, dict[Any, Any]]]:
    """Our calls as BFCL's decoder gives them (it keeps `**x` under None, we under "**")."""
    return [
        {
            call.name: {
                None if key == KWARGS else key: value for key, value in call.arguments.items()
            }
        }
        for call in decoded
    ]


def test_the_readings_are_broad() -> None:
    assert [r["text"] for r in READINGS] == [c["text"] for c in _lines("decode_cases.jsonl")]
    assert len(READINGS) >= 40
    assert sum("error" in r["official"] for r in READINGS) >= 15
    assert sum("decoded" in r["official"] for r in READINGS) >= 15


@pytest.mark.parametrize("reading", READINGS, ids=[r["text"][:40] for r in READINGS])
def test_our_prompt_reading_is_bfcls(reading: dict[str, Any]) -> None:
    decoded = decode_prompt(reading["text"])
    if "error" in reading["official"]:
        assert isinstance(decoded, DecodeFailure), decoded
    else:
        assert not isinstance(decoded, DecodeFailure), decoded
        assert repr(_as_bfcl(decoded)) == reading["official"]["decoded"]
