"""Chat transcripts (OpenAI's message format): a researcher's own agent logs, imported to be
reviewed step by step. No benchmark, so no tasks: the samples are the traces.

importer.py reads the JSON Lines files (exporter.py writes them back); traces.py reads a sample
as a trace (the step_review campaign kind). The suite's public names are re-exported here.
"""

from benchmarks.kit.registry import Suite as _Suite
from benchmarks.suites.transcripts import importer as _importer
from benchmarks.suites.transcripts.exporter import EXPORTER as _EXPORTER
from benchmarks.suites.transcripts.importer import *  # noqa: F403
from benchmarks.suites.transcripts.traces import trace as _trace

SUITE = _Suite(
    name=_importer.name,
    default_benchmark=_importer.default_benchmark,
    import_files=_importer.import_files,
    evaluation=(),
    conformance=f"{__name__}.conformance",
    trace=_trace,
    exporter=_EXPORTER,
)
