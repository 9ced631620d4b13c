"""MetaTool's description-rewriting experiment (papers/000, section 4.3, Figure 6): an LLM
rewrites every tool description, the same task is run again on the new descriptions, and the
change in CSR is reported per tool and overall. Pure Python, no Django.

The prompt is the data file prompts/rewrite_description.txt (its header names its source); the
change is computed by benchmarks/kit/rewriting.py from the per-item `correct` scores.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from benchmarks.kit.analyses import (
    GROUP,
    Analysis,
    AnalysisInput,
    AnalysisMetric,
    RecordValue,
    Row,
    ScoreBreakdown,
    breakdown,
    score_of,
)
from benchmarks.kit.protocol import Context, Item, Prompt, Scored, ToolSpec
from benchmarks.suites.metatool.evaluate import _template

__all__ = [
    "BY_GOLD_TOOL",
    "PROMPT_FILE",
    "REWRITE_TASKS",
    "counted",
    "credited_tools",
    "read_rewrite",
    "rewrite_prompt",
    "with_rewriting",
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
        max_tokens=120,
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


# --- the analysis: CSR per gold tool, against the run repeated -----------------------------------


def _counted_record(record: Scored, ctx: Context) -> bool:
    return counted(record.scores, {"unparsed": ctx.option("unparsed") or "wrong"})


def _gold_group(record: Scored) -> str | None:
    tools = credited_tools(record.item)
    return " + ".join(tools) if tools else None


def _covers(record: Scored, ctx: Context) -> bool:
    return _counted_record(record, ctx) and _gold_group(record) is not None


def _compute(data: AnalysisInput) -> list[Row]:
    covered = [record for record in data.records if _covers(record, data.ctx)]
    rows = breakdown(covered, _gold_group, {"CSR": score_of("correct")})
    baseline = [r for r in data.inputs.get("baseline") or () if _covers(r, data.ctx)]
    return _beside(rows, breakdown(baseline, _gold_group, {"CSR": score_of("correct")}))


def _beside(rows: list[Row], baseline: list[Row]) -> list[Row]:
    """The run's rows with the CSR of the run it repeats and the change, per gold tool."""
    before = {row[GROUP]: row["CSR"] for row in baseline}
    rows = [dict(row) for row in rows]
    for row in rows:
        row["CSR_before"] = before.get(row[GROUP])
        old, new = row["CSR_before"], row["CSR"]
        row["change_percent"] = (
            None if old is None or new is None or old == 0 else round((new - old) / old * 100, 2)
        )
    return rows


def _covered_gold_group(record: Scored, ctx: Context) -> str | None:
    return _gold_group(record) if _counted_record(record, ctx) else None


BY_GOLD_TOOL = Analysis(
    name="rewriting_by_tool",
    title="CSR per gold tool, and its change on rewritten descriptions",
    by="tool",
    by_title="gold tool",
    metrics=(
        AnalysisMetric("CSR", "CSR (%)", mean_of="CSR"),
        AnalysisMetric("CSR_before", "CSR of the run repeated (%)"),
        AnalysisMetric("change_percent", "change (% of before)", percent=False),
    ),
    compute=_compute,
    covers=_covers,
    source="Fig. 6",
    description="Items by their gold tool(s). A run repeated on rewritten tool descriptions "
    "(rewrite_tool_descriptions) shows beside its CSR the CSR of the run it repeats, on the "
    "same items, and the percentage change; other runs have no before.",
    inputs=("baseline",),
    # each answer's gold tools (when CSR counts it) computed once and kept with it: the CSR per
    # gold tool of the run and of the run it repeats counted in the database
    score_breakdown=ScoreBreakdown(
        by_sample=RecordValue("gold_tools", _covered_gold_group), scores={"CSR": "correct"}
    ),
    beside_baseline=_beside,
)


def with_rewriting(analyses: Mapping[str, tuple[Analysis, ...]]) -> dict[str, tuple[Analysis, ...]]:
    """The suite's analyses with the per-tool change added to each task that credits items to
    a gold tool (awareness and reliability items credit none)."""
    tasks = ("similar", "scenario", "multi_tool")
    return {
        **analyses,
        **{task: (*analyses.get(task, ()), BY_GOLD_TOOL) for task in tasks},
    }
