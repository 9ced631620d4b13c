"""MTU-Bench's analyses (Fig. 5, Fig. 7) on runs imported from the seed data: the outputs are
written turn by turn with known mistakes, so every row's n and value is counted here from the
samples themselves, and the command prints exactly the rows the page draws."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from benchmarks.kit.protocol import PublishedOutput
from benchmarks.models import Benchmark, Sample
from benchmarks.services import benchmark_import
from evaluation.models import Run, RunAnalysis
from evaluation.services import outputs_import

pytestmark = pytest.mark.django_db


def mtubench(seeddata: Path, *splits: str) -> Benchmark:
    benchmark_import(
        suite="mtubench",
        paths=[seeddata / "mtubench" / f"{split}_eval.jsonl" for split in splits],
        benchmark_name="MTU-Bench",
    )
    return Benchmark.objects.get(name="MTU-Bench")


def call(name: str, arguments: dict[str, Any]) -> str:
    return f"Action: {name}\nAction Input: {json.dumps(arguments)}\n"


def run_analysis(*args: str) -> dict[str, Any]:
    out = StringIO()
    call_command("run_analysis", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def gold_call(sample: Sample) -> tuple[str, dict[str, Any]] | None:
    calls = sample.reference["calls"]
    return (calls[0]["name"], calls[0]["arguments"]) if calls else None


# The M-S outputs: turn 1 (id _0) right; turn 2 a wrong tool (or, where no call was due, a
# call); turn 3 the right tool with an argument too many (or, where no call was due, a right
# answer in words); later turns an Action with no Action Input (a format error) where a call
# was due, else a right answer in words.
def m_s_output(sample: Sample) -> str:
    turn = sample.metadata["turn"] + 1
    gold = gold_call(sample)
    words = "Thought: nothing to call.\nThe weather is fine."
    if turn == 1:
        return call(*gold) if gold else words
    if turn == 2:
        return call("NoSuchTool", gold[1] if gold else {})
    if turn == 3:
        return call(gold[0], {**gold[1], "unasked": "yes"}) if gold else words
    return f"Thought: I call it.\nAction: {gold[0]}\n" if gold else words


def test_m_s_breakdowns_by_turn_by_tools_and_error_types(seeddata: Path) -> None:
    # given: every M-S turn of the seed data answered by the rules above
    benchmark = mtubench(seeddata, "M-S")
    samples = list(Sample.objects.filter(benchmark=benchmark, split="M-S").order_by("id"))
    outputs = [PublishedOutput(s.external_id, m_s_output(s), "M-S") for s in samples]
    run = outputs_import(benchmark=benchmark, task="M-S", outputs=outputs, name="rules")
    # when
    printed = run_analysis(str(run.pk))
    # then: the turns counted from the samples, TS / PS per turn as the rules make them
    assert set(printed) == {"run", "analyses"} and printed["run"] == run.pk
    assert list(printed["analyses"]) == ["by_turn", "by_tools", "error_types"]
    turns: dict[int, list[Sample]] = defaultdict(list)
    for sample in samples:
        turns[sample.metadata["turn"] + 1].append(sample)

    def right(sample: Sample) -> tuple[float, float]:
        turn, gold = sample.metadata["turn"] + 1, gold_call(sample)
        if turn == 1:
            return 1.0, 1.0
        if turn == 2:
            return 0.0, 0.0
        if turn == 3:
            return (1.0, 0.0) if gold else (1.0, 1.0)
        return (0.0, 0.0) if gold else (1.0, 1.0)

    def pct(values: list[float]) -> float:
        return round(100 * sum(values) / len(values), 2)

    by_turn = printed["analyses"]["by_turn"]
    assert by_turn["by"] == "turn"
    assert by_turn["rows"] == [
        {
            "group": turn,
            "n": len(members),
            "TS": pct([right(s)[0] for s in members]),
            "PS": pct([right(s)[1] for s in members]),
        }
        for turn, members in sorted(turns.items())
    ]
    # the seed data's M-S: 30 dialogues, turns 1..7
    assert [(row["group"], row["n"]) for row in by_turn["rows"]] == [
        (1, 30),
        (2, 30),
        (3, 27),
        (4, 25),
        (5, 18),
        (6, 5),
        (7, 1),
    ]
    assert by_turn["rows"][0]["TS"] == 100.0 and by_turn["rows"][1]["TS"] == 0.0

    tools: dict[int, list[Sample]] = defaultdict(list)
    for sample in samples:
        tools[len(sample.candidate_tools)].append(sample)
    by_tools = printed["analyses"]["by_tools"]
    assert by_tools["by"] == "tools"
    assert by_tools["rows"] == [
        {
            "group": count,
            "n": len(members),
            "TS": pct([right(s)[0] for s in members]),
            "PS": pct([right(s)[1] for s in members]),
        }
        for count, members in sorted(tools.items())
    ]

    expected: Counter[str] = Counter()
    for sample in samples:
        turn, gold = sample.metadata["turn"] + 1, gold_call(sample)
        if turn == 2:
            expected["action: incorrect" if gold else "action: excessive"] += 1
        elif turn == 3 and gold:
            expected["parameter"] += 1
        elif turn > 3 and gold:
            expected["format"] += 1
    wrong = sum(expected.values())
    order = ["action: missed", "action: excessive", "action: incorrect", "parameter", "format"]
    errors = printed["analyses"]["error_types"]
    assert errors["by"] == "error_type"
    assert errors["rows"] == [
        {"group": name, "n": expected[name], "share": round(100 * expected[name] / wrong, 2)}
        for name in order
        if expected[name]
    ]
    # and the groups weigh up to the run's own figures
    run.refresh_from_db()
    total = sum(row["n"] for row in by_turn["rows"])
    assert total == run.predictions.count() == len(samples)
    for metric in ("TS", "PS"):
        weighted = sum(row["n"] * row[metric] for row in by_turn["rows"]) / total
        assert weighted == pytest.approx(run.metrics[metric], abs=0.01)


def s_m_output(index: int, sample: Sample) -> str:
    calls = [(c["name"], c["arguments"]) for c in sample.reference["calls"]]
    kind = index % 4
    if kind == 0:  # right
        chosen = calls
    elif kind == 1:  # the last gold call left out
        chosen = calls[:-1]
    elif kind == 2:  # the right tools, the first one's arguments wrong
        chosen = [(calls[0][0], {"wrong": "value"}), *calls[1:]]
    else:  # other tools altogether
        chosen = [(f"Other{k}", args) for k, (_, args) in enumerate(calls)]
    return "Thought: calls.\n" + "".join(call(name, args) for name, args in chosen)


def test_s_m_error_types_tell_missed_parameter_and_incorrect_tools_apart(seeddata: Path) -> None:
    benchmark = mtubench(seeddata, "S-M")
    samples = list(Sample.objects.filter(benchmark=benchmark, split="S-M").order_by("id"))
    outputs = [
        PublishedOutput(s.external_id, s_m_output(i, s), "S-M") for i, s in enumerate(samples)
    ]
    run = outputs_import(benchmark=benchmark, task="S-M", outputs=outputs, name="rules")
    printed = run_analysis(str(run.pk))
    kinds = Counter(i % 4 for i in range(len(samples)))
    rows = printed["analyses"]["error_types"]["rows"]
    wrong = kinds[1] + kinds[2] + kinds[3]
    assert rows == [
        {"group": "action: missed", "n": kinds[1], "share": round(100 * kinds[1] / wrong, 2)},
        {"group": "action: incorrect", "n": kinds[3], "share": round(100 * kinds[3] / wrong, 2)},
        {"group": "parameter", "n": kinds[2], "share": round(100 * kinds[2] / wrong, 2)},
    ]
    # S-M has no turns: no by_turn; by_tools weighs up to TN and TO
    assert list(printed["analyses"]) == ["by_tools", "error_types"]
    by_tools = printed["analyses"]["by_tools"]["rows"]
    total = sum(row["n"] for row in by_tools)
    assert total == len(samples)
    run.refresh_from_db()
    for metric in ("TN", "TO"):
        weighted = sum(row["n"] * row[metric] for row in by_tools) / total
        assert weighted == pytest.approx(run.metrics[metric], abs=0.01)


def test_against_prints_the_other_runs_and_the_table_without_json(seeddata: Path) -> None:
    benchmark = mtubench(seeddata, "S-S", "M-S")
    samples = list(Sample.objects.filter(benchmark=benchmark, split="M-S").order_by("id"))
    first = outputs_import(
        benchmark=benchmark,
        task="M-S",
        outputs=[PublishedOutput(s.external_id, m_s_output(s), "M-S") for s in samples],
        name="rules",
    )
    second = outputs_import(
        benchmark=benchmark,
        task="M-S",
        outputs=[PublishedOutput(s.external_id, "no idea", "M-S") for s in samples],
        name="silent",
    )
    printed = run_analysis(str(first.pk), "--against", str(second.pk))
    assert [entry["run"] for entry in printed["against"]] == [second.pk]
    assert printed["analyses"] == run_analysis(str(first.pk))["analyses"]
    assert printed["against"][0] == run_analysis(str(second.pk))
    out = StringIO()
    call_command("run_analysis", str(first.pk), stdout=out)
    text = out.getvalue()
    assert "Tool selection by dialogue turn [by_turn]" in text
    assert text.splitlines()[3].split() == ["turn", "n", "TS", "PS"]
    # stored, and not computed again while the run is unchanged
    stored = RunAnalysis.objects.get(run=first)
    assert stored.status == RunAnalysis.Status.DONE
    before = stored.updated_at
    run_analysis(str(first.pk))
    stored.refresh_from_db()
    assert stored.updated_at == before
    # a run of another task is refused, naming it
    other = outputs_import(
        benchmark=benchmark,
        task="S-S",
        outputs=[PublishedOutput("S-S_0", "x", "S-S")],
        name="single",
    )
    with pytest.raises(CommandError, match=f"run {other.pk} is a run of MTU-Bench S-S"):
        run_analysis(str(first.pk), "--against", str(other.pk))
    with pytest.raises(CommandError, match="no run 999999"):
        run_analysis("999999")
    assert Run.objects.count() == 3
