"""WTU-Eval (papers/003, an anonymous ACL submission): whether or not to use a tool.

importer.py reads the benchmark's published files; evaluate.py prompts, parses and scores
(the protocol in benchmarks/kit/protocol.py); tasks.py composes each task of its parts. The
suite's public names are re-exported here.
"""

from benchmarks.kit.registry import Suite as _Suite
from benchmarks.suites.wtueval import importer as _importer
from benchmarks.suites.wtueval import native as _native
from benchmarks.suites.wtueval.analyses import ANALYSES as _ANALYSES
from benchmarks.suites.wtueval.context import item_context as _item_context
from benchmarks.suites.wtueval.evaluate import *  # noqa: F403
from benchmarks.suites.wtueval.exporter import EXPORTER as _EXPORTER
from benchmarks.suites.wtueval.importer import *  # noqa: F403
from benchmarks.suites.wtueval.native import *  # noqa: F403
from benchmarks.suites.wtueval.native_messages import *  # noqa: F403
from benchmarks.suites.wtueval.questions import ERROR_TYPE_QUESTIONS as _ERROR_TYPES
from benchmarks.suites.wtueval.served import SERVED_TOOLS as _SERVED_TOOLS
from benchmarks.suites.wtueval.tasks import EVALUATION as _EVALUATION
from benchmarks.suites.wtueval.traces import OWN_STEP_ERRORS as _OWN_STEP_ERRORS
from benchmarks.suites.wtueval.traces import trace as _trace

# The paper's error analysis (Fig. 4) is the error-type campaign's question set.
SUITE = _Suite(
    name=_importer.name,
    default_benchmark=_importer.default_benchmark,
    import_files=_importer.import_files,
    evaluation=_EVALUATION,
    declare_tools=_native.declare_tools,
    conformance=f"{__name__}.conformance",
    item_context=_item_context,
    trace=_trace,
    own_step_errors=_OWN_STEP_ERRORS,
    served_tools=_SERVED_TOOLS,
    questions={"error_types": _ERROR_TYPES},
    exporter=_EXPORTER,
    analyses=_ANALYSES,
)
