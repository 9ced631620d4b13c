"""StableToolBench's published evaluation results: the pass-rate labels its evaluation wrote for
one method's answers, read so that the platform can store them as a judged run. Pure Python.

Published format (THUNLP-MT/StableToolBench @aa4ed9f, `data_example/pass_rate_results/`, which
toolbench/tooleval/eval_pass_rate.py writes): `pass_rate_results/<method>/<group>_<method>.json`,
one JSON object keyed by query id,

    {"<query_id>": {"query": str,
                    "tool_names": [str, ...],       the functions offered, Finish last
                    "answer_steps": str,            "Step 1: {...}\\nStep 2: {...}", each step the
                                                    Python repr of a tool call {'name',
                                                    'arguments' (the JSON text the model wrote),
                                                    'response' (the server's answer as text)}
                    "final_step": str,              "Final step: {...}", the last of them
                    "is_solved": {"<round>": "AnswerStatus.Solved" | "AnswerStatus.Unsure"
                                  | "AnswerStatus.Unsolved", ...}}}

one label per evaluation round (the scripts evaluate each answer 3 times; rounds 0, 1, 2, in
any key order). Later versions of the script also write "passed", "failed", "task_solvable",
"reason" and "not_hallucinate" per query: "reason" (the judge's last explanation) becomes the
judgments' reasoning, the others are not read. The same folder holds
a tab-separated copy (`.csv`); the JSON is what is read.

The group and the method come from the path: the file is `<group>_<method>.json` inside the
folder `<method>/` (a name without that folder must start with one of the six groups and "_").

`read_pass_results(path)` returns one PassResult per query, in file order, all checked first
(ImportFormatError names the file, the query id and the field): the query, the labels by
round (canonical spelling, `judges.pass_label`), the published label texts, and the answer.
The answer is ToolBench's answer object (evaluate.py) rebuilt from the steps, so that the
platform's parse, score and judges read it as they read a converted answer: an empty system
and user node, then one tool node per step; final_answer is the arguments of a final Finish
call ("" when the answer ends without one, which the reference counts Unsolved without asking:
"'name': 'Finish'" not in final_step). The results file holds no thoughts: the converted
predictions file (model_predictions_converted/<method>/<group>.json) has the whole answer, and
the platform's import takes it instead when it is given. A step that is not a Python literal
of plain data is kept as its text (its tool name read from it, as evaluate._tool_message
does). Every query must have labels for the same rounds: the reference counts a round a query
lacks as 0 (Unsolved), which labels cannot say, so a file that leaves one out is refused.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.kit.base import ImportFormatError, load_json, type_name
from benchmarks.kit.judging import Verdict
from benchmarks.kit.predictions import python_literal
from benchmarks.kit.protocol import PublishedOutput
from benchmarks.kit.registry import PublishedJudgment, PublishedJudgments
from benchmarks.suites.stabletoolbench.evaluate import FINISH, GROUPS, read_predictions
from benchmarks.suites.stabletoolbench.judges import pass_label

__all__ = [
    "PassResult",
    "answer_from_steps",
    "pass_judgments",
    "pass_results_group",
    "read_pass_results",
]

_GROUP = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-]{0,99}$")
_STEP = re.compile(r"^Step (\d+): ", re.MULTILINE)
_FINAL = "Final step: "


@dataclass(frozen=True, slots=True)
class PassResult:
    """One query's published pass labels and the answer they judged."""

    external_id: str
    split: str
    query: str
    labels: dict[int, str]  # round -> Solved / Unsure / Unsolved
    published: dict[int, str]  # round -> the label as written ("AnswerStatus.Solved")
    output: str  # the answer object as JSON text
    reason: str = ""
    source: str = ""

    def verdict(self, round_number: int) -> Verdict:
        return Verdict(True, {"label": self.labels[round_number]}, reasoning=self.reason)

    def published_output(self) -> PublishedOutput:
        return PublishedOutput(
            external_id=self.external_id, output=self.output, split=self.split, source=self.source
        )


