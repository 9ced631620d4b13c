"""StableToolBench's solvable queries written back (the inverse of importer.py), in the
repository's layout:

- `solvable_queries/test_instruction/<group>.json`: the group's queries, each
  {"query_id", "query", "api_list", "relevant APIs"}; an API is written as its tool's published
  document (Tool.raw), once per query, in the order the query offered them;
- `solvable_queries/test_query_ids/<group>.json`: {"<query_id>": 0, ...} for the queries the
  evaluation scripts select (metadata["in_test_query_ids"]), when any was read with such a
  list.

Each file is written in the layout its import kept (metadata["published"]: the records' key
order and the file's json.dumps options, layout.write_records), so an unrefined group is its
published file byte for byte.

The platform keeps one document per API (the first one read); a query that was published with
another document for the same API (metadata["api_doc_differs"]) keeps its own in
metadata["published"]["docs"], and one that lists an API twice its api_list's keys in
metadata["published"]["apis"], so both are written as published."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.kit.base import SampleRecord, ToolRecord
from benchmarks.kit.export import (
    ExportError,
    Files,
    by_split,
    file_part,
    json_bytes,
    sample_name,
)
from benchmarks.kit.layout import dump, write_records
from benchmarks.kit.registry import Exporter
from benchmarks.suites.stabletoolbench.importer import PUBLISHED

ROOT = "solvable_queries"


def _query_id(external_id: str) -> int | str:
    # Published ids are numbers; the importer stores them as text.
    if external_id.isdigit() and str(int(external_id)) == external_id:
        return int(external_id)
    return external_id


def _query(sample: SampleRecord, documents: dict[str, Any]) -> dict[str, Any]:
    given = sample.input if isinstance(sample.input, dict) else {}
    reference = sample.reference if isinstance(sample.reference, dict) else {}
    published = sample.metadata.get(PUBLISHED)
    published = published if isinstance(published, dict) else {}
    own = published.get("docs") or {}
    listed = published.get("apis") or sample.candidate_tools
    if not set(listed) <= set(sample.candidate_tools):
        listed = sample.candidate_tools
    api_list = []
    for number, key in enumerate(listed):
        if str(number) in own:
            api_list.append(own[str(number)])
            continue
        if key not in documents:
            raise ExportError(
                f"offers API {key!r}, which the benchmark has no document of",
                sample=sample_name(sample),
                field="api_list",
            )
        api_list.append(documents[key])
    relevant = reference.get("relevant_apis")
    if not isinstance(relevant, list):
        raise ExportError(
            "has no relevant APIs list", sample=sample_name(sample), field="relevant APIs"
        )
    return {
        "query_id": _query_id(sample.external_id),
        "query": given.get("query"),
        "api_list": api_list,
        "relevant APIs": relevant,
    }


def _ids(selected: list[str], layout: dict[str, Any] | None) -> bytes:
    if layout is None:
        return json_bytes(dict.fromkeys(selected, 0))
    value: Any = (
        [_query_id(i) for i in selected] if layout.get("list") else dict.fromkeys(selected, 0)
    )
    return (dump(value, layout) + str(layout.get("end", ""))).encode()


def write(samples: Sequence[SampleRecord], tools: Sequence[ToolRecord]) -> Files:
    documents = {tool.name: tool.raw for tool in tools}
    files: Files = {}
    for group, queries in by_split(samples).items():
        name = f"{file_part(group, 'group')}.json"
        files[f"{ROOT}/test_instruction/{name}"] = write_records(
            [
                (None, _query(sample, documents), sample.metadata.get(PUBLISHED))
                for sample in queries
            ]
        ).encode()
        selected = [s.external_id for s in queries if s.metadata.get("in_test_query_ids")]
        if selected:
            layout = next(
                (s.metadata[PUBLISHED].get("ids") for s in queries if PUBLISHED in s.metadata),
                None,
            )
            files[f"{ROOT}/test_query_ids/{name}"] = _ids(selected, layout)
    return files


def _import_paths(folder: Path) -> list[Path]:
    return [folder / ROOT]


EXPORTER = Exporter(
    write=write,
    import_paths=_import_paths,
    cannot_carry=(
        "a group none of whose queries is in test_query_ids gets no test_query_ids file (the "
        "format has no empty list), and the file lists only the group's imported queries"
    ),
)
