"""UltraTool (Huang et al., 2024; papers/004): tree-structured plans with tool calls, in six tasks.

importer.py reads the benchmark's published files; evaluate.py prompts, parses and scores
(the protocol in benchmarks/kit/protocol.py), and tasks.py composes each task of its parts. The
suite's public names are re-exported here.
"""

from benchmarks.kit.registry import JudgmentReader as _JudgmentReader
from benchmarks.kit.registry import Suite as _Suite
from benchmarks.suites.ultratool import importer as _importer
from benchmarks.suites.ultratool.analyses import ANALYSES as _ANALYSES
from benchmarks.suites.ultratool.context import item_context as _item_context
from benchmarks.suites.ultratool.evaluate import *  # noqa: F403
from benchmarks.suites.ultratool.exporter import EXPORTER as _EXPORTER
from benchmarks.suites.ultratool.gold import GOLD as _GOLD
from benchmarks.suites.ultratool.importer import *  # noqa: F403
from benchmarks.suites.ultratool.judges import JUDGES as _JUDGES
from benchmarks.suites.ultratool.judges import planning_judgments as _planning_judgments
from benchmarks.suites.ultratool.native import *  # noqa: F403
from benchmarks.suites.ultratool.tasks import EVALUATION as _EVALUATION

SUITE = _Suite(
    name=_importer.name,
    default_benchmark=_importer.default_benchmark,
    import_files=_importer.import_files,
    evaluation=_EVALUATION,
    conformance=f"{__name__}.conformance",
    judges=_JUDGES,
    item_context=_item_context,
    gold=_GOLD,
    analyses=_ANALYSES,
    exporter=_EXPORTER,
    judgment_readers={
        "ultratool-planning": _JudgmentReader(
            read=_planning_judgments,
            help='UltraTool\'s planning evaluations ({"data": {"data": {"input", "reference"}, '
            '"init output"}, "eval": [{"Reasoning", "<Dimension> Score"}, ...]} per line, in '
            "the order of the planning test set).",
        )
    },
)
