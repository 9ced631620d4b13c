"""The virtual API server (StableToolBench section 3.1): cache, real APIs, simulator."""
