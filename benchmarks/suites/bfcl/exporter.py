"""BFCL v4's data folder written back (the inverse of importer.py): the layout the importer
reads as a data folder, so that importing the written folder gives the same samples and tools.

- `BFCL_v4_<category>.json` per split, JSON Lines as BFCL's: `{"id", "question", "function"}`
  for the single-turn categories; `{"id", "question", "initial_config", "path",
  "involved_classes", "missed_function"?, "excluded_function"?}` for the multi-turn ones;
  `{"id", "question", "involved_classes"}` for web_search and `{..., "scenario"}` for memory.
  The entry's fields beside question and function come from the sample's metadata, where the
  importer keeps them.
- `possible_answer/BFCL_v4_<category>.json`: `{"id", "ground_truth"}` a line (web_search and
  memory with their `source` and `num_hops` where the metadata has them); none for irrelevance,
  live_irrelevance and live_relevance, which BFCL publishes without answers.
- `multi_turn_func_doc/<file>.json`: each simulated class's docs, the benchmark's tools of that
  class (their `raw` doc, a refined description in it) in stored order; the memory backends'
  docs (`memory_kv.json`, `memory_vector.json`, `memory_rec_sum.json`) from the memory samples'
  `functions_by_backend`.
- `memory_prereq_conversation/memory_<scenario>.json`: each scenario's prerequisite
  conversation, from its samples' `prereq_conversation`.

A refined sample is written as its current revision: its gold as the answer's ground truth, its
question as stored, and a refined query (input["query"], which the importer reads from the
first user message) in place of that message. What several entries share (a class's docs, the
memory docs, a scenario's conversation) has one place in the files: a sample whose copy differs
from the others' (or, for the multi-turn and web_search offer, from the tools') cannot be
written, and the export is refused naming it (ExportError with the sample and field).

Records, messages and function docs are written with BFCL's key order and escaping (non-ASCII
as text in the multi-turn and web_search files, escaped elsewhere, as the wheel has them); the
keys inside other objects (a function's parameters, whose order BFCL's files do not keep the
same either, an initial_config) come in the order they are stored in, which for a stored
benchmark is PostgreSQL's jsonb's own: the files equal BFCL's as JSON, not byte for byte.
Pure Python, no Django.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.kit.base import SampleRecord, ToolRecord
from benchmarks.kit.export import ExportError, Files, by_split, file_part, sample_name
from benchmarks.kit.registry import Exporter
from benchmarks.kit.toolcall import ToolCallError
from benchmarks.suites.bfcl.calls import parse_call
from benchmarks.suites.bfcl.importer import (
    ANSWERS,
    CATEGORIES,
    CLASS_DOCS,
    FUNC_DOCS,
    MEMORY_BACKENDS,
    MULTI_TURN,
    NO_ANSWER,
    PREFIX,
    PREREQ,
    family_of,
)

ENTRY_KEYS = (
    "id",
    "question",
    "function",
    "initial_config",
    "path",
    "involved_classes",
    "missed_function",
    "excluded_function",
    "scenario",
)
ANSWER_KEYS = ("id", "ground_truth", "source", "num_hops")
DOC_KEYS = ("name", "description", "parameters", "response")
MESSAGE_KEYS = ("role", "content")
PREREQ_KEYS = ("id", "topic", "question", "involved_classes", "scenario")
# The files the wheel writes with non-ASCII as text; every other file escapes it.
AS_TEXT = {*MULTI_TURN, "web_search"}


def _ordered(value: dict[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    """`value` with `keys` first, in that order, and its other keys after them."""
    return {
        **{key: value[key] for key in keys if key in value},
        **{key: item for key, item in value.items() if key not in keys},
    }


def _line(record: dict[str, Any], as_text: bool) -> str:
    return json.dumps(record, ensure_ascii=not as_text) + "\n"


def _doc(doc: dict[str, Any]) -> dict[str, Any]:
    return _ordered(doc, DOC_KEYS)


def _turns(value: Any) -> list[list[Any]]:
    return [
        [_ordered(m, MESSAGE_KEYS) if isinstance(m, dict) else m for m in turn]
        if isinstance(turn, list)
        else turn
        for turn in value
    ]


def _input(sample: SampleRecord) -> dict[str, Any]:
    if not isinstance(sample.input, dict):
        raise ExportError("has no input object", sample=sample_name(sample), field="input")
    return sample.input


def _question(sample: SampleRecord) -> list[list[Any]]:
    """The turns as stored, a refined query in the first user message's place."""
    given = _input(sample)
    turns = given.get("question")
    if not isinstance(turns, list) or not turns:
        raise ExportError(
            "has no question (a list of turns)", sample=sample_name(sample), field="question"
        )
    turns = _turns(turns)
    query = given.get("query")
    first = next(
        (
            (t, m)
            for t, turn in enumerate(turns)
            if isinstance(turn, list)
            for m, message in enumerate(turn)
            if isinstance(message, dict) and message.get("role") == "user"
        ),
        None,
    )
    if first is None:
        if query:
            raise ExportError(
                "the refined query has no user message to go in",
                sample=sample_name(sample),
                field="query",
            )
        return turns
    t, m = first
    if isinstance(query, str) and query != turns[t][m].get("content"):
        turns[t][m] = {**turns[t][m], "content": query}
    return turns


