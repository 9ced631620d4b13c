"""MTU-Bench (papers/001): single/multi-turn x single/multi-tool dialogues, scored by MTU-Eval.

importer.py reads the benchmark's published files; evaluate.py prompts, parses and scores
(the protocol in benchmarks/kit/protocol.py); tasks.py composes each task of its parts. The
suite's public names are re-exported here.
"""

from benchmarks.kit.registry import Suite as _Suite
from benchmarks.suites.mtubench import importer as _importer
from benchmarks.suites.mtubench import native as _native
from benchmarks.suites.mtubench.analyses import ANALYSES as _ANALYSES
from benchmarks.suites.mtubench.context import item_context as _item_context
from benchmarks.suites.mtubench.evaluate import *  # noqa: F403
from benchmarks.suites.mtubench.exporter import EXPORTER as _EXPORTER
from benchmarks.suites.mtubench.gold import GOLD as _GOLD
from benchmarks.suites.mtubench.importer import *  # noqa: F403
from benchmarks.suites.mtubench.native import *  # noqa: F403
from benchmarks.suites.mtubench.native_messages import *  # noqa: F403
from benchmarks.suites.mtubench.tasks import EVALUATION as _EVALUATION
from benchmarks.suites.mtubench.traces import trace as _trace

SUITE = _Suite(
    name=_importer.name,
    default_benchmark=_importer.default_benchmark,
    import_files=_importer.import_files,
    evaluation=_EVALUATION,
    declare_tools=_native.declare_tools,
    conformance=f"{__name__}.conformance",
    item_context=_item_context,
    trace=_trace,
    gold=_GOLD,
    exporter=_EXPORTER,
    analyses=_ANALYSES,
)
