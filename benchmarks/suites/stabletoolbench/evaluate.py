"""StableToolBench's evaluation side: its answers as the platform stores them, and the format-level
score. The metrics of the benchmark (SoPR, SoWR) come from LLM judges: the templates and the pure
functions that add their verdicts up are in judges.py.

Tasks (TASKS; both read the six test groups by default, the queries whose id is in the group's
test_query_ids list, as the reference evaluation does):
  - pass_rate: the Solvable Pass Rate (SoPR), judged with `stabletoolbench.pass`;
  - preference: the Solvable Win Rate (SoWR) against a reference run on the same queries, judged
    with `stabletoolbench.pass` (both runs) and `stabletoolbench.preference`.
  A StableToolBench answer comes from an agent: a run solves each query with a bounded ReAct
  loop (agent.py `solve`) over the query's tools as the platform's virtual API server serves
  them (Context.toolbox), and stores the answer in ToolBench's answer object (method "ReAct@1").
  There is no single prompt, so `build_prompt` refuses. Published outputs of other methods (e.g.
  DFS) can still be imported (`read_predictions`, the `import_predictions` command). The
  automatic per-item score is `has_final_answer` (0/1: the answer ends with a Finish call that
  gives an answer, the check the reference makes before asking any judge); the run metric
  `answered` is its mean, in percent. The agent's options and their defaults: AGENT_OPTIONS.

Published outputs (`read_predictions`): the converted predictions that the reference evaluation
reads, `model_predictions_converted/<method>/<group>.json` (toolbench/tooleval/
convert_to_answer_format.py writes them): one JSON object keyed by query id,

    {"<query_id>": {"query": str,
                    "available_tools": [function, ...],   the functions offered, Finish last
                    "answer": {"method": str,             e.g. "CoT@1", "DFS_woFilter_w2"
                               "total_steps": int,        nodes in answer_details
                               "final_answer": str,       the Finish call's arguments as the
                                                          model wrote them (a JSON text), "" when
                                                          the run ended without one
                               "answer_details": [node]}}}

  where a node is {"role": "system" | "user" | "assistant" | "tool", "message": str | {"name",
  "arguments" (a JSON text), "response" (a text; "" for Finish)}, "next": [node, ...]} (a chain:
  the reference reduces DFS trees to one path). The group is the file name up to its first dot.
  Each record becomes PublishedOutput(external_id=query id, split=group, output=the `answer`
  object as JSON text): exactly what the reference judge reads (check_answer_status reads its
  final_answer, parse_answer_status and select_better_answer the whole object). A record without
  that shape raises ImportFormatError naming the file, record and field. A query id the file
  gives twice (json.loads would keep the last silently, and so does the reference) yields one
  output per member, each naming its line: the import's on_duplicate policy decides (refused by
  default; `last` is what the reference reads).

`parse` reads such a text back: Outcome.answer = the final answer's text (the "final_answer"
field of the Finish arguments; None when there is none, or when the model gave up), trace = one
step per tool call {"thought", "action", "arguments", "observation"} (the assistant text before
a call is its thought). A text that is not an answer object is Outcome(parsed=False).

`answer_record(outcome)` gives the judges the answer object: the stored one, or, for an outcome
made another way, one built from its answer and trace in the same shape (`answer_record_for`,
which the agent uses to store its answers).
`no_answer_reason(record)` is the reference's check for "no final answer": the last tool call is
not Finish (eval_pass_rate.py: "'name': 'Finish'" not in the final step), the final answer is
empty, or it holds "give_up_and_restart" (rtl.py check_is_solved).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from benchmarks.kit.base import (
    ImportFormatError,
    RecordSpan,
    check_records,
    check_value,
    parse_json_text,
    read_json,
    type_name,
)
from benchmarks.kit.protocol import (
    Context,
    Item,
    MetricSpec,
    Option,
    Outcome,
    Prompt,
    PublishedOutput,
    Scored,
    Scores,
    TaskSpec,
    mean,
    metric_specs,
    percent,
)

__all__ = [
    "AGENT_OPTIONS",
    "GROUPS",
    "TASKS",
    "aggregate",
    "answer_record",
    "answer_record_for",
    "build_prompt",
    "final_answer_text",
    "last_tool_name",
    "no_answer_reason",
    "parse",
    "prepare",
    "read_predictions",
    "score",
    "select",
    "trace_steps",
]

GROUPS = (
    "G1_instruction",
    "G1_category",
    "G1_tool",
    "G2_instruction",
    "G2_category",
    "G3_instruction",
)
_GROUP = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-]{0,99}$")

NOT_SERVED = (
    "StableToolBench has no single prompt: a run solves each query with a ReAct loop (solve) "
    "over the platform's virtual API server (the toolbox); published outputs can still be "
    "imported with import_predictions"
)

_DESCRIPTION_COMMON = (
    "Runs solve each query with a ReAct loop (Thought / Action / Action Input, ending with "
    "ToolBench's Finish) over the query's tools, served by the platform's virtual API server; "
    "published outputs (model_predictions_converted/<method>/<group>.json) can still be "
    "imported. The automatic metric `answered` is the share of answers that end with a Finish "
    "call giving an answer."
)

# The agent's limits (agent.py reads them with ctx.option; a run's own options win).
AGENT_OPTIONS: tuple[Option, ...] = (
    Option("max_steps", "integer", 6, "model calls per query", minimum=1),
    Option(
        "max_observation_chars",
        "integer",
        2000,
        "longer observations are cut, with a marker (0: never cut)",
        minimum=0,
    ),
    Option("max_tokens", "integer", 256, "token limit of each model reply", minimum=1),
    Option(
        "max_same_call",
        "integer",
        2,
        "an identical call (tool and arguments) runs at most this often; one more ends the attempt",
        minimum=1,
    ),
)

# The automatic scores (SoPR and SoWR are the judges'): whether an answer ends with a Finish
# call that gives one, the check the reference makes before asking any judge.
ITEM_METRICS = metric_specs(
    MetricSpec.score("has_final_answer", description="1 when a Finish call gives an answer")
)
RUN_METRICS = metric_specs(
    MetricSpec.score("answered", description="% of answers that end with a Finish call")
)

TASKS: dict[str, TaskSpec] = {
    "pass_rate": TaskSpec(
        name="pass_rate",
        title="Solvable pass rate (SoPR)",
        splits=GROUPS,
        metrics=("answered",),
        percent=frozenset({"answered"}),
        item_metrics=ITEM_METRICS,
        run_metrics=RUN_METRICS,
        options=AGENT_OPTIONS,
        agent=True,
        native=True,
        description="SoPR comes from the judge `stabletoolbench.pass` (Solved 1, Unsure 0.5, "
        "Unsolved 0; mean over the solvable queries, per evaluation round; mean and std over "
        "the rounds). " + _DESCRIPTION_COMMON,
    ),
    "preference": TaskSpec(
        name="preference",
        title="Solvable win rate (SoWR) against a reference run",
        splits=GROUPS,
        metrics=("answered",),
        percent=frozenset({"answered"}),
        item_metrics=ITEM_METRICS,
        run_metrics=RUN_METRICS,
        options=AGENT_OPTIONS,
        agent=True,
        native=True,
        description="SoWR comes from the judges: an answer Solved where the reference's is "
        "not wins; otherwise `stabletoolbench.preference` decides, asked in both orders (a "
        "win only when both agree). " + _DESCRIPTION_COMMON,
    ),
}


# --- the answer object --------------------------------------------------------------------------

FINISH = "Finish"
GIVE_UP = "give_up_and_restart"
# A tool node's message written as a Python dict repr (check_has_hallucination turns dicts into
# str(dict) before reading the name the same way).
_REPR_NAME = re.compile(r"'name':\s*'(.*?)'", re.DOTALL)
# The final_answer field of a Finish call's arguments that are not valid JSON (models cut or
# mis-escape them): a JSON string body, read up to its closing quote or the end of the text.
_LOOSE_FINAL = re.compile(r'"final_answer"\s*:\s*"((?:[^"\\]|\\.)*)', re.DOTALL)


def _nodes(details: Any) -> Iterator[dict[str, Any]]:
    """The nodes of answer_details depth first, in order (a chain yields its path)."""
    stack: list[Any] = [details]
    while stack:
        current = stack.pop()
        if isinstance(current, list):
            stack.extend(reversed(current))
        elif isinstance(current, dict):
            yield current
            stack.append(current.get("next") or [])


def _tool_message(node: dict[str, Any]) -> dict[str, Any] | None:
    message = node.get("message")
    if isinstance(message, dict):
        return message
    if isinstance(message, str):
        name = _REPR_NAME.search(message)
        return {"name": name.group(1), "arguments": "", "response": ""} if name else None
    return None


def last_tool_name(record: dict[str, Any]) -> str | None:
    """The name of the last tool call in the answer's details (None without any)."""
    name = None
    for node in _nodes(record.get("answer_details")):
        if node.get("role") == "tool":
            message = _tool_message(node)
            if message is not None:
                name = str(message.get("name", ""))
    return name


