"""StableToolBench (papers/002): ToolBench's solvable queries over RapidAPI tools, answered
by an agent against a virtual API server and judged by an LLM.

importer.py reads the benchmark's published files; evaluate.py parses and scores (the protocol
in benchmarks/kit/protocol.py); agent.py solves a query with a ReAct loop over the virtual API
server (`solve`). The suite's public names are re-exported here.
"""

import sys as _sys

from benchmarks.kit.registry import JudgmentReader as _JudgmentReader
from benchmarks.kit.registry import Suite as _Suite
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

SUITE = _Suite(
    _sys.modules[__name__],
    conformance=f"{__name__}.conformance",
    judges=_JUDGES,
    item_context=_item_context,
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
