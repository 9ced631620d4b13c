"""The platform's overhead on a run, against a bare AsyncOpenAI loop, measured in the same run.

    python perf/eval_overhead.py [--items 2000] [--concurrency 32] [--latency-ms 50]
                                 [--workers 2] [--repeat 3] [--tool-mode text|native|both]
                                 [--bare-processes N] [--cpu-load N] [--results FILE]
                                 [--max-spread 0.15] [--max-others 0.25]

A local OpenAI-compatible server (tests/fake_openai.py, out of process) answers every request
after a fixed latency. Against it, in turn:

- bare: `openai.AsyncOpenAI` under a semaphore of `concurrency`, the same chat requests the
  platform sends (the generic suite's prompts for the same items), in as many processes as the
  platform has workers (--bare-processes, default --workers: forked before the clock, each an
  asyncio loop over its share of the items and of the concurrency), so both sides have the same
  processes and the same concurrency;
- platform: `run_launch` of those items on an endpoint with the same concurrency, answered by
  real Celery worker processes (started before the clock), timed from launch until the run's
  page is complete: its metrics AND its bootstrap intervals stored (the generic suite's metrics
  are plain means, whose intervals the finalize stores with them; a suite without that
  declaration gets them from a task of its own on the reports queue, after the run is done,
  and the clock waits for it just the same). Prompts, claims, the response cache,
  the shared Redis concurrency slots, every answer written to PostgreSQL as it arrives, scoring,
  metrics and intervals are all inside the clock. Because the clock stops only when the
  intervals are stored, no task of one pair is still running when the next bare loop starts;
- a second identical platform run, which must make no endpoint call (the response cache).

--tool-mode native measures native tool calling instead (both: text, then native, in one
invocation): the generic suite's tool_calls task over items that each offer three tools, the
platform's run launched with tool_mode=native, the bare loop sending the same bodies (the same
`tools` declared) and reading `message.tool_calls`; the server is an oracle (`gold:<file>`)
that answers each item with its gold call, so both sides get tool_calls back and the run scores
100.

Prints each pair and the machine's load while it ran (cores busy, ours, other processes'), then
per mode the medians, the ratio platform / bare (target: at most 1.10) and a verdict: a pass only
when the target is met and the measurement was not disturbed (perf/honest.py: the bare loop's
repeats spread over --max-spread, or other processes took over --max-others cores). Exit status:
0 pass, 1 missed, 3 disturbed. --cpu-load N starts N busy processes as a competing load. Uses
DATABASE_URL (or the embedded stack) and its own Redis database for the broker, so a running
`make run` worker takes none of its tasks.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DEBUG", "1")

from config.devstack import ensure_env  # noqa: E402

PERF_REDIS_DB = 14
urls = ensure_env()
os.environ["REDIS_URL"] = urlunsplit(urlsplit(urls["REDIS_URL"])._replace(path=f"/{PERF_REDIS_DB}"))

import django  # noqa: E402

django.setup()

import openai  # noqa: E402
import redis  # noqa: E402
from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402

from benchmarks.models import Benchmark  # noqa: E402
from benchmarks.services import benchmark_import  # noqa: E402
from evaluation.models import Endpoint, ResponseCache, Run  # noqa: E402
from evaluation.selectors import context_for, evaluator_for, item_of, sample_rows  # noqa: E402
from evaluation.services import run_launch  # noqa: E402
from perf import honest  # noqa: E402
from tests.fake_openai import FakeOpenAIProcess, ToolRequest  # noqa: E402
from tests.workers import QUEUES  # noqa: E402

BENCHMARK = "perf-eval-overhead"
TARGET_RATIO = 1.10
TOOL_MODES = ("text", "native")


@dataclass(frozen=True)
class Mode:
    """What one tool mode measures: the benchmark, its task and the run's options."""

    name: str  # "text" or "native"
    benchmark: str
    task: str
    options: dict[str, str]


MODES = {
    "text": Mode("text", BENCHMARK, "answer", {}),
    "native": Mode("native", f"{BENCHMARK}-native", "tool_calls", {"tool_mode": "native"}),
}

# The native items' tools: each item offers all three and its gold is one call of the first.
TOOLS = [
    {
        "name": "successor",
        "description": "The integer that comes right after n.",
        "parameters": {
            "type": "object",
            "properties": {"n": {"type": "integer", "description": "the number"}},
            "required": ["n"],
        },
    },
    {
        "name": "predecessor",
        "description": "The integer that comes right before n.",
        "parameters": {
            "type": "object",
            "properties": {"n": {"type": "integer", "description": "the number"}},
            "required": ["n"],
        },
    },
    {
        "name": "square",
        "description": "n multiplied by itself.",
        "parameters": {
            "type": "object",
            "properties": {"n": {"type": "number", "description": "the number"}},
            "required": ["n"],
        },
    },
]


