"""The benchmark suites, one package each (`<name>/`, whose `__init__.py` exposes `SUITE`), and
the one line per suite that registers it. What suites share is `benchmarks.kit`; look a suite up
with `benchmarks.kit.registry.get_suite`."""

SUITE_MODULES: dict[str, str] = {
    "metatool": "benchmarks.suites.metatool",
    "mtubench": "benchmarks.suites.mtubench",
    "stabletoolbench": "benchmarks.suites.stabletoolbench",
    "ultratool": "benchmarks.suites.ultratool",
    "wtueval": "benchmarks.suites.wtueval",
    "generic": "benchmarks.suites.generic",
    "bfcl": "benchmarks.suites.bfcl",
    "transcripts": "benchmarks.suites.transcripts",
}
