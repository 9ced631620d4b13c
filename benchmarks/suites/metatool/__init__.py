"""MetaTool / ToolE (papers/000): does the model know when to use a tool, and which one?

importer.py reads the benchmark's published files; evaluate.py prompts, parses and scores
(the protocol in benchmarks/kit/protocol.py), and tasks.py composes each task of its parts.
The suite's public names are re-exported here.
"""

from benchmarks.kit.registry import Suite as _Suite
from benchmarks.kit.rewriting import DescriptionRewriting as _DescriptionRewriting
from benchmarks.suites.metatool import importer as _importer
from benchmarks.suites.metatool import native as _native
from benchmarks.suites.metatool import rewriting as _rewriting
from benchmarks.suites.metatool import tasks as _tasks
from benchmarks.suites.metatool.analyses import ANALYSES as _ANALYSES
from benchmarks.suites.metatool.context import item_context as _item_context
from benchmarks.suites.metatool.evaluate import *  # noqa: F403
from benchmarks.suites.metatool.exporter import EXPORTER as _EXPORTER
from benchmarks.suites.metatool.importer import *  # noqa: F403
from benchmarks.suites.metatool.native import *  # noqa: F403
from benchmarks.suites.metatool.native_messages import *  # noqa: F403
from benchmarks.suites.metatool.questions import MOTIVATION_QUESTIONS as _MOTIVATION

# The paper's human study of tools (section 3.2) is the motivation campaign's question set.
# Section 4.3 (Figure 6): an LLM rewrites the tool descriptions and the selection is run again.
SUITE = _Suite(
    name=_importer.name,
    default_benchmark=_importer.default_benchmark,
    import_files=_importer.import_files,
    evaluation=_tasks.EVALUATION,
    declare_tools=_native.declare_tools,
    gold_tools=_importer.gold_tools,
    conformance=f"{__name__}.conformance",
    item_context=_item_context,
    questions={"motivation": _MOTIVATION},
    exporter=_EXPORTER,
    analyses=_rewriting.with_rewriting(_ANALYSES),
    rewriting=_DescriptionRewriting(
        prompt=_rewriting.rewrite_prompt,
        read=_rewriting.read_rewrite,
        tasks=_rewriting.REWRITE_TASKS,
        credited=_rewriting.credited_tools,
        counted=_rewriting.counted,
        prompt_file=_rewriting.PROMPT_FILE,
    ),
)
