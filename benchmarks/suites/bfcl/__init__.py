"""The Berkeley Function Calling Leaderboard, v4 (BFCL; Apache-2.0): its categories as tasks,
scored as its own checkers score them.

importer.py reads BFCL's data (the repository's data folder, the `bfcl-eval` wheel that
wheel.py and `manage.py fetch_bfcl` get, or category files); evaluate.py prompts, decodes
(decode.py) and scores (checker.py) the single-turn AST categories in both of BFCL's modes
(text = Prompt mode, `tool_mode=native` = FC mode); tasks.py composes each task of its parts.

What is there: a task per single-turn AST category (simple_python, simple_java,
simple_javascript, multiple, parallel, parallel_multiple, irrelevance, live_simple,
live_multiple, live_parallel, live_parallel_multiple, live_irrelevance, live_relevance).
simple_java and simple_javascript are scored in native mode only: in text mode their answers
count as decoding failures (evaluate.py says why).

NOT THERE YET (unfinished, not faked): the multi-turn categories (multi_turn_base, _miss_func,
_miss_param, _long_context), memory and web_search import, but no task runs them yet
(multi_turn.py holds the executed runner and per-turn check they will use); there is no
overall score (BFCL v4's weighted formula needs them) and no exporter. analyses.py breaks a
run's wrong answers down by error type.
"""

from benchmarks.kit.registry import Suite as _Suite
from benchmarks.suites.bfcl import importer as _importer
from benchmarks.suites.bfcl.analyses import ANALYSES as _ANALYSES
from benchmarks.suites.bfcl.evaluate import *  # noqa: F403
from benchmarks.suites.bfcl.evaluate import declare_tools as _declare_tools
from benchmarks.suites.bfcl.tasks import EVALUATION as _EVALUATION

SUITE = _Suite(
    name=_importer.name,
    default_benchmark=_importer.default_benchmark,
    import_files=_importer.import_files,
    evaluation=_EVALUATION,
    declare_tools=_declare_tools,
    conformance=f"{__name__}.conformance",
    analyses=_ANALYSES,
)
