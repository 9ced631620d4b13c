"""BFCL's AST check of a single-turn answer: the model's decoded calls against the entry's function
declarations and its possible answer, giving a typed verdict. Pure; written for this platform
from BFCL's documented rules and shown equal to BFCL's own checker on the fixtures of
tests/suites/bfcl/fixtures/ast_parity.jsonl (its verdicts, produced by its code, kept as data).

The possible answer is BFCL's: a list of {function name: {parameter: [acceptable values]}}, an
empty string among the acceptable values meaning the parameter may be left out. The rules:

- Shape, by category: one call (`simple_*`, `live_simple`); as many calls as the answer has,
  the first checked against the answer's function (`multiple`, `live_multiple`); as many calls
  as the answer has, matched in any order, greedily: each expected call, in the answer's order,
  takes the first of the model's calls not yet taken that passes (`parallel*`,
  `live_parallel*`: a model can fail where a better pairing exists, as in BFCL). `irrelevance`
  and `live_irrelevance` pass when the answer made no call (nothing decoded, or no call
  decoded); `live_relevance` passes when it made at least one.
- A call: its name is the declared one (with underscores for dots when the model was offered
  FC names: `underscore_names`); every declared required parameter is given; every given
  parameter is declared and in the answer; each value has the declared type and is
  acceptable; every parameter of the answer that may not be left out is given.
- Types, Python: exact types (a bool is not an int), except that an int is accepted for a
  float and a tuple for a `tuple`; an array's elements are checked one level deep, against
  the element types of the acceptable lists. Where the answer's values have another type than
  the declared one (BFCL writes variables as strings), a value of the answer's type is
  accepted as such and compared as it is. Java and JavaScript: the value must be text, read
  as the declared type first (`convert.py`); text that does not read stays text.
- Values: strings compared normalised (spaces and `,./-_*^` removed, lower case, `'` as `"`);
  lists element by element in order, string elements normalised; dicts key by key, string
  values normalised, a key of the answer that may not be left out must be there; lists of
  dicts dict by dict, in order; anything else by Python's equality (1 == 1.0 == True).

The verdict's `detail` is BFCL's own error type (its checker's `error_type`, e.g.
`value_error:string`) and `kind` the platform's coarser one (ErrorKind), for the analyses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, cast

from benchmarks.suites.bfcl.convert import (
    JAVA_TYPES,
    JAVASCRIPT_TYPES,
    UnsupportedType,
    java_value,
    javascript_value,
)
from benchmarks.suites.bfcl.decode import Call, Decoded, DecodeFailure, has_call

__all__ = [
    "CATEGORIES",
    "ERROR_KINDS",
    "ErrorKind",
    "Language",
    "Shape",
    "UnsupportedType",
    "Verdict",
    "check",
    "check_call",
    "kind_of",
    "language_of",
    "normalise",
]

Language: TypeAlias = Literal["python", "java", "javascript"]
Shape: TypeAlias = Literal["simple", "multiple", "parallel", "irrelevance", "relevance"]
ErrorKind: TypeAlias = Literal[
    "decoding_failure",
    "wrong_count",
    "wrong_function",
    "missing_required",
    "unexpected_parameter",
    "wrong_type",
    "wrong_value",
    "extra_call",
    "no_call",
]

ERROR_KINDS: tuple[ErrorKind, ...] = (
    "decoding_failure",
    "wrong_count",
    "wrong_function",
    "missing_required",
    "unexpected_parameter",
    "wrong_type",
    "wrong_value",
    "extra_call",
    "no_call",
)

# The single-turn categories this checker scores, and how (see the module's docstring).
CATEGORIES: dict[str, Shape] = {
    "simple_python": "simple",
    "simple_java": "simple",
    "simple_javascript": "simple",
    "live_simple": "simple",
    "multiple": "multiple",
    "live_multiple": "multiple",
    "parallel": "parallel",
    "parallel_multiple": "parallel",
    "live_parallel": "parallel",
    "live_parallel_multiple": "parallel",
    "irrelevance": "irrelevance",
    "live_irrelevance": "irrelevance",
    "live_relevance": "relevance",
}

PYTHON_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "float": float,
    "boolean": bool,
    "array": list,
    "tuple": list,
    "dict": dict,
    "any": str,
}

# The declared types whose elements are checked (one level), per language.
_ELEMENT_CHECKED: dict[Language, frozenset[str]] = {
    "python": frozenset({"array", "tuple"}),
    "java": frozenset({"Array", "ArrayList"}),
    "javascript": frozenset({"array"}),
}

# BFCL's error types (its checker's and its runner's) and the platform's kinds.
_KINDS: dict[str, ErrorKind] = {
    "ast_decoder:decoder_failed": "decoding_failure",
    "ast_decoder:decoder_wrong_output_format": "decoding_failure",
    "simple_function_checker:wrong_count": "wrong_count",
    "multiple_function_checker:wrong_count": "wrong_count",
    "parallel_function_checker_no_order:wrong_count": "wrong_count",
    "simple_function_checker:wrong_func_name": "wrong_function",
    "simple_function_checker:missing_required": "missing_required",
    # A parameter the answer needs that the declaration calls optional: required all the same.
    "simple_function_checker:missing_optional": "missing_required",
    "simple_function_checker:unexpected_param": "unexpected_parameter",
    "type_error:simple": "wrong_type",
    "type_error:nested": "wrong_type",
    "type_error:java": "wrong_type",
    "type_error:js": "wrong_type",
    "value_error:string": "wrong_value",
    "value_error:list/tuple": "wrong_value",
    "value_error:dict_key": "wrong_value",
    "value_error:dict_value": "wrong_value",
    "value_error:list_dict_count": "wrong_value",
    "value_error:others": "wrong_value",
    "dict_checker:unclear": "wrong_value",
    "list_dict_checker:unclear": "wrong_value",
    "irrelevance_error:decoder_success": "extra_call",
    "relevance_error:decoder_failed": "no_call",
}

_NO_MATCH = "parallel_function_checker_no_order:cannot_find_match"


def kind_of(detail: str, candidates: Sequence[str] = ()) -> ErrorKind:
    """The platform's kind of one of BFCL's error types. An expected parallel call that matched
    none of the model's (`cannot_find_match`) takes the kind of the first candidate's error
    that is not a wrong name (`candidates`: BFCL's error types, one per candidate, in order),
    or a wrong function when every candidate had another name."""
    if detail == _NO_MATCH:
        for candidate in candidates:
            if candidate != "simple_function_checker:wrong_func_name":
                return kind_of(candidate)
        return "wrong_function"
    return _KINDS[detail]


@dataclass(frozen=True, slots=True)
class Verdict:
    """An answer's verdict. `detail`: BFCL's error type ("" when valid); `kind`: the
    platform's (None when valid); `messages`: what was wrong, for a reader; `candidates`: for
    an unmatched parallel call, the error type of each call it was compared with."""

    valid: bool
    kind: ErrorKind | None = None
    detail: str = ""
    messages: tuple[str, ...] = ()
    candidates: tuple[str, ...] = ()


PASS = Verdict(True)


def _fail(detail: str, *messages: str) -> Verdict:
    return Verdict(False, _KINDS[detail], detail, messages)


def language_of(category: str) -> Language:
    """The language whose types a category's declarations use."""
    if category == "simple_java":
        return "java"
    if category == "simple_javascript":
        return "javascript"
    return "python"


_DROPPED = str.maketrans("", "", " ,./-_*^")


def normalise(text: str) -> str:
    """A string as BFCL compares it: spaces and `,./-_*^` removed, lower case, `'` as `"`."""
    return text.translate(_DROPPED).lower().replace("'", '"')


def check(
    decoded: Decoded,
    functions: Sequence[Mapping[str, Any]],
    possible_answer: Sequence[Mapping[str, Mapping[str, Sequence[Any]]]],
    *,
    category: str,
    language: Language,
    underscore_names: bool = False,
) -> Verdict:
    """The verdict on one entry's decoded answer. Raises ValueError for a category this
    checker does not score and `UnsupportedType` for a declared type BFCL's checker does not
    know (properties of the entry, not of the answer)."""
    shape = CATEGORIES.get(category)
    if shape is None:
        raise ValueError(f"not a single-turn BFCL category: {category!r}")
    if shape == "irrelevance":
        if has_call(decoded):
            return _fail("irrelevance_error:decoder_success", "a call where none was due")
        return PASS
    if shape == "relevance":
        if has_call(decoded):
            return PASS
        return _fail("relevance_error:decoder_failed", "no call where one was due")
    if isinstance(decoded, DecodeFailure):
        detail = (
            "ast_decoder:decoder_wrong_output_format"
            if decoded.wrong_format
            else ("ast_decoder:decoder_failed")
        )
        return _fail(detail, decoded.reason)
    if shape == "simple":
        if len(decoded) != 1:
            return _fail("simple_function_checker:wrong_count", _count(decoded, 1))
        answers = next(iter(possible_answer[0].values()))
        return check_call(
            functions[0], decoded[0], answers, language=language, underscore_names=underscore_names
        )
    if len(decoded) != len(possible_answer):
        detail = (
            "multiple_function_checker:wrong_count"
            if shape == "multiple"
            else "parallel_function_checker_no_order:wrong_count"
        )
        return _fail(detail, _count(decoded, len(possible_answer)))
    if shape == "multiple":
        name, answers = next(iter(possible_answer[0].items()))
        return check_call(
            _declared(functions, name),
            decoded[0],
            answers,
            language=language,
            underscore_names=underscore_names,
        )
    return _check_parallel(decoded, functions, possible_answer, language, underscore_names)


def _count(calls: Sequence[Call], expected: int) -> str:
    return f"{len(calls)} calls where {expected} were due"


def _declared(functions: Sequence[Mapping[str, Any]], name: str) -> Mapping[str, Any]:
    for function in functions:
        if function["name"] == name:
            return function
    raise ValueError(f"the answer's function {name!r} is not among the entry's functions")


def _check_parallel(
    calls: Sequence[Call],
    functions: Sequence[Mapping[str, Any]],
    possible_answer: Sequence[Mapping[str, Mapping[str, Sequence[Any]]]],
    language: Language,
    underscore_names: bool,
) -> Verdict:
    taken: set[int] = set()
    for position, expected in enumerate(possible_answer):
        name, answers = next(iter(expected.items()))
        function = _declared(functions, name)
        failures: list[tuple[int, Verdict]] = []
        for index, call in enumerate(calls):
            if index in taken:
                continue
            verdict = check_call(
                function, call, answers, language=language, underscore_names=underscore_names
            )
            if verdict.valid:
                taken.add(index)
                break
            failures.append((index, verdict))
        else:
            candidates = tuple(verdict.detail for _, verdict in failures)
            messages = [
                f"expected call {position} ({name}) matches none of the calls "
                f"{[index for index, _ in failures]}"
            ]
            messages += [f"call {i}: {'; '.join(v.messages)}" for i, v in failures]
            return Verdict(
                False, kind_of(_NO_MATCH, candidates), _NO_MATCH, tuple(messages), candidates
            )
    return PASS


def check_call(
    function: Mapping[str, Any],
    call: Call,
    answers: Mapping[str, Sequence[Any]],
    *,
    language: Language,
    underscore_names: bool = False,
) -> Verdict:
    """One call against one declared function and its acceptable values by parameter."""
    name = function["name"]
    if underscore_names:
        name = name.replace(".", "_")
    if call.name != name:
        return _fail("simple_function_checker:wrong_func_name", f"{call.name!r} is not {name!r}")
    parameters = function["parameters"]
    properties: Mapping[str, Any] = parameters["properties"]
    given = call.arguments
    for required in parameters.get("required", ()):
        if required not in given:
            return _fail("simple_function_checker:missing_required", f"{required!r} is required")
    for parameter, value in given.items():
        if parameter not in properties or parameter not in answers:
            return _fail(
                "simple_function_checker:unexpected_param", f"{parameter!r} is not expected"
            )
        problem = _check_value(
            parameter, value, properties[parameter], answers[parameter], language
        )
        if problem is not None:
            return problem
    for parameter, acceptable in answers.items():
        if parameter not in given and "" not in acceptable:
            return _fail(
                "simple_function_checker:missing_optional",
                f"{parameter!r} is needed by the answer",
            )
    return PASS


def _types_of(language: Language) -> dict[str, type]:
    if language == "java":
        return JAVA_TYPES
    if language == "javascript":
        return JAVASCRIPT_TYPES
    return PYTHON_TYPES


def _check_value(
    parameter: str,
    value: Any,
    declaration: Mapping[str, Any],
    acceptable: Sequence[Any],
    language: Language,
) -> Verdict | None:
    declared = declaration.get("type")
    types = _types_of(language)
    if declared not in types:
        raise UnsupportedType(f"{language} type {declared!r} of parameter {parameter!r}")
    expected = types[declared]
    if language != "python" and type(value) is not str:
        detail = "type_error:java" if language == "java" else "type_error:js"
        return _fail(detail, f"{parameter!r} must be text, not {type(value).__name__}")
    element: type | None = None
    item: str | None = None
    if declared in _ELEMENT_CHECKED[language]:
        item = declaration["items"]["type"]
        if item not in types:
            raise UnsupportedType(f"{language} element type {item!r} of {parameter!r}")
        element = types[item]
    if language != "python":
        assert isinstance(declared, str)
        if language == "java":
            value = java_value(value, declared, item)
        else:
            value = javascript_value(value, declared, item)
    if declared == "tuple" and type(value) is tuple:
        value = list(value)
    if language == "python" and declared == "float" and type(value) is int:
        value = float(value)

    problem, variable = _check_type(parameter, value, acceptable, expected, element)
    if problem is not None:
        return problem
    if not variable:
        if expected is dict:
            return _check_dict(parameter, value, acceptable)
        if expected is list and element is dict:
            return _check_dicts(parameter, value, acceptable)
        if expected is str:
            if normalise(value) in [normalise(a) for a in acceptable if type(a) is str]:
                return None
            return _fail("value_error:string", f"{parameter!r}: {value!r} is not acceptable")
        if expected is list:
            return _check_list(parameter, value, acceptable)
    if value not in acceptable:
        return _fail("value_error:others", f"{parameter!r}: {value!r} is not acceptable")
    return None


def _answer_type(acceptable: Sequence[Any]) -> type | None:
    for answer in acceptable:
        if answer != "":
            return type(answer)
    return None


def _check_type(
    parameter: str,
    value: Any,
    acceptable: Sequence[Any],
    expected: type,
    element: type | None,
) -> tuple[Verdict | None, bool]:
    """(a type error or None, whether the answer's values are of another type than declared:
    variables, compared as they are)."""
    answer_type = _answer_type(acceptable)
    variable = answer_type is not None and answer_type is not expected
    elements_wrong = False
    if type(value) is expected:
        if element is None:
            return None, variable
        elements = cast("list[Any]", value)
        for answer in acceptable:
            if type(answer) is not list or all(_element_ok(v, answer, element) for v in elements):
                return None, variable
        elements_wrong = True
    if answer_type is not None and type(value) is answer_type:
        if elements_wrong:
            return _fail("type_error:nested", f"{parameter!r}: wrong element type"), True
        return None, True
    message = f"{parameter!r}: {type(value).__name__} is not {expected.__name__}"
    return _fail("type_error:simple", message), variable


def _element_ok(value: Any, answer: Sequence[Any], element: type) -> bool:
    if type(value) is element:
        return True
    answer_type = _answer_type(answer)
    return answer_type is not None and type(value) is answer_type


def _normalised_items(items: Any) -> list[Any] | None:
    if not isinstance(items, str | list | tuple):
        return None
    return [normalise(x) if type(x) is str else x for x in items]


def _check_list(parameter: str, value: list[Any], acceptable: Sequence[Any]) -> Verdict | None:
    given = [normalise(x) if type(x) is str else x for x in value]
    for answer in acceptable:
        if given == _normalised_items(answer):
            return None
    return _fail("value_error:list/tuple", f"{parameter!r}: {value!r} is not acceptable")


def _check_dict(parameter: str, value: Any, acceptable: Sequence[Any]) -> Verdict | None:
    verdict = _fail("dict_checker:unclear", f"{parameter!r}: no acceptable dict")
    for answer in acceptable:
        if answer == "":
            continue
        if not isinstance(answer, dict) or not isinstance(value, dict):
            verdict = _fail("dict_checker:unclear", f"{parameter!r}: not comparable as dicts")
            continue
        detail = ""
        messages: list[str] = []
        for key, item in value.items():
            if key not in answer:
                detail = "value_error:dict_key"
                messages.append(f"{parameter!r}: unexpected key {key!r}")
                break
            alternatives = answer[key] if isinstance(answer[key], list) else [answer[key]]
            read = normalise(item) if type(item) is str else item
            if read not in [normalise(a) if type(a) is str else a for a in alternatives]:
                detail = "value_error:dict_value"
                messages.append(f"{parameter!r}: {key!r} = {item!r} is not acceptable")
                break
        # The keys the answer needs are checked even after a wrong key or value, as in BFCL.
        for key, alternatives in answer.items():
            if key not in value and "" not in alternatives:
                detail = "value_error:dict_key"
                messages.append(f"{parameter!r}: missing key {key!r}")
                break
        if not detail:
            return None
        verdict = _fail(detail, *messages)
    return verdict


def _check_dicts(parameter: str, value: list[Any], acceptable: Sequence[Any]) -> Verdict | None:
    verdict = _fail("list_dict_checker:unclear", f"{parameter!r}: no acceptable list")
    for answer in acceptable:
        if not isinstance(answer, str | list) or len(value) != len(answer):
            verdict = _fail("value_error:list_dict_count", f"{parameter!r}: wrong number of dicts")
            continue
        for index, item in enumerate(value):
            problem = _check_dict(parameter, item, [answer[index]])
            if problem is not None:
                verdict = problem
                break
        else:
            return None
    return verdict
