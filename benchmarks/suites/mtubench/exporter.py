"""MTU-Eval test files written back (the inverse of importer.py): `<split>_eval.jsonl`, one
`{"id", "question", "answer"}` a line, in the order they were imported (a repeated id's copies
keep their order, so copy k is copy k again).

The question is the prompt as published; a refined current user turn replaces the last
occurrence of the old one in it (the turn the importer reads as the query). The answer is the
gold object, which a refinement of the calls rebuilds (gold.write_answer). The tools need no
file: every sample's prompt carries its own API list."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.kit.base import SampleRecord, ToolRecord
from benchmarks.kit.export import (
    ExportError,
    Files,
    by_split,
    file_part,
    sample_name,
)
from benchmarks.kit.layout import dump, in_order
from benchmarks.kit.registry import Exporter
from benchmarks.suites.mtubench.importer import PUBLISHED, SPLITS


def _question(sample: SampleRecord) -> str:
    given = sample.input if isinstance(sample.input, dict) else {}
    prompt = given.get("prompt")
    if not isinstance(prompt, str):
        raise ExportError("has no published prompt", sample=sample_name(sample), field="prompt")
    query = given.get("query")
    published = next(
        (
            t.get("content")
            for t in reversed(given.get("turns") or [])
            if isinstance(t, dict) and t.get("role") == "user"
        ),
        None,
    )
    if not isinstance(query, str) or query == published:
        return prompt
    if not isinstance(published, str) or not published or published not in prompt:
        raise ExportError(
            "the refined query cannot be placed: the prompt does not hold the turn it replaces",
            sample=sample_name(sample),
            field="query",
        )
    at = prompt.rindex(published)
    return prompt[:at] + query + prompt[at + len(published) :]


def _answer(sample: SampleRecord) -> dict[str, Any]:
    """The answer object with its keys in call order. The importer reads the calls in the
    order of the answer's keys, and PostgreSQL's jsonb keeps an object's keys in an order of
    its own (shorter first), so the stored object alone would reorder the calls; the stored
    "calls" list has the published order."""
    reference = sample.reference if isinstance(sample.reference, dict) else {}
    answer = reference.get("answer")
    if not isinstance(answer, dict):
        raise ExportError("has no answer object", sample=sample_name(sample), field="answer")
    ordered: dict[str, Any] = {}
    for call in reference.get("calls") or []:
        name = call.get("name") if isinstance(call, dict) else None
        # Published names sometimes carry a leading space the calls' names do not.
        key = next((k for k in answer if k not in ordered and k.strip() == name), None)
        if key is not None:
            ordered[key] = answer[key]
    ordered.update((k, v) for k, v in answer.items() if k not in ordered)
    return ordered


def _line(sample: SampleRecord) -> str:
    record = {
        "id": sample.metadata.get("id", sample.external_id.split("#")[0]),
        "question": _question(sample),
        "answer": _answer(sample),
    }
    published = sample.metadata.get(PUBLISHED)
    if not isinstance(published, dict):
        return json.dumps(record, ensure_ascii=False) + "\n"
    text = published.get("text")
    if text is not None and json.loads(text) == record:
        line = str(text)
    else:
        ordered = in_order(record, published.get("keys"))
        # the answer's keys are its calls, in call order: that order is the refinement's
        ordered["answer"] = {key: ordered["answer"][key] for key in record["answer"]}
        line = dump(ordered, published)
    return line + str(published.get("end", "\n"))


def write(samples: Sequence[SampleRecord], tools: Sequence[ToolRecord]) -> Files:
    files: Files = {}
    for split, group in by_split(samples).items():
        if split not in SPLITS:
            raise ExportError(f"split {split!r} is none of MTU-Eval's ({', '.join(SPLITS)})")
        lines = [_line(s) for s in group]
        if lines and not lines[-1].endswith("\n"):
            # a file's last line written without its line end, unless records follow it now
            lines = [line if line.endswith("\n") else line + "\n" for line in lines[:-1]] + [
                lines[-1]
            ]
        else:
            lines = [line if line.endswith("\n") else line + "\n" for line in lines]
        files[f"{file_part(split)}_eval.jsonl"] = "".join(lines).encode()
    return files


def _import_paths(folder: Path) -> list[Path]:
    # The folder, not its files: the importer reads a folder in the paper's split order, which
    # decides the definition a tool shared by several splits takes.
    return [folder]


EXPORTER = Exporter(
    write=write,
    import_paths=_import_paths,
    cannot_carry=(
        "a refined query changes the prompt's current user turn only; the dialogue's history "
        "turns are written as published"
    ),
)
