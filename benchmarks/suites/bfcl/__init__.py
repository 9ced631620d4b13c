"""The Berkeley Function Calling Leaderboard, v4 (BFCL; Apache-2.0): its categories as tasks,
scored as its own checkers score them.

importer.py reads BFCL's data (the repository's data folder, the `bfcl-eval` wheel that
wheel.py and `manage.py fetch_bfcl` get, or category files); evaluate.py prompts, decodes
(decode.py) and scores (checker.py) the single-turn AST categories in both of BFCL's modes
(text = Prompt mode, `tool_mode=native` = FC mode); conversation.py runs the multi-turn
categories in both modes, the model's calls executed with BFCL's own classes (multi_turn.py,
from the pinned wheel) and each turn checked as BFCL checks it; agentic.py runs the memory
entries with BFCL's kv and rec_sum memory backends (memory_backend.py, from the pinned wheel):
the scenario's prerequisite conversation, its memory snapshot carried from entry to entry, then
the question, whose final answer BFCL's agentic rule checks; web_search.py runs the web_search
entries in both modes, their two functions (search_engine_query, fetch_url_content) served by
the platform's virtual API server (served_tools), the final answer checked by the same rule;
tasks.py composes each task of its parts; exporter.py writes a benchmark back as BFCL's data
folder (refinements applied), which the importer reads as the same samples and tools.

What is there: a task per single-turn AST category (simple_python, simple_java,
simple_javascript, multiple, parallel, parallel_multiple, irrelevance, live_simple,
live_multiple, live_parallel, live_parallel_multiple, live_irrelevance, live_relevance) and per
multi-turn category (multi_turn_base, multi_turn_miss_func, multi_turn_miss_param,
multi_turn_long_context: `accuracy`, BFCL's binary score per entry, and `turn_accuracy`, the
percent of turns passed; each prediction keeps every turn's verdict and state diff). The
multi-turn tasks need the pinned wheel in .data/bfcl/ (`manage.py fetch_bfcl`): a launch
without it is refused, saying so. simple_java and simple_javascript are scored in native mode
only: in text mode their answers count as decoding failures (evaluate.py says why). The memory
tasks memory_kv and memory_rec_sum (`accuracy` 100 or 0 per question, and `n`) need the wheel
too; each item replays its scenario's prerequisite conversation, which the response cache
answers after the first time (agentic.py says how that fits the platform's runs, and its cost).
The web search tasks web_search_base and web_search_no_snippet (`accuracy`, `n`; the latter
hides the results' snippets from the model) need no wheel but their functions' docs imported as
tools: their searches are answered by the virtual API server (cache, a Real API as configured,
or its simulator), not by BFCL's SerpAPI, so their scores are NOT comparable with BFCL's
published ones: each task says so (TaskSpec.not_comparable), on its runs' pages too, and no
overall score counts them.

Refinement (gold.py): experts edit the single-turn acceptable-value lists and the multi-turn
ground-truth calls per turn in a refinement campaign, with the tool-call diff; a refined gold
re-scores runs (evaluation/gold_versions.py; a multi-turn entry whose ground truth changed is
executed again from the model's stored calls, regold.py, for runs whose launch recorded the
ground truth). context.py gives a human judge the question, the functions, the gold and each
output's calls. overall.py declares BFCL v4's overall score (benchmarks/kit/overall.py: its
five weighted sections over the categories' runs, a category without a run shown missing,
never 0, and every figure above it too). analyses.py breaks an AST run's wrong answers down by
error type, and a multi-turn run by turn, by involved class, by the kind of each failed entry's
first failed turn and by the kind of every failed turn.

NOT THERE YET (unfinished, not faked): memory_vector (sentence-transformers and faiss, not
installed) has no task, so it is never scored (agentic.NOT_RUN says why); web_search_base and
web_search_no_snippet run on the platform's search service, never BFCL's SerpAPI, so they are
never counted; the overall figure is therefore always missing (the sections that are complete
show theirs). No test calls a Real API for the web search functions (the server never calls
loopback; the tests serve them from the cache and the simulator). The exporter writes
the files equal to BFCL's as JSON, not byte for byte (the import keeps no layout of the
records: key order inside objects is jsonb's), and an import of them records their own
provenance, not the original's. The memory and web search tasks have no analysis.
"""

from benchmarks.kit.registry import Suite as _Suite
from benchmarks.suites.bfcl import importer as _importer
from benchmarks.suites.bfcl.analyses import ANALYSES as _ANALYSES
from benchmarks.suites.bfcl.context import item_context as _item_context
from benchmarks.suites.bfcl.evaluate import *  # noqa: F403
from benchmarks.suites.bfcl.evaluate import declare_tools as _declare_tools
from benchmarks.suites.bfcl.exporter import EXPORTER as _EXPORTER
from benchmarks.suites.bfcl.gold import GOLD as _GOLD
from benchmarks.suites.bfcl.overall import OVERALL as _OVERALL
from benchmarks.suites.bfcl.tasks import EVALUATION as _EVALUATION
from benchmarks.suites.bfcl.traces import OWN_STEP_ERRORS as _OWN_STEP_ERRORS
from benchmarks.suites.bfcl.traces import trace as _trace
from benchmarks.suites.bfcl.web_search import SERVED_TOOLS as _SERVED_TOOLS

SUITE = _Suite(
    name=_importer.name,
    default_benchmark=_importer.default_benchmark,
    import_files=_importer.import_files,
    evaluation=_EVALUATION,
    declare_tools=_declare_tools,
    served_tools=_SERVED_TOOLS,
    conformance=f"{__name__}.conformance",
    analyses=_ANALYSES,
    exporter=_EXPORTER,
    gold=_GOLD,
    item_context=_item_context,
    trace=_trace,
    own_step_errors=_OWN_STEP_ERRORS,
    overall=_OVERALL,
)
