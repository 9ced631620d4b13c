"""BFCL's agentic checker's rule (agentic.standardize, agentic.agentic_match) on hand-computed
cases; the memory prompts as BFCL's wheel has them; the ids BFCL's loader gives memory entries;
the first turn as BFCL's handlers build it; the categories no task runs, each with its reason."""

from __future__ import annotations

import ast
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from benchmarks.kit.protocol import Context, Item
from benchmarks.suites import bfcl
from benchmarks.suites.bfcl import agentic
from benchmarks.suites.bfcl.memory_backend import bfcl_id
from tests.suites.bfcl.real_wheel import real_wheel  # noqa: F401 - a fixture


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # , . / - _ * ^ ( ) go; case is lowered; single quotes become double; spaces stay
        ("April 1, 2024", "april 1 2024"),
        ("U.S.A.", "usa"),
        ("3/4-time_signature*^(x)", "34timesignaturex"),
        ("It's 'fine'", 'it"s "fine"'),
        ("two  spaces\tand tab", "two  spaces\tand tab"),
        ("colon: semicolon; bang!", "colon: semicolon; bang!"),
    ],
)
def test_standardize_removes_bfcls_punctuation_only(text: str, expected: str) -> None:
    assert agentic.standardize(text) == expected


@pytest.mark.parametrize(
    ("response", "answers", "passes"),
    [
        ("{'answer': 'Michael', 'context': 'you said so'}", ["Michael"], True),
        ("my name is michael.", ["Michael"], True),  # case and the full stop ignored
        ("Michaelson", ["Michael"], False),  # no word boundary after it
        ("Mike", ["Michael"], False),
        ("thirty-five years", ["35", "thirty five"], False),  # "-" goes: "thirtyfive"
        ("thirty five years", ["35", "thirty five"], True),
        ("You are 35.", ["35", "thirty five"], True),
        ("in 1350", ["35"], False),  # inside a number: no boundary
        ("March 3rd", ["March 3"], False),  # "3r": no boundary after the 3
        ("on March 3, at 9", ["March 3"], True),
        ("April 1,2024", ["April 1, 2024"], False),  # "april 12024" vs "april 1 2024"
        ("April 1 2024", ["April 1, 2024"], True),
        ("the U.S.A. team", ["USA"], True),
        ("it costs $38", ["38"], True),  # "$" is no word character: a boundary before 38
        ("strawberry-matcha latte", ["strawberry matcha"], False),  # "strawberrymatcha"
        ("I do not know", [], False),
        ("", ["x"], False),
    ],
)
def test_agentic_match_as_bfcls_checker(response: str, answers: list[str], passes: bool) -> None:
    assert agentic.agentic_match(response, answers) is passes


def test_an_answer_with_regex_characters_is_matched_literally() -> None:
    # re.escape: "+" and "?" are text, not operators
    assert agentic.agentic_match("use C++ here", ["C++"]) is False  # "+" ends no word: no \b
    assert agentic.agentic_match("is it 4?", ["it 4"]) is True
    assert agentic.agentic_match("a+b", ["a.b"]) is False  # "." is removed, not "any"


