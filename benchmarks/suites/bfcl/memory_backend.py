"""BFCL's memory backends, executed: its `MemoryAPI_kv` and `MemoryAPI_rec_sum`, in a worker.

The classes are BFCL's own, imported from the pinned `bfcl-eval` wheel by multi_turn.load_classes
(its stand-in packages: no `__init__` of bfcl_eval runs). Beyond the standard library they import
`rank_bm25` (and through it numpy; kv's key search), `overrides` and, through
`memory_api_metaclass.py`, `bfcl_eval.utils` with its `bfcl_eval.constants` modules and
`filelock`: requirements.txt has them. `constants/eval_config.py` makes three folders under
`BFCL_PROJECT_ROOT` when it is imported, and the classes write their memory snapshots under the
folder they are given: the worker points both at a scratch folder of its own, removed when it
ends. The vector backend (`MemoryAPI_vector`: faiss, sentence-transformers) is never loaded.

A memory entry runs as BFCL's handlers run it (`base_handler.py`, `utils.py`): per entry a fresh
instance, loaded with `_load_scenario({"model_result_dir", "scenario", "test_id",
"test_category"})`, which starts empty for the first prerequisite entry (an id ending in "-0")
and otherwise loads the scenario's latest snapshot (`<scenario>_final.json`); after each
prerequisite entry `_flush_memory_to_local_file()` writes that snapshot, so it is carried to
the next prerequisite entry and then to each question of the scenario (a question's own calls
are never flushed). The ids are BFCL's as its loader rewrites them: "memory" replaced by
"memory_<backend>" (`memory_prereq_3-student-0` -> `memory_kv_prereq_3-student-0`), since the
classes read the prerequisite and first-entry marks, and the snapshot folder, from them.

`MemorySession` is the worker kept open for a solve loop (a WorkerSession running this module):
`load(test_id)` starts the entry's instance and gives the memory text BFCL puts in the system
prompt (`_dump_core_memory_to_context`); `call` executes a step's calls as multi_turn does
(parsed, never `eval`ed; a method's failure is its observation); `flush()` writes the snapshot
and gives it back (the JSON BFCL writes). The worker limits its own CPU time and address space
first, as multi_turn's does; anything the classes print goes to stderr, never into the answers.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from benchmarks.kit.stateful import Instances, Session
from benchmarks.suites.bfcl.multi_turn import (
    LoadError,
    MultiTurnEntry,
    WorkerLimits,
    WorkerSession,
    _entry_parts,
    _load_for,
    _model_calls,
    call_arguments,
)

__all__ = [
    "BACKEND_CLASSES",
    "MEMORY_MODULES",
    "MemorySession",
    "bfcl_id",
]

# The backends the platform runs, each BFCL's class name and its module (func_source_code/).
BACKEND_CLASSES = {"kv": "MemoryAPI_kv", "rec_sum": "MemoryAPI_rec_sum"}
MEMORY_MODULES = {"MemoryAPI_kv": "memory_kv", "MemoryAPI_rec_sum": "memory_rec_sum"}
WORKER = "benchmarks.suites.bfcl.memory_backend"


def bfcl_id(entry_id: str, backend: str) -> str:
    """The id BFCL's loader gives a memory entry run with `backend`: every "memory" in it
    replaced by "memory_<backend>" (`process_memory_test_case`)."""
    return entry_id.replace("memory", f"memory_{backend}")


class MemorySession(WorkerSession):
    """One memory item's backend in a worker (see the module docstring)."""

    def __init__(
        self,
        source: Path,
        backend: str,
        scenario: str,
        limits: WorkerLimits | None = None,
    ) -> None:
        class_name = BACKEND_CLASSES.get(backend)
        if class_name is None:
            raise LoadError(f"no memory backend {backend!r} runs here; known: kv, rec_sum")
        entry = MultiTurnEntry(
            id=f"memory_{backend}:{scenario}",
            category=f"memory_{backend}",
            involved_classes=(class_name,),
            initial_config={},
            ground_truth=(),
        )
        super().__init__(
            source,
            entry,
            limits or WorkerLimits(),
            MEMORY_MODULES,
            worker=WORKER,
            extra={"memory": {"scenario": scenario}},
        )

    def load(self, test_id: str) -> str:
        """A fresh instance for the entry `test_id` (BFCL's id), loaded as BFCL loads it; the
        memory text for the system prompt back."""
        answer = self.ask({"op": "load", "test_id": test_id})
        if "error" in answer:
            raise LoadError(str(answer["error"]))
        return str(answer.get("context", ""))

    def flush(self) -> dict[str, Any]:
        """The entry's memory written as BFCL writes it after a prerequisite entry; its JSON."""
        answer = self.ask({"op": "flush"})
        snapshot = answer.get("snapshot")
        return dict(snapshot) if isinstance(snapshot, Mapping) else {}


# --- the worker ---------------------------------------------------------------------------------


def _answer(out: IO[str], value: Mapping[str, Any]) -> None:
    out.write(json.dumps(value, ensure_ascii=False, default=str) + "\n")
    out.flush()


def _serve() -> int:
    """The worker: a request line, then one line per operation (load, call, flush)."""
    out = sys.stdout
    sys.stdout = sys.stderr  # the classes print warnings; the answers alone go to `out`
    request = json.loads(sys.stdin.readline())
    scenario = str((request.get("memory") or {}).get("scenario", ""))
    with tempfile.TemporaryDirectory(prefix="bfcl-memory-") as scratch:
        os.environ["BFCL_PROJECT_ROOT"] = scratch
        for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[variable] = "1"
        try:
            entry, classes = _load_for(request)
        except LoadError as exc:
            _answer(out, {"error": str(exc)})
            return 2
        class_name = entry.involved_classes[0]
        toolset, signatures = _entry_parts(classes, entry)
        session: Session[Instances] | None = None
        instance: Any = None
        _answer(out, {"ready": True})
        for line in sys.stdin:
            operation = json.loads(line)
            op = operation.get("op")
            if op == "load":
                test_id = str(operation.get("test_id", ""))
                instance = classes[class_name]()
                instance._load_scenario(
                    {
                        "model_result_dir": Path(scratch),
                        "scenario": scenario,
                        "test_id": test_id,
                        "test_category": test_id.rsplit("_", 1)[0],
                    }
                )
                session = Session(toolset, {class_name: instance})
                _answer(out, {"context": instance._dump_core_memory_to_context()})
            elif session is None:
                _answer(out, {"error": f"{op!r} before any entry was loaded"})
            elif op == "begin_turn":
                session.begin_turn()
                _answer(out, {"turn": len(session.turns) - 1})
            elif op == "end_turn":
                session.end_turn()
                _answer(out, {"turn": len(session.turns) - 1})
            elif op == "call":
                calls, refused = _model_calls([operation.get("calls", [])])
                observations = [
                    session.call(name, call_arguments(signatures.get(name), a, k)).observation
                    for name, (a, k) in calls
                ]
                _answer(out, {"observations": observations, "refused": refused})
            elif op == "flush":
                instance._flush_memory_to_local_file()
                with open(instance.latest_snapshot_file, encoding="utf-8") as handle:
                    _answer(out, {"snapshot": json.load(handle)})
            else:
                _answer(out, {"error": f"unknown operation {op!r}"})
    return 0


if __name__ == "__main__":
    sys.exit(_serve() if "--serve" in sys.argv[1:] else 2)
