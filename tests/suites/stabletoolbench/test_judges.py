"""StableToolBench judges and its published outputs: templates, reply parsing, SoPR and SoWR.

Pure: no database. Expectations are hand-computed from the 3-query example the benchmark ships
(/work/shared/seeddata/stabletoolbench/data_example, StableToolBench @aa4ed9f): queries 588,
608 and 1073 of G1_instruction answered by virtual_chatgpt_cot and virtual_chatgpt_dfs.
"""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from benchmarks.kit.base import ImportFormatError
from benchmarks.kit.judging import JudgeInput, canonical_preference, templates
from benchmarks.kit.protocol import Context, Item, Outcome, Scored, ToolSpec
from benchmarks.suites import stabletoolbench
from benchmarks.suites.stabletoolbench import judges

PROMPTS = Path(stabletoolbench.__file__).resolve().with_name("prompts")
GROUP = "G1_instruction"
COT, DFS = "virtual_chatgpt_cot", "virtual_chatgpt_dfs"


def example(seeddata: Path) -> Path:
    return seeddata / "stabletoolbench" / "data_example"


def converted(seeddata: Path, method: str) -> Path:
    return example(seeddata) / "model_predictions_converted" / method / f"{GROUP}.json"


def outcomes(seeddata: Path, method: str) -> dict[str, Outcome]:
    result = {}
    for output in stabletoolbench.read_predictions("pass_rate", converted(seeddata, method)):
        result[output.external_id] = stabletoolbench.parse(output.output, item(""), CTX, {})
    return result


def pass_results(seeddata: Path, method: str) -> dict[str, Any]:
    path = example(seeddata) / "pass_rate_results" / method / f"{GROUP}_{method}.json"
    return json.loads(path.read_text())


def item(query: str, tools: tuple[str, ...] = ()) -> Item:
    return Item(split=GROUP, external_id="1073", input={"query": query}, candidate_tools=tools)


CTX = Context(task=stabletoolbench.TASKS["pass_rate"])


# --- published outputs --------------------------------------------------------------------------


@pytest.mark.parametrize("method", [COT, DFS])
def test_read_predictions_gives_each_query_its_answer_object(seeddata: Path, method: str) -> None:
    # given
    path = converted(seeddata, method)
    published = json.loads(path.read_text())

    # when
    outputs = list(stabletoolbench.read_predictions("pass_rate", path))

    # then
    assert sorted(o.external_id for o in outputs) == ["1073", "588", "608"]
    for output in outputs:
        assert output.split == GROUP
        assert output.source == f"{path}, record {output.external_id}"
        # The output is the answer object the reference judge reads, final answer included.
        answer = published[output.external_id]["answer"]
        assert json.loads(output.output) == answer
        assert list(json.loads(output.output)) == [
            "method",
            "total_steps",
            "final_answer",
            "answer_details",
        ]


def test_parse_reads_the_final_answer_and_the_steps(seeddata: Path) -> None:
    cot, dfs = outcomes(seeddata, COT), outcomes(seeddata, DFS)

    assert cot["1073"].parsed
    assert cot["1073"].answer.startswith("For the search query 'birthday party ideas', some")
    assert cot["1073"].answer in cot["1073"].output.replace('\\"', '"')
    assert [step["action"] for step in cot["1073"].trace] == [
        "popularsitesforquery_for_keyword_analysis",
        "querykeywords_for_keyword_analysis",
        "Finish",
    ]
    assert cot["1073"].trace[0]["arguments"] == {"q": "birthday party ideas"}
    assert cot["1073"].trace[2]["thought"].startswith("For the search query 'birthday party")
    assert cot["1073"].trace[2]["arguments"]["return_type"] == "give_answer"
    # CoT on 588 ran out of steps: six calls, no Finish, an empty final answer.
    assert cot["588"].answer is None
    assert cot["588"].note == "no Finish call at the end of the answer"
    assert len(cot["588"].trace) == 6
    assert dfs["588"].answer.startswith("Lionel Messi has had a remarkable career in football.")
    assert dfs["588"].trace[-1]["action"] == "Finish"


