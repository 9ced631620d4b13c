"""StableToolBench (papers/002): ToolBench's solvable queries over RapidAPI tools, answered
by an agent against a virtual API server and judged by an LLM.

importer.py reads the benchmark's published files; evaluate.py parses and scores (the protocol
in benchmarks/suites/protocol.py); agent.py solves a query with a ReAct loop over the virtual API
server (`solve`). The suite's public names are re-exported here.
"""

from benchmarks.suites.stabletoolbench.agent import *  # noqa: F403
from benchmarks.suites.stabletoolbench.evaluate import *  # noqa: F403
from benchmarks.suites.stabletoolbench.importer import *  # noqa: F403
