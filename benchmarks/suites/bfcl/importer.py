"""BFCL v4's data: the repository's data folder, the `bfcl-eval` wheel, or single category files.

Published format (`bfcl_eval/data/` in the repository and in the wheel, identical; Apache-2.0):

- `BFCL_v4_<category>.json`: JSON Lines despite the suffix, one entry a line: `id`, `question`
  (a list of turns, each a list of messages `{"role", "content"}`) and, for the single-turn
  categories, `function` (the function docs offered: `{"name", "description", "parameters"}`
  with BFCL's type words: dict, float, integer, string, boolean, array, tuple, any). Multi-turn
  entries have `initial_config` (class name -> the state `_load_scenario` loads),
  `involved_classes`, `path` (the "Class.method" calls the ground truth makes), sometimes
  `excluded_function` (docs left out of the offer) and, for `multi_turn_miss_func`,
  `missed_function` (turn index -> the names held out until that turn). `web_search` entries
  have `involved_classes`; `memory` entries `involved_classes` ["MemoryAPI"] and a `scenario`,
  whose prerequisite conversation is `memory_prereq_conversation/memory_<scenario>.json`.
- `possible_answer/BFCL_v4_<category>.json`: `{"id", "ground_truth"}` a line. Single-turn: a list of
  `{function name: {parameter: [acceptable values]}}` ("" among the values: the parameter may be
  left out). Multi-turn: per turn, the ground truth's calls as Python call strings. web_search and
  memory: the accepted answer texts (and `source`, `num_hops`). `irrelevance`, `live_irrelevance`
  and `live_relevance` have no answer file.
- `multi_turn_func_doc/<file>.json`: JSON Lines of the docs of one simulated class's methods.
- `BFCL_v4_format_sensitivity.json` is not entries but a selection of other categories' ids (a
  JSON object); a folder's or wheel's copy is left out, and given alone it is refused.

Where the files come from is one small abstraction, `DataFiles`: a wheel (a zip whose members
under `bfcl_eval/data/` are read without extracting or importing anything), a folder (the
repository's `bfcl_eval/data/`, the folder above it, or an extracted wheel), or single files
(placed by their own folder: `possible_answer/`, `multi_turn_func_doc/`,
`memory_prereq_conversation/`; a category file given alone takes its answers, function docs and
prerequisite conversations from beside it when they are there). Every path below reads through it.

Records:
- SampleRecord per entry: split = the category; kind "dialogue" for multi-turn and memory, "query"
  otherwise. input = {"question": the turns as published, "query": the first user message's text
  (for lists and search), "functions": the docs offered}; for multi-turn the docs are the involved
  classes' (`multi_turn_func_doc/`, in involved_classes order, as BFCL builds them) without the
  held-out ones, which are in "missed_functions" {turn: [docs]}; for memory "functions" is {} and
  "functions_by_backend" {kv, vector, rec_sum: docs}, with "prereq_conversation" the scenario's
  prerequisite entries. reference = the possible answer: single-turn the list of
  {function: {parameter: [values]}}, multi-turn the call strings per turn (each checked to be one
  call with literal arguments), web_search and memory {"answers": [...]}; for the categories
  without answers {"answer": null, "expected": "no_call" | "call", "why": ...}. candidate_tools =
  the names of the docs offered. metadata = {"id", "category", "family" (non_live, live,
  multi_turn, agentic), "language"?, "involved_classes"?, "initial_config"?, "path"?,
  "excluded_function"?, "missed_function"?, "scenario"?, "num_hops"?, "source"?,
  "needs_backend"? ("web_search" | "memory": not comparable offline), "provenance"}.
- "provenance" is where BFCL's version and the files' hashes are kept: the platform stores no
  import provenance on a Benchmark (benchmarks/models.py has no field for it; the service stores
  tools and samples only), so each sample carries, in its metadata, {"bfcl_version", "origin"
  (the wheel's file name, "data folder" or "data files"), "files": {data file: sha256}} for
  every file it was read from.
- ToolRecord per method doc of the multi-turn and web_search classes (category = the class); the
  single-turn categories' functions differ from entry to entry under the same names, so they stay
  in each sample's input.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.kit.base import (
    BOM,
    ImportBundle,
    ImportFormatError,
    Progress,
    SampleRecord,
    ToolRecord,
    check_record_size,
    check_value,
    parse_json_text,
    require,
    type_name,
)
from benchmarks.kit.native import clean_schema
from benchmarks.kit.toolcall import ToolCallError
from benchmarks.suites.bfcl.calls import parse_call

name = "bfcl"
default_benchmark = "BFCL v4"
PREFIX = "BFCL_v4_"
DATA_MEMBER = "bfcl_eval/data/"
ANSWERS = "possible_answer"
FUNC_DOCS = "multi_turn_func_doc"
PREREQ = "memory_prereq_conversation"
NOT_ENTRIES = ("format_sensitivity",)

NON_LIVE = (
    "simple_python",
    "simple_java",
    "simple_javascript",
    "multiple",
    "parallel",
    "parallel_multiple",
    "irrelevance",
)
LIVE = (
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
    "live_irrelevance",
    "live_relevance",
)
MULTI_TURN = (
    "multi_turn_base",
    "multi_turn_miss_func",
    "multi_turn_miss_param",
    "multi_turn_long_context",
)
AGENTIC = ("web_search", "memory")
CATEGORIES = NON_LIVE + LIVE + MULTI_TURN + AGENTIC
# What a model should do where BFCL publishes no answer (its relevance checker's rule).
NO_ANSWER = {
    "irrelevance": "no_call",
    "live_irrelevance": "no_call",
    "live_relevance": "call",
}
LANGUAGE = {"simple_java": "java", "simple_javascript": "javascript"}
# Which file documents each simulated class (BFCL's MULTI_TURN_FUNC_DOC_FILE_MAPPING: data).
CLASS_DOCS = {
    "GorillaFileSystem": "gorilla_file_system.json",
    "MathAPI": "math_api.json",
    "MessageAPI": "message_api.json",
    "TwitterAPI": "posting_api.json",
    "TicketAPI": "ticket_api.json",
    "TradingBot": "trading_bot.json",
    "TravelAPI": "travel_booking.json",
    "VehicleControlAPI": "vehicle_control.json",
    "WebSearchAPI": "web_search.json",
}
MEMORY_BACKENDS = {
    "kv": "memory_kv.json",
    "vector": "memory_vector.json",
    "rec_sum": "memory_rec_sum.json",
}
CATEGORY_FILE = re.compile(rf"^{PREFIX}(\w+)\.json$")
README_DATE = re.compile(r"Latest Version Release Date[^0-9\n]*([0-9][0-9/.-]*)")


def family_of(category: str) -> str:
    if category in NON_LIVE:
        return "non_live"
    if category in LIVE:
        return "live"
    if category in MULTI_TURN:
        return "multi_turn"
    return "agentic"


# --- where the files come from ------------------------------------------------------------------


@dataclass(frozen=True)
class DataFile:
    """One file of BFCL's data folder: `name` its path inside the folder (POSIX, e.g.
    "possible_answer/BFCL_v4_simple_python.json"), `where` what errors name (the file, or the
    wheel and its member), `read` its bytes."""

    name: str
    where: str
    read: Callable[[], bytes]

    def sha256(self) -> str:
        return hashlib.sha256(self.read()).hexdigest()


@dataclass
class DataFiles:
    """The data files an import reads, by their name inside the data folder, with BFCL's
    version and the name of where they came from."""

    files: dict[str, DataFile] = field(default_factory=dict)
    version: str = ""
    origin: str = ""
    # The category files the researcher gave (a folder or a wheel gives all of its own).
    categories: list[str] = field(default_factory=list)

    # Files taken from beside a given category file rather than given: a file given replaces
    # one of them.
    beside: set[str] = field(default_factory=set)

    def add(self, item: DataFile) -> None:
        first = self.files.get(item.name)
        if first is None or item.name in self.beside:
            self.files[item.name] = item
            self.beside.discard(item.name)
        elif first.where != item.where:
            raise ImportFormatError(
                f"is given twice as {item.name} (also {first.where})", file=item.where
            )

    def add_beside(self, item: DataFile) -> None:
        if item.name not in self.files:
            self.files[item.name] = item
            self.beside.add(item.name)

    def get(self, data_name: str) -> DataFile | None:
        return self.files.get(data_name)


def _category_of(file_name: str) -> str | None:
    match = CATEGORY_FILE.match(file_name)
    return match.group(1) if match else None


def _from_wheel(path: Path, found: DataFiles) -> None:
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ImportFormatError(f"is not a readable wheel (zip): {exc}", file=path) from None
    with archive:
        members = archive.namelist()
        metadata = [m for m in members if re.match(r"^[^/]+\.dist-info/METADATA$", m)]
        if metadata:
            text = archive.read(metadata[0]).decode("utf-8", "replace")
            version = re.search(r"^Version:\s*(\S+)", text, re.MULTILINE)
            if version:
                found.version = found.version or version.group(1)
    data = [m for m in members if m.startswith(DATA_MEMBER) and not m.endswith("/")]
    if not data:
        raise ImportFormatError(f"holds no {DATA_MEMBER} folder: not a bfcl-eval wheel", file=path)

    def reader(member: str) -> Callable[[], bytes]:
        def read() -> bytes:
            with zipfile.ZipFile(path) as again:
                return again.read(member)

        return read

    found.origin = found.origin or path.name
    for member in data:
        inner = member[len(DATA_MEMBER) :]
        found.add(DataFile(inner, f"{path}:{member}", reader(member)))
        if "/" not in inner and (category := _category_of(inner)) and category in CATEGORIES:
            found.categories.append(category)


def _file_reader(path: Path) -> Callable[[], bytes]:
    def read() -> bytes:
        try:
            return path.read_bytes()
        except OSError as exc:
            raise ImportFormatError(f"cannot be read: {exc.strerror}", file=path) from None

    return read


def _data_folder(path: Path) -> Path | None:
    for candidate in (path, path / "bfcl_eval" / "data", path / "data"):
        if candidate.is_dir() and any(candidate.glob(f"{PREFIX}*.json")):
            return candidate
    return None


def _from_folder(folder: Path, found: DataFiles) -> None:
    for item in sorted(folder.rglob("*")):
        if not item.is_file():
            continue
        inner = item.relative_to(folder).as_posix()
        found.add(DataFile(inner, str(item), _file_reader(item)))
        category = _category_of(inner)
        if "/" not in inner and category in CATEGORIES:
            found.categories.append(category)
    found.version = found.version or _folder_version(folder)
    found.origin = found.origin or "data folder"


def _folder_version(folder: Path) -> str:
    """BFCL's version for a data folder: an extracted wheel's METADATA beside `bfcl_eval/`, the
    repository's pyproject.toml above it, or else the data README's release date."""
    package = folder.parent  # bfcl_eval/
    for metadata in sorted(package.parent.glob("bfcl_eval-*.dist-info/METADATA")):
        version = re.search(r"^Version:\s*(\S+)", metadata.read_text("utf-8", "replace"), re.M)
        if version:
            return version.group(1)
    pyproject = package.parent / "pyproject.toml"
    if pyproject.is_file():
        try:
            project = tomllib.loads(pyproject.read_text("utf-8")).get("project", {})
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            project = {}
        if project.get("name") in ("bfcl_eval", "bfcl-eval") and project.get("version"):
            return str(project["version"])
    readme = folder / "README.md"
    if readme.is_file():
        date = README_DATE.search(readme.read_text("utf-8", "replace"))
        if date:
            return f"data released {date.group(1)}"
    return "unknown"


def _from_file(path: Path, found: DataFiles) -> None:
    if not path.is_file():
        raise ImportFormatError("no such file or folder", file=path)
    parent = path.parent.name
    inner = f"{parent}/{path.name}" if parent in (ANSWERS, FUNC_DOCS, PREREQ) else path.name
    category = _category_of(path.name)
    if "/" not in inner:
        if category in NOT_ENTRIES:
            raise ImportFormatError(
                f"{path.name} is BFCL's selection of other categories' ids for its format "
                "sensitivity study, not entries; it is not imported",
                file=path,
            )
        if category not in CATEGORIES:
            raise ImportFormatError(
                f"is not a BFCL v4 category file ({PREFIX}<category>.json with a category among "
                f"{', '.join(CATEGORIES)})",
                file=path,
            )
        found.categories.append(category)
    found.add(DataFile(inner, str(path), _file_reader(path)))
    # What a category file needs and was not given is taken from beside it, when it is there.
    folder = path.parent.parent if "/" in inner else path.parent
    for beside in (folder / ANSWERS, folder / FUNC_DOCS, folder / PREREQ):
        if beside.is_dir():
            for item in sorted(beside.glob("*.json")):
                name_inside = f"{beside.name}/{item.name}"
                found.add_beside(DataFile(name_inside, str(item), _file_reader(item)))
    found.version = found.version or _folder_version(folder)
    found.origin = found.origin or "data files"


def data_files(paths: Sequence[Path]) -> DataFiles:
    """The data files in `paths` (wheels, folders, single files), read as one data folder."""
    found = DataFiles()
    for path in paths:
        if path.is_file() and path.suffix == ".whl":
            _from_wheel(path, found)
        elif path.is_dir():
            folder = _data_folder(path)
            if folder is None:
                raise ImportFormatError(
                    f"holds no {PREFIX}<category>.json (give bfcl_eval/data/ of the repository or "
                    "of an extracted bfcl-eval wheel, the wheel itself, or category files)",
                    file=path,
                )
            _from_folder(folder, found)
        else:
            _from_file(path, found)
    if not found.categories:
        raise ImportFormatError(
            f"no category file given ({PREFIX}<category>.json); answers and function docs are "
            "read with their category's entries"
        )
    found.categories = list(dict.fromkeys(c for c in CATEGORIES if c in found.categories))
    return found


# --- reading ------------------------------------------------------------------------------------


def _text(item: DataFile) -> str:
    data = item.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ImportFormatError(
            f"is not valid UTF-8 (byte 0x{data[exc.start]:02x})", file=item.where, line=line
        ) from None
    return text[1:] if text.startswith(BOM) else text


def iter_lines(item: DataFile) -> Iterator[tuple[int, Any]]:
    """(line number, value) for each non-blank line of a JSON Lines data file, each line's size
    and values checked as every suite's are."""
    text = _text(item)
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        check_record_size(raw, file=item.where, line=number)
        value = parse_json_text(raw, file=item.where, line_offset=number - 1)
        check_value(value, file=item.where, line=number)
        yield number, value


