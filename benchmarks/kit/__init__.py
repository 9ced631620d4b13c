"""What the benchmark suites share, pure (no Django): the evaluation protocol a suite implements
(protocol.py, native.py), the registry that finds suites and their capabilities (registry.py),
the imports' rules (base.py), judges (judging.py, generic_judges.py), analyses, item context,
exports and layouts, tool-call reading and JSON extraction. A suite lives in
`benchmarks/suites/<name>/`; nothing here names one."""
