"""BFCL's web search categories (web_search_base, web_search_no_snippet) as tasks whose two
functions, `search_engine_query` and `fetch_url_content` (BFCL's WebSearchAPI), are served by
the platform's virtual API server, not by BFCL's SerpAPI and the live web. Pure Python; never
evaluates a model's text.

Their scores are NOT comparable with BFCL's published ones: BFCL's answers come from SerpAPI's
DuckDuckGo engine and the live pages of the day it ran; here each call is answered by the
server: its cache, else a Real API configured for the function (admin → Real APIs, a host in
VIRTUAL_API_ALLOWED_HOSTS), else its LLM simulator, which makes results up from the function's
documentation. Each task declares it (TaskSpec.not_comparable, `NOT_COMPARABLE`): its runs'
pages say so and BFCL's overall score never counts them.

An imported `web_search` entry (one question, `involved_classes` ["WebSearchAPI"], its docs as
"functions", reference {"answers": [...]}) runs as BFCL's handlers run an agentic entry: one
turn, many steps. The first turn gets BFCL's answer format as a system message first
(`process_agentic_test_case`); text mode (Prompt mode) puts BFCL's system prompt with the docs
before it (evaluate.prompt_mode); native mode (FC mode) declares the docs as tools. Each step's
calls go to the server, one at a time; the answer that decodes to no call is the final answer,
which BFCL's agentic checker scores (agentic.agentic_match); a model forced to quit after
conversation.STEP_LIMIT steps has none and fails ("agentic:no_last_message").

What the model sees of a call is what BFCL's WebSearchAPI would return for the server's answer,
as BFCL's executor writes a result (`json.dumps` of a list or dict, a text as it is):

- search_engine_query: a list of {"title", "href", "body"}, at most `max_results` (10) of them.
  The service may answer that list, or SerpAPI's shape ({"organic_results": [{"title", "link",
  "snippet"}]}, or the list of those), which is read the same way. In web_search_no_snippet the
  "body" is left out of every result (BFCL's `show_snippet` False): the model sees title and
  href only, whatever else the service sent. An answer that is not a list of results is shown
  as an error ({"error": ...}), so that no snippet can pass in another shape.
- fetch_url_content: {"content": text} (a text answer is wrapped so); a url that does not start
  with http:// or https:// is refused before the server is asked, as BFCL's function raises.
- the server's error, or a failure (no simulator), is {"error": ...}.

The trace keeps every step (its calls, each observation as the model saw it, and its `source`:
cache, real, simulated, down or failed, with a cache hit's `origin`); the answer counts the
sources. Per item `accuracy` 100 or 0; per run its mean and `n`.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.kit.protocol import (
    AskNative,
    Complete,
    Context,
    Item,
    MetricSpec,
    Outcome,
    Prompt,
    TaskSpec,
    ToolSpec,
    ToolUnavailable,
    metric_specs,
)
from benchmarks.kit.registry import ServedApi, ServedTools
from benchmarks.kit.stateful import jsonable
from benchmarks.suites.bfcl.agentic import (
    _as_item,
    _opening,
    accepted_answers,
    answer_format,
    final_verdict,
)
from benchmarks.suites.bfcl.conversation import (
    Mode,
    Record,
    Step,
    StepsStopped,
    native_mode,
    step_turn,
    text_mode,
)
from benchmarks.suites.bfcl.evaluate import offered_docs

__all__ = [
    "FUNCTIONS",
    "NOT_COMPARABLE",
    "SERVED_TOOLS",
    "SHOW_SNIPPET",
    "TASKS",
    "WEB_SEARCH_CATEGORIES",
    "native_search",
    "observation",
    "opening_prompt",
    "prepare_search",
    "text_search",
]

WEB_SEARCH_CATEGORIES: tuple[str, ...] = ("web_search_base", "web_search_no_snippet")
SHOW_SNIPPET = {"web_search_base": True, "web_search_no_snippet": False}
SPLIT = "web_search"
CLASS = "WebSearchAPI"
FUNCTIONS: tuple[str, ...] = ("search_engine_query", "fetch_url_content")
# Where the virtual API server keeps their answers: <category>/<tool>_for_<category>/<api>.
SERVED_CATEGORY = "BFCL"
NOT_COMPARABLE = (
    "its search results and pages come from the platform's search service (the virtual API "
    "server: its cache, a Real API as configured, or its LLM simulator), not from BFCL's "
    "SerpAPI and the live web, so its scores are not comparable with BFCL's published ones"
)
MAX_RESULTS = 10

ACCURACY_ITEM = MetricSpec.score(
    "accuracy",
    description="100 when the final answer holds an accepted answer (BFCL's check); the "
    "searches answered by the platform's search service, not BFCL's",
)
ACCURACY_RUN = MetricSpec.score(
    "accuracy",
    description="% of questions whose final answer holds an accepted answer, the searches "
    "answered by the platform's search service: not comparable with BFCL's published scores",
)
N_RUN = MetricSpec.count("n", description="questions scored")
_TITLES = {"web_search_base": "Web search", "web_search_no_snippet": "Web search (no snippet)"}


def _spec(category: str) -> TaskSpec:
    hidden = "" if SHOW_SNIPPET[category] else ", the results' snippets hidden"
    return TaskSpec(
        name=category,
        title=f"BFCL {_TITLES[category]} (platform search)",
        splits=(SPLIT,),
        metrics=("accuracy", "n"),
        percent=frozenset({"accuracy"}),
        agent=True,
        description=(
            f"BFCL v4 {category}: a multi-hop question answered with search_engine_query and "
            f"fetch_url_content{hidden}; the final answer passes when it holds an accepted "
            "answer. The functions are served by the platform's virtual API server (cache, "
            "Real API or simulator): NOT comparable with BFCL's published scores."
        ),
        item_metrics=metric_specs(ACCURACY_ITEM),
        run_metrics=metric_specs(ACCURACY_RUN, N_RUN),
        native=True,
        not_comparable=NOT_COMPARABLE,
    )


TASKS: dict[str, TaskSpec] = {category: _spec(category) for category in WEB_SEARCH_CATEGORIES}


# --- what the virtual API server serves ---------------------------------------------------------


def served_apis(tools: Mapping[str, ToolSpec]) -> dict[str, ServedApi]:
    """The benchmark's WebSearchAPI functions (imported from BFCL's docs), each kept by the
    server under BFCL/WebSearchAPI_for_BFCL/<function>."""
    return {
        name: ServedApi(spec, SERVED_CATEGORY, CLASS, name, function=name)
        for name, spec in tools.items()
        if name in FUNCTIONS and spec.category == CLASS
    }


SERVED_TOOLS = ServedTools(apis=served_apis, tasks=frozenset(WEB_SEARCH_CATEGORIES))


# --- the entries ---------------------------------------------------------------------------------


def _docs(item: Item) -> list[dict[str, Any]]:
    functions = item.input.get("functions")
    return [f for f in functions if isinstance(f, dict)] if isinstance(functions, list) else []


def _turns(item: Item) -> list[list[dict[str, Any]]]:
    question = item.input.get("question")
    return [
        [
            {"role": str(m.get("role", "user")), "content": str(m.get("content", ""))}
            for m in turn
            if isinstance(m, Mapping)
        ]
        for turn in (question if isinstance(question, list) else [])
        if isinstance(turn, list)
    ]


def _first_turn(item: Item) -> list[dict[str, Any]]:
    """The question's messages after BFCL's answer format, a system message of its own."""
    turns = _turns(item)
    return [
        {"role": "system", "content": answer_format()},
        *copy.deepcopy(turns[0] if turns else []),
    ]


def opening_prompt(item: Item, ctx: Context, context: dict[str, Any]) -> Prompt:
    """The first request of text mode: BFCL's system prompt with the docs, the answer format
    after it, then the question."""
    return Prompt(messages=_opening(_docs(item), _first_turn(item), native=False))


def parse_text(text: str, item: Item, ctx: Context, context: dict[str, Any]) -> Outcome:
    """A lone text is no answer: the question is answered in its solve loop."""
    return Outcome(
        output=text,
        answer=None,
        parsed=False,
        note="a web search entry is answered in its solve loop; a single text is no answer",
    )


def prepare_search(
    items: Sequence[Item], ctx: Context, *, show_snippet: bool
) -> list[dict[str, Any]]:
    """At launch: both functions must be served to the run (the benchmark's WebSearchAPI tools,
    which the virtual API server answers), and each item must offer them and have one turn and
    accepted answers (ValueError naming what and where: the launch's refusal). Each item's
    context records the service and the snippet setting (`show_snippet`, the task's: tasks.py
    binds it)."""
    served = set(ctx.toolbox) if ctx.toolbox is not None else set()
    lacking = [name for name in FUNCTIONS if name not in served]
    if lacking:
        raise ValueError(
            f"{ctx.task.name}: the virtual API server serves no {', '.join(lacking)} to this "
            f"run: the benchmark has no {CLASS} tool of that name (import BFCL's "
            "multi_turn_func_doc/web_search.json with the web_search entries)"
        )
    for item in items:
        offered = {str(doc.get("name", "")) for doc in _docs(item)}
        if not set(FUNCTIONS) <= offered:
            raise ValueError(
                f"{item.key}: a web search entry offers {', '.join(FUNCTIONS)}; this one offers "
                f"{', '.join(sorted(offered)) or 'nothing'}"
            )
        if len(_turns(item)) != 1:
            raise ValueError(f"{item.key}: a web search entry has one turn")
        if not accepted_answers(item):
            raise ValueError(f"{item.key}: no accepted answers (its reference's 'answers')")
    return [{"search": "virtual API server", "show_snippet": show_snippet} for _ in items]


# --- what the model sees of a call ---------------------------------------------------------------


def _parsed(response: Any) -> Any:
    if isinstance(response, str):
        try:
            return json.loads(response)
        except ValueError:
            return response
    return response


def _results(response: Any) -> list[Mapping[str, Any]] | None:
    found = _parsed(response)
    if isinstance(found, Mapping) and isinstance(found.get("organic_results"), list):
        found = found["organic_results"]
    if isinstance(found, list) and all(isinstance(r, Mapping) for r in found):
        return found
    return None


def _number(value: Any, default: int) -> int:
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return default


def _search_shown(response: Any, arguments: Mapping[str, Any], show_snippet: bool) -> Any:
    results = _results(response)
    if results is None:
        return {
            "error": "the search service's answer is not a list of search results "
            f"(got {type(_parsed(response)).__name__})"
        }
    limit = _number(arguments.get("max_results"), MAX_RESULTS)
    shown = []
    for result in results[: max(limit, 0)]:
        row = {
            "title": str(result.get("title", "")),
            "href": str(result.get("href", result.get("link", ""))),
        }
        if show_snippet:
            row["body"] = str(result.get("body", result.get("snippet", "")))
        shown.append(row)
    return shown


def _page_shown(response: Any) -> Any:
    found = _parsed(response)
    if isinstance(found, Mapping) and ("content" in found or "error" in found):
        return dict(found)
    if isinstance(found, str):
        return {"content": found}
    return {"content": json.dumps(found, ensure_ascii=False)}


def observation(
    function: str, arguments: Mapping[str, Any], served: Mapping[str, Any], show_snippet: bool
) -> str:
    """What the model sees of the server's answer to one call (the module docstring), written
    as BFCL's executor writes a result."""
    error = served.get("error")
    if error or served.get("source") == "failed":
        value: Any = {"error": str(error or "the search service did not answer")}
    elif function == "search_engine_query":
        value = _search_shown(served.get("response"), arguments, show_snippet)
    else:
        value = _page_shown(served.get("response"))
    return value if isinstance(value, str) else json.dumps(value)


def _refused(function: str, arguments: Mapping[str, Any], doc: Mapping[str, Any] | None) -> str:
    """Why BFCL's method would raise on these arguments before asking anything ("": it would
    not): an unknown function, an unknown or missing argument, a url that is not http(s)."""
    if doc is None:
        return f"Error during execution: {function!r} is not a function of {CLASS}"
    parameters = doc.get("parameters")
    properties = parameters.get("properties", {}) if isinstance(parameters, Mapping) else {}
    required = parameters.get("required", []) if isinstance(parameters, Mapping) else []
    unknown = [name for name in arguments if name not in properties]
    if unknown:
        return (
            f"Error during execution: {function}() got an unexpected keyword argument "
            f"{unknown[0]!r}"
        )
    missing = [name for name in required if name not in arguments]
    if missing:
        return f"Error during execution: {function}() missing a required argument: {missing[0]!r}"
    url = arguments.get("url")
    if function == "fetch_url_content" and not str(url).startswith(("http://", "https://")):
        return f"Error during execution: Invalid URL: {url}"
    return ""


# --- the conversation ----------------------------------------------------------------------------


async def _serve(ctx: Context, function: str, arguments: dict[str, Any]) -> dict[str, Any]:
    toolbox = ctx.toolbox
    if toolbox is None or function not in toolbox:
        raise ToolUnavailable(f"the virtual API server does not serve {function} here")
    text = await toolbox[function].call(arguments)
    try:
        served = json.loads(text)
    except ValueError:
        served = None
    if not isinstance(served, dict):
        return {"error": "", "response": text, "source": "unknown"}
    return served


async def _solve(item: Item, ctx: Context, mode: Mode, native: bool, show_snippet: bool) -> Outcome:
    docs = _docs(item)
    by_name = {str(doc.get("name", "")): doc for doc in docs}
    offered = offered_docs(_as_item(docs, []))
    messages = _opening(docs, _first_turn(item), native)
    record = Record()
    sources: Counter[str] = Counter()

    async def execute(step: Step, at: dict[str, Any]) -> tuple[list[str], list[dict[str, Any]]]:
        observations: list[str] = []
        rows: list[dict[str, Any]] = []
        for call, text in zip(step.decoded, step.calls, strict=True):
            arguments = jsonable(call.arguments)
            row: dict[str, Any] = {**at, "action": call.name, "arguments": arguments, "call": text}
            refused = _refused(call.name, arguments, by_name.get(call.name))
            if refused:
                seen, row["source"] = refused, "refused"
            else:
                try:
                    served = await _serve(ctx, call.name, dict(arguments))
                except ToolUnavailable as exc:
                    raise StepsStopped(str(exc)) from None
                seen = observation(call.name, arguments, served, show_snippet)
                row["source"] = str(served.get("source", ""))
                if served.get("origin"):
                    row["origin"] = served["origin"]
            sources[row["source"]] += 1
            row["observation"] = seen
            observations.append(seen)
            rows.append(row)
        return observations, rows

    done = await step_turn(mode, messages, offered, execute, {"turn": 0}, record)
    return _outcome(
        item,
        done.final,
        done.quit_reason,
        done.stopped,
        done.calls,
        sources,
        record.trace,
        record.sent,
        record.last_text,
    )


def _outcome(
    item: Item,
    final: str | None,
    quit_reason: str,
    unavailable: str,
    steps: list[list[str]],
    sources: Counter[str],
    trace: list[dict[str, Any]],
    sent: list[dict[str, Any]],
    last_text: str,
) -> Outcome:
    answers = accepted_answers(item)
    if unavailable:
        passed, reason = False, f"the search service was not available: {unavailable}"
    else:
        passed, reason = final_verdict(final, answers, quit_reason)
    answer = {
        "passed": passed,
        "reason": reason,
        "final_answer": final,
        "answers": answers,
        "calls": steps,
        "sources": dict(sorted(sources.items())),
        "not_comparable": NOT_COMPARABLE,
    }
    outcome = Outcome(
        output=final if final is not None else last_text,
        answer=answer,
        trace=trace,
        note="" if passed else reason,
    )
    if sent:
        outcome.tool_calls = sent
    return outcome


async def text_search(
    item: Item, ctx: Context, context: dict[str, Any], complete: Complete, *, show_snippet: bool
) -> Outcome:
    """The question in BFCL's Prompt mode, the calls served by the virtual API server;
    `show_snippet` is the task's (tasks.py)."""
    return await _solve(item, ctx, text_mode(complete), False, show_snippet)


async def native_search(
    item: Item, ctx: Context, context: dict[str, Any], ask: AskNative, *, show_snippet: bool
) -> Outcome:
    """The question in BFCL's FC mode, the calls served by the virtual API server;
    `show_snippet` is the task's (tasks.py)."""
    return await _solve(item, ctx, native_mode(ask), True, show_snippet)
