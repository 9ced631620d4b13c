"""StableToolBench (papers/002): ToolBench's solvable queries over RapidAPI tools, answered
by an agent against a virtual API server and judged by an LLM.

importer.py reads the benchmark's published files; evaluate.py parses and scores (the protocol
in benchmarks/kit/protocol.py); agent.py solves a query with a ReAct loop over the virtual API
server (`solve`). The suite's public names are re-exported here.
"""

import functools as _functools

from benchmarks.kit.protocol import Native as _Native
from benchmarks.kit.protocol import Task as _Task
from benchmarks.kit.protocol import TaskSpec as _TaskSpec
from benchmarks.kit.registry import JudgmentReader as _JudgmentReader
from benchmarks.kit.registry import Suite as _Suite
from benchmarks.suites.stabletoolbench import agent as _agent
from benchmarks.suites.stabletoolbench import evaluate as _evaluate
from benchmarks.suites.stabletoolbench import importer as _importer
from benchmarks.suites.stabletoolbench import native as _native
from benchmarks.suites.stabletoolbench import native_agent as _native_agent
from benchmarks.suites.stabletoolbench.agent import *  # noqa: F403
from benchmarks.suites.stabletoolbench.analyses import ANALYSES as _ANALYSES
from benchmarks.suites.stabletoolbench.context import item_context as _item_context
from benchmarks.suites.stabletoolbench.evaluate import *  # noqa: F403
from benchmarks.suites.stabletoolbench.exporter import EXPORTER as _EXPORTER
from benchmarks.suites.stabletoolbench.importer import *  # noqa: F403
from benchmarks.suites.stabletoolbench.judges import JUDGES as _JUDGES
from benchmarks.suites.stabletoolbench.native import *  # noqa: F403
from benchmarks.suites.stabletoolbench.native_agent import *  # noqa: F403
from benchmarks.suites.stabletoolbench.questions import TURING_QUESTIONS as _TURING
from benchmarks.suites.stabletoolbench.results import pass_judgments as _pass_judgments
from benchmarks.suites.stabletoolbench.served import SERVED_TOOLS as _SERVED_TOOLS
from benchmarks.suites.stabletoolbench.traces import OWN_STEP_ERRORS as _OWN_STEP_ERRORS
from benchmarks.suites.stabletoolbench.traces import trace as _trace


def _task(spec: _TaskSpec) -> _Task:
    return _Task(
        spec,
        prompt=_evaluate.build_prompt,
        parse=_evaluate.parse,
        score=_evaluate.score,
        aggregate=_evaluate.aggregate,
        select=_evaluate.select,
        prepare=_evaluate.prepare,
        solve=_agent.solve,
        read_predictions=_functools.partial(_evaluate.read_predictions, spec.name),
        native=(_Native(solve=_native_agent.native_solve) if spec.native else None),
    )


SUITE = _Suite(
    name=_importer.name,
    default_benchmark=_importer.default_benchmark,
    import_files=_importer.import_files,
    evaluation=tuple(_task(spec) for spec in _evaluate.TASKS.values()),
    declare_tools=_native.declare_tools,
    conformance=f"{__name__}.conformance",
    judges=_JUDGES,
    item_context=_item_context,
    trace=_trace,
    own_step_errors=_OWN_STEP_ERRORS,
    served_tools=_SERVED_TOOLS,
    # The paper's Turing test of simulated API responses is the turing campaign's question set.
    questions={"turing": _TURING},
    exporter=_EXPORTER,
    analyses=_ANALYSES,
    judgment_readers={
        "stabletoolbench-pass": _JudgmentReader(
            read=_pass_judgments,
            help="StableToolBench's pass-rate results (pass_rate_results/<method>/"
            "<group>_<method>.json, the is_solved label of each query in each evaluation "
            "round); --answers takes the answers from the converted predictions file instead "
            "of the results' steps.",
            takes_answers=True,
            answers_help="model_predictions_converted/<method>/<group>.json, the whole answers "
            "the labels judged (default: rebuilt from the results' steps).",
            task_help="the run's task, pass_rate (default) or preference.",
        )
    },
)
