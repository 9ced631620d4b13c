"""MetaTool's description-rewriting experiment (papers/000, section 4.3, Figure 6): an LLM
rewrites every tool description, the same task is run again on the new descriptions, and the
change in CSR is reported per tool and overall. Pure Python, no Django.

The prompt is the data file prompts/rewrite_description.txt (its header names its source); the
change is computed by benchmarks/suites/rewriting.py from the per-item `correct` scores.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from benchmarks.suites.metatool.evaluate import _template
from benchmarks.suites.protocol import Item, Prompt, ToolSpec

__all__ = [
    "PROMPT_FILE",
    "REWRITE_TASKS",
    "counted",
    "credited_tools",
    "read_rewrite",
    "rewrite_prompt",
]

PROMPT_FILE = "benchmarks/suites/metatool/prompts/rewrite_description.txt"
# The selection tasks whose prompts show the candidates' descriptions; awareness shows none.
REWRITE_TASKS = ("similar", "scenario", "reliability", "multi_tool")
# A new description longer than this is cut (a model that does not stop writes on and on).
MAX_DESCRIPTION = 2000
_PLACEHOLDER = re.compile(r"\{(tool_name|tool_description)\}")
_CUE = re.compile(r"^\s*(?:new description|description)\s*:\s*", re.IGNORECASE)


def rewrite_prompt(tool: ToolSpec) -> Prompt:
    """The request for one tool's new description: one user message (chat); a base model
    continues the same text after its answer cue and stops at the end of the paragraph."""
    values = {"tool_name": tool.name, "tool_description": tool.description}
    text = _PLACEHOLDER.sub(lambda m: values[m.group(1)], _template("rewrite_description"))
    return Prompt(
        messages=[{"role": "user", "content": text}],
        text=text + " ",
        stop=("\n\n",),
        max_tokens=160,
    )


def read_rewrite(text: str) -> str:
    """The new description in an answer: its first paragraph, without a repeated cue or
    surrounding quotes, whitespace collapsed, at most MAX_DESCRIPTION characters; "" when the
    answer holds none (the tool then keeps its description)."""
    paragraph = next((p for p in re.split(r"\n\s*\n", text.strip()) if p.strip()), "")
    paragraph = _CUE.sub("", paragraph.strip())
    paragraph = " ".join(paragraph.split())
    if len(paragraph) >= 2 and paragraph[0] == paragraph[-1] and paragraph[0] in "\"'":
        paragraph = paragraph[1:-1].strip()
    return paragraph[:MAX_DESCRIPTION]


def credited_tools(item: Item) -> tuple[str, ...]:
    """The tools an item's score tells about: its gold tool(s), whose descriptions the query
    was written for (an awareness or reliability item's gold is never offered, so none)."""
    reference = item.reference if isinstance(item.reference, Mapping) else {}
    if "tools" in reference:
        return tuple(str(t) for t in reference["tools"])
    if item.split == "queries" and reference.get("tool"):
        return (str(reference["tool"]),)
    return ()


def counted(scores: Mapping[str, Any], options: Mapping[str, Any]) -> bool:
    """Whether an item is in CSR's denominator: all are, except unparsed answers when the run's
    option unparsed is "exclude" (as aggregate counts them)."""
    return not (options.get("unparsed") == "exclude" and scores.get("unparsed"))
