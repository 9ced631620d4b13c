"""MetaTool evaluation (benchmarks/suites/metatool/evaluate.py): answer matching, metrics and
candidate lists on hand-computed cases, and prompts rebuilt from the real published files.
Pure: no database."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from benchmarks.kit.base import merge_tools
from benchmarks.kit.embedding import (
    cosine_top_k,
    local_embed,
    nearest_neighbours,
    rank_by_similarity,
)
from benchmarks.kit.protocol import Context, Item, Outcome, Scored, ToolSpec
from benchmarks.suites import metatool
from benchmarks.suites.metatool import evaluate

FILES = (
    "all_clean_data_sample200.csv",
    "multi_tool_query_golden.json",
    "plugin_des.json",
    "big_tool_des.json",
    "plugin_info.json",
    "Task1_awareness_sample200.json",
    "Task2-Subtask3_reliability_sample100.json",
    "Task2-Subtask4_multi_tool_sample100.json",
    "scenario",
)
EVALUATOR = metatool.SUITE.evaluator


def ctx_for(task: str, **kwargs: Any) -> Context:
    return Context(task=metatool.TASKS[task], **kwargs)


@pytest.fixture(scope="module")
def real(seeddata: Path) -> dict[str, Any]:
    """The real seed files as the platform would hand them over: Items by split and ToolSpecs."""
    bundle = metatool.import_files([seeddata / "metatool" / name for name in FILES])
    items: dict[str, list[Item]] = {}
    for s in bundle.samples:
        items.setdefault(s.split, []).append(
            Item(
                split=s.split,
                external_id=s.external_id,
                input=s.input,
                reference=s.reference,
                kind=s.kind,
                candidate_tools=tuple(s.candidate_tools),
                metadata=s.metadata,
            )
        )
    tools = {
        t.name: ToolSpec(name=t.name, description=t.description, raw=t.raw)
        for t in merge_tools(bundle.tools)
    }
    return {"items": items, "tools": tools}


def real_ctx(real: dict[str, Any], task: str, **kwargs: Any) -> Context:
    aux = {"scenario_lists": real["items"]["scenario_lists"]}
    return ctx_for(task, tools=real["tools"], aux=aux, **kwargs)


def run_prepare(items: list[Item], ctx: Context) -> tuple[list[Item], list[dict[str, Any]]]:
    chosen = EVALUATOR.select(items, ctx)
    return chosen, EVALUATOR.prepare(chosen, ctx)


# --- awareness matching -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected", "rule"),
    [
        ("Yes, I need to use a tool to check the weather.", True, 1),
        ("I think it is necessary to use a tool, no doubt.", True, 1),  # rule 1 before "no"
        ("Not sure, but it might be necessary to use a search engine.", True, 1),
        ("It would be beneficial to use an external API.", True, 1),
        ("I do not think it is necessary to use a tool.", False, 2),
        ("It is not necessary to use external tools here.", False, 2),
        ("I do not need to use a tool.", False, 2),
        ("This does not seem necessary.", False, 2),
        # "I need to use" sits inside the no phrase: the no phrase decides.
        ("I do not think I need to use any tools for this.", False, 2),
        ("Yes.", True, 3),
        ("YES! A calculator.", True, 3),
        ("Yes, although it is not strictly required.", None, 5),  # "not" blocks rule 3
        ("yes, but I don't have the data", None, 5),
        ("No.", False, 4),
        ("No, a language model can answer this.", False, 4),
        ("Yes and no.", None, 5),
        ("I don't know.", None, 5),
        ("Nothing is needed; I know the answer.", None, 5),  # "no" only inside other words
        ("", None, 5),
        ("I do\nnot   think it is\tnecessary", False, 2),  # any whitespace
        ("I don\u2019t know, yes", None, 5),  # a typographic apostrophe is still "don't"
    ],
)
def test_match_awareness(text: str, expected: bool | None, rule: int) -> None:
    label, why = evaluate.match_awareness(text)
    assert label is expected
    assert why.startswith(f"rule {rule}") if rule < 5 else why == "no rule applies"


def test_awareness_phrases_are_the_papers() -> None:
    assert len(evaluate.YES_PHRASES) == 15 and len(evaluate.NO_PHRASES) == 5
    assert "may need to access" in evaluate.YES_PHRASES
    assert "do not think I need to use" in evaluate.NO_PHRASES


# --- selection matching -------------------------------------------------------------------------

CANDIDATES = ["search", "ResearchFinder", "FinanceTool", "web", "web-search"]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("I would use ResearchFinder.", ["ResearchFinder"]),  # not "search" inside it
        ("Let me research that: ResearchFinder", ["ResearchFinder"]),
        ("FinanceTool and ResearchFinder", ["ResearchFinder", "FinanceTool"]),
        ("financetool", ["FinanceTool"]),  # case-insensitive only when nothing matched exactly
        ("FinanceTool, not financetool or researchfinder", ["FinanceTool"]),
        ("Use `FinanceTool`.", ["FinanceTool"]),
        ("FinanceTools are great", []),  # a name inside a longer word does not count
        ("FinanceTool_v2", []),
        ("the web-search tool", ["web-search"]),  # the longer overlapping name wins
        ("web and web-search", ["web", "web-search"]),
        ("FinanceTool FinanceTool", ["FinanceTool"]),
        ("None.", []),
    ],
)
def test_find_tools(text: str, found: list[str]) -> None:
    assert evaluate.find_tools(text, CANDIDATES) == found


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("None.", []),
        ("None of the tools fits this query.", []),
        ("I cannot help with this.", []),  # no name at all reads as None (appendix C.2)
        ("FinanceTool: it tracks stocks.", ["FinanceTool"]),
        ("FinanceTool, and none of the others", ["FinanceTool"]),  # lower-case "none" is prose
        ("None of the others; FinanceTool.", None),  # one tool beside "None": ambiguous
        ("FinanceTool or ResearchFinder", None),  # several: ambiguous
        ("", None),
        ("   \n", None),
    ],
)
def test_choose_single(text: str, answer: list[str] | None) -> None:
    assert evaluate.choose_single(text, CANDIDATES)[0] == answer


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("FinanceTool and ResearchFinder", ["ResearchFinder", "FinanceTool"]),
        ("Only FinanceTool.", ["FinanceTool"]),  # fewer than two: parsed, and wrong
        ("None", []),
        ("FinanceTool, ResearchFinder and search", None),  # more than two: ambiguous
    ],
)
def test_choose_pair(text: str, answer: list[str] | None) -> None:
    assert evaluate.choose_pair(text, CANDIDATES)[0] == answer


# --- metrics ------------------------------------------------------------------------------------


def test_awareness_metrics_by_hand() -> None:
    # tp: items 0, 2; fn: 1; fp: 3; tn: 4.
    scores = evaluate.awareness_metrics(
        [True, True, True, False, False], [True, False, True, True, False]
    )
    assert scores == {
        "accuracy": 60.0,
        "precision": 66.67,
        "recall": 66.67,
        "f1": 66.67,
        "tp": 2.0,
        "fp": 1.0,
        "tn": 1.0,
        "fn": 1.0,
    }
    # P = 1/3, R = 1/2, F1 = 2PR/(P+R) = 0.4
    scores = evaluate.awareness_metrics(
        [True, True, False, False, False], [True, False, True, True, False]
    )
    assert (scores["precision"], scores["recall"], scores["f1"]) == (33.33, 50.0, 40.0)
    nothing_positive = evaluate.awareness_metrics([True, False], [False, False])
    assert nothing_positive["precision"] is None and nothing_positive["recall"] == 0.0
    assert nothing_positive["f1"] == 0.0
    assert evaluate.awareness_metrics([], [])["accuracy"] is None


def test_top_at_k_by_hand() -> None:
    assert evaluate.top_at_k([1, 2, 4, 7]) == {"Top@1": 25.0, "Top@3": 50.0, "Top@5": 75.0}
    assert evaluate.top_at_k([]) == {"Top@1": None, "Top@3": None, "Top@5": None}


def aware_item(key: str, needs: bool) -> Item:
    return Item(
        split="awareness",
        external_id=key,
        input={"query": f"query {key}"},
        reference={"needs_tool": needs, "tool": "T" if needs else None},
    )


def scored_run(task: str, rows: list[tuple[Item, str | None]], **options: Any) -> dict:
    ctx = ctx_for(task, options=options)
    out = []
    for item, text in rows:
        context = {"candidates": list(item.candidate_tools)} if task != "awareness" else {}
        if task == "similar":
            context["similar"] = item.metadata["similar"]
        outcome = None if text is None else EVALUATOR.parse(text, item, ctx, context)
        scores = EVALUATOR.score(outcome, item, ctx, context)
        out.append(Scored(item=item, outcome=outcome, scores=scores, context=context))
    return EVALUATOR.aggregate(out, ctx)


def test_awareness_aggregate_counts_unparsed_and_failures_as_wrong() -> None:
    rows = [
        (aware_item("1", True), "Yes, I need to use a tool."),  # tp
        (aware_item("2", True), "No."),  # fn
        (aware_item("3", False), "No, I can answer."),  # tn
        (aware_item("4", False), "Yes."),  # fp
        (aware_item("5", True), "Maybe?"),  # unparsed: wrong -> fn
        (aware_item("6", False), "Hmm"),  # unparsed: wrong -> fp
        (aware_item("7", True), None),  # failed at the endpoint -> fn
    ]
    wrong = scored_run("awareness", rows)
    assert wrong["n"] == 7 and wrong["unparsed"] == 2 and wrong["failed"] == 1
    assert (wrong["tp"], wrong["fp"], wrong["tn"], wrong["fn"]) == (1, 2, 1, 3)
    assert wrong["accuracy"] == 28.57  # 2/7
    assert wrong["precision"] == 33.33 and wrong["recall"] == 25.0
    assert wrong["f1"] == 28.57  # 2*1 / (2*1 + 2 + 3)
    excluded = scored_run("awareness", rows, unparsed="exclude")
    assert excluded["n"] == 7 and excluded["unparsed"] == 2
    assert (excluded["tp"], excluded["fp"], excluded["tn"], excluded["fn"]) == (1, 1, 1, 2)
    assert excluded["accuracy"] == 40.0  # 2/5: the failure still counts
    assert excluded["precision"] == 50.0 and excluded["recall"] == 33.33


def test_score_of_a_failed_item_is_a_wrong_answer() -> None:
    ctx = ctx_for("reliability")
    item = Item(
        split="reliability",
        external_id="1",
        input={"query": "q"},
        reference={"tool": "Gold", "expected": []},
        candidate_tools=("A", "B"),
    )
    scores = EVALUATOR.score(None, item, ctx, {"candidates": ["A", "B"]})
    assert scores == {"correct": 0.0, "unparsed": 0.0, "failed": 1.0}
    awareness = EVALUATOR.score(None, aware_item("1", False), ctx_for("awareness"), {})
    assert awareness["correct"] == 0.0 and awareness["says_yes"] is None


def sel_item(split: str, key: str, reference: dict, candidates: list[str], **meta: Any) -> Item:
    return Item(
        split=split,
        external_id=key,
        input={"query": f"query {key}"},
        reference=reference,
        candidate_tools=tuple(candidates),
        metadata=meta,
    )


def test_csr_and_top_at_k_on_similar() -> None:
    similar = ["B", "C", "D", "E"]  # A's nearest tools, most similar first
    cands = ["C", "A", "E", "B", "D"]

    def item(key: str) -> Item:
        return sel_item("queries", key, {"tool": "A"}, cands, similar=similar)

    rows = [
        (item("1"), "A is the tool."),  # right
        (item("2"), "B"),  # wrong pick, rank 1
        (item("3"), "I would pick D."),  # wrong pick, rank 3
        (item("4"), "E"),  # wrong pick, rank 4
        (item("5"), "None"),  # wrong, not a pick
        (item("6"), "A or B"),  # ambiguous: unparsed
        (item("7"), None),  # failed
    ]
    result = scored_run("similar", rows)
    assert result["CSR"] == 14.29  # 1/7
    assert result["wrong_picks"] == 3
    assert (result["Top@1"], result["Top@3"], result["Top@5"]) == (33.33, 66.67, 100.0)
    assert (result["n"], result["unparsed"], result["failed"]) == (7, 1, 1)
    assert scored_run("similar", rows, unparsed="exclude")["CSR"] == 16.67  # 1/6


def test_csr_reliability_and_multi_tool() -> None:
    cands = ["A", "B", "C"]
    rel = [
        (sel_item("reliability", "1", {"tool": "G", "expected": []}, cands), "None."),
        (sel_item("reliability", "2", {"tool": "G", "expected": []}, cands), "No tool fits."),
        (sel_item("reliability", "3", {"tool": "G", "expected": []}, cands), "A"),
        (sel_item("reliability", "4", {"tool": "G", "expected": []}, cands), "A, but None"),
    ]
    result = scored_run("reliability", rel)
    assert (result["CSR"], result["unparsed"]) == (50.0, 1)
    pair = {"tools": ["A", "B"]}
    multi = [
        (sel_item("multi_tool", "1", pair, cands), "B and A"),  # 2/2
        (sel_item("multi_tool", "2", pair, cands), "Only A"),  # 1/1, wrong for CSR
        (sel_item("multi_tool", "3", pair, cands), "A and C"),  # 1/2
        (sel_item("multi_tool", "4", pair, cands), "A, B and C"),  # ambiguous
        (sel_item("multi_tool", "5", pair, cands), "None"),
    ]
    result = scored_run("multi_tool", multi)
    assert (result["CSR"], result["one_of_one"], result["one_of_two"]) == (20.0, 20.0, 20.0)
    assert result["unparsed"] == 1


# --- candidate lists ----------------------------------------------------------------------------

# Hand-made vectors: A's nearest are B (0.9), then C (0.8), then D (0.1); E is orthogonal.
VECTORS = {
    "A": [1.0, 0.0, 0.0],
    "B": [0.9, 0.435889894, 0.0],
    "C": [0.8, 0.0, 0.6],
    "D": [0.1, 0.994987437, 0.0],
    "E": [0.0, 0.0, -1.0],
    "F": [0.0, -1.0, 0.0],
    "G": [-1.0, 0.0, 0.0],
}


def toy_tools() -> dict[str, ToolSpec]:
    return {
        name: ToolSpec(name=name, description=f"desc {name}", raw={"source": "plugin_des.json"})
        for name in VECTORS
    }


def toy_embed(texts: Any) -> list[list[float]]:
    return [VECTORS[text.split()[-1]] for text in texts]


def query(key: str, tool: str) -> Item:
    return Item(
        split="queries", external_id=key, input={"query": f"q{key}"}, reference={"tool": tool}
    )


def test_similar_candidates_are_the_gold_and_its_nearest() -> None:
    items = [query("1", "A"), query("2", "A"), query("3", "G")]
    ctx = ctx_for("similar", tools=toy_tools(), embed=toy_embed, options={"n": 3})
    chosen, contexts = run_prepare(items, ctx)
    assert contexts[0]["similar"] == ["B", "C"]
    assert sorted(contexts[0]["candidates"]) == ["A", "B", "C"]
    for item, context in zip(chosen, contexts, strict=True):
        assert item.reference["tool"] in context["candidates"]
        assert len(context["candidates"]) == 3
    again = run_prepare(items, ctx)[1]
    assert again == contexts  # seeded: the same run gives the same lists
    orders = set()
    for seed in range(8):
        ctx = ctx_for("similar", tools=toy_tools(), embed=toy_embed, seed=seed, options={"n": 5})
        orders.add(tuple(run_prepare(items, ctx)[1][0]["candidates"]))
    assert len(orders) > 1  # the seed shuffles the list...
    # ...of the same tools: E and F are equally far from A (cosine 0); the name breaks the tie.
    assert {frozenset(order) for order in orders} == {frozenset("ABCDE")}


def test_reliability_and_multi_tool_lists_avoid_the_gold_and_its_nearest() -> None:
    items = [query(str(i), "A") for i in range(5)]
    ctx = ctx_for("reliability", tools=toy_tools(), embed=toy_embed, options={"n": 3, "k": 2})
    _, contexts = run_prepare(items, ctx)
    for context in contexts:
        assert len(context["candidates"]) == 3
        assert set(context["candidates"]) <= {"D", "E", "F", "G"}  # not A, nor B, C
    assert run_prepare(items, ctx)[1] == contexts
    golden = Item(
        split="multi_tool_golden",
        external_id="0",
        input={"query": "q"},
        reference={"tools": ["A", "G"]},
    )
    ctx = ctx_for("multi_tool", tools=toy_tools(), embed=toy_embed, options={"n": 4, "k": 1})
    (context,) = run_prepare([golden], ctx)[1]
    # A's nearest is B; G's nearest (cosine -0.0 ties broken by name) is E.
    assert sorted(context["candidates"]) in (
        ["A", "C", "D", "G"],
        ["A", "C", "F", "G"],
        ["A", "D", "F", "G"],
    )
    with pytest.raises(ValueError, match="lower n"):
        run_prepare(
            [golden],
            ctx_for("multi_tool", tools=toy_tools(), embed=toy_embed, options={"n": 9, "k": 1}),
        )


def test_published_reliability_lists_never_hold_the_gold(real: dict[str, Any]) -> None:
    items = real["items"]["reliability"]
    chosen, contexts = run_prepare(items, real_ctx(real, "reliability"))
    assert len(chosen) == 100
    for item, context in zip(chosen, contexts, strict=True):
        assert context["candidates"] == list(item.candidate_tools)
        assert item.reference["tool"] not in context["candidates"]


def test_similar_on_the_real_files(real: dict[str, Any]) -> None:
    ctx = real_ctx(real, "similar", seed=3)
    chosen, contexts = run_prepare(real["items"]["queries"], ctx)
    per_tool = Counter(item.reference["tool"] for item in chosen)
    assert max(per_tool.values()) <= 5  # the paper's five queries per tool
    pool = {name for name, t in real["tools"].items() if t.raw.get("source") == "plugin_des.json"}
    for item, context in zip(chosen, contexts, strict=True):
        gold = item.reference["tool"]
        assert gold in context["candidates"] and len(context["candidates"]) == 10
        assert set(context["candidates"]) - {gold} == set(context["similar"])
        assert set(context["candidates"]) <= pool
    assert run_prepare(real["items"]["queries"], ctx)[1] == contexts
    prompt = EVALUATOR.build_prompt(chosen[0], ctx, contexts[0])
    content = prompt.messages[0]["content"]
    assert chosen[0].input["query"] in content
    for number, name in enumerate(contexts[0]["candidates"], start=1):
        description = real["tools"][name].description
        assert f"{number}. tool name: {name}, tool description: {description}\n" in content


def test_scenario_selects_the_lists_queries(real: dict[str, Any]) -> None:
    queries = real["items"]["queries"]
    with pytest.raises(ValueError, match=r"needs the option 'scenario'.*Students"):
        EVALUATOR.select(queries, real_ctx(real, "scenario"))
    with pytest.raises(ValueError, match="no scenario list 'Pilots'"):
        EVALUATOR.select(queries, real_ctx(real, "scenario", options={"scenario": "Pilots"}))
    ctx = real_ctx(real, "scenario", options={"scenario": "TopTool_top5"})
    listed = next(i for i in real["items"]["scenario_lists"] if i.external_id == "TopTool_top5")
    chosen, contexts = run_prepare(queries, ctx)
    expected = [q for q in queries if q.reference["tool"] in listed.candidate_tools]
    assert chosen == expected and chosen
    assert all(
        c == {"scenario": "TopTool_top5", "candidates": list(listed.candidate_tools)}
        for c in contexts
    )
    options = {"scenario": "TopTool_top5", "per_tool": 1}
    few = EVALUATOR.select(queries, real_ctx(real, "scenario", options=options))
    per_tool = Counter(i.reference["tool"] for i in few)
    assert set(per_tool) == {i.reference["tool"] for i in expected}
    assert set(per_tool.values()) == {1}


def test_wrong_split_and_bad_options_are_refused(real: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="reads split"):
        EVALUATOR.select(real["items"]["awareness"], real_ctx(real, "similar"))
    with pytest.raises(ValueError, match="zero-shot or five-shot"):
        EVALUATOR.select(real["items"]["awareness"], real_ctx(real, "awareness", shots=3))
    with pytest.raises(ValueError, match="no few-shot multi-tool"):
        EVALUATOR.select(real["items"]["multi_tool"], real_ctx(real, "multi_tool", shots=5))
    with pytest.raises(ValueError, match="unparsed"):
        EVALUATOR.select(
            real["items"]["awareness"], real_ctx(real, "awareness", options={"unparsed": "skip"})
        )
    ctx = ctx_for("similar", tools={}, options={"per_tool": None})
    with pytest.raises(ValueError, match="no description"):
        EVALUATOR.prepare(real["items"]["queries"][:3], ctx)


# --- prompts from the real files ----------------------------------------------------------------


def published_zero_shot(prompt: str) -> str:
    return prompt[: prompt.index("\nHere are some examples:")]


@pytest.mark.parametrize("task", ["awareness", "reliability"])
def test_prompts_rebuild_the_published_ones(real: dict[str, Any], task: str) -> None:
    """Zero-shot is the published prompt without its examples; five-shot is the published
    prompt itself, character for character."""
    items = real["items"][task]
    for shots in (0, 5):
        ctx = real_ctx(real, task, shots=shots)
        chosen, contexts = run_prepare(items, ctx)
        for item, context in zip(chosen, contexts, strict=True):
            prompt = EVALUATOR.build_prompt(item, ctx, context)
            published = item.input["prompt"]
            expected = published if shots else published_zero_shot(published)
            assert prompt.messages == [{"role": "user", "content": expected}]


def test_multi_tool_prompts(real: dict[str, Any]) -> None:
    ctx = real_ctx(real, "multi_tool")
    chosen, contexts = run_prepare(real["items"]["multi_tool"], ctx)
    for item, context in zip(chosen, contexts, strict=True):
        assert (
            EVALUATOR.build_prompt(item, ctx, context).messages[0]["content"]
            == item.input["prompt"]
        )
    multi = real_ctx(real, "multi_tool", options={"variant": "multi-choice"})
    content = EVALUATOR.build_prompt(chosen[0], multi, contexts[0]).messages[0]["content"]
    assert "(you can choose two tools at most)" in content
    assert chosen[0].input["query"] in content
    # The published candidate block is kept as it is.
    start = "[List of Tools with Names and Descriptions Start]"
    assert content.split(start)[1] == chosen[0].input["prompt"].split(start)[1]


def test_thought_prompt_matches_appendix_d2() -> None:
    text = evaluate.thought_prompt("What is 2+2?")
    assert text.startswith("You are an intelligent agent, and you need to constantly be aware")
    assert "[Reasons Begin]\nA. Solving issues with real-time or external data" in text
    assert "D. User customization, personalization and interaction\n[Reasons End]" in text
    assert "[User Query Begins]\nWhat is 2+2?\n[User Query Ends]" in text
    assert text.endswith("Additionally, you should provide a brief explanation for your answer.")
    # A query holding a placeholder is inserted as it is, never substituted.
    assert "{tool_list}" in evaluate.action_prompt("see {tool_list}", "1. tool name: X, ...\n")


def test_prompt_files_name_their_source() -> None:
    folder = Path(evaluate.__file__).with_name("prompts")
    files = sorted(folder.glob("*.txt"))
    assert len(files) >= 7
    for path in files:
        if path.name.startswith("LICENSE"):
            continue
        header = path.read_text("utf-8").split("\n---\n")[0]
        assert "HowieHwong/MetaTool" in header and "35e81bb" in header and "MIT" in header


def test_completion_prompts_end_with_a_cue_and_stop_at_the_line(real: dict[str, Any]) -> None:
    item = real["items"]["awareness"][0]
    for shots in (0, 5):
        ctx = real_ctx(real, "awareness", shots=shots, style="completion")
        (context,) = EVALUATOR.prepare([item], ctx)
        prompt = EVALUATOR.build_prompt(item, ctx, context)
        assert prompt.text.endswith(f'User query: "{item.input["query"]}" answer:')
        assert prompt.request("completion") == {"prompt": prompt.text, "stop": ["\n"]}
    chat = real_ctx(real, "awareness", style="chat")
    assert EVALUATOR.build_prompt(item, chat, {}).stop == ()
    five = real_ctx(real, "reliability", shots=5, style="completion")
    rel = real["items"]["reliability"][0]
    (context,) = EVALUATOR.prepare([rel], five)
    text = EVALUATOR.build_prompt(rel, five, context).text
    assert text == rel.input["prompt"].rstrip(" ")
    assert text.endswith('" tool:')
    # The line a base model continues with is read like any answer.
    outcome = EVALUATOR.parse(" None", rel, five, context)
    assert outcome.parsed and outcome.answer == []


# --- five-shot examples never leak the item -----------------------------------------------------


def example_queries(content: str) -> list[str]:
    block = content[content.index("[Examples Start]\n") :]
    return [line for line in block.split("\n") if line.startswith("query: ")]


@pytest.mark.parametrize(
    ("task", "split", "options"),
    [
        ("awareness", "awareness", {}),
        ("reliability", "reliability", {}),
        ("reliability", "queries", {}),
        ("similar", "queries", {}),
        ("scenario", "queries", {"scenario": "Students"}),
    ],
)
def test_five_shot_examples_do_not_leak_the_item(
    real: dict[str, Any], task: str, split: str, options: dict
) -> None:
    ctx = real_ctx(real, task, shots=5, options=options)
    chosen, contexts = run_prepare(real["items"][split], ctx)
    for item, context in zip(chosen, contexts, strict=True):
        examples = context["examples"]
        assert examples and len(examples) <= 5
        own = " ".join(item.input["query"].strip('" ').split()).casefold()
        assert all(" ".join(e["query"].strip('" ').split()).casefold() != own for e in examples)
        if task != "awareness":
            gold = item.reference["tool"]
            assert all(e["answer"] != gold for e in examples)  # nor the gold tool as an answer
            listed = set(context["candidates"])
            assert all(e["answer"] in listed or e["answer"] == "None" for e in examples)
        content = EVALUATOR.build_prompt(item, ctx, context).messages[0]["content"]
        if task != "awareness":  # awareness example queries may span several lines
            assert len(example_queries(content)) == len(examples)
    if task in ("similar", "reliability") and split == "queries":
        assert all(len(c["examples"]) == 5 for c in contexts)
    if task == "reliability" and split == "queries":
        ratios = {sum(e["answer"] == "None" for e in c["examples"]) for c in contexts}
        assert ratios <= {2, 3}


def test_a_published_example_equal_to_the_item_is_replaced(real: dict[str, Any]) -> None:
    items = real["items"]["awareness"]
    first = items[0]
    leaked_prompt = first.input["prompt"].replace(
        "[Examples Start]\n", f'[Examples Start]\nquery: "{first.input["query"]}" answer: Yes\n', 1
    )
    leaky = Item(
        split="awareness",
        external_id=first.external_id,
        input={**first.input, "prompt": leaked_prompt},
        reference=first.reference,
    )
    ctx = real_ctx(real, "awareness", shots=5)
    (context, *_) = EVALUATOR.prepare([leaky, *items[1:]], ctx)
    assert len(context["examples"]) == 5  # the published five; the leaked line is dropped
    assert all(e["query"] != first.input["query"] for e in context["examples"])
    content = EVALUATOR.build_prompt(leaky, ctx, context).messages[0]["content"]
    assert content.count(first.input["query"]) == 2  # the query block and the final line


# --- the embedder -------------------------------------------------------------------------------


def test_local_embed_is_unit_and_deterministic_across_processes() -> None:
    texts = ["Get the weather forecast for a city.", "Stock prices and market news.", ""]
    vectors = local_embed(texts)
    assert len(vectors) == 3 and len(vectors[0]) == 512
    assert abs(sum(v * v for v in vectors[0]) - 1.0) < 1e-9
    assert all(v == 0.0 for v in vectors[2])
    assert local_embed(texts[:1]) == vectors[:1]  # a text's vector does not depend on the batch
    code = (
        "import json; from benchmarks.kit.embedding import local_embed; "
        f"print(json.dumps(local_embed({texts[:2]!r})))"
    )
    root = Path(__file__).resolve().parents[3]
    for salt in ("1", "2"):
        out = subprocess.run(
            [sys.executable, "-c", code],
            cwd=root,
            env={"PYTHONHASHSEED": salt, "PATH": ""},
            capture_output=True,
            text=True,
            check=True,
        )
        assert json.loads(out.stdout) == vectors[:2]


def test_local_embed_puts_related_texts_closer() -> None:
    weather, rain, stocks = local_embed(
        [
            "weather forecast for tomorrow",
            "will it rain tomorrow? check the forecast",
            "stock market prices",
        ]
    )

    def cos(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    assert cos(weather, rain) > cos(weather, stocks)


def test_cosine_helpers_rank_and_break_ties_by_position() -> None:
    vectors = [[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.6, 0.8], [2.0, 0.0]]
    assert cosine_top_k([1.0, 0.0], vectors, 3) == [(0, 1.0), (2, 1.0), (4, 1.0)]
    assert cosine_top_k([1.0, 0.0], vectors, 2, exclude=[0, 2]) == [(4, 1.0), (3, 0.6)]
    assert cosine_top_k([1.0, 0.0], vectors, 0) == []
    assert nearest_neighbours(vectors, 2)[1] == [3, 0]
    assert rank_by_similarity([0.5, 0.9, 0.5]) == [1, 0, 2]


def test_outcome_keeps_the_raw_text_when_unparsed(real: dict[str, Any]) -> None:
    item = real["items"]["multi_tool"][0]
    ctx = real_ctx(real, "multi_tool")
    (context,) = EVALUATOR.prepare([item], ctx)
    names = list(item.candidate_tools)[:3]
    text = f"{names[0]}, {names[1]} and {names[2]}"
    outcome = EVALUATOR.parse(text, item, ctx, context)
    assert isinstance(outcome, Outcome)
    assert not outcome.parsed and outcome.output == text and outcome.note.startswith("ambiguous")
