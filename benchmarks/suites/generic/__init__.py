"""Generic JSON Lines: a researcher's own tool-use questions, in a format of this platform.

importer.py reads the benchmark's published files; evaluate.py prompts, parses and scores
(the protocol in benchmarks/kit/protocol.py); tasks.py composes each task of its parts. The
suite's public names are re-exported here.
"""

from benchmarks.kit.registry import Suite as _Suite
from benchmarks.suites.generic import importer as _importer
from benchmarks.suites.generic.analyses import ANALYSES as _ANALYSES
from benchmarks.suites.generic.evaluate import *  # noqa: F403
from benchmarks.suites.generic.exporter import EXPORTER as _EXPORTER
from benchmarks.suites.generic.gold import GOLD as _GOLD
from benchmarks.suites.generic.importer import *  # noqa: F403
from benchmarks.suites.generic.native import *  # noqa: F403
from benchmarks.suites.generic.tasks import EVALUATION as _EVALUATION

SUITE = _Suite(
    name=_importer.name,
    default_benchmark=_importer.default_benchmark,
    import_files=_importer.import_files,
    evaluation=_EVALUATION,
    conformance=f"{__name__}.conformance",
    gold=_GOLD,
    exporter=_EXPORTER,
    analyses=_ANALYSES,
)
