"""BFCL's AST check, ours, in checks per second, against a baseline measured in the same run.

    python perf/bfcl_ast.py [--checks 5000] [--repeat 5] [--seed 31] [--time-limit 120]
                            [--target 20000] [--cpu-load N] [--results FILE]
                            [--max-spread 0.15] [--max-others 0.25]

Setup (not timed): --checks generated entries (seeded; test data, not BFCL's), each with its
function declarations, possible answer and a model's answer as Prompt-mode text: categories
simple_python, multiple, parallel and parallel_multiple in turn (a parallel answer has two to
four calls, shuffled), declarations of two to six parameters of BFCL's Python types (string,
integer, float, boolean, array of strings, dict), acceptable values with alternatives and
omissions, answers right or wrong in one way (a value, a type, a missing or extra parameter,
a name).

Timed, --repeat times each in turn, the medians kept:
- check: `checker.check` on every entry's decoded calls (what the target is about);
- decode + check: `decode.decode_prompt` on the text, then the check;
- baseline: `json.loads` of each entry's answer, declarations and calls as JSON text, what
  merely reading the same data costs; the ratio says how many times that the check takes.

Target: at least --target checks per second (check alone), and not disturbed (perf/honest.py:
the baseline's repeats spread over --max-spread, or other processes took more than
--max-others cores). The script stops after --time-limit seconds of wall time, whatever it is
doing, and reports a TIMEOUT result (perf/honest.py). Exit status: 0 pass, 1 missed or out of
time, 3 disturbed.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.suites.bfcl.checker import check  # noqa: E402
from benchmarks.suites.bfcl.decode import DecodeFailure, decode_prompt  # noqa: E402
from perf import honest  # noqa: E402

CATEGORIES = ["simple_python", "multiple", "parallel", "parallel_multiple"]
WORDS = ["Berkeley", "New York", "celsius", "fast", "low-carb", "2024-01-01", "USD", "Mars"]


def _value(kind: str, rng: random.Random) -> Any:
    if kind == "string":
        return rng.choice(WORDS)
    if kind == "integer":
        return rng.randint(0, 500)
    if kind == "float":
        return round(rng.uniform(0, 100), 2)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "array":
        return rng.sample(WORDS, rng.randint(1, 3))
    return {"mode": rng.choice(WORDS), "depth": rng.randint(1, 5)}


def _function(index: int, rng: random.Random) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    kinds = ["string", "integer", "float", "boolean", "array", "dict"]
    properties: dict[str, Any] = {}
    answers: dict[str, list[Any]] = {}
    for position in range(rng.randint(2, 6)):
        kind = rng.choice(kinds)
        name = f"p{position}_{kind}"
        declaration: dict[str, Any] = {"type": kind, "description": "test data"}
        if kind == "array":
            declaration["items"] = {"type": "string"}
        properties[name] = declaration
        value = _value(kind, rng)
        if kind == "dict":
            answers[name] = [{key: [item] for key, item in value.items()}]
        else:
            answers[name] = [value]
        if kind == "string":
            answers[name].append(value.upper())
        if position > 0 and rng.random() < 0.4:
            answers[name].append("")
    required = [name for name in properties if "" not in answers[name]][:2]
    function = {
        "name": f"tools.f{index}",
        "description": "test data",
        "parameters": {"type": "dict", "properties": properties, "required": required},
    }
    return function, answers


def _arguments(answers: dict[str, list[Any]], function: dict[str, Any]) -> dict[str, Any]:
    arguments: dict[str, Any] = {}
    for name, acceptable in answers.items():
        first = acceptable[0]
        if function["parameters"]["properties"][name]["type"] == "dict":
            first = {key: items[0] for key, items in first.items()}
        arguments[name] = first
    return arguments


def _spoil(arguments: dict[str, Any], rng: random.Random) -> tuple[str, dict[str, Any]]:
    """One way of being wrong, or none."""
    way = rng.choice(["right", "right", "value", "type", "missing", "extra", "name"])
    spoiled = dict(arguments)
    name = rng.choice(list(spoiled))
    if way == "value":
        value = spoiled[name]
        spoiled[name] = value + 1 if isinstance(value, int | float) else "other"
    elif way == "type":
        spoiled[name] = str(spoiled[name])
    elif way == "missing":
        del spoiled[name]
    elif way == "extra":
        spoiled["unknown"] = 1
    return way, spoiled


def _text(calls: list[tuple[str, dict[str, Any]]]) -> str:
    written = []
    for name, arguments in calls:
        inside = ", ".join(f"{key}={value!r}" for key, value in arguments.items())
        written.append(f"{name}({inside})")
    return "[" + ", ".join(written) + "]"


def generate(count: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    entries = []
    for index in range(count):
        category = CATEGORIES[index % len(CATEGORIES)]
        width = {"simple_python": 1, "multiple": 3, "parallel": 1, "parallel_multiple": 3}
        functions = []
        answers_by_name = {}
        for offset in range(width[category]):
            function, answers = _function(index * 10 + offset, rng)
            functions.append(function)
            answers_by_name[function["name"]] = answers
        if category in ("parallel", "parallel_multiple"):
            names = [rng.choice(functions)["name"] for _ in range(rng.randint(2, 4))]
        else:
            names = [rng.choice(functions)["name"]]
        expected = []
        calls = []
        for name in names:
            answers = answers_by_name[name]
            function = next(f for f in functions if f["name"] == name)
            expected.append({name: answers})
            way, arguments = _spoil(_arguments(answers, function), rng)
            calls.append((name + "x" if way == "name" else name, arguments))
        rng.shuffle(calls)
        entries.append(
            {"category": category, "function": functions, "answer": expected, "text": _text(calls)}
        )
    return entries


def timed(work: Callable[[], int]) -> tuple[float, int]:
    started = time.perf_counter()
    result = work()
    return time.perf_counter() - started, result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checks", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--target", type=float, default=20_000.0)
    honest.add_arguments(parser, time_limit=120)
    options = parser.parse_args(argv)

    def work() -> int:
        with honest.CpuLoad(options.cpu_load) as burner:
            return _measure(options, burner.pids)

    return honest.within_time_limit(options, "bfcl_ast.py", work)


def _measure(options: argparse.Namespace, burner: list[int]) -> int:
    entries = generate(options.checks, options.seed)
    decoded = [decode_prompt(entry["text"]) for entry in entries]
    failures = sum(isinstance(item, DecodeFailure) for item in decoded)
    if failures:
        print(f"bfcl_ast: {failures} generated answers do not decode: a bug of the generator")
        return honest.EXIT_MISSED
    texts = [
        (json.dumps(e["answer"]), json.dumps(e["function"]), json.dumps(e["text"])) for e in entries
    ]
    pairs = list(zip(entries, decoded, strict=True))

    def checks() -> int:
        passed = 0
        for entry, calls in pairs:
            category = entry["category"]
            verdict = check(
                calls, entry["function"], entry["answer"], category=category, language="python"
            )
            passed += verdict.valid
        return passed

    def decode_and_check() -> int:
        passed = 0
        for entry in entries:
            verdict = check(
                decode_prompt(entry["text"]),
                entry["function"],
                entry["answer"],
                category=entry["category"],
                language="python",
            )
            passed += verdict.valid
        return passed

    def baseline() -> int:
        read = 0
        for answer, function, text in texts:
            read += len(json.loads(answer)) + len(json.loads(function)) + len(json.loads(text))
        return read

    rows = []
    watch = honest.Watch(burner=burner).start()
    for _ in range(options.repeat):
        baseline_s, _ = timed(baseline)
        check_s, passed = timed(checks)
        both_s, passed_again = timed(decode_and_check)
        assert passed == passed_again
        rows.append((baseline_s, check_s, both_s))
    load = watch.stop()
    baseline_m, check_m, both_m = (statistics.median(c) for c in zip(*rows, strict=True))
    count = len(entries)
    rate = count / check_m
    print(f"entries: {count} ({passed} valid), median of {options.repeat}")
    print(f"check:          {rate:12,.0f} checks/s  ({check_m * 1000:.1f} ms)")
    print(f"decode + check: {count / both_m:12,.0f} checks/s  ({both_m * 1000:.1f} ms)")
    print(f"baseline json:  {count / baseline_m:12,.0f} entries/s ({baseline_m * 1000:.1f} ms)")
    reasons = honest.disturbed(
        [r[0] for r in rows],
        load.others,
        max_spread=options.max_spread,
        max_others=options.max_others,
    )
    met = rate >= options.target
    result = honest.Result(
        script="bfcl_ast.py",
        measured=f"BFCL AST checks of {count:,} generated entries (median of {options.repeat})",
        value=f"{rate:,.0f} checks/s (decode + check {count / both_m:,.0f}/s)",
        baseline=f"{count / baseline_m:,.0f} entries/s (json.loads of the same entries)",
        ratio=f"{check_m / baseline_m:.2f}x the baseline's time",
        target=f">= {options.target:,.0f} checks/s",
        verdict=honest.verdict(met, reasons),
        load=load.text(),
        command=honest.command_line(),
        notes=list(reasons),
    )
    result.print()
    honest.results_append(options.results, [result])
    return honest.exit_status([result.verdict])


if __name__ == "__main__":
    sys.exit(main())