@pytest.mark.parametrize("method", [COT, DFS])
def test_steps_are_the_steps_the_reference_evaluation_listed(seeddata: Path, method: str) -> None:
    # pass_rate_results hold get_steps(example): "Step i: {tool message}" and the final step.
    for query_id, result in pass_results(seeddata, method).items():
        outcome = outcomes(seeddata, method)[query_id]
        names = re.findall(r"^Step \d+: \{'name': '([^']*)'", result["answer_steps"], re.M)
        final = re.match(r"Final step: \{'name': '([^']*)'", result["final_step"])
        assert [s["action"] for s in outcome.trace if s["action"]] == names
        assert final is not None
        assert stabletoolbench.last_tool_name(json.loads(outcome.output)) == final.group(1)


def test_score_and_aggregate_count_answers_with_a_final_answer(seeddata: Path) -> None:
    for method, expected in ((COT, 66.67), (DFS, 100.0)):
        scored = [
            Scored(item=item(""), outcome=o, scores=stabletoolbench.score(o, item(""), CTX, {}))
            for o in outcomes(seeddata, method).values()
        ]
        assert stabletoolbench.aggregate(scored, CTX) == {"answered": expected}
    assert stabletoolbench.score(None, item(""), CTX, {}) == {"has_final_answer": 0.0}


def test_parse_refuses_text_that_is_not_an_answer_object() -> None:
    outcome = stabletoolbench.parse("The weather is sunny.", item(""), CTX, {})
    assert not outcome.parsed
    assert outcome.output == "The weather is sunny."
    assert stabletoolbench.score(outcome, item(""), CTX, {}) == {"has_final_answer": 0.0}


def test_read_predictions_names_the_record_and_field_of_a_bad_file(tmp_path: Path) -> None:
    path = tmp_path / "G1_instruction.json"
    path.write_text(json.dumps({"7": {"query": "q", "answer": {"final_answer": 3}}}))
    with pytest.raises(ImportFormatError) as error:
        list(stabletoolbench.read_predictions("pass_rate", path))
    assert error.value.record == "7"
    assert error.value.field == "answer.final_answer"
    path.write_text(json.dumps([1, 2]))
    with pytest.raises(ImportFormatError, match="keyed by query id"):
        list(stabletoolbench.read_predictions("pass_rate", path))


def test_tasks_refuse_to_build_a_prompt() -> None:
    assert set(stabletoolbench.TASKS) == set(stabletoolbench.SUITE.tasks)
    with pytest.raises(ValueError, match=r"virtual API server .* import_predictions"):
        stabletoolbench.build_prompt(item("q"), CTX, {})


def test_select_keeps_the_queries_of_the_test_id_lists() -> None:
    kept = Item(split=GROUP, external_id="1", input={}, metadata={"in_test_query_ids": True})
    dropped = Item(split=GROUP, external_id="2", input={}, metadata={"in_test_query_ids": False})
    unchecked = Item(split=GROUP, external_id="3", input={})
    assert stabletoolbench.select([kept, dropped, unchecked], CTX) == [kept, unchecked]


# --- prechecks ----------------------------------------------------------------------------------


def finish_answer(final: str, return_type: str = "give_answer") -> str:
    arguments = json.dumps({"return_type": return_type, "final_answer": final})
    details = [
        {
            "role": "tool",
            "message": {"name": "Finish", "arguments": arguments, "response": ""},
            "next": [],
        }
    ]
    record = {"method": "CoT@1", "total_steps": 1, "final_answer": arguments}
    return json.dumps({**record, "answer_details": details})


def pass_input(output: str | Outcome) -> JudgeInput:
    outcome = (
        output if isinstance(output, Outcome) else stabletoolbench.parse(output, item(""), CTX, {})
    )
    return JudgeInput(item=item("What is 2+2?"), outputs=(outcome,), ctx=CTX)


