"""The platform's overhead on a run, against a bare AsyncOpenAI loop, measured in the same run.

    python perf/eval_overhead.py [--items 2000] [--concurrency 32] [--latency-ms 50]
                                 [--workers 2] [--repeat 3] [--tool-mode text|native|both]
                                 [--bare-processes N]

A local OpenAI-compatible server (tests/fake_openai.py, out of process) answers every request
after a fixed latency. Against it, in turn:

- bare: one asyncio loop, `openai.AsyncOpenAI`, a semaphore of `concurrency`, the same chat
  requests the platform sends (the generic suite's prompts for the same items);
- platform: `run_launch` of those items on an endpoint with the same concurrency, answered by
  real Celery worker processes (started before the clock), timed from launch until the run's
  metrics are stored: prompts, claims, the response cache, the shared Redis concurrency slots,
  every answer written to PostgreSQL as it arrives, scoring and the run's metrics;
- a second identical platform run, which must make no endpoint call (the response cache).

--tool-mode native measures native tool calling instead (both: text, then native, in one
invocation): the generic suite's tool_calls task over items that each offer three tools, the
platform's run launched with tool_mode=native, the bare loop sending the same bodies (the same
`tools` declared) and reading `message.tool_calls`; the server is an oracle (`gold:<file>`)
that answers each item with its gold call, so both sides get tool_calls back and the run scores
100.

The platform's calls are spread over --workers processes; in native mode the bare loop is too
(--bare-processes, default --workers: that many forked processes, each an asyncio loop over its
share of the items and of the concurrency), so both sides have the same processes and the same
concurrency. Text mode keeps one bare process unless --bare-processes says otherwise.

Prints both times and the ratio platform / bare (target: at most 1.15), and the machine's load
(1-minute load average over its cores) after each pair. Machines are noisy: the median of
--repeat pairs is shown. Uses DATABASE_URL (or the embedded stack) and its own Redis
database for the broker, so a running `make run` worker takes none of its tasks.
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
from tests.fake_openai import FakeOpenAIProcess, ToolRequest  # noqa: E402
from tests.workers import QUEUES  # noqa: E402

BENCHMARK = "perf-eval-overhead"
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
    start = time.perf_counter()
    run = run_launch(
        benchmark=benchmark,
        task=mode.task,
        endpoint=endpoint,
        split="default",
        options=dict(mode.options),
    )
    while True:
        run.refresh_from_db(fields=["status"])
        if run.status != Run.Status.RUNNING:
            break
        time.sleep(0.02)
    elapsed = time.perf_counter() - start
    assert run.status == Run.Status.DONE, run.status
    run.refresh_from_db()  # the metrics, for the checks (the loop above reads only the status)
    return elapsed, run


def start_workers(count: int, log_dir: Path) -> list:
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
                        "config",
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


def measure(mode: Mode, args: argparse.Namespace, tmp: Path, workers: int) -> None:
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
        # Native: the bare loop in as many processes as the platform has workers (the issue's
        # comparison); text: one process, as this script has always measured, unless told.
        processes = args.bare_processes or (workers if mode.name == "native" else 1)
        try:
            bare_times, platform_times, loads = [], [], []
            print(
                f"\n{mode.name} mode: {args.items} items, concurrency {args.concurrency}, "
                f"{args.latency_ms} ms latency, {workers} worker process(es), bare loop in "
                f"{processes} process(es)"
            )
            print(f"{'pair':>4} {'bare s':>8} {'platform s':>11} {'ratio':>6} {'load':>8}")
            for attempt in range(args.repeat):
                # A cold cache for every pair: the platform must really call the endpoint.
                ResponseCache.objects.filter(model="perf").delete()
                server.reset()
                bare_times.append(bare_loops(server.base_url, bodies, args.concurrency, processes))
                bare_stats = server.stats()
                server.reset()
                seconds, run = platform(benchmark, endpoint, mode)
                platform_times.append(seconds)
                stats = server.stats()
                calls = stats["total"]
                assert calls == args.items, f"the platform made {calls} calls"
                if mode.name == "native":
                    # Both sides declared tools on every request; the oracle's calls scored.
                    assert bare_stats["with_tools"] == args.items, bare_stats
                    assert stats["with_tools"] == args.items, stats
                    assert run.metrics.get("call_exact") == 100.0, run.metrics
                loads.append(load())
                print(
                    f"{attempt + 1:>4} {bare_times[-1]:>8.2f} {seconds:>11.2f} "
                    f"{seconds / bare_times[-1]:>6.3f} {loads[-1]:>8}"
                )
            server.reset()
            again, rerun = platform(benchmark, endpoint, mode)
            calls_again = server.stats()["total"]
            bare_s, platform_s = statistics.median(bare_times), statistics.median(platform_times)
            print(
                f"{mode.name} median: bare {bare_s:.2f} s, platform {platform_s:.2f} s, "
                f"ratio {platform_s / bare_s:.3f} (target <= 1.15); "
                f"load (1 min, of {os.cpu_count()} cores) {', '.join(loads)}\n"
                f"second identical run: {again:.2f} s, {calls_again} endpoint call(s) "
                f"(target 0); metrics {(rerun.metrics == run.metrics and 'identical') or 'DIFFER'}"
            )
        finally:
            _forget(mode.benchmark)
            Endpoint.objects.filter(name=name).delete()
            ResponseCache.objects.filter(model="perf").delete()


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
        help="processes of the bare loop (default: as many as --workers in native mode, one "
        "in text mode)",
    )
    args = parser.parse_args()
    modes = TOOL_MODES if args.tool_mode == "both" else (args.tool_mode,)
    call_command("migrate", verbosity=0, interactive=False)
    redis.from_url(settings.CELERY_BROKER_URL).flushdb()
    print(f"load before: {load()} (1-minute load average / cores)")
    with tempfile.TemporaryDirectory() as tmp:
        workers = start_workers(args.workers, Path(tmp))
        try:
            for name in modes:
                measure(MODES[name], args, Path(tmp), args.workers)
        finally:
            for proc, log in workers:
                proc.terminate()
                proc.wait(timeout=20)
                log.close()
    print(f"load after: {load()}")


if __name__ == "__main__":
    main()