def _line(mode: str, i: int) -> dict:
    if mode == "text":
        return {"id": i, "query": f"What number comes after {i}?", "answer": i + 1}
    return {
        "id": i,
        "query": f"What number comes after {i}?",
        "tools": TOOLS,
        "tool_calls": [{"name": "successor", "arguments": {"n": i}}],
    }


def _forget(name: str) -> None:
    # Leftovers of an interrupted earlier run (runs protect their benchmark).
    Run.objects.filter(benchmark__name=name).delete()
    Benchmark.objects.filter(name=name).delete()


def build_benchmark(items: int, folder: Path, mode: Mode = MODES["text"]) -> Benchmark:
    _forget(mode.benchmark)
    path = folder / f"questions-{mode.name}.jsonl"
    with path.open("w") as handle:
        for i in range(items):
            handle.write(json.dumps(_line(mode.name, i)) + "\n")
    benchmark_import(suite="generic", paths=[path], benchmark_name=mode.benchmark)
    return Benchmark.objects.get(name=mode.benchmark)


def requests_of(benchmark: Benchmark, mode: Mode = MODES["text"]) -> list[dict]:
    """The chat bodies the platform will send for these items (same prompts, same sizes; in
    native mode the native prompts, tools declared)."""
    evaluator = evaluator_for(benchmark)
    ctx = context_for(
        benchmark=benchmark,
        evaluator=evaluator,
        task=mode.task,
        shots=0,
        style="chat",
        seed=0,
        options=mode.options,
    )
    items = [item_of(row) for row in sample_rows(benchmark, ["default"])]
    if mode.name == "native":
        return [evaluator.native_prompt(item, ctx, {}).prompt.request("chat") for item in items]
    return [evaluator.build_prompt(item, ctx, {}).request("chat") for item in items]


def oracle_file(bodies: list[dict], folder: Path) -> Path:
    """The fake server's gold answers: each native request's user text -> its gold call."""
    answers = {}
    for i, body in enumerate(bodies):
        assert body.get("tools"), "a native request declares its tools"
        answers[ToolRequest.of(body).last_user] = [{"name": "successor", "arguments": {"n": i}}]
    assert len(answers) == len(bodies), "each item's request must be told apart"
    path = folder / "oracle.json"
    path.write_text(json.dumps(answers))
    return path


async def bare(
    base_url: str, bodies: list[dict], concurrency: int, ready: Callable[[], object] = lambda: None
) -> float:
    client = openai.AsyncOpenAI(base_url=base_url, api_key="unused", max_retries=0, timeout=30)
    gate = asyncio.Semaphore(concurrency)

    async def one(body: dict) -> str:
        async with gate:
            response = await client.chat.completions.create(model="perf", **body)
            message = response.choices[0].message
            if body.get("tools"):
                # Read the calls as the platform does: name and parsed arguments.
                calls = [
                    (call.function.name, json.loads(call.function.arguments))
                    for call in message.tool_calls or []
                ]
                return json.dumps(calls) if calls else ""
            return message.content or ""

    ready()
    start = time.perf_counter()
    answers = await asyncio.gather(*(one(body) for body in bodies))
    elapsed = time.perf_counter() - start
    await client.close()
    assert len(answers) == len(bodies) and all(answers)
    return elapsed


def _bare_shard(
    base_url: str, bodies: list[dict], concurrency: int, barrier: Any, results: Any
) -> None:
    try:
        asyncio.run(bare(base_url, bodies, concurrency, ready=barrier.wait))
        results.put("")
    except BaseException as exc:  # reported to the parent, which raises
        results.put(repr(exc))


def bare_loops(base_url: str, bodies: list[dict], concurrency: int, processes: int) -> float:
    """The bare baseline over `processes` processes (forked before the clock starts, as the
    platform's workers are), each an asyncio loop over its share of the items under its share of
    the concurrency (the shares add up to `concurrency`); timed from when all are ready until
    the last answer."""
    if processes <= 1:
        return asyncio.run(bare(base_url, bodies, concurrency))
    ctx = multiprocessing.get_context("fork")
    barrier, results = ctx.Barrier(processes + 1), ctx.Queue()
    children = [
        ctx.Process(
            target=_bare_shard,
            args=(
                base_url,
                bodies[index::processes],
                concurrency // processes + (index < concurrency % processes),
                barrier,
                results,
            ),
        )
        for index in range(processes)
    ]
    for child in children:
        child.start()
    barrier.wait()
    start = time.perf_counter()
    problems = [results.get(timeout=600) for _ in children]
    elapsed = time.perf_counter() - start
    for child in children:
        child.join(timeout=20)
    assert not any(problems), problems
    return elapsed


