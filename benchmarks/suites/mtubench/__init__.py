"""MTU-Bench (papers/001): single/multi-turn x single/multi-tool dialogues, scored by MTU-Eval.

importer.py reads the benchmark's published files; evaluate.py prompts, parses and scores
(the protocol in benchmarks/kit/protocol.py). The suite's public names are re-exported here.
"""

import functools as _functools

from benchmarks.kit.protocol import Native as _Native
from benchmarks.kit.protocol import Task as _Task
from benchmarks.kit.protocol import TaskSpec as _TaskSpec
from benchmarks.kit.registry import Suite as _Suite
from benchmarks.suites.mtubench import evaluate as _evaluate
from benchmarks.suites.mtubench import importer as _importer
from benchmarks.suites.mtubench import native as _native
from benchmarks.suites.mtubench import native_messages as _native_messages
from benchmarks.suites.mtubench.analyses import ANALYSES as _ANALYSES
from benchmarks.suites.mtubench.context import item_context as _item_context
from benchmarks.suites.mtubench.evaluate import *  # noqa: F403
from benchmarks.suites.mtubench.exporter import EXPORTER as _EXPORTER
from benchmarks.suites.mtubench.gold import GOLD as _GOLD
from benchmarks.suites.mtubench.importer import *  # noqa: F403
from benchmarks.suites.mtubench.native import *  # noqa: F403
from benchmarks.suites.mtubench.native_messages import *  # noqa: F403


def _task(spec: _TaskSpec) -> _Task:
    return _Task(
        spec,
        prompt=_evaluate.build_prompt,
        parse=_evaluate.parse,
        score=_evaluate.score,
        aggregate=_evaluate.aggregate,
        cluster=_evaluate.cluster,
        read_predictions=_functools.partial(_evaluate.read_predictions, spec.name),
        native=_Native(
            prompt=_native_messages.native_prompt,
            answer=_native_messages.native_answer,
            outcome=_native_messages.native_outcome,
        )
        if spec.native
        else None,
    )


SUITE = _Suite(
    name=_importer.name,
    default_benchmark=_importer.default_benchmark,
    import_files=_importer.import_files,
    evaluation=tuple(_task(spec) for spec in _evaluate.TASKS.values()),
    declare_tools=_native.declare_tools,
    conformance=f"{__name__}.conformance",
    item_context=_item_context,
    gold=_GOLD,
    exporter=_EXPORTER,
    analyses=_ANALYSES,
)
