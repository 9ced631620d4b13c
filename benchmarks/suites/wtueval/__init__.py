"""WTU-Eval (papers/003, an anonymous ACL submission): whether or not to use a tool.

importer.py reads the benchmark's published files; evaluate.py prompts, parses and scores
(the protocol in benchmarks/kit/protocol.py). The suite's public names are re-exported here.
"""

from benchmarks.kit.protocol import Native as _Native
from benchmarks.kit.protocol import Task as _Task
from benchmarks.kit.protocol import TaskSpec as _TaskSpec
from benchmarks.kit.registry import Suite as _Suite
from benchmarks.suites.wtueval import evaluate as _evaluate
from benchmarks.suites.wtueval import importer as _importer
from benchmarks.suites.wtueval import native as _native
from benchmarks.suites.wtueval import native_messages as _native_messages
from benchmarks.suites.wtueval.analyses import ANALYSES as _ANALYSES
from benchmarks.suites.wtueval.context import item_context as _item_context
from benchmarks.suites.wtueval.evaluate import *  # noqa: F403
from benchmarks.suites.wtueval.exporter import EXPORTER as _EXPORTER
from benchmarks.suites.wtueval.importer import *  # noqa: F403
from benchmarks.suites.wtueval.native import *  # noqa: F403
from benchmarks.suites.wtueval.native_messages import *  # noqa: F403
from benchmarks.suites.wtueval.questions import ERROR_TYPE_QUESTIONS as _ERROR_TYPES
from benchmarks.suites.wtueval.served import SERVED_TOOLS as _SERVED_TOOLS


def _task(spec: _TaskSpec) -> _Task:
    return _Task(
        spec,
        prompt=_evaluate.build_prompt,
        parse=_evaluate.parse,
        score=_evaluate.score,
        aggregate=_evaluate.aggregate,
        select=_evaluate.select,
        prepare=_evaluate.prepare,
        solve=_evaluate.solve,
        native=(_Native(solve=_native_messages.native_solve) if spec.native else None),
    )


# The paper's error analysis (Fig. 4) is the error-type campaign's question set.
SUITE = _Suite(
    name=_importer.name,
    default_benchmark=_importer.default_benchmark,
    import_files=_importer.import_files,
    evaluation=tuple(_task(spec) for spec in _evaluate.TASKS.values()),
    declare_tools=_native.declare_tools,
    conformance=f"{__name__}.conformance",
    item_context=_item_context,
    served_tools=_SERVED_TOOLS,
    questions={"error_types": _ERROR_TYPES},
    exporter=_EXPORTER,
    analyses=_ANALYSES,
)