@dataclass
class _Entry:
    line: int
    record: dict[str, Any]


def _entries(item: DataFile, progress: Progress | None) -> dict[str, _Entry]:
    entries: dict[str, _Entry] = {}
    for line, record in iter_lines(item):
        if not isinstance(record, dict):
            raise ImportFormatError(
                f"expected a JSON object, got {type_name(record)}", file=item.where, line=line
            )
        entry_id = require(record, "id", str, file=item.where, line=line)
        if entry_id in entries:
            raise ImportFormatError(
                f"duplicate id {entry_id!r}; first on line {entries[entry_id].line}",
                file=item.where,
                line=line,
                field="id",
            )
        entries[entry_id] = _Entry(line, record)
        if progress is not None:
            progress(1)
    return entries


def _messages(value: Any, where: str, line: int) -> list[list[dict[str, Any]]]:
    if not isinstance(value, list) or not value:
        raise ImportFormatError(
            f"expected a non-empty list of turns, got {type_name(value)}",
            file=where,
            line=line,
            field="question",
        )
    for index, turn in enumerate(value):
        if not isinstance(turn, list):
            raise ImportFormatError(
                f"a turn must be a list of messages, got {type_name(turn)}",
                file=where,
                line=line,
                field=f"question[{index}]",
            )
        for position, message in enumerate(turn):
            at = f"question[{index}][{position}]"
            if not isinstance(message, dict):
                raise ImportFormatError(
                    f"a message must be an object, got {type_name(message)}",
                    file=where,
                    line=line,
                    field=at,
                )
            require(message, "role", str, file=where, line=line, record=at)
            if not isinstance(message.get("content"), str):
                raise ImportFormatError(
                    "must be a string", file=where, line=line, field=f"{at}.content"
                )
    return value


