"""BFCL's single-turn AST categories evaluated: the request a model gets in each mode, its answer
decoded, the verdict of checker.py as the item's score. Pure Python; never evaluates a model's
text.

Tasks: one per AST category (simple_python, simple_java, simple_javascript, multiple, parallel,
parallel_multiple, irrelevance, live_simple, live_multiple, live_parallel,
live_parallel_multiple, live_irrelevance, live_relevance), each reading the split of its
category. Every task has the same parts: what differs between categories (the checker's shape,
the language of the declarations) is read from the item (`metadata["category"]`, its split).
The multi-turn categories are conversation.py's; memory and web_search import but have no task
yet (the suite's docstring).

Both of BFCL's modes:

- text (`tool_mode=text`, BFCL's Prompt mode): BFCL's default system prompt
  (prompts/prompt_mode.toml, BFCL's text, Apache-2.0) with the function docs written into it as
  BFCL writes them (`json.dumps(docs, indent=4)`), put before the entry's own system message
  when it has one; the answer `[func(a=1), ...]` read by decode.decode_prompt. Java and
  JavaScript answers cannot be decoded here as BFCL decodes them (decode.py's docstring: BFCL
  reads them with tree-sitter grammars whose error recovery a parser of ours cannot reproduce),
  so in text mode every answer of simple_java and simple_javascript counts as a decoding failure
  (accuracy 0, unparsed), with a note saying so; run those two in native mode.
- native (`tool_mode=native`, BFCL's FC mode): the entry's messages as they are and the function
  docs as OpenAI tools, as BFCL's OpenAI handler declares them (`openai_tool`): dots in names
  become underscores, BFCL's type words become JSON Schema's (GORILLA_TO_OPENAPI below), a
  float parameter gets `"format": "float"` and a note in its description. The tool_calls are
  read by decode.decode_tool_calls and checked with underscore_names, as BFCL checks FC models;
  a reply with text and no tool call made no call when its text is empty and otherwise failed to
  decode, as in BFCL.

In both modes the function docs first get BFCL's language hint in their description (and, for
Java and JavaScript, every parameter is declared as a string with a note on its type), as BFCL
does when it loads the data; the checker reads the docs as published.

The score is re-computed from what is stored with the prediction (the output text, or the
tool_calls as sent), never from the answer shown: `Outcome.answer` is the decoded calls as JSON
({"calls": [{"name", "arguments"}]}, or {"calls": null, "failure": why}) for people to read.

Metrics: per item `accuracy` (100 when BFCL's checker passes the answer, else 0) and `unparsed`
(100 when a call was due and the answer could not be decoded: BFCL's `ast_decoder` errors; a
declining text where no call is due is not unparsed, it is the right answer); per run
`accuracy` (the mean, percent, 2 decimals), `n` (items scored) and `unparsed` (how many items'
answers could not be decoded). A failed model call scores 0 and is not unparsed.
"""

from __future__ import annotations

import copy
import json
import tomllib
from collections.abc import Collection, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from benchmarks.kit.native import ToolDeclarations, ToolNames
from benchmarks.kit.protocol import (
    Context,
    Item,
    MetricSpec,
    NativePrompt,
    NativeReply,
    Outcome,
    Prompt,
    Scored,
    Scores,
    TaskSpec,
    ToolSpec,
    mean,
    metric_specs,
    tool_mode,
)
from benchmarks.suites.bfcl.checker import CATEGORIES, Verdict, check, language_of
from benchmarks.suites.bfcl.decode import (
    Call,
    Decoded,
    DecodeFailure,
    decode_prompt,
    decode_tool_calls,
    fc_name,
    restore_names,
)

__all__ = [
    "AST_CATEGORIES",
    "GORILLA_TO_OPENAPI",
    "NOT_DECODED",
    "TASKS",
    "aggregate",
    "answer_view",
    "declarations",
    "declare_tools",
    "decoded_answer",
    "gold_calls",
    "gold_text",
    "gold_tool_calls",
    "mean_metrics",
    "native_outcome",
    "native_prompt",
    "offered_docs",
    "openai_tool",
    "parse_answer",
    "prompt_mode",
    "question_messages",
    "score_answer",
    "verdict",
]

