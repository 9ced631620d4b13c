"""Generic JSON Lines: a researcher's own tool-use questions, in a format of this platform.

importer.py reads the benchmark's published files; evaluate.py prompts, parses and scores
(the protocol in benchmarks/kit/protocol.py). The suite's public names are re-exported here.
"""

import functools as _functools

from benchmarks.kit.protocol import Native as _Native
from benchmarks.kit.protocol import Task as _Task
from benchmarks.kit.protocol import TaskSpec as _TaskSpec
from benchmarks.kit.registry import Suite as _Suite
from benchmarks.suites.generic import evaluate as _evaluate
from benchmarks.suites.generic import importer as _importer
from benchmarks.suites.generic import native as _native
from benchmarks.suites.generic.analyses import ANALYSES as _ANALYSES
from benchmarks.suites.generic.evaluate import *  # noqa: F403
from benchmarks.suites.generic.exporter import EXPORTER as _EXPORTER
from benchmarks.suites.generic.gold import GOLD as _GOLD
from benchmarks.suites.generic.importer import *  # noqa: F403
from benchmarks.suites.generic.native import *  # noqa: F403


def _task(spec: _TaskSpec) -> _Task:
    return _Task(
        spec,
        prompt=_evaluate.build_prompt,
        parse=_evaluate.parse,
        score=_evaluate.score,
        aggregate=_evaluate.aggregate,
        select=_evaluate.select,
        mean_metrics=_evaluate.mean_metrics,
        read_predictions=_functools.partial(_evaluate.read_predictions, spec.name),
        native=_Native(
            prompt=_native.native_prompt,
            answer=_native.native_answer,
            outcome=_native.native_outcome,
        )
        if spec.native
        else None,
    )


SUITE = _Suite(
    name=_importer.name,
    default_benchmark=_importer.default_benchmark,
    import_files=_importer.import_files,
    evaluation=tuple(_task(spec) for spec in _evaluate.TASKS.values()),
    conformance=f"{__name__}.conformance",
    gold=_GOLD,
    exporter=_EXPORTER,
    analyses=_ANALYSES,
)
