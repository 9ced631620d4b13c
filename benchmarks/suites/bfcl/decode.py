"""A model's answer to a BFCL single-turn entry, read into calls: Prompt mode's text and FC mode's
tool calls. Pure and typed; the text is parsed with `ast` and never evaluated.

Prompt mode (`decode_prompt`): the model was asked to answer `[func(a=1), func2(b="x")]`. BFCL
reads the answer with Python's parser after a small tolerance, which this module reproduces so
that a decoding that succeeds or fails there succeeds or fails here:

- backticks, newlines and spaces around the text are dropped (so a bare ``` fence goes, but
  a ```python fence leaves the word `python` in front, and the decoding fails, as in BFCL);
- a missing `[` in front or `]` at the end is added, then single quotes around the whole are
  dropped;
- the text must then be one call, or a list (tuple, set) whose every element is a call.

A call's name is its dotted name (`math.factorial`; whatever is not a name or an attribute in
front of the call is left out, as BFCL does); its keyword arguments are its arguments (a
positional argument is ignored, and `**x` is kept under the name `**`, which no function
declares, where BFCL keeps it under `None`). An argument's value is read as BFCL reads it:

- literals (numbers, strings, bytes, True/False/None, `...` as the string "..."), lists,
  tuples and dicts of them;
- a sign in front of a number: BFCL negates the number whatever the sign (`+5` reads -5,
  `not 1` reads -1), and so does this decoder;
- a bare name reads as its text (`unit=meters` gives "meters"), a call without keyword
  arguments as its source text (`x=len(y)` gives "len(y)"), a call with keyword arguments as a
  nested call {name: {arg: value}}, a subscript as its source text;
- arithmetic between literals (`2**10`, `"a" * 3`): BFCL evaluates it with `eval`; this
  decoder computes it without evaluating anything, for numbers, strings, bytes, lists and
  tuples of literals, within size bounds; beyond them (or with a name inside, which `eval`
  would look up) the decoding fails;
- anything else (attributes, lambdas, comprehensions, f-strings, comparisons, sets) fails.

Java and JavaScript answers in Prompt mode are not read here: BFCL reads them with tree-sitter's
Java and JavaScript grammars (tree_sitter 0.21.3), whose error recovery decides what decodes
(`[g(b=2, c="x")]` does, `[f(a=1)]` and `[f()]` do not, in Java), which a parser of our own
cannot reproduce; in FC mode they are tool calls like any other.

FC mode (`decode_tool_calls`): OpenAI's `tool_calls`, each `function.arguments` a JSON object.
A model that answers in text without a tool call made no call when its text is empty, and
otherwise fails to decode (BFCL stores the text and its FC decoder fails on it); arguments that
are not a JSON object fail as BFCL's check of the decoded format fails. Names are kept as the
model wrote them: BFCL offers a dotted name with underscores to FC models (`fc_name`) and
compares the call with that spelling (the checker's `underscore_names`); `restore_names`
gives the declared names back, for showing.
"""

from __future__ import annotations

import ast
import json
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

__all__ = [
    "KWARGS",
    "Call",
    "DecodeFailure",
    "Decoded",
    "Value",
    "calls_from_bfcl",
    "calls_to_bfcl",
    "decode_prompt",
    "decode_tool_calls",
    "fc_name",
    "has_call",
    "restore_names",
]

Value: TypeAlias = (
    bool
    | int
    | float
    | complex
    | str
    | bytes
    | list["Value"]
    | tuple["Value", ...]
    | dict[Any, "Value"]
    | None
)

# The argument name under which `f(**x)` keeps x: not an identifier, so no function declares it.
KWARGS = "**"

# Bounds on arithmetic between literals (BFCL evaluates it; we compute it, and refuse beyond).
MAX_LENGTH = 100_000  # items of a repeated string, bytes, list or tuple
MAX_BITS = 100_000  # bits of an integer result
MAX_DEPTH = 100  # nesting of expressions


@dataclass(frozen=True, slots=True)
class Call:
    """One call: the function's name as written and its arguments by name."""

    name: str
    arguments: dict[str, Value]


@dataclass(frozen=True, slots=True)
class DecodeFailure:
    """The answer could not be read as calls. `wrong_format`: it was read, but not as BFCL's
    list of {name: {argument: value}} (BFCL's `decoder_wrong_output_format`; otherwise its
    `decoder_failed`)."""

    reason: str
    wrong_format: bool = False


