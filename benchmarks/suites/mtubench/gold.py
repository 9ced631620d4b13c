"""MTU-Bench's gold as an expert refines it (a registry.GoldEditing): a turn's expected calls
("calls") beside "answer", the published object {name: arguments}, which follows the edited
calls. Pure Python."""

from __future__ import annotations

import copy
import re
from collections.abc import Collection, Mapping
from typing import Any

from benchmarks.kit.registry import GoldEditing

# The splits whose published answer writes "no call" as {"": {}}; the others write {}.
EMPTY_KEY_SPLITS = ("S-S", "M-S")


# What an output reference looks like before we know the toolset: Tool.field.
_DOTTED = re.compile(r"^[^\W\d][\w.\-]*\.[^\W\d]\w*$")
_FIELD = re.compile(r"[^\W\d]\w*")


def is_output_field(text: str, tools: Collection[str] | None) -> bool:
    """ "ToolName.field" with ToolName one of `tools` (the published golds' way of passing an
    earlier call's output); before the toolset is known, anything shaped like it."""
    if tools is None:
        return bool(_DOTTED.match(text))
    return any(
        text.startswith(f"{name}.") and _FIELD.fullmatch(text[len(name) + 1 :]) for name in tools
    )


def has_calls(reference: Any) -> bool:
    return isinstance(reference, Mapping) and "calls" in reference


def _is_no_call(answer: Any) -> bool:
    # The published no-call answers: {} (M-M, OOD), {"": {}} (S-S, M-S), {"": "{}"} (OOD).
    return isinstance(answer, dict) and all(not str(name).strip() for name in answer)


def write_answer(
    calls: list[dict[str, Any]],
    old: Mapping[str, Any],
    reference: dict[str, Any],
    split: str | None,
) -> None:
    """ "answer" rebuilt as {name: arguments} in call order, and kept as it was when the calls
    did not change (it tells {"": {}} from {}, a name written with a leading space, arguments
    written as a JSON string). An empty list keeps the old no-call encoding; when the old answer
    had calls, the empty answer is {"": {}} for the S-S and M-S splits and {} otherwise, as the
    published files write it. The answer holds one call per tool name: a repeated name raises
    ValueError."""
    if calls == old.get("calls") and "answer" in old:
        return
    names = [call["name"] for call in calls]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(
            f"MTU-Bench's answer holds one call per tool; {', '.join(repeated)} is called twice"
        )
    if calls:
        reference["answer"] = {call["name"]: copy.deepcopy(call["arguments"]) for call in calls}
    elif _is_no_call(old.get("answer")):
        reference["answer"] = copy.deepcopy(old["answer"])
    else:
        reference["answer"] = {"": {}} if split in EMPTY_KEY_SPLITS else {}


GOLD = GoldEditing(
    shape="calls",
    recognizes=has_calls,
    calls_key="calls",
    one_call_per_tool=True,
    write_calls=write_answer,
    output_reference=is_output_field,
)