def platform(
    benchmark: Benchmark, endpoint: Endpoint, mode: Mode = MODES["text"]
) -> tuple[float, Run]:
    """Seconds from launch until the run's page is complete: done, its metrics and its
    bootstrap intervals stored (the intervals task runs after the run is done)."""
    start = time.perf_counter()
    run = run_launch(
        benchmark=benchmark,
        task=mode.task,
        endpoint=endpoint,
        split="default",
        options=dict(mode.options),
    )
    deadline = time.monotonic() + 900
    while True:
        row = Run.objects.filter(pk=run.pk).values("status", "metrics", "intervals").get()
        if row["status"] != Run.Status.RUNNING and row["status"] != Run.Status.DONE:
            break
        if row["status"] == Run.Status.DONE and (row["intervals"] or not row["metrics"]):
            break
        if time.monotonic() > deadline:
            raise SystemExit(f"run {run.pk} not complete after 900 s: {row['status']}")
        time.sleep(0.02)
    elapsed = time.perf_counter() - start
    assert row["status"] == Run.Status.DONE, row["status"]
    run.refresh_from_db()  # the metrics, for the checks
    return elapsed, run


def start_workers(count: int, log_dir: Path, app: str = "config") -> list:
    """`count` worker processes of one task at a time each, on every queue (the reports queue,
    where the intervals are computed, included), of the Celery `app` (perf/eval_cpu.py's
    profiling app wraps the project's); (process, log) pairs."""
    import subprocess

    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    procs = []
    for index in range(count):
        log = open(log_dir / f"worker-{index}.log", "wb")  # noqa: SIM115 - closed with the process
        procs.append(
            (
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "celery",
                        "-A",
                        app,
                        "worker",
                        "-Q",
                        QUEUES,
                        "--concurrency",
                        "1",
                        "-n",
                        f"perf{index}@%h",
                        "--without-gossip",
                        "--without-mingle",
                        "--without-heartbeat",
                        "-l",
                        "warning",
                    ],
                    cwd=ROOT,
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                ),
                log,
            )
        )
    time.sleep(3)  # workers import Django and connect before the clock starts
    for proc, log in procs:
        if proc.poll() is not None:
            raise SystemExit(f"a worker died at start; see {log.name}")
    return procs


def load() -> str:
    """The machine's 1-minute load average, and over how many cores."""
    return f"{os.getloadavg()[0]:.2f}/{os.cpu_count()}"


def measure(
    mode: Mode,
    args: argparse.Namespace,
    tmp: Path,
    workers: list,
    services: list[int],
    burner: list[int],
) -> list[honest.Result]:
    """--repeat pairs (bare, platform) in one tool mode, then a second identical platform run."""
    benchmark = build_benchmark(args.items, tmp, mode)
    bodies = requests_of(benchmark, mode)
    # Native: an oracle answering each item with its gold call, so both sides get tool_calls.
    responder = "gold:" + str(oracle_file(bodies, tmp)) if mode.name == "native" else "hash"
    name = mode.benchmark
    with FakeOpenAIProcess(
        "--latency-ms", str(args.latency_ms), "--responder", responder
    ) as server:
        Endpoint.objects.filter(name=name).delete()
        endpoint = Endpoint.objects.create(
            name=name,
            base_url=server.base_url,
            model="perf",
            style=Endpoint.Style.CHAT,
            max_concurrency=args.concurrency,
            timeout_seconds=30,
        )
        # The same number of processes on both sides (the comparison), in both modes.
        processes = args.bare_processes or len(workers)
        roots = [proc.pid for proc, _log in workers] + server_pids(server) + services
        try:
            bare_times, platform_times, loads = [], [], []
            print(
                f"\n{mode.name} mode: {args.items} items, concurrency {args.concurrency}, "
                f"{args.latency_ms} ms latency, {len(workers)} worker process(es), bare loop in "
                f"{processes} process(es); the platform's clock stops when its metrics and "
                "intervals are stored"
            )
            print(f"{'pair':>4} {'bare s':>8} {'platform s':>11} {'ratio':>6}  load")
            for attempt in range(args.repeat):
                # A cold cache for every pair: the platform must really call the endpoint.
                ResponseCache.objects.filter(model="perf").delete()
                server.reset()
                watch = honest.Watch(roots, burner).start()
                bare_times.append(bare_loops(server.base_url, bodies, args.concurrency, processes))
                bare_stats = server.stats()
                server.reset()
                seconds, run = platform(benchmark, endpoint, mode)
                loads.append(watch.stop())
                platform_times.append(seconds)
                stats = server.stats()
                calls = stats["total"]
                assert calls == args.items, f"the platform made {calls} calls"
                if mode.name == "native":
                    # Both sides declared tools on every request; the oracle's calls scored.
                    assert bare_stats["with_tools"] == args.items, bare_stats
                    assert stats["with_tools"] == args.items, stats
                    assert run.metrics.get("call_exact") == 100.0, run.metrics
                print(
                    f"{attempt + 1:>4} {bare_times[-1]:>8.2f} {seconds:>11.2f} "
                    f"{seconds / bare_times[-1]:>6.3f}  {loads[-1].text()}",
                    flush=True,
                )
            server.reset()
            again, rerun = platform(benchmark, endpoint, mode)
            calls_again = server.stats()["total"]
            bare_s, platform_s = statistics.median(bare_times), statistics.median(platform_times)
            load = honest.merge(loads)
            ratio = platform_s / bare_s
            reasons = honest.disturbed(
                bare_times, load.others, max_spread=args.max_spread, max_others=args.max_others
            )
            print(
                f"{mode.name} median: bare {bare_s:.2f} s, platform {platform_s:.2f} s, "
                f"ratio {ratio:.3f} (target <= {TARGET_RATIO:.2f})\n"
                f"second identical run: {again:.2f} s, {calls_again} endpoint call(s) "
                f"(target 0); metrics {(rerun.metrics == run.metrics and 'identical') or 'DIFFER'}"
            )
            cache_ok = calls_again == 0 and rerun.metrics == run.metrics
            met = ratio <= TARGET_RATIO and cache_ok
            result = honest.Result(
                script="eval_overhead.py",
                measured=f"evaluation overhead, {mode.name} mode ({args.items} items, "
                f"concurrency {args.concurrency}, {len(workers)} workers vs {processes} bare "
                "processes; platform clock to metrics and intervals stored)",
                value=f"{platform_s:.2f} s",
                baseline=f"{bare_s:.2f} s (bare AsyncOpenAI loop)",
                ratio=f"{ratio:.2f}x (pairs {pairs_text(platform_times, bare_times)})",
                target=f"<= {TARGET_RATIO:.2f}x; a second identical run makes 0 calls",
                verdict=honest.verdict(met, reasons),
                load=load.text(),
                command=honest.command_line(),
                notes=[*reasons, f"second identical run {again:.2f} s, {calls_again} call(s)"],
            )
            result.print()
            return [result]
        finally:
            _forget(mode.benchmark)
            Endpoint.objects.filter(name=name).delete()
            ResponseCache.objects.filter(model="perf").delete()