def test_precheck_labels_an_answer_without_a_final_answer_unsolved(seeddata: Path) -> None:
    cot = outcomes(seeddata, COT)
    verdict = judges.PASS.precheck(JudgeInput(item=item(""), outputs=(cot["588"],)))
    assert verdict is not None and verdict.ok
    assert verdict.values == {"label": "Unsolved"}
    assert "no Finish call" in verdict.reasoning
    assert judges.PASS.precheck(JudgeInput(item=item(""), outputs=(cot["1073"],))) is None

    gave_up = judges.PASS.precheck(pass_input(finish_answer("", "give_up_and_restart")))
    assert gave_up is not None and gave_up.values == {"label": "Unsolved"}
    empty = json.loads(finish_answer("4"))
    empty["final_answer"] = ""
    assert judges.PASS.precheck(pass_input(json.dumps(empty))).values == {"label": "Unsolved"}
    assert judges.PASS.precheck(pass_input(finish_answer("4"))) is None
    # An outcome made another way: its answer is given through a Finish call of our making.
    assert judges.PASS.precheck(pass_input(Outcome(output="4", answer="4"))) is None
    none = judges.PASS.precheck(pass_input(Outcome(output="", answer=None)))
    assert none is not None and none.values == {"label": "Unsolved"}


# --- templates ----------------------------------------------------------------------------------


def test_templates_are_registered_for_the_suite() -> None:
    registered = templates()
    expected = {
        "stabletoolbench.pass": ("pass", ("Solved", "Unsure", "Unsolved")),
        "stabletoolbench.pass_details": ("pass", ("Solved", "Unsure", "Unsolved")),
        "stabletoolbench.pass_normalized": ("pass", ("Solved", "Unsolved")),
        "stabletoolbench.preference": ("pairwise", ()),
        "stabletoolbench.solvability": ("solvability", ("Solvable", "Unsolvable", "Unsure")),
    }
    for name, (kind, labels) in expected.items():
        template = registered[name]
        assert (template.kind, template.labels, template.suites) == (
            kind,
            labels,
            ("stabletoolbench",),
        )
        assert "THUNLP-MT/StableToolBench @aa4ed9f" in template.source
        assert "Apache-2.0" in template.source


@pytest.mark.parametrize(
    "name",
    [
        "tooleval_default_template.txt",
        "tooleval_default_config.yaml",
        "tooleval_normalized_template.txt",
        "tooleval_normalized_config.yaml",
    ],
)
def test_each_prompt_file_names_its_source_and_license(name: str) -> None:
    header = (PROMPTS / name).read_text(encoding="utf-8").partition("\n---\n")[0]
    assert "Source: THUNLP-MT/StableToolBench" in header
    assert "commit aa4ed9f" in header
    assert "License: Apache-2.0" in header
    license_text = (PROMPTS / "LICENSE-StableToolBench.txt").read_text(encoding="utf-8")
    assert "Apache License" in license_text and "Version 2.0, January 2004" in license_text


def test_prompt_files_hold_the_published_text(seeddata: Path) -> None:
    published = seeddata / "stabletoolbench" / "evaluator_prompts"
    for variant in ("default", "normalized"):
        for name in ("template.txt", "config.yaml"):
            ours = PROMPTS / f"tooleval_{variant}_{name}"
            body = ours.read_text(encoding="utf-8").partition("\n---\n")[2]
            source = published / f"tooleval_gpt-3.5-turbo_{variant}" / name
            assert body == source.read_text(encoding="utf-8")


def test_pass_prompt_shows_the_query_and_the_final_answer(seeddata: Path) -> None:
    answer = outcomes(seeddata, COT)["1073"]
    query = json.loads(converted(seeddata, COT).read_text())["1073"]["query"]
    judge_input = JudgeInput(item=item(query), outputs=(answer,), ctx=CTX)

    prompt = judges.PASS.build(judge_input)

    system, user = prompt.messages
    assert system["role"] == "system" and '"name": "check_answer_status"' in system["content"]
    assert user["role"] == "user"
    assert user["content"].startswith("Giving the query and answer, you need give `answer_status`")
    assert f"Query:\n{query}\nAnswer:\n" in user["content"]
    assert json.loads(answer.output)["final_answer"] in user["content"]
    assert user["content"].endswith(judges.STATUS_FORMAT)
    assert '{"reason": "<why>", "answer_status": "<Solved, Unsure or Unsolved>"}' in (
        judges.PASS.reminder
    )
    assert prompt.text is not None and prompt.text.endswith('\n\n{"answer_status": "')
    assert query in prompt.text
    assert prompt.max_tokens == 1000


def test_details_prompt_shows_the_whole_answer_object(seeddata: Path) -> None:
    answer = outcomes(seeddata, DFS)["608"]
    judge_input = JudgeInput(item=item("Kick.com clips"), outputs=(answer,), ctx=CTX)
    user = judges.PASS_DETAILS.build(judge_input).messages[1]["content"]
    assert "execution detail of an answer" in user
    assert json.dumps(json.loads(answer.output)) in user
    assert "Kick.com clips" in user


