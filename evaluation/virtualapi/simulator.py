"""The API simulator's side that needs no database: the prompt an LLM gets to play an API
(StableToolBench's, prompts/simulator.toml), what of its reply is a response, and which
responses are clean enough to cache. Pure Python.

A reply is read as the JSON object {"error", "response"} the prompt asks for (the first such
object in the text: models add prose or code fences); a reply with no such object is kept as a
text response but marked not clean, so it is served once and never cached.

Clean (StableToolBench Appendix D, the errors it filters out of its cache): no error text, and
no response that reads as a connection, rate-limit, timeout, not-found, parameter, parsing or
authorisation failure (see _FAILURE for how its words are read).
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from benchmarks.kit.predictions import json_values
from benchmarks.kit.protocol import Prompt

PROMPTS = Path(__file__).resolve().parent / "prompts" / "simulator.toml"
MAX_EXAMPLES = 5
MAX_EXAMPLE_CHARS = 1500
# A simulated response is "around 100 to 200 words" (the prompt); room for JSON around it.
MAX_TOKENS = 512

# Appendix D: what marks a failed call, by the paper's categories (case-insensitive). The words
# are read as the failure phrases they stand for, and a status code only next to "error",
# "status" or "code", so that real data (a parameter list, a price of 404) stays cacheable.
_STATUS = r"(?:401|403|404|429|50[0-4])"
_FAILURE = re.compile(
    r"\b(?:"
    # not connected
    r"http ?error|connection (?:error|refused|reset|aborted|timed? ?out)|rate limit|"
    r"too many requests|timed? ?out|"
    # not found
    r"not found|not available|api doesn'?t exists?|service not found|internal (?:server )?error|"
    # parameter change
    r"(?:invalid|missing|unknown|required) parameters?|parameters? (?:is |are )?(?:invalid|"
    r"missing|required)|is not defined|(?:failed|unable|could not) to parse|parse error|"
    # parsing error
    r"function executing from|"
    # not authorised
    r"unauthori[sz]ed|not authori[sz]ed|authori[sz]ation (?:failed|required|error)|"
    r"blocked user|unsubscribe|invalid credentials?|disabled for your subscription|"
    r"access_denied|"
    # a status code given as one
    rf"(?:error|status|code)\W{{0,3}}{_STATUS}|{_STATUS}\W{{0,3}}(?:error|not found|forbidden|"
    r"unauthori[sz]ed|too many|internal)"
    r")\b",
    re.IGNORECASE,
)


@cache
def prompts() -> dict[str, str]:
    with PROMPTS.open("rb") as handle:
        return tomllib.load(handle)


@dataclass(frozen=True)
class Simulated:
    response: Any
    error: str
    clean: bool
    note: str = ""


def _shorten(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= MAX_EXAMPLE_CHARS else text[:MAX_EXAMPLE_CHARS] + "…"


def build_prompt(
    documentation: Any,
    request: dict[str, Any],
    examples: Sequence[tuple[Any, Any]],
    *,
    completion: bool = False,
    max_tokens: int = MAX_TOKENS,
) -> Prompt:
    """The simulator's request: the system prompt, then the API's documentation, up to five
    (arguments, response) examples of the same API, and the call (`request`: category,
    tool_name, api_name, tool_input, as StableToolBench's server receives it). For a base model
    (`completion`), the text ends where the JSON answer starts."""
    texts = prompts()
    lines = [
        texts["example"].format(n=n, input=_shorten(arguments), response=_shorten(response))
        for n, (arguments, response) in enumerate(examples[:MAX_EXAMPLES], start=1)
    ]
    user = texts["user"].format(
        documentation=json.dumps(documentation, ensure_ascii=False, indent=1),
        examples="\n".join(lines) or texts["no_examples"],
        request=json.dumps(request, ensure_ascii=False),
    )
    messages = [
        {"role": "system", "content": texts["system"].strip()},
        {"role": "user", "content": user},
    ]
    if completion:
        text = f"{texts['system'].strip()}\n\n{user}\nResponse:\n" + '{"error": "", "response": '
        return Prompt(
            messages=messages, text=text, stop=("\n\n\n", "\nAPI input:"), max_tokens=max_tokens
        )
    return Prompt(messages=messages, max_tokens=max_tokens)


def _objects(text: str) -> list[dict[str, Any]]:
    """The JSON objects of a text (top-level ones, in order; arrays are skipped)."""
    return [value for value in json_values(text) if isinstance(value, dict)]


def parse_reply(text: str, *, completion: bool = False) -> Simulated:
    """The simulated response in a reply (see the module docstring). A completion-style reply
    continues the prompt's '{"error": "", "response": ' opening."""
    raw = text.strip()
    if completion:
        raw = '{"error": "", "response": ' + raw
    for value in _objects(raw):
        if "response" in value:
            error = value.get("error") or ""
            error = error if isinstance(error, str) else json.dumps(error)
            response = value["response"]
            return Simulated(response, error, clean=is_clean(response, error))
    if completion:
        # A base model often stops before closing the object: keep what it wrote.
        body = text.strip().rstrip("}").strip()
        try:
            response: Any = json.loads(body)
        except ValueError:
            response = body.strip('"')
        return Simulated(response, "", clean=False, note="the reply was not a complete object")
    return Simulated(text.strip(), "", clean=False, note='the reply was not {"error", "response"}')


def is_clean(response: Any, error: str) -> bool:
    """Whether a response may be cached (StableToolBench Appendix D)."""
    if error:
        return False
    if response is None or response == "" or response == [] or response == {}:
        return False
    text = response if isinstance(response, str) else json.dumps(response, ensure_ascii=False)
    return _FAILURE.search(text[:2000]) is None


def call_writer_prompt(documentation: Any, examples: Sequence[Any]) -> Prompt:
    """Appendix H's prompt: ask a model for one more input of the API (the diversity check)."""
    texts = prompts()
    lines = "\n".join(
        f"Example input {n}: {_shorten(arguments)}"
        for n, arguments in enumerate(examples[:MAX_EXAMPLES], start=1)
    )
    content = texts["call_writer"].format(
        documentation=json.dumps(documentation, ensure_ascii=False, indent=1),
        examples=lines or texts["no_examples"],
    )
    return Prompt(messages=[{"role": "user", "content": content}], max_tokens=256)


def read_arguments(text: str) -> dict[str, Any] | None:
    """The first JSON object of a model's reply, as call arguments (never evaluated)."""
    objects = _objects(text)
    return objects[0] if objects else None