Decoded: TypeAlias = tuple[Call, ...] | DecodeFailure


def has_call(decoded: Decoded) -> bool:
    """Whether the answer made a call: it decoded, to at least one call (BFCL's relevance rule:
    a failed decoding and an empty list are both no call)."""
    return not isinstance(decoded, DecodeFailure) and len(decoded) > 0


def fc_name(name: str) -> str:
    """The name BFCL gives a function in FC mode: OpenAI's names allow no dot."""
    return name.replace(".", "_")


def restore_names(calls: Sequence[Call], declared: Sequence[str]) -> tuple[Call, ...]:
    """FC calls with the declared (dotted) names back where the FC name stands for exactly one
    declared function, for showing; other names are kept. Scoring does not need it: the
    checker compares with the FC spelling (`underscore_names`), as BFCL does, which also fails
    a model that wrote the dotted name where only the FC name was offered."""
    by_fc_name: dict[str, list[str]] = {}
    for name in declared:
        by_fc_name.setdefault(fc_name(name), []).append(name)
    restored = []
    for call in calls:
        names = by_fc_name.get(call.name, [])
        if len(names) == 1:
            call = Call(names[0], call.arguments)
        restored.append(call)
    return tuple(restored)


class _Unreadable(Exception):
    """An argument value this decoder does not read (BFCL's decoder raises on it too)."""


def decode_prompt(text: str) -> Decoded:
    """Prompt mode's answer `[func(a=1), ...]` as calls, or why it is not one."""
    body = text.strip("`\n ")
    if not body.startswith("["):
        body = "[" + body
    if not body.endswith("]"):
        body = body + "]"
    body = body.strip().strip("'")
    try:
        tree = ast.parse(body, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError) as error:
        return DecodeFailure(f"not Python syntax: {type(error).__name__}: {error}")
    node = tree.body
    if isinstance(node, ast.Call):
        elements: list[ast.expr] = [node]
    elif isinstance(node, ast.List | ast.Tuple | ast.Set):
        elements = node.elts
    else:
        return DecodeFailure(f"not a list of calls: a {type(node).__name__}")
    calls = []
    for element in elements:
        if not isinstance(element, ast.Call):
            return DecodeFailure(f"an element is not a call: a {type(element).__name__}")
        try:
            name, arguments = _call(element, 0)
        except (_Unreadable, RecursionError) as error:
            return DecodeFailure(f"an argument is not readable: {error}")
        calls.append(Call(name, arguments))
    return tuple(calls)


def _dotted_name(node: ast.expr) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _call(node: ast.Call, depth: int) -> tuple[str, dict[str, Value]]:
    arguments: dict[str, Value] = {}
    for keyword in node.keywords:
        arguments[KWARGS if keyword.arg is None else keyword.arg] = _value(keyword.value, depth)
    return _dotted_name(node.func), arguments


_NUMBERS = (bool, int, float, complex)


def _value(node: ast.expr, depth: int) -> Value:
    if depth > MAX_DEPTH:
        raise _Unreadable("nested too deep")
    depth += 1
    if isinstance(node, ast.Constant):
        return "..." if node.value is Ellipsis else node.value
    if isinstance(node, ast.UnaryOp):
        operand = node.operand
        if isinstance(operand, ast.Constant) and isinstance(operand.value, _NUMBERS):
            return -operand.value
        raise _Unreadable("a sign in front of something that is not a number")
    if isinstance(node, ast.List):
        return [_value(element, depth) for element in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_value(element, depth) for element in node.elts)
    if isinstance(node, ast.Dict):
        result: dict[Any, Value] = {}
        for key, item in zip(node.keys, node.values, strict=True):
            if key is None:
                raise _Unreadable("a ** inside a dict")
            read_key = _value(key, depth)
            try:
                result[read_key] = _value(item, depth)
            except TypeError as error:
                raise _Unreadable(f"an unhashable dict key: {error}") from None
        return result
    if isinstance(node, ast.BinOp):
        computed: Value = _arithmetic(node, depth)
        return computed
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call):
        if not node.keywords:
            return ast.unparse(node)
        name, arguments = _call(node, depth)
        return {name: arguments}
    if isinstance(node, ast.Subscript):
        return ast.unparse(node.value) + "[" + ast.unparse(node.slice) + "]"
    raise _Unreadable(f"a {type(node).__name__}")