def test_preference_prompt_shows_both_answers_in_the_order_given(seeddata: Path) -> None:
    cot, dfs = outcomes(seeddata, COT)["1073"], outcomes(seeddata, DFS)["1073"]
    long = Outcome(output="", answer="x" * 1500)
    judge_input = JudgeInput(item=item("party ideas"), outputs=(dfs, long), ctx=CTX)

    user = judges.PREFERENCE.build(judge_input).messages[1]["content"]

    assert user.startswith("Query:\nparty ideas\n\nAnswer_0:\n")
    shown_0 = json.loads(user.split("Answer_0:\n", 1)[1].split("\n\nAnswer_1:", 1)[0])
    shown_1 = json.loads(user.split("Answer_1:\n", 1)[1].split("\n\nGiven above", 1)[0])
    assert "method" not in shown_0 and shown_0["total_steps"] == 6
    assert shown_0["final_answer"] == json.loads(dfs.output)["final_answer"]
    assert len(shown_1["final_answer"]) == 1000  # annotate_preference cuts it
    assert user.endswith(judges.PREFERENCE_FORMAT)
    assert judges.PREFERENCE.precheck(JudgeInput(item=item(""), outputs=(cot, dfs))) is None
    same = judges.PREFERENCE.precheck(JudgeInput(item=item(""), outputs=(cot, cot)))
    assert same is not None and same.values == {"preferred": 0}
    # Identical answers asked in both orders: the first shown each time, a tie once combined.
    assert canonical_preference(0, "AB") == 1 and canonical_preference(0, "BA") == -1


def test_solvability_prompt_shows_the_query_and_the_candidate_tools() -> None:
    spec = ToolSpec(
        name="Data/querykeywords_for_keyword_analysis",
        description="Get the main keywords for a given search query.",
        parameters={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
    )
    ctx = Context(task=stabletoolbench.TASKS["pass_rate"], tools={spec.name: spec})
    query = "Main keywords for 'birthday party ideas'?"
    keys = (spec.name, "Finance/convert_for_rate_board_v2", "Financial/convert_for_rate_board_v2")
    judge_input = JudgeInput(item=item(query, keys), ctx=ctx)

    user = judges.SOLVABILITY.build(judge_input).messages[1]["content"]

    task = json.loads(user.split("Task:\n", 1)[1].split("\n\nNow give", 1)[0])
    assert task == {
        "query": query,
        # Named as the model sees them: ToolBench's names, with the category where two share
        # one; a tool the benchmark does not describe is named only.
        "available_tools": [
            {
                "name": "querykeywords_for_keyword_analysis",
                "description": spec.description,
                "parameters": spec.parameters,
            },
            {"name": "convert_for_rate_board_v2_for_finance"},
            {"name": "convert_for_rate_board_v2_for_financial"},
        ],
    }
    assert user.startswith("Please check whether the given task solvable")
    assert user.endswith(judges.SOLVABILITY_FORMAT)


def test_normalized_prompt_asks_the_lenient_yes_or_no(seeddata: Path) -> None:
    answer = outcomes(seeddata, COT)["608"]
    user = judges.PASS_NORMALIZED.build(pass_input(answer)).messages[1]["content"]
    assert "What is 2+2?" in user
    assert json.loads(answer.output)["final_answer"] in user
    assert "remember do not be too strict" in user


# --- reading replies ----------------------------------------------------------------------------

JUDGE = JudgeInput(item=item("q"))


@pytest.mark.parametrize(
    ("reply", "label"),
    [
        (
            'Here is my evaluation.\n```json\n{"reason": "It names sites and keywords.", '
            '"answer_status": "Solved"}\n```\nLet me know if you need more.',
            "Solved",
        ),
        (
            '{"name": "check_answer_status", "arguments": "{\\"answer_status\\": \\"Solved\\"}"}',
            "Solved",
        ),
        (
            '{"function_call": {"name": "parse_answer_status", "arguments": '
            '"{\\n  \\"answer_status\\": \\"Unsure\\",\\n  '
            '\\"reason\\": \\"cannot verify\\"\\n}"}}',
            "Unsure",
        ),
        ("{'answer_status': 'Unsolved', 'reason': 'a sorry message'}", "Unsolved"),
        ('{"reason": "x", "answer_status": "unsolved"}', "Unsolved"),
        ("Unsolved", "Unsolved"),
        ("**Solved**\nThe answer covers every part.", "Solved"),
        ("unsure.", "Unsure"),
        ("AnswerStatus.Solved", "Solved"),
        ("answer_status: Unsure", "Unsure"),
        # A completion prompt ends with '{"answer_status": "'; the model continues from there.
        ('Solved", "reason": "covers both parts', "Solved"),
    ],
)
def test_pass_replies_are_read(reply: str, label: str) -> None:
    verdict = judges.parse_pass(reply, JUDGE)
    assert verdict.ok, verdict.error
    assert verdict.values == {"label": label}


def test_pass_reply_keeps_the_reason() -> None:
    verdict = judges.parse_pass('{"reason": "lists the sites", "answer_status": "Solved"}', JUDGE)
    assert verdict.reasoning == "lists the sites"
    verdict = judges.parse_pass('Unsure", "reason": "no \\"real\\" data', JUDGE)
    assert verdict.reasoning == 'no "real" data'


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "The answer looks fine to me.",
        "Solvedness is relative",
        '{"reason": "x", "answer_status": "Partially solved"}',
        # The format line echoed back is not an answer.
        '{"reason": "<why>", "answer_status": "<Solved, Unsure or Unsolved>"}',
        '{"answer_status": 1}',
    ],
)
def test_pass_garbage_is_not_read(reply: str) -> None:
    verdict = judges.parse_pass(reply, JUDGE)
    assert not verdict.ok
    assert "answer_status" in verdict.error