def _first_query(turns: list[list[dict[str, Any]]]) -> str:
    for turn in turns:
        for message in turn:
            if message.get("role") == "user":
                return str(message["content"])
    return ""


def _docs(value: Any, where: str, line: int, field_name: str) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise ImportFormatError(
            f"expected a list of function docs, got {type_name(value)}",
            file=where,
            line=line,
            field=field_name,
        )
    for index, doc in enumerate(value):
        at = f"{field_name}[{index}]"
        if not isinstance(doc, dict):
            raise ImportFormatError(
                f"a function doc must be an object, got {type_name(doc)}",
                file=where,
                line=line,
                field=at,
            )
        require(doc, "name", str, file=where, line=line, record=at)
    return value


class _Reader:
    """Reads the categories of one DataFiles into a bundle, remembering each file's hash and
    the function-doc and prerequisite files it has read."""

    def __init__(self, files: DataFiles, progress: Progress | None) -> None:
        self.files = files
        self.progress = progress
        self.hashes: dict[str, str] = {}
        self.class_docs: dict[str, list[dict[str, Any]]] = {}
        self.prereq: dict[str, list[dict[str, Any]]] = {}
        self.tools: dict[str, ToolRecord] = {}

    def digest(self, item: DataFile) -> str:
        if item.name not in self.hashes:
            self.hashes[item.name] = item.sha256()
        return self.hashes[item.name]

    def provenance(self, *items: DataFile) -> dict[str, Any]:
        return {
            "bfcl_version": self.files.version,
            "origin": self.files.origin,
            "files": {item.name: self.digest(item) for item in items},
        }

    def need(self, data_name: str, why: str, where: str, line: int | None = None) -> DataFile:
        item = self.files.get(data_name)
        if item is None:
            raise ImportFormatError(
                f"{why} needs {data_name}, which was not given (give the whole data folder or "
                "the wheel, or that file too)",
                file=where,
                line=line,
            )
        return item

    def docs_of(
        self, class_name: str, where: str, line: int
    ) -> tuple[list[dict[str, Any]], DataFile]:
        file_name = CLASS_DOCS.get(class_name)
        if file_name is None:
            raise ImportFormatError(
                f"unknown involved class {class_name!r}; BFCL v4's are {', '.join(CLASS_DOCS)}",
                file=where,
                line=line,
                field="involved_classes",
            )
        item = self.need(f"{FUNC_DOCS}/{file_name}", f"class {class_name}", where, line)
        if class_name not in self.class_docs:
            docs = []
            for doc_line, doc in iter_lines(item):
                docs.extend(_docs([doc], item.where, doc_line, "doc"))
            self.class_docs[class_name] = docs
            for doc in docs:
                self.tools.setdefault(
                    doc["name"],
                    ToolRecord(
                        name=doc["name"],
                        description=str(doc.get("description", "")),
                        parameters=clean_schema(doc.get("parameters")),
                        returns=clean_schema(doc.get("response")),
                        category=class_name,
                        raw=doc,
                        source=item.where,
                    ),
                )
        return self.class_docs[class_name], item

    def answers(self, category: str, where: str) -> tuple[dict[str, _Entry], DataFile | None]:
        item = self.files.get(f"{ANSWERS}/{PREFIX}{category}.json")
        if category in NO_ANSWER:
            return {}, None
        if item is None:
            self.need(f"{ANSWERS}/{PREFIX}{category}.json", f"category {category}", where)
        assert item is not None
        return _entries(item, None), item

    def read(self, category: str, bundle: ImportBundle) -> None:
        item = self.files.files[f"{PREFIX}{category}.json"]
        entries = _entries(item, self.progress)
        answers, answer_file = self.answers(category, item.where)
        if answer_file is not None:
            extra = [key for key in answers if key not in entries]
            if extra:
                raise ImportFormatError(
                    f"answers id {extra[0]!r}, which {item.name} does not have",
                    file=answer_file.where,
                    line=answers[extra[0]].line,
                    field="id",
                )
        for entry_id, entry in entries.items():
            answer = answers.get(entry_id)
            if answer_file is not None and answer is None:
                raise ImportFormatError(
                    f"has no answer in {answer_file.name}",
                    file=item.where,
                    line=entry.line,
                    field="id",
                )
            bundle.samples.append(self.sample(category, item, entry, answer, answer_file))

    def sample(
        self,
        category: str,
        item: DataFile,
        entry: _Entry,
        answer: _Entry | None,
        answer_file: DataFile | None,
    ) -> SampleRecord:
        where, line, record = item.where, entry.line, entry.record
        turns = _messages(record.get("question"), where, line)
        family = family_of(category)
        used = [item] + ([answer_file] if answer_file is not None else [])
        sample_input: dict[str, Any] = {"question": turns, "query": _first_query(turns)}
        metadata: dict[str, Any] = {"id": record["id"], "category": category, "family": family}
        if category in LANGUAGE:
            metadata["language"] = LANGUAGE[category]
        elif family in ("non_live", "live"):
            metadata["language"] = "python"
        kind = "query"
        if family in ("non_live", "live"):
            functions = _docs(record.get("function"), where, line, "function")
        elif category == "memory":
            kind = "dialogue"
            functions, used_more = self.memory(record, sample_input, metadata, where, line)
            used.extend(used_more)
        else:
            classes = require(record, "involved_classes", list, file=where, line=line)
            functions = []
            for class_name in classes:
                if not isinstance(class_name, str):
                    raise ImportFormatError(
                        "class names must be strings",
                        file=where,
                        line=line,
                        field="involved_classes",
                    )
                docs, doc_file = self.docs_of(class_name, where, line)
                functions.extend(docs)
                used.append(doc_file)
            metadata["involved_classes"] = classes
            if family == "multi_turn":
                kind = "dialogue"
                functions = self.multi_turn(record, functions, sample_input, metadata, where, line)
            else:
                metadata["needs_backend"] = "web_search"
        sample_input["functions"] = functions
        reference = self.reference(category, record, answer, answer_file, len(turns), metadata)
        metadata["provenance"] = self.provenance(*dict.fromkeys(used))
        return SampleRecord(
            split=category,
            external_id=record["id"],
            input=sample_input,
            reference=reference,
            kind=kind,
            candidate_tools=list(
                dict.fromkeys(doc["name"] for doc in functions if isinstance(doc, dict))
            ),
            metadata=metadata,
            source=f"{where}, line {line}",
        )

    def multi_turn(
        self,
        record: dict[str, Any],
        functions: list[dict[str, Any]],
        sample_input: dict[str, Any],
        metadata: dict[str, Any],
        where: str,
        line: int,
    ) -> list[dict[str, Any]]:
        config = require(record, "initial_config", dict, file=where, line=line)
        metadata["initial_config"] = config
        metadata["path"] = require(record, "path", list, file=where, line=line, optional=True)
        excluded = record.get("excluded_function")
        if excluded is not None:
            metadata["excluded_function"] = excluded
        missed = record.get("missed_function")
        if missed is None:
            return functions
        if not isinstance(missed, dict):
            raise ImportFormatError(
                f"expected an object turn -> names, got {type_name(missed)}",
                file=where,
                line=line,
                field="missed_function",
            )
        metadata["missed_function"] = missed
        held: dict[str, list[dict[str, Any]]] = {}
        offered = list(functions)
        for turn, names in missed.items():
            if not turn.isdigit() or not isinstance(names, list):
                raise ImportFormatError(
                    "expected a turn number -> a list of function names",
                    file=where,
                    line=line,
                    field=f"missed_function.{turn}",
                )
            held[turn] = []
            for missed_name in names:
                # BFCL moves the first doc of that name to the hold-out turn.
                found = next((d for d in offered if d.get("name") == missed_name), None)
                if found is None:
                    raise ImportFormatError(
                        f"names {missed_name!r}, which no involved class documents",
                        file=where,
                        line=line,
                        field=f"missed_function.{turn}",
                    )
                offered.remove(found)
                held[turn].append(found)
        sample_input["missed_functions"] = held
        return offered

    def memory(
        self,
        record: dict[str, Any],
        sample_input: dict[str, Any],
        metadata: dict[str, Any],
        where: str,
        line: int,
    ) -> tuple[list[dict[str, Any]], list[DataFile]]:
        scenario = require(record, "scenario", str, file=where, line=line)
        metadata["scenario"] = scenario
        metadata["involved_classes"] = record.get("involved_classes", [])
        metadata["needs_backend"] = "memory"
        used: list[DataFile] = []
        by_backend: dict[str, list[dict[str, Any]]] = {}
        for backend, file_name in MEMORY_BACKENDS.items():
            item = self.need(f"{FUNC_DOCS}/{file_name}", "a memory entry", where, line)
            by_backend[backend] = [
                doc
                for doc_line, doc in iter_lines(item)
                for doc in _docs([doc], item.where, doc_line, "doc")
            ]
            used.append(item)
        prereq_file = self.need(f"{PREREQ}/memory_{scenario}.json", "a memory entry", where, line)
        if scenario not in self.prereq:
            conversation = []
            for prereq_line, prereq in iter_lines(prereq_file):
                if not isinstance(prereq, dict):
                    raise ImportFormatError(
                        f"expected a JSON object, got {type_name(prereq)}",
                        file=prereq_file.where,
                        line=prereq_line,
                    )
                require(prereq, "id", str, file=prereq_file.where, line=prereq_line)
                _messages(prereq.get("question"), prereq_file.where, prereq_line)
                conversation.append(prereq)
            self.prereq[scenario] = conversation
        used.append(prereq_file)
        sample_input["functions_by_backend"] = by_backend
        sample_input["prereq_conversation"] = self.prereq[scenario]
        return [], used

    def reference(
        self,
        category: str,
        record: dict[str, Any],
        answer: _Entry | None,
        answer_file: DataFile | None,
        turns: int,
        metadata: dict[str, Any],
    ) -> Any:
        if category in NO_ANSWER:
            expected = NO_ANSWER[category]
            return {
                "answer": None,
                "expected": expected,
                "why": (
                    f"BFCL publishes no answer for {category}: the model passes when it "
                    + ("calls no function" if expected == "no_call" else "calls any function")
                ),
            }
        assert answer is not None and answer_file is not None
        where, line = answer_file.where, answer.line
        truth = answer.record.get("ground_truth")
        if not isinstance(truth, list):
            raise ImportFormatError(
                f"expected a list, got {type_name(truth)}",
                file=where,
                line=line,
                field="ground_truth",
            )
        family = family_of(category)
        if family == "multi_turn":
            if len(truth) != turns:
                raise ImportFormatError(
                    f"has {len(truth)} turns of calls; the entry has {turns} turns",
                    file=where,
                    line=line,
                    field="ground_truth",
                )
            for index, calls in enumerate(truth):
                if not isinstance(calls, list):
                    raise ImportFormatError(
                        f"a turn must be a list of call strings, got {type_name(calls)}",
                        file=where,
                        line=line,
                        field=f"ground_truth[{index}]",
                    )
                for position, call in enumerate(calls):
                    try:
                        parse_call(call)
                    except ToolCallError as exc:
                        raise ImportFormatError(
                            f"is not one call with literal arguments: {exc}",
                            file=where,
                            line=line,
                            field=f"ground_truth[{index}][{position}]",
                        ) from None
            return truth
        if family == "agentic":
            for key in ("source", "num_hops"):
                if key in answer.record:
                    metadata[key] = answer.record[key]
            return {"answers": truth}
        for index, call in enumerate(truth):
            if not (isinstance(call, dict) and len(call) == 1):
                raise ImportFormatError(
                    "each answer must be one {function: {parameter: [values]}}",
                    file=where,
                    line=line,
                    field=f"ground_truth[{index}]",
                )
            ((function, parameters),) = call.items()
            if not isinstance(parameters, dict) or not all(
                isinstance(values, list) for values in parameters.values()
            ):
                raise ImportFormatError(
                    "each parameter must map to a list of acceptable values",
                    file=where,
                    line=line,
                    field=f"ground_truth[{index}].{function}",
                )
        return truth


def import_files(paths: Sequence[Path], progress: Progress | None = None) -> ImportBundle:
    """BFCL v4's entries from a wheel, a data folder or category files (see the module
    docstring). All or nothing: raises ImportFormatError naming the file, line and field."""
    files = data_files(paths)
    reader = _Reader(files, progress)
    bundle = ImportBundle()
    for category in files.categories:
        reader.read(category, bundle)
    bundle.tools.extend(reader.tools.values())
    return bundle


def version_of(paths: Sequence[Path]) -> str:
    """BFCL's version as the import of `paths` records it."""
    return data_files(paths).version


__all__ = [
    "AGENTIC",
    "CATEGORIES",
    "LIVE",
    "MULTI_TURN",
    "NON_LIVE",
    "NO_ANSWER",
    "DataFile",
    "DataFiles",
    "data_files",
    "family_of",
    "import_files",
    "iter_lines",
    "version_of",
]