def _wheel_constants(wheel: Path) -> dict[str, object]:
    """default_prompts.py's constants, read with ast (nothing of BFCL's is executed)."""
    with zipfile.ZipFile(wheel) as archive:
        source = archive.read("bfcl_eval/constants/default_prompts.py").decode("utf-8")
    values: dict[str, object] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            try:
                values[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                continue
    return values


def test_the_memory_prompts_are_bfcls_texts_unchanged(real_wheel: Path) -> None:  # noqa: F811
    constants = _wheel_constants(real_wheel)
    texts = agentic._texts()
    assert texts["core_archival"] == constants["MEMORY_BACKEND_INSTRUCTION_CORE_ARCHIVAL"]
    assert texts["unified"] == constants["MEMORY_BACKEND_INSTRUCTION_UNIFIED"]
    assert (
        texts["answer_format"] == constants["ADDITIONAL_SYSTEM_PROMPT_FOR_AGENTIC_RESPONSE_FORMAT"]
    )
    assert texts["settings"] == constants["MEMORY_AGENT_SETTINGS"]


def test_memory_prompt_fills_the_backends_template() -> None:
    kv = agentic.memory_prompt("kv", "notetaker", "{}")
    assert kv.startswith("You are a personal organization assistant.")
    assert "'Core Memory' and 'Archival Memory'" in kv
    assert kv.endswith("Here is the content of your Core Memory from previous interactions:\n{}\n")
    rec = agentic.memory_prompt("rec_sum", "notetaker", "I like tea.")
    assert "Core Memory" not in rec
    assert rec.endswith("memory system from previous interactions:\nI like tea.\n")


def test_bfcl_ids_name_the_backend() -> None:
    assert bfcl_id("memory_prereq_32-notetaker-0", "kv") == "memory_kv_prereq_32-notetaker-0"
    assert bfcl_id("memory_0-customer-0", "rec_sum") == "memory_rec_sum_0-customer-0"


def test_a_question_gets_the_answer_format_after_the_memory_prompt() -> None:
    user = [{"role": "user", "content": "Where do I live?"}]
    question = agentic._first_turn(user, "MEMORY", question=True)
    assert question == [
        {"role": "system", "content": "MEMORY\n\n" + agentic._texts()["answer_format"]},
        {"role": "user", "content": "Where do I live?"},
    ]
    prereq = agentic._first_turn(user, "MEMORY", question=False)
    assert prereq == [{"role": "system", "content": "MEMORY"}, *user]
    own = [{"role": "system", "content": "Be brief."}, *user]
    assert agentic._first_turn(own, "MEMORY", question=False)[0] == {
        "role": "system",
        "content": "MEMORY\n\nBe brief.",
    }


def test_the_categories_no_task_runs_say_why_and_are_not_tasks() -> None:
    names = {task.name for task in bfcl.SUITE.evaluation}
    assert {"memory_kv", "memory_rec_sum"} <= names
    assert set(agentic.NOT_RUN) == {"memory_vector"}
    assert not names & set(agentic.NOT_RUN)
    assert "sentence-transformers" in agentic.NOT_RUN["memory_vector"]
    assert "faiss" in agentic.NOT_RUN["memory_vector"]
    # the web search categories run, but say they are not comparable
    for web in ("web_search_base", "web_search_no_snippet"):
        assert web in names
        reason = bfcl.SUITE.tasks[web].not_comparable
        assert "SerpAPI" in reason and "virtual API server" in reason


def test_a_launch_with_an_unknown_scenario_or_no_prerequisite_is_refused(
    real_wheel: Path,  # noqa: F811 - prepare checks the wheel first
) -> None:
    evaluator = bfcl.SUITE.evaluator
    ctx = Context(task=evaluator.task("memory_kv"))
    docs = {"kv": [{"name": "core_memory_add", "description": "", "parameters": {}}]}
    prereq = [{"id": "memory_prereq_0-pirate-0", "question": [[]]}]
    pirate = Item(
        split="memory",
        external_id="memory_0-pirate-0",
        input={"functions_by_backend": docs, "prereq_conversation": prereq},
        metadata={"scenario": "pirate"},
    )
    with pytest.raises(ValueError, match=r"scenario 'pirate' has no setting.*known: student"):
        evaluator.prepare([pirate], ctx)
    alone = replace(pirate, metadata={"scenario": "student"}, input={"functions_by_backend": docs})
    with pytest.raises(ValueError, match=r"no prerequisite conversation for 'student'"):
        evaluator.prepare([alone], ctx)
    assert evaluator.prepare([replace(pirate, metadata={"scenario": "student"})], ctx) == [
        {"bfcl_eval": "2026.3.23", "backend": "kv"}
    ]