PROMPTS = Path(__file__).parent / "prompts" / "prompt_mode.toml"

# The AST categories, in the order BFCL lists them (importer.NON_LIVE + LIVE).
AST_CATEGORIES: tuple[str, ...] = (
    "simple_python",
    "simple_java",
    "simple_javascript",
    "multiple",
    "parallel",
    "parallel_multiple",
    "irrelevance",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
    "live_irrelevance",
    "live_relevance",
)

# BFCL's type words -> JSON Schema's (BFCL's GORILLA_TO_OPENAPI; a word not here is "string").
GORILLA_TO_OPENAPI: dict[str, str] = {
    "integer": "integer",
    "number": "number",
    "float": "number",
    "string": "string",
    "boolean": "boolean",
    "bool": "boolean",
    "array": "array",
    "list": "array",
    "dict": "object",
    "object": "object",
    "tuple": "array",
    "any": "string",
    "byte": "integer",
    "short": "integer",
    "long": "integer",
    "double": "number",
    "char": "string",
    "ArrayList": "array",
    "Array": "array",
    "HashMap": "object",
    "Hashtable": "object",
    "Queue": "array",
    "Stack": "array",
    "Any": "string",
    "String": "string",
    "Bigint": "integer",
}

NOT_DECODED = (
    "not decoded: BFCL reads Java and JavaScript answers in Prompt mode with tree-sitter "
    "grammars whose error recovery this platform cannot reproduce, so a text-mode answer of "
    "this category counts as a decoding failure; run the task with tool_mode=native"
)

ACCURACY_ITEM = MetricSpec.score("accuracy", description="100 when BFCL's AST checker passes")
UNPARSED_ITEM = MetricSpec.flag(
    "unparsed", "lower", "100 when a call was due and the answer could not be decoded"
)
ACCURACY_RUN = MetricSpec.score("accuracy", description="% of items BFCL's AST checker passes")
N_RUN = MetricSpec.count("n", description="items scored")
UNPARSED_RUN = MetricSpec.count(
    "unparsed", "lower", "items whose answer could not be decoded where a call was due"
)

_TITLES = {
    "simple_python": "Simple (Python)",
    "simple_java": "Simple (Java)",
    "simple_javascript": "Simple (JavaScript)",
    "multiple": "Multiple",
    "parallel": "Parallel",
    "parallel_multiple": "Parallel multiple",
    "irrelevance": "Irrelevance",
    "live_simple": "Live simple",
    "live_multiple": "Live multiple",
    "live_parallel": "Live parallel",
    "live_parallel_multiple": "Live parallel multiple",
    "live_irrelevance": "Live irrelevance",
    "live_relevance": "Live relevance",
}

_SHAPES = {
    "simple": "one call, checked against the entry's function",
    "multiple": "one call, to the right one of several functions",
    "parallel": "several calls, matched with the answer's in any order",
    "irrelevance": "no call: none of the functions fits (passes when no call decodes)",
    "relevance": "some call (BFCL publishes no answer: any call that decodes passes)",
}


def _spec(category: str) -> TaskSpec:
    language = language_of(category)
    description = f"BFCL v4 {category}: {_SHAPES[CATEGORIES[category]]} (AST checker)."
    if language != "python":
        description += (
            f" Text mode cannot decode {language.capitalize()} answers as BFCL does (tree-sitter):"
            " every text-mode answer counts as a decoding failure; run it with tool_mode=native."
        )
    return TaskSpec(
        name=category,
        title=f"BFCL {_TITLES[category]}",
        splits=(category,),
        metrics=("accuracy", "n", "unparsed"),
        percent=frozenset({"accuracy"}),
        item_metrics=metric_specs(ACCURACY_ITEM, UNPARSED_ITEM),
        run_metrics=metric_specs(ACCURACY_RUN, N_RUN, UNPARSED_RUN),
        description=description,
        native=True,
    )