@pytest.mark.parametrize(
    ("reply", "preferred"),
    [
        ('{"reason": "more informative", "index": 1}', 1),
        ('I compared both.\n{"index": 0, "reason": "fewer failed calls"}', 0),
        ('{"name": "select_better_answer", "arguments": "{\\"index\\": 1.0}"}', 1),
        ("1", 1),
        ("Answer_0", 0),
        ('0, "reason": "shorter"', 0),
    ],
)
def test_preference_replies_are_read_as_the_index_shown(reply: str, preferred: int) -> None:
    verdict = judges.parse_preference(reply, JUDGE)
    assert verdict.ok, verdict.error
    assert verdict.values == {"preferred": preferred}


@pytest.mark.parametrize("reply", ["tie", "2", '{"index": 2}', "I prefer the second one", ""])
def test_preference_gives_no_tie_and_reads_no_garbage(reply: str) -> None:
    assert not judges.parse_preference(reply, JUDGE).ok


@pytest.mark.parametrize(
    ("reply", "label"),
    [
        ('{"reason": "tools suffice", "task_status": "Solvable"}', "Solvable"),
        ("Unsolvable", "Unsolvable"),
        ("TaskStatus.Unsure", "Unsure"),
        ('Solvable", "reason": "ok', "Solvable"),
    ],
)
def test_solvability_replies_are_read(reply: str, label: str) -> None:
    assert judges.parse_solvability(reply, JUDGE).values == {"label": label}


def test_solvability_and_normalized_garbage_is_not_read() -> None:
    assert not judges.parse_solvability("maybe", JUDGE).ok
    assert not judges.parse_pass_normalized("hmm", JUDGE).ok
    assert judges.parse_pass_normalized('{"is_solved": true}', JUDGE).values == {"label": "Solved"}
    assert judges.parse_pass_normalized('false, "reason": "x"', JUDGE).values == {
        "label": "Unsolved"
    }


def test_details_follow_an_unsure_first_label() -> None:
    assert judges.FOLLOW_UP["stabletoolbench.pass"] == ("Unsure", "stabletoolbench.pass_details")
    assert judges.pass_label_chain("Unsure", "Solved") == "Solved"
    assert judges.pass_label_chain("Unsure", None) == "Unsure"
    assert judges.pass_label_chain("AnswerStatus.Unsolved", "Solved") == "Unsolved"


# --- SoPR ---------------------------------------------------------------------------------------


