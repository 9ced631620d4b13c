"""The simulator's diversity check (StableToolBench section 4.4): for sampled APIs, five calls
with different arguments, written by an LLM with the paper's Appendix H prompt, each answered
by the simulator afresh (not from the cache); an API whose answers to two different calls are
identical counts against diversity. The paper found 2 such APIs of 60."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from benchmarks.kit.protocol import CallFailed
from evaluation.models import VirtualApi
from evaluation.virtualapi import simulator
from evaluation.virtualapi.keys import ApiName, call_key, canonical_text
from evaluation.virtualapi.server import Call, Steps, simulate_call


@dataclass
class ApiDiversity:
    api: str
    calls: list[dict[str, Any]] = field(default_factory=list)
    responses: list[Any] = field(default_factory=list)
    note: str = ""

    @property
    def distinct_responses(self) -> int:
        return len({canonical_text(r) for r in self.responses})

    @property
    def identical(self) -> bool:
        """Two of its calls got the same answer."""
        return len(self.responses) >= 2 and self.distinct_responses < len(self.responses)

    def as_dict(self) -> dict[str, Any]:
        return {
            "api": self.api,
            "calls": len(self.calls),
            "answered": len(self.responses),
            "distinct_responses": self.distinct_responses,
            "identical": self.identical,
            "note": self.note,
        }


def apis_sample(count: int, seed: int) -> list[VirtualApi]:
    """A seeded sample of the APIs with documentation (the simulator needs it)."""
    documented = VirtualApi.objects.exclude(documentation={})
    ids = list(documented.order_by("id").values_list("id", flat=True))
    random.Random(seed).shuffle(ids)
    chosen = ids[:count]
    by_id = documented.in_bulk(chosen)
    return [by_id[pk] for pk in chosen]


async def calls_write(api: VirtualApi, steps: Steps, *, calls: int, attempts: int) -> list[dict]:
    """`calls` different argument sets for the API: the writer is shown those it already wrote
    as examples and asked for one more, at most `attempts` times in all."""
    written: list[dict[str, Any]] = []
    keys: set[str] = set()
    for _ in range(attempts):
        if len(written) >= calls:
            break
        text = await steps.simulate(simulator.call_writer_prompt(api.documentation, written))
        arguments = simulator.read_arguments(text)
        if arguments is None or call_key(arguments) in keys:
            continue
        keys.add(call_key(arguments))
        written.append(arguments)
    return written


async def diversity_check(
    apis: list[VirtualApi],
    steps: Steps,
    *,
    calls: int = 5,
    attempts: int = 15,
    progress: Callable[[int], Any] | None = None,
) -> list[ApiDiversity]:
    """Each API's calls and their simulated answers. A call the simulator does not answer
    (unavailable, or failing every attempt) adds no response: two missing answers are not two
    answers alike. The API's note says what is missing."""
    results = []
    for api in apis:
        entry = ApiDiversity(api=f"{api.tool}/{api.api}")
        notes = []
        try:
            entry.calls = await calls_write(api, steps, calls=calls, attempts=attempts)
            if len(entry.calls) < calls:
                notes.append(
                    f"the writer gave {len(entry.calls)} different calls in {attempts} tries"
                )
            name = ApiName(api.category, api.tool, api.api)
            for arguments in entry.calls:
                served = await simulate_call(
                    Call(name, arguments), api, call_key(arguments), steps, store=False
                )
                if served.source != "failed":
                    entry.responses.append(served.response)
        except CallFailed as exc:
            notes.append(f"the simulator failed: {exc}")
        if len(entry.responses) < len(entry.calls):
            notes.append(f"{len(entry.calls) - len(entry.responses)} calls not answered")
        entry.note = "; ".join(notes)
        results.append(entry)
        if progress:
            progress(1)
    return results


def summary(results: list[ApiDiversity]) -> dict[str, Any]:
    checked = [r for r in results if len(r.responses) >= 2]
    return {
        "apis": len(results),
        "checked": len(checked),
        "identical": sum(r.identical for r in checked),
        "details": [r.as_dict() for r in results],
    }


def summary_text(data: dict[str, Any]) -> str:
    lines = [
        f"{data['identical']} of {data['checked']} APIs gave the same answer to two different "
        f"calls ({data['apis'] - data['checked']} of {data['apis']} had fewer than two answered "
        "calls)."
    ]
    for row in data["details"]:
        flag = "SAME" if row["identical"] else "    "
        lines.append(
            f"  {flag} {row['api']:<60} {row['distinct_responses']} distinct of {row['answered']}"
            + (f"  ({row['note']})" if row["note"] else "")
        )
    return "\n".join(lines)