TASKS: dict[str, TaskSpec] = {category: _spec(category) for category in AST_CATEGORIES}


@cache
def _texts() -> dict[str, Any]:
    with PROMPTS.open("rb") as handle:
        return tomllib.load(handle)


# --- what the model is offered ------------------------------------------------------------------


def _category(item: Item) -> str:
    category = item.metadata.get("category") if isinstance(item.metadata, Mapping) else None
    return category if isinstance(category, str) else item.split


def _functions(item: Item) -> list[dict[str, Any]]:
    functions = item.input.get("functions")
    return [f for f in functions if isinstance(f, dict)] if isinstance(functions, list) else []


def _describe(holder: dict[str, Any], note: str) -> None:
    holder["description"] = str(holder.get("description", "")) + note


def _as_string_parameters(doc: dict[str, Any], language: str) -> None:
    """BFCL's Java and JavaScript declarations: every parameter a string, its type in a note."""
    notes = _texts()[language]
    parameters = doc.get("parameters")
    properties = parameters.get("properties") if isinstance(parameters, dict) else None
    if not isinstance(properties, dict):
        return
    for value in properties.values():
        if not isinstance(value, dict):
            continue
        declared = value.get("type")
        if declared == "any":
            _describe(value, notes["any"])
        else:
            _describe(value, notes["typed"].format(type=declared))
        items = value.get("items")
        list_types = ("ArrayList", "Array") if language == "java" else ("array",)
        if declared in list_types:
            element = items.get("type") if isinstance(items, dict) else None
            _describe(value, notes["elements"].format(items=element))
            value.pop("items", None)
        if language == "javascript" and declared == "dict" and "properties" in value:
            _describe(value, notes["entries"].format(schema=json.dumps(value["properties"])))
            del value["properties"]
        value["type"] = "string"


def offered_docs(item: Item) -> list[dict[str, Any]]:
    """The entry's function docs as BFCL offers them in both modes: its language hint appended
    to each description and, for Java and JavaScript, the parameters declared as strings."""
    language = language_of(_category(item))
    docs = copy.deepcopy(_functions(item))
    for doc in docs:
        _describe(doc, _texts()["hint"][language])
        if language != "python":
            _as_string_parameters(doc, language)
    return docs


def question_messages(item: Item) -> list[dict[str, Any]]:
    """The entry's (first and only) turn as chat messages."""
    question = item.input.get("question")
    turn = question[0] if isinstance(question, list) and question else []
    messages = [
        {"role": str(m.get("role", "user")), "content": str(m.get("content", ""))}
        for m in turn
        if isinstance(m, dict)
    ]
    return messages or [{"role": "user", "content": str(item.input.get("query", ""))}]


def prompt_mode(item: Item, ctx: Context, context: dict[str, Any]) -> Prompt:
    """BFCL's Prompt mode: its system prompt with the docs, before the entry's own system text."""
    system = str(_texts()["system"]).replace(
        "{functions}", json.dumps(offered_docs(item), indent=4)
    )
    messages = question_messages(item)
    if messages[0]["role"] == "system":
        messages[0]["content"] = system + "\n\n" + messages[0]["content"]
    else:
        messages.insert(0, {"role": "system", "content": system})
    return Prompt(messages=messages)


def _cast(properties: Any) -> Any:
    """BFCL's FC handler's rewriting of a properties object (its _cast_to_openai_type)."""
    if not isinstance(properties, dict):
        return properties
    for value in properties.values():
        if not isinstance(value, dict):
            continue
        declared = value.get("type")
        if declared is None:
            value["type"] = "string"
        else:
            if declared == "float":
                value["format"] = "float"
                _describe(value, _texts()["fc"]["float"])
            value["type"] = GORILLA_TO_OPENAPI.get(str(declared), "string")
        if value["type"] in ("array", "object"):
            if "properties" in value:
                value["properties"] = _cast(value["properties"])
            elif isinstance(value.get("items"), dict):
                items = value["items"]
                items["type"] = GORILLA_TO_OPENAPI.get(str(items.get("type")), "string")
                inner = items.get("items")
                if items["type"] == "array" and isinstance(inner, dict):
                    inner["type"] = GORILLA_TO_OPENAPI.get(str(inner.get("type")), "string")
                elif items["type"] == "object" and "properties" in items:
                    items["properties"] = _cast(items["properties"])
    return properties


