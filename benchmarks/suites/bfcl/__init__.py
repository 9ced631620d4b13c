"""The Berkeley Function Calling Leaderboard, v4 (BFCL; Apache-2.0): its categories as tasks,
scored as its own checkers score them.

importer.py reads BFCL's data (the repository's data folder, the `bfcl-eval` wheel that
wheel.py and `manage.py fetch_bfcl` get, or category files); evaluate.py prompts, decodes
(decode.py) and scores (checker.py) the single-turn AST categories in both of BFCL's modes
(text = Prompt mode, `tool_mode=native` = FC mode); conversation.py runs the multi-turn
categories in both modes, the model's calls executed with BFCL's own classes (multi_turn.py,
from the pinned wheel) and each turn checked as BFCL checks it; tasks.py composes each task of
its parts.

What is there: a task per single-turn AST category (simple_python, simple_java,
simple_javascript, multiple, parallel, parallel_multiple, irrelevance, live_simple,
live_multiple, live_parallel, live_parallel_multiple, live_irrelevance, live_relevance) and per
multi-turn category (multi_turn_base, multi_turn_miss_func, multi_turn_miss_param,
multi_turn_long_context: `accuracy`, BFCL's binary score per entry, and `turn_accuracy`, the
percent of turns passed; each prediction keeps every turn's verdict and state diff). The
multi-turn tasks need the pinned wheel in .data/bfcl/ (`manage.py fetch_bfcl`): a launch
without it is refused, saying so. simple_java and simple_javascript are scored in native mode
only: in text mode their answers count as decoding failures (evaluate.py says why).

NOT THERE YET (unfinished, not faked): the agentic categories (memory, web_search) import, but
no task runs them (memory needs BFCL's memory backends, web_search a live search API); no
exporter. overall.py declares BFCL v4's overall score (benchmarks/kit/overall.py: its five
weighted sections over the categories' runs, a category without a run shown missing, never 0,
and every figure above it too), so the overall figure itself is missing until the agentic
categories run; the sections that are complete show theirs. analyses.py breaks an AST run's
wrong answers down by error type, and a multi-turn run by turn, by involved class, by the kind
of each failed entry's first failed turn and by the kind of every failed turn.
"""

from benchmarks.kit.registry import Suite as _Suite
from benchmarks.suites.bfcl import importer as _importer
from benchmarks.suites.bfcl.analyses import ANALYSES as _ANALYSES
from benchmarks.suites.bfcl.evaluate import *  # noqa: F403
from benchmarks.suites.bfcl.evaluate import declare_tools as _declare_tools
from benchmarks.suites.bfcl.overall import OVERALL as _OVERALL
from benchmarks.suites.bfcl.tasks import EVALUATION as _EVALUATION

SUITE = _Suite(
    name=_importer.name,
    default_benchmark=_importer.default_benchmark,
    import_files=_importer.import_files,
    evaluation=_EVALUATION,
    declare_tools=_declare_tools,
    conformance=f"{__name__}.conformance",
    analyses=_ANALYSES,
    overall=_OVERALL,
)