def test_sopr_of_the_example_matches_a_hand_computation(seeddata: Path) -> None:
    # given: each answer judged three times (the files' is_solved, keyed by round)
    cot = {qid: r["is_solved"] for qid, r in pass_results(seeddata, COT).items()}
    dfs = {qid: r["is_solved"] for qid, r in pass_results(seeddata, DFS).items()}
    assert cot["588"] == {
        "2": "AnswerStatus.Unsolved",
        "1": "AnswerStatus.Unsolved",
        "0": "AnswerStatus.Unsolved",
    }

    # then: CoT, every round: 588 Unsolved 0 + 1073 Solved 1 + 608 Solved 1 = 2/3;
    # mean over rounds 2/3, std 0. DFS: every answer Solved in every round: 1, std 0.
    assert judges.sopr_rounds(cot) == pytest.approx([2 / 3, 2 / 3, 2 / 3])
    result = judges.sopr(cot)
    assert result["sopr"] == pytest.approx(2 / 3)
    assert result["sopr_std"] == 0.0
    assert (result["n"], result["rounds"]) == (3.0, 3.0)
    assert judges.sopr(dfs)["sopr"] == 1.0


def test_sopr_weights_unsure_half_and_spreads_like_np_std() -> None:
    labels = {
        "a": ["Solved", "Unsolved", "Unsure"],
        "b": ["Solved", "Solved", "Unsolved"],
        "c": ["Unsure", None],  # no label in round 1 and none in round 2: 0 there
    }
    # round 0: (1 + 1 + 0.5) / 3 = 0.8333; round 1: (0 + 1 + 0) / 3 = 0.3333;
    # round 2: (0.5 + 0 + 0) / 3 = 0.1667; mean 0.4444;
    # population std: sqrt(((0.3889)^2 + (0.1111)^2 + (0.2778)^2) / 3) = 0.2833
    assert judges.sopr_rounds(labels) == pytest.approx([2.5 / 3, 1 / 3, 0.5 / 3])
    result = judges.sopr(labels)
    assert result["sopr"] == pytest.approx(4 / 9)
    deviations = [2.5 / 3 - 4 / 9, 1 / 3 - 4 / 9, 0.5 / 3 - 4 / 9]
    assert result["sopr_std"] == pytest.approx(math.sqrt(sum(d * d for d in deviations) / 3))
    assert result["sopr_std"] == pytest.approx(0.28328, abs=1e-5)
    sample = judges.sopr(labels, ddof=1)["sopr_std"]
    assert sample == pytest.approx(math.sqrt(sum(d * d for d in deviations) / 2))
    assert judges.sopr({})["sopr"] is None
    with pytest.raises(ValueError, match="not a pass label"):
        judges.sopr({"a": ["Passed"]})


# --- SoWR ---------------------------------------------------------------------------------------


def preference_counts(seeddata: Path) -> dict[str, dict[str, Any]]:
    path = example(seeddata) / "preference_results" / f"{GROUP}_{COT}_{DFS}.json"
    return json.loads(path.read_text())


def test_sowr_of_the_example_matches_a_hand_computation(seeddata: Path) -> None:
    # given: DFS is the candidate, CoT the reference (eval_preference.py's output / ref models)
    dfs = {qid: r["is_solved"] for qid, r in pass_results(seeddata, DFS).items()}
    cot = {qid: r["is_solved"] for qid, r in pass_results(seeddata, COT).items()}
    # 588: DFS Solved (3 of 3), CoT Unsolved (3 of 3, no Finish): the labels decide, DFS wins.
    assert judges.majority_label(dfs["588"]) == "Solved"
    assert judges.majority_label(cot["588"]) == "Unsolved"
    assert judges.decide_by_labels("Solved", "Unsolved") == 1
    # 608 and 1073: both Solved, the judge decides. The example's judge preferred DFS in all
    # three rounds on 608 and in two of three on 1073 (preference_results); the orders shown
    # were not recorded, so two readings of the platform's two-order rule:
    consistent = {"608": [(1, 1)] * 3, "1073": [(1, 1), (1, 1), (-1, -1)]}
    position_bound = {"608": [(1, 1)] * 3, "1073": [(1, -1), (-1, 1), (1, -1)]}

    # then: consistent judge: 3 wins of 3. One whose every 1073 verdict follows the position:
    # each repeat of 1073 is a tie, so 1073 is a tie: 2 wins, 1 tie of 3.
    result = judges.sowr(dfs, cot, consistent)
    assert (result["sowr"], result["tie"], result["loss"]) == (1.0, 0.0, 0.0)
    assert (result["n"], result["incomplete"], result["by_labels"]) == (3.0, 0.0, 1.0)
    result = judges.sowr(dfs, cot, position_bound)
    assert result["sowr"] == pytest.approx(2 / 3)
    assert result["tie"] == pytest.approx(1 / 3)