def openai_tool(doc: Mapping[str, Any]) -> dict[str, Any]:
    """One function doc as the OpenAI tool BFCL's FC handler declares: its name with
    underscores for dots, its parameters an object whose types are JSON Schema's. Only the
    name, description and parameters are sent (BFCL also sends a doc's `response`, which
    OpenAI-compatible servers need not accept)."""
    parameters = copy.deepcopy(doc.get("parameters"))
    if not isinstance(parameters, dict):
        parameters = {}
    parameters["type"] = "object"
    parameters["properties"] = _cast(parameters.get("properties") or {})
    function = {
        "name": fc_name(str(doc.get("name", ""))),
        "description": str(doc.get("description", "")),
        "parameters": parameters,
    }
    return {"type": "function", "function": function}


def declarations(docs: Sequence[Mapping[str, Any]]) -> ToolDeclarations:
    """Function docs as the tools BFCL's FC handler declares (`openai_tool`), and their names."""
    names = [str(doc.get("name", "")) for doc in docs]
    return ToolDeclarations(
        [openai_tool(doc) for doc in docs],
        ToolNames.of(names, preferred={name: fc_name(name) for name in names}),
    )


def declare_tools(specs: Sequence[ToolSpec]) -> ToolDeclarations:
    """The suite's tools (multi-turn classes' methods) as BFCL's FC handler declares them: the
    published doc (`ToolSpec.raw`), with the Python hint, through `openai_tool`."""
    docs = []
    for spec in specs:
        raw = spec.raw if isinstance(spec.raw, dict) else {}
        doc = copy.deepcopy(raw) or {
            "name": spec.name,
            "description": spec.description,
            "parameters": spec.parameters,
        }
        _describe(doc, _texts()["hint"]["python"])
        docs.append(doc)
    return declarations(docs)


def native_prompt(item: Item, ctx: Context, context: dict[str, Any]) -> NativePrompt:
    """BFCL's FC mode: the entry's messages as they are, its docs declared as tools."""
    declared = declarations(offered_docs(item))
    prompt = Prompt(messages=question_messages(item), tools=declared.tools)
    return NativePrompt(prompt, declared.names)


# --- the answer ---------------------------------------------------------------------------------