def no_answer_reason(record: dict[str, Any]) -> str | None:
    """Why the reference counts this answer Unsolved without asking a judge, or None.

    eval_pass_rate.py returns Unsolved ("No answer") when the final step is not a Finish call;
    rtl.py check_is_solved returns Unsolved ("Empty final answer!") when final_answer is "" or
    contains "give_up_and_restart" (a substring test on the raw text, reproduced as is)."""
    if last_tool_name(record) != FINISH:
        return "no Finish call at the end of the answer"
    final = record.get("final_answer")
    if not isinstance(final, str) or final == "":
        return "empty final answer"
    if GIVE_UP in final:
        return "the model gave up (give_up_and_restart)"
    return None


def final_answer_text(final_answer: Any) -> str | None:
    """The answer given to the user from the raw final_answer (the Finish arguments as written):
    their "final_answer" field; None for none or a give-up. A text that is not such JSON is
    read leniently (the field's string up to its end), else taken as the answer itself."""
    if not isinstance(final_answer, str) or not final_answer.strip():
        return None
    try:
        arguments = json.loads(final_answer)
    except ValueError:
        arguments = None
    if isinstance(arguments, dict):
        if arguments.get("return_type") == GIVE_UP:
            return None
        value = arguments.get("final_answer")
        if value is None:
            return None
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if GIVE_UP in final_answer:
        return None
    loose = _LOOSE_FINAL.search(final_answer)
    if loose:
        try:
            return str(json.loads(f'"{loose.group(1)}"'))
        except ValueError:
            return loose.group(1)
    return final_answer