def pass_results_group(path: Path) -> tuple[str, str]:
    """(group, method) of a results file `<method>/<group>_<method>.json`."""
    name = path.name
    if not name.lower().endswith(".json"):
        hint = " (the .json beside this tab-separated copy)" if name.endswith(".csv") else ""
        raise ImportFormatError(
            "is not a pass-rate results file: expected pass_rate_results/<method>/"
            f"<group>_<method>.json{hint}",
            file=path,
        )
    stem = name[: -len(".json")]
    method = path.parent.name
    if method and stem.endswith(f"_{method}") and len(stem) > len(method) + 1:
        group = stem[: -len(method) - 1]
    else:
        group = next((g for g in GROUPS if stem.startswith(f"{g}_")), "")
        method = stem[len(group) + 1 :] if group else ""
    if not group or not method or not _GROUP.match(group):
        raise ImportFormatError(
            "is not named as StableToolBench names pass-rate results: <method>/<group>_"
            f"<method>.json, or <group>_<method>.json with a group among {', '.join(GROUPS)}",
            file=path,
        )
    return group, method


def _steps(text: str) -> list[str]:
    """The step texts of answer_steps ("Step N: ..." each; a line without the prefix continues
    the step before it)."""
    starts = list(_STEP.finditer(text))
    if not starts:
        return [text] if text.strip() else []
    steps = []
    for index, match in enumerate(starts):
        end = starts[index + 1].start() if index + 1 < len(starts) else len(text)
        steps.append(text[match.end() : end].rstrip("\n"))
    return steps


def _message(step: str) -> dict[str, Any] | str:
    try:
        value = python_literal(step)
    except ValueError:
        return step
    if not isinstance(value, dict):
        return step
    return {
        "name": str(value.get("name", "")),
        "arguments": value.get("arguments", ""),
        "response": value.get("response", ""),
    }


def answer_from_steps(answer_steps: str, final_step: str, method: str = "") -> dict[str, Any]:
    """ToolBench's answer object from the steps of a results file (see the module docstring)."""
    steps = _steps(answer_steps)
    if not steps and final_step.startswith(_FINAL) and final_step[len(_FINAL) :].strip():
        steps = [final_step[len(_FINAL) :]]
    nodes: list[dict[str, Any]] = [
        {"role": "system", "message": ""},
        {"role": "user", "message": ""},
    ]
    nodes += [{"role": "tool", "message": _message(step)} for step in steps]
    last = nodes[-1]["message"] if steps else None
    final = ""
    if isinstance(last, dict) and last["name"] == FINISH:
        arguments = last["arguments"]
        final = arguments if isinstance(arguments, str) else json.dumps(arguments)
    chain: list[dict[str, Any]] = []
    for node in reversed(nodes):
        node["next"] = chain
        chain = [node]
    return {
        "method": method,
        "total_steps": len(nodes),
        "final_answer": final,
        "answer_details": chain,
    }


def _text(record: dict[str, Any], key: str, fail: Any, *, optional: bool = False) -> str:
    value = record.get(key)
    if value is None and optional:
        return ""
    if value is None:
        raise fail("missing", key)
    if not isinstance(value, str):
        raise fail(f"expected text, got {type_name(value)}", key)
    return value


def _labels(value: Any, fail: Any) -> tuple[dict[int, str], dict[int, str]]:
    if not isinstance(value, dict) or not value:
        got = "an empty object" if value == {} else type_name(value)
        raise fail(
            'expected an object of labels by round ({"0": "AnswerStatus.Solved", ...}), got ' + got,
            "is_solved",
        )
    labels: dict[int, str] = {}
    published: dict[int, str] = {}
    for key, label in value.items():
        where = f"is_solved.{key}"
        if not str(key).strip().isdigit():
            raise fail("expected a round number (0, 1, 2...) as the key", where)
        if not isinstance(label, str):
            raise fail(f"expected a label, got {type_name(label)}", where)
        try:
            canonical = pass_label(label)
        except ValueError as exc:
            raise fail(str(exc), where) from None
        labels[int(key)] = canonical
        published[int(key)] = label
    return dict(sorted(labels.items())), dict(sorted(published.items()))


