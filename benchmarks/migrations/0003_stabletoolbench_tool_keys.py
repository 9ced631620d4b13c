"""StableToolBench tools were named `<api>_for_<tool>`, a name two categories can share (issue 14:
the published files do); they are now keyed `<category>/<api>_for_<tool>` (the suite's importer,
`tool_key`). This renames the tools of StableToolBench benchmarks imported before, and the tool
names their samples and sample revisions hold, so that importing the files again updates those
rows instead of adding a second set of tools beside them. Runs keep what they stored: their
traces call tools by ToolBench's name, which the agent still shows.

The rule is written out here rather than imported: a migration must keep meaning what it meant
when it was written."""

from collections import Counter
from typing import Any

from django.db import migrations

SUITE = "stabletoolbench"
# Sample metadata lists that hold tool names (the importer's).
METADATA_LISTS = ("api_doc_differs", "relevant_not_offered")


def _names(value: Any, mapping: dict[str, str]) -> Any:
    if not isinstance(value, list):
        return value
    return [mapping.get(v, v) if isinstance(v, str) else v for v in value]


def _reference(reference: Any, mapping: dict[str, str]) -> Any:
    if isinstance(reference, dict) and "relevant_tools" in reference:
        return {**reference, "relevant_tools": _names(reference["relevant_tools"], mapping)}
    return reference


def _rename(apps: Any, mapping_of: Any) -> None:
    Benchmark = apps.get_model("benchmarks", "Benchmark")
    Tool = apps.get_model("benchmarks", "Tool")
    Sample = apps.get_model("benchmarks", "Sample")
    SampleRevision = apps.get_model("benchmarks", "SampleRevision")
    for benchmark in Benchmark.objects.filter(suite=SUITE):
        tools = list(Tool.objects.filter(benchmark=benchmark))
        mapping = mapping_of(benchmark, tools)
        if not mapping:
            continue
        changed = [t for t in tools if t.name in mapping]
        for tool in changed:
            tool.name = mapping[tool.name]
        Tool.objects.bulk_update(changed, ["name"], batch_size=1000)
        samples = list(Sample.objects.filter(benchmark=benchmark))
        for sample in samples:
            sample.candidate_tools = _names(sample.candidate_tools, mapping)
            sample.reference = _reference(sample.reference, mapping)
            if isinstance(sample.metadata, dict):
                for key in METADATA_LISTS:
                    if key in sample.metadata:
                        sample.metadata[key] = _names(sample.metadata[key], mapping)
        Sample.objects.bulk_update(
            samples, ["candidate_tools", "reference", "metadata"], batch_size=1000
        )
        revisions = list(SampleRevision.objects.filter(sample__benchmark=benchmark))
        for revision in revisions:
            revision.candidate_tools = _names(revision.candidate_tools, mapping)
            revision.reference = _reference(revision.reference, mapping)
        SampleRevision.objects.bulk_update(
            revisions, ["candidate_tools", "reference"], batch_size=1000
        )


def _category(tool: Any) -> str:
    raw = tool.raw if isinstance(tool.raw, dict) else {}
    category = raw.get("category_name")
    return category if isinstance(category, str) and category else tool.category


def forwards(apps: Any, schema_editor: Any) -> None:
    def mapping_of(benchmark: Any, tools: list[Any]) -> dict[str, str]:
        # A name with "/" is keyed already; a tool without a category cannot be.
        return {
            t.name: f"{_category(t)}/{t.name}" for t in tools if "/" not in t.name and _category(t)
        }

    _rename(apps, mapping_of)


def backwards(apps: Any, schema_editor: Any) -> None:
    def mapping_of(benchmark: Any, tools: list[Any]) -> dict[str, str]:
        mapping = {t.name: t.name.rpartition("/")[2] for t in tools if "/" in t.name}
        kept = {t.name for t in tools if "/" not in t.name}
        count = Counter([*mapping.values(), *kept])
        shared = sorted(name for name, n in count.items() if n > 1)
        if shared:
            raise RuntimeError(
                f"benchmark {benchmark.name!r} has tools of two categories under one "
                f"<api>_for_<tool> name ({', '.join(shared[:5])}), which the old naming "
                "cannot hold; delete one of them first"
            )
        return mapping

    _rename(apps, mapping_of)


class Migration(migrations.Migration):
    dependencies = [
        ("benchmarks", "0002_alter_sample_input"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
