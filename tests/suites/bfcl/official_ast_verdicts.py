"""BFCL's own verdicts on our AST fixtures, written as data (fixtures/ast_parity.jsonl), and its
Prompt decoder's reading of our texts (fixtures/decode_parity.jsonl).

Not a test and not needed by `make test`: run once, by hand, in a throwaway environment holding
the pinned wheel without its dependencies (never the project's .venv):

    python3.11 -m venv /tmp/bfcl-official
    /tmp/bfcl-official/bin/pip install --no-deps bfcl-eval==2026.3.23 filelock==3.20.0 \
        tenacity tree_sitter==0.21.3 tree-sitter-java==0.21.0 tree-sitter-javascript==0.21.4
    /tmp/bfcl-official/bin/python tests/suites/bfcl/official_ast_verdicts.py

It reads fixtures/ast_cases.jsonl (our cases, in BFCL's entry format) and
fixtures/decode_cases.jsonl (our Prompt-mode texts), and calls BFCL's code
directly: `default_decode_ast_prompting` (Prompt mode's decoder),
`is_function_calling_format_output` and `is_empty_output` (its runner's format and relevance
rules) and `ast_checker`. Two things
are not BFCL's code, because the modules holding them import every model provider's client:
`bfcl_eval.constants.model_config`, which the checker reads only for a model's
`underscore_to_dot`, is replaced by a two-entry table (a Prompt model without it, an FC model
with it, as OpenAI's FC models have it); and FC mode's decoding of OpenAI tool calls (its
OpenAI handler: each call's arguments read with json.loads, the message's text kept when
there is no tool call) and the runner's few lines around the checker are restated here.
"""

from __future__ import annotations

import json
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CASES = HERE / "fixtures" / "ast_cases.jsonl"
PARITY = HERE / "fixtures" / "ast_parity.jsonl"
DECODE_CASES = HERE / "fixtures" / "decode_cases.jsonl"
DECODE_PARITY = HERE / "fixtures" / "decode_parity.jsonl"
PROMPT_MODEL = "prompt/model"
FC_MODEL = "fc/model"


@dataclass
class _ModelConfig:
    underscore_to_dot: bool


_config = types.ModuleType("bfcl_eval.constants.model_config")
_config.MODEL_CONFIG_MAPPING = {  # type: ignore[attr-defined]
    PROMPT_MODEL: _ModelConfig(underscore_to_dot=False),
    FC_MODEL: _ModelConfig(underscore_to_dot=True),
}
sys.modules["bfcl_eval.constants.model_config"] = _config

from bfcl_eval.constants.enums import Language, ReturnFormat  # noqa: E402
from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker  # noqa: E402
from bfcl_eval.model_handler.utils import default_decode_ast_prompting  # noqa: E402
from bfcl_eval.utils import (  # noqa: E402
    is_empty_output,
    is_function_calling_format_output,
    is_java,
    is_js,
    is_relevance_or_irrelevance,
)


def _decode(case: dict[str, Any], return_format: Any) -> Any:
    output = case["output"]
    if case["mode"] == "prompt":
        return default_decode_ast_prompting(output, return_format, False)
    if output["tool_calls"] is None:
        stored: Any = output["content"]
    else:
        stored = [{c["function"]["name"]: c["function"]["arguments"]} for c in output["tool_calls"]]
    decoded = []
    for invoked in stored:
        (name,) = list(invoked.keys())[:1]
        decoded.append({name: json.loads(invoked[name])})
    return decoded


def official(case: dict[str, Any]) -> dict[str, Any]:
    category = case["category"]
    if is_java(category):
        language, return_format = Language.JAVA, ReturnFormat.JAVA
    elif is_js(category):
        language, return_format = Language.JAVASCRIPT, ReturnFormat.JAVASCRIPT
    else:
        language, return_format = Language.PYTHON, ReturnFormat.PYTHON
    model = FC_MODEL if case["mode"] == "fc" else PROMPT_MODEL
    if is_relevance_or_irrelevance(category):
        try:
            decoded = _decode(case, ReturnFormat.PYTHON)
            called = not is_empty_output(decoded)
        except Exception:
            called = False
        if "irrelevance" in category:
            return {
                "valid": not called,
                "error_type": "irrelevance_error:decoder_success" if called else "",
            }
        return {"valid": called, "error_type": "" if called else "relevance_error:decoder_failed"}
    try:
        decoded = _decode(case, return_format)
    except Exception:
        return {"valid": False, "error_type": "ast_decoder:decoder_failed"}
    if not is_function_calling_format_output(decoded):
        return {"valid": False, "error_type": "ast_decoder:decoder_wrong_output_format"}
    result = ast_checker(case["function"], decoded, case["ground_truth"], language, category, model)
    verdict = {
        "valid": result["valid"],
        "error_type": result.get("error_type", "") if not result["valid"] else "",
    }
    candidates = [
        next(iter(error.values()))["sub_error_type"]
        for error in result.get("error", [])
        if isinstance(error, dict)
    ]
    if candidates:
        verdict["candidates"] = candidates
    return verdict


def main() -> None:
    cases = [json.loads(line) for line in CASES.read_text().splitlines() if line.strip()]
    with PARITY.open("w") as out:
        for case in cases:
            out.write(json.dumps({"id": case["id"], "official": official(case)}) + "\n")
    print(f"{len(cases)} verdicts written to {PARITY}")
    texts = [json.loads(line) for line in DECODE_CASES.read_text().splitlines() if line.strip()]
    with DECODE_PARITY.open("w") as out:
        for text in texts:
            try:
                reading = {"decoded": repr(default_decode_ast_prompting(text["text"]))}
            except Exception as error:
                reading = {"error": type(error).__name__}
            out.write(json.dumps({"text": text["text"], "official": reading}) + "\n")
    print(f"{len(texts)} readings written to {DECODE_PARITY}")


if __name__ == "__main__":
    main()