def _arguments(raw: Any) -> Any:
    """A call's arguments as data when they are a JSON object text; the raw value otherwise."""
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            return raw
        return value if isinstance(value, dict) else raw
    return raw


def trace_steps(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The protocol's agent steps from answer_details: one per tool call, with the assistant
    text before it as its thought; a final assistant text without a call is a step of its own."""
    steps: list[dict[str, Any]] = []
    thought: list[str] = []
    for node in _nodes(record.get("answer_details")):
        role = node.get("role")
        if role == "assistant":
            text = node.get("message")
            if isinstance(text, str) and text.strip():
                thought.append(text.strip())
        elif role == "tool":
            message = _tool_message(node) or {}
            steps.append(
                {
                    "thought": "\n".join(thought),
                    "action": str(message.get("name", "")),
                    "arguments": _arguments(message.get("arguments", "")),
                    "observation": message.get("response", ""),
                }
            )
            thought = []
    if thought:
        steps.append(
            {"thought": "\n".join(thought), "action": "", "arguments": {}, "observation": ""}
        )
    return steps


def _is_answer_object(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("final_answer"), str)
        and isinstance(value.get("answer_details"), list | dict)
    )


def _record_from_outcome(
    outcome: Outcome, method: str = "", system: str = "", user: str = ""
) -> dict[str, Any]:
    """The answer object for an outcome not read from StableToolBench's format, in that format
    (the judges then see what they would see for a published answer)."""
    nodes: list[dict[str, Any]] = [
        {"role": "system", "message": system},
        {"role": "user", "message": user},
    ]
    last_action = ""
    last_arguments: Any = None
    for step in outcome.trace:
        thought = step.get("thought")
        if isinstance(thought, str) and thought.strip():
            nodes.append({"role": "assistant", "message": thought})
        action = step.get("action")
        if action:
            arguments = step.get("arguments", {})
            nodes.append(
                {
                    "role": "tool",
                    "message": {
                        "name": str(action),
                        "arguments": arguments
                        if isinstance(arguments, str)
                        else json.dumps(arguments, ensure_ascii=False),
                        "response": str(step.get("observation") or ""),
                    },
                }
            )
            last_action = str(action)
            last_arguments = arguments
    final = ""
    if isinstance(outcome.answer, str) and outcome.answer.strip():
        final = json.dumps(
            {"return_type": "give_answer", "final_answer": outcome.answer}, ensure_ascii=False
        )
        if last_action != FINISH:
            # An answer given to the user is what ToolBench's agents give through Finish.
            nodes.append(
                {"role": "tool", "message": {"name": FINISH, "arguments": final, "response": ""}}
            )
    elif (
        last_action == FINISH
        and isinstance(last_arguments, dict)
        and last_arguments.get("return_type") == GIVE_UP
    ):
        # A published final_answer is the Finish call's arguments, so a give-up's holds
        # give_up_and_restart (what check_is_solved looks for).
        final = json.dumps(last_arguments, ensure_ascii=False)
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


def answer_record_for(
    outcome: Outcome, *, method: str = "", system: str = "", user: str = ""
) -> dict[str, Any]:
    """The answer object of an outcome from its answer and trace (one tool node per step with
    an action, a Finish giving the answer last), with the method and the system and user
    messages filled in."""
    return _record_from_outcome(outcome, method=method, system=system, user=user)


def answer_record(outcome: Outcome) -> dict[str, Any]:
    """The answer object the judges read (see the module docstring)."""
    try:
        value = json.loads(outcome.output)
    except (ValueError, TypeError):
        value = None
    if _is_answer_object(value):
        return dict(value)
    return _record_from_outcome(outcome)


# --- the protocol -------------------------------------------------------------------------------


def select(items: Sequence[Item], ctx: Context) -> list[Item]:
    """The queries the reference evaluates: those its test_query_ids list names (an item the
    import did not check against a list is kept)."""
    return [item for item in items if item.metadata.get("in_test_query_ids") is not False]


def prepare(items: Sequence[Item], ctx: Context) -> list[dict[str, Any]]:
    """Per item at launch: in a stability experiment's run (option down_tools), the share of
    the tools the run's items offer that it made unavailable, in percent ("tools_down"), so
    that analyses pooling several runs read each item's own share; {} otherwise."""
    down = {str(t) for t in ctx.option("down_tools") or ()}
    if not down:
        return [{} for _ in items]
    offered = {t for item in items for t in item.candidate_tools}
    share = round(100.0 * len(down & offered) / len(offered), 2) if offered else 0.0
    return [{"tools_down": share} for _ in items]


def build_prompt(item: Item, ctx: Context, context: dict[str, Any]) -> Prompt:
    raise ValueError(NOT_SERVED)


def parse(text: str, item: Item, ctx: Context, context: dict[str, Any]) -> Outcome:
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not _is_answer_object(value):
        return Outcome(
            output=text,
            parsed=False,
            note="not a StableToolBench answer object {final_answer, answer_details}",
        )
    reason = no_answer_reason(value)
    return Outcome(
        output=text,
        answer=None if reason else final_answer_text(value["final_answer"]),
        trace=trace_steps(value),
        note=reason or "",
    )


def score(outcome: Outcome | None, item: Item, ctx: Context, context: dict[str, Any]) -> Scores:
    if outcome is None or not outcome.parsed:
        return {"has_final_answer": 0.0}
    return {"has_final_answer": 0.0 if no_answer_reason(answer_record(outcome)) else 1.0}


def aggregate(scored: Sequence[Scored], ctx: Context) -> Scores:
    return {"answered": percent(mean([s.scores.get("has_final_answer") for s in scored]))}


# --- published outputs --------------------------------------------------------------------------


def read_predictions(task: str, path: Path) -> Iterator[PublishedOutput]:
    """The answers of one converted predictions file (see the module docstring). The whole file
    is read and checked before the first output is returned."""
    if task not in TASKS:
        raise ImportFormatError(
            f"stabletoolbench has no task {task!r}; tasks: {', '.join(TASKS)}", file=path
        )
    group = path.name.split(".", 1)[0]
    if not path.name.lower().endswith(".json") or not _GROUP.match(group):
        raise ImportFormatError(
            "is not a converted predictions file: expected model_predictions_converted/"
            "<method>/<group>.json (the group, e.g. G1_instruction, is the name up to its "
            "first dot)",
            file=path,
        )
    text, data, spans = read_json(path)
    check_records(data, spans, file=path)
    if not isinstance(data, dict):
        raise ImportFormatError(
            f"expected an object keyed by query id, got {type_name(data)}", file=path
        )
    outputs: list[PublishedOutput] = []
    for query_id, record, where in _members(path, text, data, spans):

        def fail(
            message: str, field: str | None = None, query_id: str = query_id
        ) -> ImportFormatError:
            return ImportFormatError(message, file=path, record=query_id, field=field)

        if not query_id.strip():
            raise fail("is an empty query id")
        if not isinstance(record, dict):
            raise fail(
                f"expected an object {{query, available_tools, answer}}, got {type_name(record)}"
            )
        answer = record.get("answer")
        if not isinstance(answer, dict):
            raise fail(f"expected an object, got {type_name(answer)}", "answer")
        if not isinstance(answer.get("final_answer"), str):
            raise fail(
                f"expected a string, got {type_name(answer.get('final_answer'))}",
                "answer.final_answer",
            )
        if not isinstance(answer.get("answer_details"), list | dict):
            raise fail(
                f"expected a list of nodes, got {type_name(answer.get('answer_details'))}",
                "answer.answer_details",
            )
        outputs.append(
            PublishedOutput(
                external_id=query_id.strip(),
                output=json.dumps(answer, ensure_ascii=False),
                split=group,
                source=where,
            )
        )
    return iter(outputs)


def _members(
    path: Path, text: str, data: dict[str, Any], spans: Sequence[RecordSpan]
) -> Iterator[tuple[str, Any, str]]:
    """(query id, record, where) for each member of the file, in its order. json.loads keeps
    only the last value of a key given twice, so each member of a repeated key is parsed again
    from its own text, checked as check_records checks the others, and named by its line."""
    counts: dict[str, int] = {}
    for span in spans:
        if span.key is not None:
            counts[span.key] = counts.get(span.key, 0) + 1
    if len(counts) == len(spans) or any(span.key is None for span in spans):
        # Every key once (or a member the scan could not name, which json.loads has read).
        for query_id, record in data.items():
            yield query_id, record, f"{path}, record {query_id}"
        return
    for span in spans:
        key = str(span.key)
        if counts[key] == 1:
            yield key, data[key], f"{path}, record {key}"
            continue
        # The member's text is `"key": value`: as an object of its own, its one value.
        member_text = "{" + text[span.start : span.end] + "}"
        record = parse_json_text(member_text, file=path, line_offset=span.line - 1)[key]
        check_value(record, file=path, line=span.line, path=key, depth=1)
        yield key, record, f"{path}, line {span.line}, record {key}"