def pairs_text(platform_times: list[float], bare_times: list[float]) -> str:
    return ", ".join(f"{p / b:.2f}" for p, b in zip(platform_times, bare_times, strict=True))


def server_pids(server: FakeOpenAIProcess) -> list[int]:
    """The fake endpoint's process (its CPU is part of what both sides measure)."""
    return [server.process.pid] if server.process is not None else []


def service_pids() -> list[int]:
    """PostgreSQL (when local) and Redis: their CPU is the platform's work, not a disturbance
    (other engineers' use of the same servers counts as ours too; the load average shows it)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        postmaster = honest.postmaster_of(cursor.fetchone()[0])
    return ([postmaster] if postmaster else []) + honest.pids_named("redis-server")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency-ms", type=int, default=50)
    parser.add_argument("--workers", type=int, default=2, help="worker processes")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--tool-mode",
        choices=(*TOOL_MODES, "both"),
        default="text",
        help="text: the benchmark's text prompts (the default); native: tools declared, "
        "tool_calls read (tool_mode=native); both: text, then native",
    )
    parser.add_argument(
        "--bare-processes",
        type=int,
        default=0,
        help="processes of the bare loop (default: as many as --workers, in both modes)",
    )
    honest.add_arguments(parser, time_limit=900)
    args = parser.parse_args()
    sys.exit(honest.within_time_limit(args, "eval_overhead.py", lambda: measure_all(args)))


def measure_all(args: argparse.Namespace) -> int | None:
    modes = TOOL_MODES if args.tool_mode == "both" else (args.tool_mode,)
    call_command("migrate", verbosity=0, interactive=False)
    redis.from_url(settings.CELERY_BROKER_URL).flushdb()
    print(f"load before: {load()} (1-minute load average / cores)")
    results: list[honest.Result] = []
    with tempfile.TemporaryDirectory() as tmp, honest.CpuLoad(args.cpu_load) as burner:
        if args.cpu_load:
            print(f"competing load: {len(burner.pids)} busy process(es) (--cpu-load)")
        workers = start_workers(args.workers, Path(tmp))
        try:
            for name in modes:
                results += measure(
                    MODES[name], args, Path(tmp), workers, service_pids(), burner.pids
                )
        finally:
            for proc, log in workers:
                proc.terminate()
                proc.wait(timeout=20)
                log.close()
    print(f"load after: {load()}")
    honest.results_append(args.results, results)
    return honest.exit_status(r.verdict for r in results)


if __name__ == "__main__":
    main()
