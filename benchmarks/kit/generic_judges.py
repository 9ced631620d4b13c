"""Judges that fit any benchmark: a pairwise A / B / tie comparison of two outputs.

The prompt is ours. The judge sees the question (or the dialogue so far), the tools offered, and
the two outputs in the order the platform shows them; it answers with JSON
{"better": "1" | "2" | "tie", "reason": "..."}, or, asked by forced call, calls `verdict` with
those arguments (the pairwise schema of benchmarks.kit.judging.verdict_schema). Parsing accepts
that JSON anywhere in the text (code fences, commentary around it), or a plain answer whose
first line names "Answer 1", "Answer 2" or a tie; anything else is not read.
"""

from __future__ import annotations

import json
import re
from string import Template
from typing import Any

from benchmarks.kit.judging import JudgeInput, JudgeTemplate, Verdict, register
from benchmarks.kit.protocol import Prompt

SYSTEM = (
    "You are an impartial judge of AI assistants that use tools. You compare two answers to "
    "the same request and decide which one serves the user better: it is correct, it uses the "
    "right tools with the right arguments (or rightly uses none), and it is complete and clear. "
    "Ignore the order in which the answers are shown and their length as such. If they are "
    'equally good or equally bad, say "tie".'
)
FORMAT = (
    'Reply with JSON only: {"better": "1", "reason": "..."}, where "better" is "1" for Answer '
    '1, "2" for Answer 2, or "tie".'
)

# The user message; substituted in one pass, so an answer holding "$first" stays as written.
USER = Template("Request:\n$request\n\n${tools}Answer 1:\n$first\n\nAnswer 2:\n$second\n\n$format")

JSON_OBJECT = re.compile(r"\{[^{}]*\}", re.DOTALL)
PLAIN = re.compile(
    r"^\W*(?:(?:the\s+)?(?:better\s+(?:answer\s+)?is\s+)?answer\s*([12])\b|(tie)\b)", re.IGNORECASE
)


def _request_text(judge_input: JudgeInput) -> str:
    item = judge_input.item
    turns = item.input.get("turns")
    if isinstance(turns, list) and turns:
        lines = []
        for turn in turns:
            role = str(turn.get("role", "user")).capitalize()
            text = str(turn.get("content") or "")
            if turn.get("tool_calls"):
                text += f" [calls: {json.dumps(turn['tool_calls'], ensure_ascii=False)}]"
            lines.append(f"{role}: {text}")
        return "\n".join(lines)
    return str(item.input.get("query") or item.input.get("prompt") or "")


def _tools_text(judge_input: JudgeInput) -> str:
    names = list(judge_input.item.candidate_tools)
    if not names:
        return ""
    tools = judge_input.ctx.tools if judge_input.ctx else {}
    lines = []
    for name in names:
        spec = tools.get(name)
        lines.append(f"- {name}: {spec.description}" if spec and spec.description else f"- {name}")
    return "Tools offered:\n" + "\n".join(lines) + "\n\n"


def build_pairwise(judge_input: JudgeInput) -> Prompt:
    first, second = judge_input.outputs
    user = USER.substitute(
        request=_request_text(judge_input),
        tools=_tools_text(judge_input),
        first=first.output,
        second=second.output,
        format=FORMAT,
    )
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]
    # A base model continues the JSON it has been started on.
    text = f'{SYSTEM}\n\n{user}\n\nJudgement: {{"better": "'
    return Prompt(messages=messages, text=text, stop=("\n\n",), max_tokens=200)


def _preferred(value: Any) -> tuple[bool, int | None]:
    text = str(value).strip().lower().strip('"')
    if text in {"1", "answer 1", "a", "first"}:
        return True, 0
    if text in {"2", "answer 2", "b", "second"}:
        return True, 1
    if text in {"tie", "equal", "both", "neither", "0"}:
        return True, None
    return False, None


def parse_pairwise(text: str, judge_input: JudgeInput) -> Verdict:
    candidates = [text]
    if not text.lstrip().startswith("{"):
        # The completion prompt ends inside the JSON: `{"better": "` + what the model wrote.
        candidates.append('{"better": "' + text)
    for candidate in candidates:
        for match in JSON_OBJECT.finditer(candidate):
            try:
                obj = json.loads(match.group(0))
            except ValueError:
                continue
            if isinstance(obj, dict) and "better" in obj:
                ok, preferred = _preferred(obj["better"])
                if ok:
                    return Verdict(
                        True, {"preferred": preferred}, reasoning=str(obj.get("reason", ""))
                    )
    completion = re.match(r'\s*([12]|tie)"', text, re.IGNORECASE)
    if completion:
        ok, preferred = _preferred(completion.group(1))
        return Verdict(ok, {"preferred": preferred})
    plain = PLAIN.match(text.strip())
    if plain:
        preferred = None if plain.group(2) else int(plain.group(1)) - 1
        return Verdict(True, {"preferred": preferred}, reasoning=text.strip())
    return Verdict(False, error='no {"better": "1" | "2" | "tie"} in the answer')


PAIRWISE = register(
    JudgeTemplate(
        name="generic.pairwise",
        kind="pairwise",
        title="Which of two answers is better (A / B / tie)",
        source="ours",
        build=build_pairwise,
        parse=parse_pairwise,
        reminder=FORMAT,
        texts=lambda: {"system": SYSTEM, "user": USER.template, "format": FORMAT},
    )
)
