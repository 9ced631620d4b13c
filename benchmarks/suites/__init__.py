"""The suites: one package per benchmark (`<name>/`, whose `SUITE` the registry lists), the
evaluation protocol they implement (protocol.py) and what they share (base, judging, toolcall,
predictions, embedding). Look a suite up with `benchmarks.suites.registry.get_suite`."""
