"""BFCL v4's overall score as the suite declares it (benchmarks/suites/bfcl/overall.py), on
scores whose figures are computed here by hand: simple is a mean inside non-live, live is
weighted by count, the agentic sections nest, the overall weighs 10/10/10/30/40; a category not
run is missing, and so is every figure above it, where BFCL's own table would count it as 0.
On a complete set, every figure is the one BFCL's own aggregation functions give (read from the
pinned wheel and run as they are)."""

from __future__ import annotations

import ast
import zipfile
from pathlib import Path
from typing import Any

import pytest

from benchmarks.kit.overall import TaskScore, complete_weight, figures
from benchmarks.kit.registry import get_suite
from benchmarks.suites.bfcl.overall import OVERALL
from tests.suites.bfcl.real_wheel import real_wheel  # noqa: F401 - a fixture

SCORES: dict[str, TaskScore | None] = {
    "simple_python": TaskScore(90.0, 400),
    "simple_java": TaskScore(60.0, 100),
    "simple_javascript": TaskScore(30.0, 50),
    "multiple": TaskScore(80.0, 200),
    "parallel": TaskScore(70.0, 200),
    "parallel_multiple": TaskScore(50.0, 200),
    "live_simple": TaskScore(80.0, 100),
    "live_multiple": TaskScore(60.0, 300),
    "live_parallel": TaskScore(40.0, 50),
    "live_parallel_multiple": TaskScore(20.0, 50),
    "irrelevance": TaskScore(90.0, 240),
    "live_irrelevance": TaskScore(70.0, 800),
    "live_relevance": TaskScore(100.0, 16),
    "multi_turn_base": TaskScore(40.0, 200),
    "multi_turn_miss_func": TaskScore(30.0, 200),
    "multi_turn_miss_param": TaskScore(20.0, 200),
    "multi_turn_long_context": TaskScore(10.0, 200),
    "web_search_base": TaskScore(50.0, 100),
    "web_search_no_snippet": TaskScore(30.0, 100),
    "memory_kv": TaskScore(30.0, 155),
    "memory_vector": TaskScore(20.0, 155),
    "memory_rec_sum": TaskScore(10.0, 155),
}


def test_every_section_of_a_complete_set_of_categories() -> None:
    found = figures(OVERALL, SCORES)
    value = {name: figure.value for name, figure in found.items()}
    # simple: (90 + 60 + 30) / 3, whatever the sizes (400, 100, 50)
    assert value["simple"] == pytest.approx(60.0)
    # non-live: (60 + 80 + 70 + 50) / 4
    assert value["non_live"] == pytest.approx(65.0)
    # live, by count: (80*100 + 60*300 + 40*50 + 20*50) / 500 = 29000 / 500 (unweighted: 50)
    assert value["live"] == pytest.approx(58.0)
    # irrelevance: (90 + 70) / 2, whatever the sizes (240, 800)
    assert value["hallucination"] == pytest.approx(80.0)
    # multi-turn: (40 + 30 + 20 + 10) / 4
    assert value["multi_turn"] == pytest.approx(25.0)
    # agentic: web search (50 + 30) / 2 = 40, memory (30 + 20 + 10) / 3 = 20, then (40 + 20) / 2
    assert value["web_search"] == pytest.approx(40.0)
    assert value["memory"] == pytest.approx(20.0)
    assert value["agentic"] == pytest.approx(30.0)
    # 0.1*65 + 0.1*58 + 0.1*80 + 0.3*25 + 0.4*30 = 6.5 + 5.8 + 8 + 7.5 + 12
    assert value["overall"] == pytest.approx(39.8)
    # live relevance is shown, counted nowhere
    assert value["live_relevance"] == 100.0
    assert "live_relevance" not in OVERALL.tasks
    assert complete_weight(OVERALL, found) == pytest.approx(1.0)


def test_without_the_agentic_categories_the_overall_is_missing_not_27_8() -> None:
    agentic = ("web_search_base", "web_search_no_snippet", "memory_kv", "memory_vector")
    scores = {
        name: score for name, score in SCORES.items() if name not in (*agentic, "memory_rec_sum")
    }
    found = figures(OVERALL, scores)
    # BFCL's table would say 6.5 + 5.8 + 8 + 7.5 + 0 = 27.8: agentic counted as 0
    assert found["overall"].value is None
    assert found["overall"].missing == (*agentic, "memory_rec_sum")
    assert found["agentic"].value is None and found["memory"].value is None
    # the complete sections keep their figures: 60 of the 100 points of weight
    assert found["multi_turn"].value == pytest.approx(25.0)
    assert complete_weight(OVERALL, found) == pytest.approx(0.6)