def read_pass_results(path: Path) -> list[PassResult]:
    """The published pass labels of one results file (see the module docstring)."""
    group, method = pass_results_group(path)
    data = load_json(path)
    if not isinstance(data, dict):
        raise ImportFormatError(
            f"expected an object keyed by query id, got {type_name(data)}", file=path
        )
    if not data:
        raise ImportFormatError("holds no query", file=path)
    results: list[PassResult] = []
    rounds: tuple[int, ...] | None = None
    first = ""
    for query_id, record in data.items():

        def fail(
            message: str, field: str | None = None, query_id: str = query_id
        ) -> ImportFormatError:
            return ImportFormatError(message, file=path, record=query_id, field=field)

        if not query_id.strip():
            raise fail("is an empty query id")
        if not isinstance(record, dict):
            raise fail(
                f"expected an object {{query, answer_steps, final_step, is_solved}}, got "
                f"{type_name(record)}"
            )
        query = _text(record, "query", fail)
        steps = _text(record, "answer_steps", fail)
        final_step = _text(record, "final_step", fail, optional=True)
        labels, published = _labels(record.get("is_solved"), fail)
        if rounds is None:
            rounds, first = tuple(labels), query_id
        elif tuple(labels) != rounds:
            raise fail(
                f"has labels for rounds {list(labels)}, query {first} for rounds {list(rounds)}: "
                "the reference counts a missing round as Unsolved, which no label records; "
                "give files whose queries were all judged in the same rounds",
                "is_solved",
            )
        reason = record.get("reason")
        results.append(
            PassResult(
                external_id=query_id.strip(),
                split=group,
                query=query,
                labels=labels,
                published=published,
                output=json.dumps(answer_from_steps(steps, final_step, method), ensure_ascii=False),
                reason=reason if isinstance(reason, str) else "",
                source=f"{path}, record {query_id}",
            )
        )
    return results


def pass_judgments(path: Path, answers: Path | None, task: str) -> PublishedJudgments:
    """The `stabletoolbench-pass` judgment format (a registry.JudgmentReader): a results file's
    labels as `stabletoolbench.pass` verdicts, one per query and round (repeat = round), so the
    job's SoPR is the reference's. The judged outputs are the answers rebuilt from the file's
    steps, or, given `answers`, the converted predictions file's answer objects
    (model_predictions_converted/<method>/<group>.json, every labelled query in it). `task` is
    the run's task: pass_rate (the default) or preference (runs compared by a preference judge
    must share it)."""
    task = task or "pass_rate"
    results = read_pass_results(path)
    group = results[0].split
    outputs = [r.published_output() for r in results]
    if answers is not None:
        given = {o.external_id: o for o in read_predictions(task, answers)}
        for index, result in enumerate(results):
            output = given.get(result.external_id)
            if output is None:
                raise ImportFormatError(
                    f"{answers}: no answer to query {result.external_id}, which {path} labels"
                )
            if output.split != group:
                raise ImportFormatError(
                    f"{answers} holds group {output.split}'s answers; {path} labels {group}'s"
                )
            outputs[index] = output
    return PublishedJudgments(
        template="stabletoolbench.pass",
        task=task,
        items=[
            PublishedJudgment(
                external_id=result.external_id,
                split=group,
                query=result.query,
                output=output,
                verdicts={number: result.verdict(number) for number in result.labels},
                raw=dict(result.published),
                source=result.source,
                name=f"{group}/{result.external_id}",
            )
            for result, output in zip(results, outputs, strict=True)
        ],
        where=f"group {group}",
    )
