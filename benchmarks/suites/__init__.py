"""The registry of suites: one module per benchmark, each behind the protocol in `base.Suite`.

Adding a benchmark means adding a module here and one line to SUITE_MODULES.
"""

from __future__ import annotations

import importlib
from typing import cast

from benchmarks.suites.base import ImportFormatError, Suite

SUITE_MODULES: dict[str, str] = {
    "metatool": "benchmarks.suites.metatool",
    "mtubench": "benchmarks.suites.mtubench",
    "stabletoolbench": "benchmarks.suites.stabletoolbench",
    "ultratool": "benchmarks.suites.ultratool",
    "wtueval": "benchmarks.suites.wtueval",
    "generic": "benchmarks.suites.generic",
}


def suite_names() -> list[str]:
    return list(SUITE_MODULES)


def get_suite(name: str) -> Suite:
    try:
        module_path = SUITE_MODULES[name]
    except KeyError:
        raise ImportFormatError(
            f"unknown suite {name!r}; known suites: {', '.join(SUITE_MODULES)}"
        ) from None
    return cast(Suite, importlib.import_module(module_path))