def _metadata(sample: SampleRecord, key: str, kind: type) -> Any:
    value = sample.metadata.get(key)
    if not isinstance(value, kind):
        raise ExportError(
            f"has no {key} ({kind.__name__}) in its metadata",
            sample=sample_name(sample),
            field=key,
        )
    return value


# --- what several entries share -----------------------------------------------------------------


class _Shared:
    """The files several entries share: the classes' docs (from the tools), the memory
    backends' docs and each scenario's prerequisite conversation (from the samples, each kept
    with the first sample that gave it, so that a sample that disagrees is named)."""

    def __init__(self, tools: Sequence[ToolRecord]) -> None:
        # each class's docs as imported (what its entries were offered) and as written (a
        # tool's description, where it was changed, in its doc)
        self.class_docs: dict[str, list[dict[str, Any]]] = {}
        self.written_docs: dict[str, list[dict[str, Any]]] = {}
        for tool in tools:
            if tool.category not in CLASS_DOCS:
                raise ExportError(
                    f"tool {tool.name!r} is of class {tool.category!r}, which has no doc file in "
                    f"BFCL v4 (its classes: {', '.join(CLASS_DOCS)})",
                    field="category",
                )
            raw = tool.raw
            if not isinstance(raw, dict) or raw.get("name") != tool.name:
                raise ExportError(
                    f"tool {tool.name!r} has no BFCL doc of its own (raw)", field="raw"
                )
            doc = dict(raw)
            if tool.description != str(raw.get("description", "")):
                doc["description"] = tool.description
            self.class_docs.setdefault(tool.category, []).append(raw)
            self.written_docs.setdefault(tool.category, []).append(doc)
        self.used_classes: set[str] = set()
        self.memory_docs: tuple[str, dict[str, Any]] | None = None
        self.prereq: dict[str, tuple[str, list[Any]]] = {}

    def docs_of(self, sample: SampleRecord, classes: list[Any]) -> list[dict[str, Any]]:
        docs: list[dict[str, Any]] = []
        for class_name in classes:
            if not isinstance(class_name, str) or class_name not in CLASS_DOCS:
                raise ExportError(
                    f"involves {class_name!r}, which is none of BFCL v4's classes",
                    sample=sample_name(sample),
                    field="involved_classes",
                )
            self.used_classes.add(class_name)
            docs.extend(self.class_docs.get(class_name, []))
        return docs

    def memory(self, sample: SampleRecord) -> None:
        by_backend = _input(sample).get("functions_by_backend")
        if not isinstance(by_backend, dict) or set(by_backend) != set(MEMORY_BACKENDS):
            raise ExportError(
                f"a memory entry needs its backends' docs ({', '.join(MEMORY_BACKENDS)})",
                sample=sample_name(sample),
                field="functions_by_backend",
            )
        if self.memory_docs is None:
            self.memory_docs = (sample_name(sample), by_backend)
        elif self.memory_docs[1] != by_backend:
            raise ExportError(
                "its memory docs differ from those of sample "
                f"{self.memory_docs[0]}; BFCL has one file per backend for every entry",
                sample=sample_name(sample),
                field="functions_by_backend",
            )
        scenario = file_part(_metadata(sample, "scenario", str), "scenario")
        conversation = _input(sample).get("prereq_conversation")
        if not isinstance(conversation, list):
            raise ExportError(
                "a memory entry needs its scenario's prerequisite conversation",
                sample=sample_name(sample),
                field="prereq_conversation",
            )
        first = self.prereq.setdefault(scenario, (sample_name(sample), conversation))
        if first[1] != conversation:
            raise ExportError(
                f"its prerequisite conversation differs from that of sample {first[0]}, of the "
                f"same scenario {scenario!r}; BFCL has one file per scenario",
                sample=sample_name(sample),
                field="prereq_conversation",
            )

    def files(self) -> Files:
        files: Files = {}
        for class_name, file_name in CLASS_DOCS.items():
            if class_name in self.class_docs or class_name in self.used_classes:
                docs = self.written_docs.get(class_name, [])
                files[f"{FUNC_DOCS}/{file_name}"] = "".join(
                    _line(_doc(doc), False) for doc in docs
                ).encode()
        if self.memory_docs is not None:
            for backend, file_name in MEMORY_BACKENDS.items():
                docs = self.memory_docs[1][backend]
                files[f"{FUNC_DOCS}/{file_name}"] = "".join(
                    _line(_doc(doc) if isinstance(doc, dict) else doc, False) for doc in docs
                ).encode()
        for scenario, (_, conversation) in self.prereq.items():
            files[f"{PREREQ}/memory_{scenario}.json"] = "".join(
                _line(_prereq(entry), False) for entry in conversation
            ).encode()
        return files