def test_sowr_from_the_reference_counts_matches_its_result_files(seeddata: Path) -> None:
    counts = preference_counts(seeddata)
    # Three complete rounds each: 588 DFS 3 - 0, 608 DFS 3 - 0, 1073 DFS 2 - 1.
    tally = {qid: (c[DFS], c[COT]) for qid, c in counts.items()}
    assert tally == {"588": (3, 0), "608": (3, 0), "1073": (2, 1)}
    assert all(c[f"round_{i}"] == "complete" for c in counts.values() for i in range(3))
    # 588 is decided by the labels in every round: (3, 0), as recorded.
    assert judges.decide_by_labels("Solved", "Unsolved") == 1
    result = judges.sowr_from_counts(tally)
    assert (result["sowr"], result["tie"], result["loss"], result["n"]) == (1.0, 0.0, 0.0, 3.0)
    # The CSV's preference_label: 1 reference better, 2 candidate better, 3 tie.
    path = example(seeddata) / "preference_results" / f"{GROUP}_{COT}_{DFS}.csv"
    csv.field_size_limit(10**8)
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    assert {row["query_id"]: row["preference_label"] for row in rows} == {
        "588": "2",
        "608": "2",
        "1073": "2",
    }


def test_labels_decide_before_the_judge() -> None:
    assert judges.decide_by_labels("Solved", "Unsure") == 1
    assert judges.decide_by_labels("Unsure", "Solved") == -1
    assert judges.decide_by_labels("Solved", "Solved") is None
    # The code's rule: with neither Solved, exactly one Unsure wins ...
    assert judges.decide_by_labels("Unsure", "Unsolved") == 1
    assert judges.decide_by_labels("Unsolved", "Unsure") == -1
    assert judges.decide_by_labels("Unsure", "Unsure") is None
    assert judges.decide_by_labels("Unsolved", "Unsolved") is None
    # ... METRICS.md's: only exactly one Solved decides.
    assert judges.decide_by_labels("Unsure", "Unsolved", unsure_decides=False) is None
    assert judges.majority_label(["Solved", "Solved", "Unsolved"]) == "Solved"
    assert judges.majority_label(["Solved", "Unsolved"]) == "Unsure"
    assert judges.majority_label([]) is None
    assert judges.pass_label("AnswerStatus.Unsure") == "Unsure"


def test_sowr_counts_missing_sides_and_missing_verdicts() -> None:
    candidate = {"a": "Solved", "b": "Solved", "c": "Unsolved", "d": "Solved", "e": []}
    reference = {"a": "Solved", "b": "Unsolved", "c": "Unsolved", "x": "Solved", "e": "Solved"}
    preferences = {"a": [(-1, -1), (None, -1)]}  # c: the judge never answered
    result = judges.sowr(candidate, reference, preferences)
    # a: loss (the one complete repeat prefers the reference); b: win by labels; c: incomplete;
    # d: no reference answer, a win; x: no candidate answer, a loss; e: no candidate label.
    assert (result["n"], result["incomplete"], result["by_labels"]) == (4.0, 2.0, 1.0)
    assert (result["win"], result["loss"], result["tie"]) == (0.5, 0.5, 0.0)


# --- solvability --------------------------------------------------------------------------------


def test_a_query_is_solvable_only_when_all_three_judges_say_so() -> None:
    assert judges.query_solvable(["Solvable", "solvable", "TaskStatus.Solvable"]) is True
    assert judges.query_solvable(["Solvable", "Solvable", "Unsolvable"]) is False
    assert judges.query_solvable(["Solvable", "Solvable", "Unsure"]) is False
    assert judges.query_solvable([]) is None
    with pytest.raises(ValueError, match="not a solvability label"):
        judges.query_solvable(["Solvable", "yes", "Solvable"])