_OPERATORS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    ast.BitAnd: operator.and_,
    ast.MatMult: operator.matmul,
}

_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Not: operator.not_,
    ast.Invert: operator.invert,
}

_SEQUENCES = (str, bytes, list, tuple)


def _arithmetic(node: ast.expr, depth: int) -> Any:
    """What Python computes for an expression of literals, computed without evaluating text:
    real operator semantics (inside arithmetic a sign means what Python means by it)."""
    if depth > MAX_DEPTH:
        raise _Unreadable("nested too deep")
    depth += 1
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.List):
        return [_arithmetic(element, depth) for element in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_arithmetic(element, depth) for element in node.elts)
    if isinstance(node, ast.UnaryOp):
        operand = _arithmetic(node.operand, depth)
        return _apply(_UNARY[type(node.op)], operand)
    if isinstance(node, ast.BinOp):
        left = _arithmetic(node.left, depth)
        right = _arithmetic(node.right, depth)
        _check_size(node.op, left, right)
        return _apply(_OPERATORS[type(node.op)], left, right)
    raise _Unreadable(f"arithmetic on a {type(node).__name__}, which eval would look up or run")


def _apply(function: Callable[..., Any], *operands: Any) -> Any:
    try:
        return function(*operands)
    except (ArithmeticError, TypeError, ValueError) as error:
        raise _Unreadable(f"arithmetic fails: {type(error).__name__}: {error}") from None


def _check_size(op: ast.operator, left: Any, right: Any) -> None:
    def integer(value: Any) -> bool:
        return isinstance(value, int)

    if isinstance(op, ast.Mult):
        for sequence, count in ((left, right), (right, left)):
            if (
                isinstance(sequence, _SEQUENCES)
                and integer(count)
                and len(sequence) * max(count, 0) > MAX_LENGTH
            ):
                raise _Unreadable("a repetition too long to compute")
    elif isinstance(op, ast.Pow) and integer(left) and integer(right):
        if right > 0 and abs(left) > 1 and max(abs(left).bit_length(), 1) * right > MAX_BITS:
            raise _Unreadable("a power too large to compute")
    elif isinstance(op, ast.LShift) and integer(left) and integer(right) and right > MAX_BITS:
        raise _Unreadable("a shift too large to compute")


def decode_tool_calls(
    tool_calls: Sequence[Mapping[str, Any]] | None, content: str | None = None
) -> Decoded:
    """FC mode's answer: OpenAI's `tool_calls` (each {"function": {"name", "arguments"}}), or,
    without them, the message's text (`content`)."""
    if tool_calls is None:
        if content == "":
            return ()
        return DecodeFailure("answered in text, without a tool call")
    calls = []
    for tool_call in tool_calls:
        function = tool_call.get("function")
        if not isinstance(function, Mapping):
            return DecodeFailure("a tool call without a function")
        name = function.get("name")
        arguments = function.get("arguments")
        if not isinstance(name, str) or not isinstance(arguments, str):
            return DecodeFailure("a tool call without a name or its arguments' text")
        try:
            read = json.loads(arguments)
        except (ValueError, RecursionError) as error:
            return DecodeFailure(f"arguments are not JSON: {error}")
        if not isinstance(read, dict):
            return DecodeFailure("arguments are not a JSON object", wrong_format=True)
        calls.append(Call(name, read))
    return tuple(calls)


def calls_from_bfcl(decoded: object) -> Decoded:
    """BFCL's decoded form, a list of {name: {argument: value}}, as calls (or why it is not
    in that form: BFCL's `is_function_calling_format_output`)."""
    if not isinstance(decoded, list):
        return DecodeFailure("not a list", wrong_format=True)
    calls = []
    for item in decoded:
        if not isinstance(item, dict) or len(item) != 1:
            return DecodeFailure("an element is not one {name: arguments}", wrong_format=True)
        ((name, arguments),) = item.items()
        if not isinstance(arguments, dict) or not isinstance(name, str):
            return DecodeFailure("an element's arguments are not a dict", wrong_format=True)
        calls.append(Call(name, arguments))
    return tuple(calls)


def calls_to_bfcl(calls: Sequence[Call]) -> list[dict[str, dict[str, Value]]]:
    """Calls in BFCL's decoded form."""
    return [{call.name: dict(call.arguments)} for call in calls]