def _prereq(entry: Any) -> Any:
    if not isinstance(entry, dict):
        return entry
    ordered = _ordered(entry, PREREQ_KEYS)
    if isinstance(ordered.get("question"), list):
        ordered["question"] = _turns(ordered["question"])
    return ordered


# --- entries ------------------------------------------------------------------------------------


def _offer(
    sample: SampleRecord, docs: list[dict[str, Any]], missed: Any
) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    """What the importer offers an entry of these docs: the docs without the held-out ones,
    and the held-out ones by turn (the first doc of each name held, as BFCL does)."""
    offered = list(docs)
    held: dict[str, list[dict[str, Any]]] = {}
    for turn, names in (missed or {}).items():
        held[turn] = []
        for name in names if isinstance(names, list) else []:
            found = next((d for d in offered if d.get("name") == name), None)
            if found is None:
                raise ExportError(
                    f"holds out {name!r}, which no involved class documents",
                    sample=sample_name(sample),
                    field=f"missed_function.{turn}",
                )
            offered.remove(found)
            held[turn].append(found)
    return offered, held


def _same_offer(sample: SampleRecord, docs: list[dict[str, Any]], missed: Any) -> None:
    offered, held = _offer(sample, docs, missed)
    given = _input(sample)
    if given.get("functions") != offered:
        raise ExportError(
            "its functions differ from its classes' docs (the benchmark's tools), which every "
            "entry of the class shares in BFCL's files: one entry's own docs cannot be written",
            sample=sample_name(sample),
            field="functions",
        )
    if missed is not None and given.get("missed_functions") != held:
        raise ExportError(
            "its held-out functions differ from its classes' docs of those names",
            sample=sample_name(sample),
            field="missed_functions",
        )


def _entry(sample: SampleRecord, shared: _Shared) -> dict[str, Any]:
    record: dict[str, Any] = {"id": sample.external_id, "question": _question(sample)}
    family = family_of(sample.split)
    if family in ("non_live", "live"):
        functions = _input(sample).get("functions")
        if not isinstance(functions, list) or not all(isinstance(f, dict) for f in functions):
            raise ExportError(
                "has no function docs (a list of objects)",
                sample=sample_name(sample),
                field="functions",
            )
        record["function"] = [_doc(doc) for doc in functions]
        return record
    if sample.split == "memory":
        shared.memory(sample)
        record["involved_classes"] = sample.metadata.get("involved_classes", [])
        record["scenario"] = sample.metadata["scenario"]
        return record
    classes = _metadata(sample, "involved_classes", list)
    docs = shared.docs_of(sample, classes)
    if family == "multi_turn":
        record["initial_config"] = _metadata(sample, "initial_config", dict)
        if sample.metadata.get("path") is not None:
            record["path"] = sample.metadata["path"]
        record["involved_classes"] = classes
        missed = sample.metadata.get("missed_function")
        if missed is not None:
            record["missed_function"] = missed
        if "excluded_function" in sample.metadata:
            record["excluded_function"] = sample.metadata["excluded_function"]
        _same_offer(sample, docs, missed)
    else:
        record["involved_classes"] = classes
        _same_offer(sample, docs, None)
    return _ordered(record, ENTRY_KEYS)


# --- answers ------------------------------------------------------------------------------------