def _json_value(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _json_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_value(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return repr(value)  # bytes, complex: shown as written


def answer_view(decoded: Decoded, declared: Sequence[str] = ()) -> dict[str, Any]:
    """The decoded answer as JSON for people to read (FC names shown as declared)."""
    if isinstance(decoded, DecodeFailure):
        return {"calls": None, "failure": decoded.reason}
    calls = restore_names(decoded, declared) if declared else decoded
    return {"calls": [{"name": c.name, "arguments": _json_value(c.arguments)} for c in calls]}


def _native(ctx: Context) -> bool:
    return tool_mode(ctx) == "native"


def _decode_text(text: str, item: Item, ctx: Context) -> Decoded:
    """A text answer as BFCL decodes it in the run's mode: FC mode's text without a tool call,
    or Prompt mode's `[func(a=1)]` (Java and JavaScript: not decoded, NOT_DECODED)."""
    if _native(ctx):
        return decode_tool_calls(None, text)
    if language_of(_category(item)) != "python":
        return DecodeFailure(NOT_DECODED)
    return decode_prompt(text)


def decoded_answer(outcome: Outcome, item: Item, ctx: Context) -> Decoded:
    """The answer's calls as BFCL decodes them, from what the prediction stores: the tool_calls
    in native mode, the text otherwise."""
    if _native(ctx) and outcome.tool_calls:
        return decode_tool_calls(outcome.tool_calls, outcome.output)
    return _decode_text(outcome.output, item, ctx)


def _outcome(text: str, decoded: Decoded, declared: Sequence[str] = ()) -> Outcome:
    failure = decoded.reason if isinstance(decoded, DecodeFailure) else ""
    return Outcome(
        output=text, answer=answer_view(decoded, declared), parsed=not failure, note=failure
    )


def parse_answer(text: str, item: Item, ctx: Context, context: dict[str, Any]) -> Outcome:
    return _outcome(text, _decode_text(text, item, ctx))


def native_outcome(
    reply: NativeReply, item: Item, ctx: Context, context: dict[str, Any]
) -> Outcome:
    """FC mode's answer: the tool_calls as sent, decoded as BFCL decodes them (names as the
    model wrote them; the checker compares them with the FC names)."""
    decoded = decode_tool_calls(reply.tool_calls or None, reply.text)
    declared = [str(doc.get("name", "")) for doc in _functions(item)]
    outcome = _outcome(reply.text, decoded, declared)
    outcome.tool_calls = reply.tool_calls
    return outcome


def verdict(outcome: Outcome, item: Item, ctx: Context) -> Verdict:
    """BFCL's AST checker's verdict on a stored answer."""
    category = _category(item)
    reference = item.reference
    possible = reference if isinstance(reference, list) else []
    return check(
        decoded_answer(outcome, item, ctx),
        _functions(item),
        possible,
        category=category,
        language=language_of(category),
        underscore_names=_native(ctx),
    )


def score_answer(
    outcome: Outcome | None, item: Item, ctx: Context, context: dict[str, Any]
) -> Scores:
    if outcome is None:
        return {"accuracy": 0.0}
    found = verdict(outcome, item, ctx)
    return {
        "accuracy": 100.0 if found.valid else 0.0,
        "unparsed": 100.0 if found.kind == "decoding_failure" else 0.0,
    }


def aggregate(scored: Sequence[Scored], ctx: Context) -> Scores:
    accuracy = mean([s.scores.get("accuracy") for s in scored])
    return {
        "accuracy": None if accuracy is None else round(accuracy, 2),
        "n": float(len(scored)),
        "unparsed": float(sum(1 for s in scored if s.scores.get("unparsed") == 100.0)),
    }


def mean_metrics(ctx: Context) -> dict[str, int | None]:
    return {"accuracy": 2}


# --- the gold, as a perfect model would answer ----------------------------------------------------


def _first_values(
    acceptable: Mapping[str, Any],
    required: Sequence[str] = (),
    declared: Collection[str] | None = None,
) -> dict[str, Any]:
    """Each parameter's first acceptable value: "" (may be left out) leaves an optional one
    out, and is passed over for a required one (the checker wants it given); a parameter the
    function does not declare (`declared`) is left out where it may be (the checker refuses
    it)."""
    chosen: dict[str, Any] = {}
    for key, values in acceptable.items():
        if not isinstance(values, list):
            continue
        if declared is not None and key not in declared and "" in values:
            continue
        given = [value for value in values if value != ""] if key in required else values
        if given and given[0] != "":
            chosen[key] = _first_value(given[0])
    return chosen


def _first_value(value: Any) -> Any:
    """A parameter's acceptable value as given. A dict's acceptable value lists, per key, the
    values accepted for that key (and a list of dicts, per dict): their first ones are taken,
    one level down, as the checker compares them."""
    if isinstance(value, dict):
        return _first_of_keys(value)
    if isinstance(value, list):
        return [_first_of_keys(e) if isinstance(e, dict) else e for e in value]
    return value


def _first_of_keys(acceptable: Mapping[Any, Any]) -> dict[Any, Any]:
    chosen: dict[Any, Any] = {}
    for key, values in acceptable.items():
        if not isinstance(values, list):
            chosen[key] = values
        elif values and values[0] != "":
            chosen[key] = values[0]
    return chosen


def _declared_doc(item: Item, name: str) -> Mapping[str, Any]:
    for doc in _functions(item):
        if doc.get("name") == name:
            return doc
    return {}


def _required(doc: Mapping[str, Any]) -> list[str]:
    parameters = doc.get("parameters")
    required = parameters.get("required") if isinstance(parameters, dict) else None
    return [str(r) for r in required] if isinstance(required, list) else []


def _properties(doc: Mapping[str, Any]) -> dict[str, Any]:
    parameters = doc.get("parameters")
    properties = parameters.get("properties") if isinstance(parameters, dict) else None
    return properties if isinstance(properties, dict) else {}


def gold_calls(item: Item) -> list[Call]:
    """The calls a perfect model makes: each answer's function with the first acceptable value
    of every parameter it gives (see _first_values); for live_relevance (no published answer)
    a call of the first function without arguments; none where no call is due."""
    reference = item.reference
    if isinstance(reference, list):
        calls = []
        for answer in reference:
            ((name, parameters),) = answer.items()
            doc = _declared_doc(item, name)
            calls.append(Call(name, _first_values(parameters, _required(doc), _properties(doc))))
        return calls
    if isinstance(reference, dict) and reference.get("expected") == "call":
        functions = _functions(item)
        return [Call(str(functions[0].get("name", "")), {})] if functions else []
    return []


def gold_text(item: Item) -> str:
    """The gold calls as Prompt mode's answer `[f(a=1)]` (no call: a declining sentence)."""
    calls = gold_calls(item)
    if not calls:
        return "None of the functions can be used for this question."
    written = [
        f"{call.name}(" + ", ".join(f"{k}={v!r}" for k, v in call.arguments.items()) + ")"
        for call in calls
    ]
    return "[" + ", ".join(written) + "]"


# Java's literal suffixes, by declared type (BFCL's converter reads `42L` as a long).
_JAVA_SUFFIX = {"long": "L", "float": "f"}


def _element_text(value: Any, quoted: bool, declared: Any = None) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value) if quoted else value
    if isinstance(value, int | float):
        return json.dumps(value) + _JAVA_SUFFIX.get(str(declared), "")
    return json.dumps(value)


def _source_text(value: Any, schema: Mapping[str, Any], language: str) -> str:
    """A value as the Java or JavaScript source text FC models are asked to give (the strings
    their declarations ask for), written as BFCL's converters read it back: Java arrays as
    `new T[]{a, b}`, lists as `new ArrayList<>(Arrays.asList("a", 1))`, maps as
    `new HashMap<String, Object>() {{ put("k", v); }}`; JavaScript values as JSON."""
    declared = schema.get("type")
    items = schema.get("items")
    element = items.get("type") if isinstance(items, dict) else None
    if language == "java" and isinstance(value, list) and declared == "Array":
        return (
            f"new {element or 'Object'}[]{{"
            + ", ".join(_element_text(v, False, element) for v in value)
            + "}"
        )
    if language == "java" and isinstance(value, list):
        quoted = element in (None, "char", "String")
        listed = ", ".join(_element_text(v, quoted, element) for v in value)
        return f"new ArrayList<>(Arrays.asList({listed}))"
    if language == "java" and isinstance(value, dict):
        puts = " ".join(
            f"put({json.dumps(str(k))}, {_element_text(v, True)});" for k, v in value.items()
        )
        return "new HashMap<String, Object>() {{ " + puts + " }}"
    if isinstance(value, bool | str) or not isinstance(value, list | dict):
        return _element_text(value, False, declared if language == "java" else None)
    return json.dumps(value)


def gold_tool_calls(item: Item) -> list[dict[str, Any]]:
    """The gold calls as FC mode's tool_calls (FC names, arguments as JSON; for Java and
    JavaScript every value as its source text, the strings their declarations ask for)."""
    language = language_of(_category(item))
    written = []
    for number, call in enumerate(gold_calls(item), start=1):
        arguments: dict[str, Any] = dict(call.arguments)
        if language != "python":
            schemas = _properties(_declared_doc(item, call.name))
            arguments = {
                key: _source_text(value, schemas.get(key) or {}, language)
                for key, value in arguments.items()
            }
        function = {"name": fc_name(call.name), "arguments": json.dumps(arguments)}
        written.append({"id": f"call_{number}", "type": "function", "function": function})
    return written
