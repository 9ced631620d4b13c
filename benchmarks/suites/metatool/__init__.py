"""MetaTool / ToolE (papers/000): does the model know when to use a tool, and which one?

importer.py reads the benchmark's published files; evaluate.py prompts, parses and scores
(the protocol in benchmarks/suites/protocol.py). The suite's public names are re-exported here.
"""

import sys as _sys

from benchmarks.suites.metatool.analyses import ANALYSES as _ANALYSES
from benchmarks.suites.metatool.context import item_context as _item_context
from benchmarks.suites.metatool.evaluate import *  # noqa: F403
from benchmarks.suites.metatool.exporter import EXPORTER as _EXPORTER
from benchmarks.suites.metatool.importer import *  # noqa: F403
from benchmarks.suites.metatool.native import *  # noqa: F403
from benchmarks.suites.metatool.native_messages import *  # noqa: F403
from benchmarks.suites.metatool.questions import MOTIVATION_QUESTIONS as _MOTIVATION
from benchmarks.suites.registry import Suite as _Suite

# The paper's human study of tools (section 3.2) is the motivation campaign's question set.
SUITE = _Suite(
    _sys.modules[__name__],
    item_context=_item_context,
    questions={"motivation": _MOTIVATION},
    exporter=_EXPORTER,
    analyses=_ANALYSES,
)
