"""BFCL's multi-turn calls as data: `cd(folder='document')`, `sort('final_report.pdf')`.

BFCL writes its multi-turn ground truth (and reads a Prompt model's answer) as Python call
strings, and runs them with `eval`. Here they are read with `ast` and never evaluated: a call is
a plain name (a method of one of the entry's instances) with positional and keyword arguments
that are literals (strings, numbers, True/False/None, and lists, tuples and dicts of them); a
tuple is read as a list, since the arguments travel as JSON values. Anything else (a call inside
an argument, a name, an attribute, an operator, `*args`, `**kwargs`) is refused with a
`ToolCallError` that says what and where, as `benchmarks.kit.toolcall` does for keyword-only
calls. Pure Python.
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass, field
from typing import Any

from benchmarks.kit.toolcall import MAX_CALL_CHARS, ToolCallError, literal_value

__all__ = ["ParsedCall", "parse_call"]


@dataclass(frozen=True, slots=True)
class ParsedCall:
    """One call: the method's name, its positional arguments and its keyword arguments."""

    name: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)

    def text(self) -> str:
        """The call written back in Python syntax (reprs of JSON values)."""
        parts = [repr(value) for value in self.args]
        parts += [f"{key}={value!r}" for key, value in self.kwargs.items()]
        return f"{self.name}({', '.join(parts)})"


def parse_call(text: object) -> ParsedCall:
    """`name(literal, ..., key=literal, ...)` -> ParsedCall; anything else raises
    ToolCallError. Never evaluates."""
    if not isinstance(text, str):
        raise ToolCallError(f"a call must be a string, got {type(text).__name__}")
    source = text.strip()
    if not source:
        raise ToolCallError("the call is empty")
    if len(source) > MAX_CALL_CHARS:
        raise ToolCallError(f"the call is longer than {MAX_CALL_CHARS:,} characters")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            node = ast.parse(source, mode="eval").body
    except SyntaxError as exc:
        raise ToolCallError(f"not a valid call: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise ToolCallError(f"not a valid call: {type(exc).__name__}") from None
    if not isinstance(node, ast.Call):
        raise ToolCallError(f"expected a call such as cd(folder='x'), got {type(node).__name__}")
    if not isinstance(node.func, ast.Name):
        raise ToolCallError("the called function must be a plain name such as cd")
    args = []
    for index, arg in enumerate(node.args):
        if isinstance(arg, ast.Starred):
            raise ToolCallError("*args unpacking is not allowed")
        args.append(literal_value(arg, f"argument {index + 1}", 1))
    kwargs: dict[str, Any] = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            raise ToolCallError("**kwargs unpacking is not allowed")
        if keyword.arg in kwargs:
            raise ToolCallError(f"argument {keyword.arg!r} is given twice")
        kwargs[keyword.arg] = literal_value(keyword.value, f"argument {keyword.arg!r}", 1)
    return ParsedCall(node.func.id, tuple(args), kwargs)
