"""What the evaluation commands share: finding a benchmark, reading key=value options, and the
one JSON shape they print."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from django.core.management.base import CommandError
from tqdm import tqdm

from benchmarks.kit.base import UnstorableNumber, json_loads_numbers_checked
from benchmarks.models import Benchmark
from config.numbers import id_or_none
from evaluation.models import Run
from evaluation.selectors import ordered_metrics, run_progress


def find_benchmark(value: str | None, suite: str | Sequence[str] | None = None) -> Benchmark:
    """By exact name or id; with only a suite (or the suites that can do what the command
    does, e.g. registry.suites_serving_cache()), their one benchmark (demo or not)."""
    suites = [suite] if isinstance(suite, str) else list(suite or [])
    suite = " or ".join(suites)
    if value:
        found = Benchmark.objects.filter(name=value).first()
        if found is None and (pk := id_or_none(value)) is not None:
            found = Benchmark.objects.filter(pk=pk).first()
        if found is None:
            names = ", ".join(Benchmark.objects.values_list("name", flat=True)) or "none"
            raise CommandError(f"no benchmark {value!r}; benchmarks: {names}")
        if suites and found.suite not in suites:
            raise CommandError(f"benchmark {found.name!r} is a {found.suite} benchmark")
        return found
    candidates = list(Benchmark.objects.filter(suite__in=suites)) if suites else []
    if len(candidates) == 1:
        return candidates[0]
    names = ", ".join(b.name for b in candidates) or "none"
    raise CommandError(f"name the benchmark with --benchmark (the {suite} benchmarks: {names})")


def key_values(pairs: list[str] | None, flag: str) -> dict[str, Any]:
    """`k=v` pairs; each value is read as JSON when it is JSON (0.7, true, [1,2]), else text."""
    result: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise CommandError(f"{flag} {pair!r}: expected key=value")
        try:
            # JSON's rule for numbers everywhere: no NaN, Infinity or 1e999 (jsonb refuses them)
            result[key.strip()] = json_loads_numbers_checked(raw)
        except UnstorableNumber as exc:
            raise CommandError(f"{flag} {pair!r}: {exc} cannot be stored") from None
        except ValueError:
            result[key.strip()] = raw
    return result


def run_summary(run: Run) -> dict[str, Any]:
    """{"run", "items", "metrics"} as the issue and README document it."""
    run.refresh_from_db()
    return {
        "run": run.pk,
        "items": run_progress(run)["total"],
        "metrics": dict(ordered_metrics(run)),
    }


STALL_HINT_SECONDS = 30


def follow(
    obj: Any,
    *,
    progress: Callable[[], dict[str, int]],
    settled: Sequence[str],
    unit: str,
    queue: str,
    stderr: Any,
    quiet: bool,
) -> None:
    """A progress bar until a run or job stops running, with a hint when nothing moves (the
    usual cause: no worker on the queue)."""
    bar = tqdm(total=progress()["total"], unit=f" {unit}", file=sys.stderr, disable=quiet)
    done, last_change, hinted = 0, time.monotonic(), False
    try:
        while True:
            obj.refresh_from_db(fields=["status"])
            counts = progress()
            now = sum(counts[status] for status in settled)
            if now != done:
                bar.update(now - done)
                if "failed" in counts:
                    bar.set_postfix(failed=counts["failed"], refresh=False)
                done, last_change = now, time.monotonic()
            if obj.status != "running":
                return
            if not hinted and time.monotonic() - last_change > STALL_HINT_SECONDS:
                hinted = True
                stderr.write(
                    f"No progress for {STALL_HINT_SECONDS} s: is a Celery worker running on the "
                    f"'{queue}' queue? (`make run` starts one.)"
                )
            time.sleep(0.25)
    finally:
        bar.close()
