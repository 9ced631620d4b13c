"""WTU-Eval (papers/003, an anonymous ACL submission): whether or not to use a tool.

The benchmark asks the same questions of eleven datasets with and without a tool pool: six tool
datasets that need a tool (MLQA, ASDiv, GSM8K, MathQA, HotpotQA, RealtimeQA: translator,
calculator, Wikipedia search, web search) and five general datasets that do not (BoolQ, RACE,
PIQA, RTE, HellaSwag). Regions: R1 = tool datasets without tools, R2 = tool datasets with the
tool pool, R3 = general datasets without tools, R4 = general datasets with the tool pool. The
paper samples 96 to 300 test questions per dataset from the original test sets (its Table 8).

WTU-Eval published no data files, so this suite reads one plain format (ours), JSON Lines:
    {"id": str | int, "dataset": str, "question": str, "answer": str | number | bool | [those],
     "kind": "tool" | "general", "options"?: [str] | {label: str}}
  - `kind` says which half the dataset belongs to; one dataset has one kind in every file.
  - `options` for multiple-choice datasets, either a list (labels are A, B, C... or 1, 2, 3...,
    as the paper labels PIQA's two solutions 1 and 2) or an object label -> text. The answer
    must name one of them: a label, the option's text, or (for a list) its 1-based number.
  - A `list` answer holds several accepted answers (e.g. aliases in HotpotQA).
  - Any other key is kept in the sample's metadata (e.g. "passage", "source_id").
Files: any `*.jsonl` (or `*.json` holding JSON Lines), or a folder of them (manifest.json is
skipped).

Records: Sample(split = dataset, external_id = str(id), kind "query",
input = {"query": question, "options"?: options}, reference = {"answer", "kind"},
metadata = {"regions": ["R1", "R2"] for tool datasets, ["R3", "R4"] for general ones, ...extra
keys}, candidate_tools = []). The tool pool (calculator, translator, search, Wikipedia) is not in
these files; evaluation adds it for R2 and R4. Ids must be unique within a dataset.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.kit.base import (
    ImportBundle,
    ImportFormatError,
    Progress,
    SampleRecord,
    iter_jsonl,
    jsonl_files,
    require,
    type_name,
)

name = "wtueval"
default_benchmark = "WTU-Eval"

KINDS = {"tool": ["R1", "R2"], "general": ["R3", "R4"]}
FIELDS = ("id", "dataset", "question", "answer", "kind", "options")
SCALARS = (str, int, float, bool)


def _files(paths: Sequence[Path]) -> list[Path]:
    return jsonl_files(paths, what="WTU-Eval questions")


def _check_options(options: Any, *, path: Path, line: int) -> list[str] | dict[str, str]:
    if isinstance(options, list):
        if not options:
            raise ImportFormatError("is an empty list", file=path, line=line, field="options")
        for index, text in enumerate(options):
            if not isinstance(text, str) or not text.strip():
                raise ImportFormatError(
                    f"expected a non-empty string, got {type_name(text)}",
                    file=path,
                    line=line,
                    field=f"options[{index}]",
                )
        return options
    if isinstance(options, dict):
        if not options:
            raise ImportFormatError("is an empty object", file=path, line=line, field="options")
        for label, text in options.items():
            if not label.strip() or not isinstance(text, str) or not text.strip():
                raise ImportFormatError(
                    "expected a label mapped to a non-empty string",
                    file=path,
                    line=line,
                    field=f"options.{label}",
                )
        return options
    raise ImportFormatError(
        f"expected a list of options or an object label -> text, got {type_name(options)}",
        file=path,
        line=line,
        field="options",
    )


def _answer_names_an_option(answer: Any, options: list[str] | dict[str, str]) -> bool:
    text = str(answer).strip()
    if isinstance(options, dict):
        return text in options or text in options.values()
    if text in options:
        return True
    count = len(options)
    letters = string.ascii_uppercase[:count]
    if len(text) == 1 and text.upper() in letters:
        return True
    return text.isdigit() and 1 <= int(text) <= count


def import_files(paths: Sequence[Path], progress: Progress | None = None) -> ImportBundle:
    bundle = ImportBundle()
    kind_of: dict[str, tuple[str, str]] = {}  # dataset -> (kind, where first seen)
    for path in _files(paths):
        for line, record in iter_jsonl(path):
            if not isinstance(record, dict):
                raise ImportFormatError(
                    f"expected a JSON object, got {type_name(record)}", file=path, line=line
                )
            raw_id = require(record, "id", (str, int), file=path, line=line)
            dataset = require(record, "dataset", str, file=path, line=line).strip()
            question = require(record, "question", str, file=path, line=line)
            kind = require(record, "kind", str, file=path, line=line).strip()
            if kind not in KINDS:
                raise ImportFormatError(
                    f'must be "tool" or "general", got {kind!r}', file=path, line=line, field="kind"
                )
            first = kind_of.setdefault(dataset, (kind, f"{path}, line {line}"))
            if first[0] != kind:
                raise ImportFormatError(
                    f"dataset {dataset!r} is {first[0]!r} at {first[1]}, here {kind!r}; "
                    "a dataset is either a tool dataset or a general one",
                    file=path,
                    line=line,
                    field="kind",
                )
            answer = record.get("answer")
            if answer is None:
                raise ImportFormatError("missing", file=path, line=line, field="answer")
            accepted = answer if isinstance(answer, list) else [answer]
            if (
                not accepted
                or not all(isinstance(a, SCALARS) for a in accepted)
                or any(isinstance(a, str) and not a.strip() for a in accepted)
            ):
                raise ImportFormatError(
                    "expected a string, number or boolean (or a non-empty list of them), "
                    f"got {type_name(answer)}",
                    file=path,
                    line=line,
                    field="answer",
                )
            query: dict[str, Any] = {"query": question}
            if record.get("options") is not None:
                options = _check_options(record["options"], path=path, line=line)
                if not any(_answer_names_an_option(a, options) for a in accepted):
                    raise ImportFormatError(
                        f"{answer!r} is none of the options' labels or texts",
                        file=path,
                        line=line,
                        field="answer",
                    )
                query["options"] = options
            metadata: dict[str, Any] = {k: v for k, v in record.items() if k not in FIELDS}
            metadata["regions"] = list(KINDS[kind])
            bundle.samples.append(
                SampleRecord(
                    split=dataset,
                    external_id=str(raw_id).strip(),
                    input=query,
                    reference={"answer": answer, "kind": kind},
                    kind="query",
                    metadata=metadata,
                    source=f"{path}, line {line}",
                )
            )
            if progress:
                progress(1)
    return bundle