def test_one_missing_simple_language_makes_simple_and_non_live_missing() -> None:
    found = figures(OVERALL, {**SCORES, "simple_java": None})
    assert found["simple"].missing == ("simple_java",)
    assert found["non_live"].value is None and found["overall"].value is None
    assert found["live"].value == pytest.approx(58.0)
    # non-live missing takes its 10 points out of the complete weight
    assert complete_weight(OVERALL, found) == pytest.approx(0.9)


def test_a_missing_live_category_is_not_left_out_of_the_count_weighted_mean() -> None:
    found = figures(OVERALL, {**SCORES, "live_parallel": None})
    # (80*100 + 60*300 + 20*50) / 450 would be 60.0: not shown, since live_parallel is missing
    assert found["live"].value is None
    assert found["live"].missing == ("live_parallel",)


def test_the_formula_counts_bfcl_s_categories_each_once() -> None:
    suite = get_suite("bfcl")
    assert suite.overall is OVERALL
    counted = set(OVERALL.tasks)
    # 6 non-live, 4 live, 2 irrelevance, 4 multi-turn, 2 web search, 3 memory
    assert len(counted) == 21
    # every single-turn and multi-turn task but live_relevance is counted
    assert set(suite.tasks) - counted <= {"live_relevance"}
    assert [section.name for section in OVERALL.sections] == [
        "overall",
        "non_live",
        "simple",
        "live",
        "hallucination",
        "multi_turn",
        "agentic",
        "web_search",
        "memory",
    ]


# --- against BFCL's own aggregation functions ----------------------------------------------------

HELPER = "bfcl_eval/eval_checker/eval_runner_helper.py"
BFCL_FUNCTIONS = (
    "calculate_weighted_accuracy",
    "calculate_unweighted_accuracy",
    "calculate_percentage_weighted_accuracy",
)


def bfcl_functions(wheel: Path) -> dict[str, Any]:
    """BFCL's three aggregation functions, read from the pinned wheel and run as they are (the
    module itself is not imported: loading it reads BFCL's data and makes folders). They use
    nothing but builtins."""
    with zipfile.ZipFile(wheel) as archive:
        source = archive.read(HELPER).decode()
    tree = ast.parse(source)
    chosen = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in BFCL_FUNCTIONS]
    assert [n.name for n in chosen] == list(BFCL_FUNCTIONS)
    namespace: dict[str, Any] = {}
    exec(compile(ast.Module(body=chosen, type_ignores=[]), HELPER, "exec"), namespace)  # noqa: S102
    return namespace


def test_the_figures_are_bfcl_s_own_on_a_complete_set(real_wheel: Path) -> None:  # noqa: F811
    bfcl = bfcl_functions(real_wheel)
    weighted, unweighted = (
        bfcl["calculate_weighted_accuracy"],
        bfcl["calculate_unweighted_accuracy"],
    )
    percentage = bfcl["calculate_percentage_weighted_accuracy"]

    def entry(name: str) -> dict[str, Any]:
        score = SCORES[name]
        assert score is not None
        return {"accuracy": score.value, "total_count": score.n, "display_accuracy": score.value}

    simple = unweighted([entry(n) for n in ("simple_python", "simple_java", "simple_javascript")])
    non_live = unweighted(
        [simple, entry("multiple"), entry("parallel"), entry("parallel_multiple")]
    )
    live = weighted(
        [
            entry(n)
            for n in ("live_simple", "live_multiple", "live_parallel", "live_parallel_multiple")
        ]
    )
    irrelevance = unweighted([entry("irrelevance"), entry("live_irrelevance")])
    multi_turn = unweighted(
        [
            entry(n)
            for n in (
                "multi_turn_base",
                "multi_turn_miss_func",
                "multi_turn_miss_param",
                "multi_turn_long_context",
            )
        ]
    )
    web = unweighted([entry("web_search_base"), entry("web_search_no_snippet")])
    memory = unweighted([entry(n) for n in ("memory_kv", "memory_vector", "memory_rec_sum")])
    agentic = unweighted([web, memory])
    overall = percentage([non_live, live, irrelevance, multi_turn, agentic], [10, 10, 10, 30, 40])
    found = figures(OVERALL, SCORES)
    theirs = {
        "simple": simple,
        "non_live": non_live,
        "live": live,
        "hallucination": irrelevance,
        "multi_turn": multi_turn,
        "web_search": web,
        "memory": memory,
        "agentic": agentic,
        "overall": overall,
    }
    for name, figure in theirs.items():
        assert found[name].value == pytest.approx(figure["accuracy"]), name