def _bad_reference(sample: SampleRecord, message: str, at: str = "") -> ExportError:
    return ExportError(message, sample=sample_name(sample), field=f"reference{at}")


def _answer(sample: SampleRecord) -> dict[str, Any] | None:
    """The possible answer's record, or None for the categories BFCL publishes none of."""
    reference = sample.reference
    if sample.split in NO_ANSWER:
        if (
            not isinstance(reference, dict)
            or reference.get("answer") is not None
            or reference.get("expected") != NO_ANSWER[sample.split]
        ):
            raise _bad_reference(
                sample,
                f"BFCL publishes no answers for {sample.split} (a model passes when it "
                + ("calls no function" if NO_ANSWER[sample.split] == "no_call" else "calls one")
                + "): a refined answer has no place in its files",
            )
        return None
    family = family_of(sample.split)
    record: dict[str, Any] = {"id": sample.external_id}
    if family == "agentic":
        answers = reference.get("answers") if isinstance(reference, dict) else None
        if not isinstance(answers, list):
            raise _bad_reference(sample, 'expected {"answers": [accepted answer texts]}')
        record["ground_truth"] = answers
        for key in ("source", "num_hops"):
            if key in sample.metadata:
                record[key] = sample.metadata[key]
        return record
    if not isinstance(reference, list):
        raise _bad_reference(sample, "expected a list (the ground truth)")
    if family == "multi_turn":
        turns = _input(sample).get("question")
        if isinstance(turns, list) and len(reference) != len(turns):
            raise _bad_reference(
                sample, f"has {len(reference)} turns of calls; the entry has {len(turns)} turns"
            )
        for index, calls in enumerate(reference):
            if not isinstance(calls, list):
                raise _bad_reference(sample, "a turn must be a list of call strings", f"[{index}]")
            for position, call in enumerate(calls):
                try:
                    parse_call(call)
                except ToolCallError as exc:
                    raise _bad_reference(
                        sample,
                        f"is not one call with literal arguments: {exc}",
                        f"[{index}][{position}]",
                    ) from None
    else:
        for index, call in enumerate(reference):
            parameters = next(iter(call.values())) if isinstance(call, dict) else None
            if (
                not isinstance(call, dict)
                or len(call) != 1
                or not isinstance(parameters, dict)
                or not all(isinstance(values, list) for values in parameters.values())
            ):
                raise _bad_reference(
                    sample,
                    "each answer must be one {function: {parameter: [acceptable values]}}",
                    f"[{index}]",
                )
    record["ground_truth"] = reference
    return record


# --- the files ----------------------------------------------------------------------------------


def write(samples: Sequence[SampleRecord], tools: Sequence[ToolRecord]) -> Files:
    shared = _Shared(tools)
    files: Files = {}
    for split, group in by_split(samples).items():
        if split not in CATEGORIES:
            raise ExportError(
                f"split {split!r} is none of BFCL v4's categories ({', '.join(CATEGORIES)})"
            )
        name = f"{PREFIX}{file_part(split)}.json"
        as_text = split in AS_TEXT
        entries = [_line(_entry(sample, shared), as_text) for sample in group]
        files[name] = "".join(entries).encode()
        if split not in NO_ANSWER:
            answers = [_answer(sample) for sample in group]
            files[f"{ANSWERS}/{name}"] = "".join(
                _line(_ordered(a, ANSWER_KEYS), split == "web_search")
                for a in answers
                if a is not None
            ).encode()
        else:
            for sample in group:
                _answer(sample)
    files.update(shared.files())
    return files


def _import_paths(folder: Path) -> list[Path]:
    # The folder itself: the importer reads it as a data folder (the answers, docs and
    # prerequisite conversations by their place in it).
    return [folder]


CANNOT_CARRY = (
    "each sample's metadata provenance (BFCL's version, where the files came from and their "
    "sha256): an import of the written folder records the written files' own; the key order "
    "inside objects other than the records, messages and function docs (PostgreSQL's jsonb "
    "keeps its own), so the files equal BFCL's as JSON, not byte for byte. A refined query "
    "replaces the first user message of the question (the importer reads the query from it): "
    "read back, that sample's question holds the refined query too. One entry's own copy of "
    "what BFCL's files share (a class's docs, the memory docs, a scenario's prerequisite "
    "conversation) has no place: such an export is refused, naming the sample"
)

EXPORTER = Exporter(write=write, import_paths=_import_paths, cannot_carry=CANNOT_CARRY)
