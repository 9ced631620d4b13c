"""CPU seconds per item of the processes in eval_overhead.py's comparison, measured on a noisy
machine where wall time says little: the bare loop's processes against the platform's (its
workers, PostgreSQL, Redis, the launching script), and the fake endpoint's on each side.

    python perf/eval_cpu.py [--items 1000] [--pairs 2] [--tool-mode text|native]
                            [--profile DIR]

--profile runs every task under cProfile in the workers (perf/profiled_worker.py) and writes
DIR/worker-<pid>.prof. Uses eval_overhead.py's benchmark, prompts, bare loop and platform run
as they are, so the two scripts measure the same work.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from perf import eval_overhead as eo  # sets Django up, as the script does
from perf import honest


def thread_cpu(roots: list[int]) -> dict[str, float]:
    """CPU seconds so far of every thread under these processes, by thread name."""
    found: dict[str, float] = {}
    tree = honest.parents()
    for root in roots:
        for pid in honest.descendants(root, tree):
            for task in Path(f"/proc/{pid}/task").iterdir():
                name = "main" if task.name == str(pid) else "other threads"
                fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
                ticks = int(fields[11]) + int(fields[12])
                found[name] = round(found.get(name, 0) + ticks / os.sysconf("SC_CLK_TCK"), 2)
    return found


def children_cpu() -> float:
    t = os.times()
    return t.children_user + t.children_system


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency-ms", type=int, default=50)
    parser.add_argument("--tool-mode", choices=eo.TOOL_MODES, default="text")
    parser.add_argument("--profile", default="")
    honest.add_arguments(parser, time_limit=900)
    args = parser.parse_args()
    sys.exit(honest.within_time_limit(args, "eval_cpu.py", lambda: measure_all(args)))


def measure_all(args: argparse.Namespace) -> int | None:
    mode = eo.MODES[args.tool_mode]
    eo.call_command("migrate", verbosity=0, interactive=False)
    eo.redis.from_url(eo.settings.CELERY_BROKER_URL).flushdb()
    app = "config"
    if args.profile:
        os.environ["PERF_PROFILE_DIR"] = str(Path(args.profile).resolve())
        Path(args.profile).mkdir(parents=True, exist_ok=True)
        app = "perf.profiled_worker:app"
    with tempfile.TemporaryDirectory() as tmp:
        workers = [proc for proc, _log in eo.start_workers(2, Path(tmp), app)]
        try:
            benchmark = eo.build_benchmark(args.items, Path(tmp), mode)
            bodies = eo.requests_of(benchmark, mode)
            responder = (
                "gold:" + str(eo.oracle_file(bodies, Path(tmp)))
                if mode.name == "native"
                else "hash"
            )
            with eo.FakeOpenAIProcess(
                "--latency-ms", str(args.latency_ms), "--responder", responder
            ) as server:
                eo.Endpoint.objects.filter(name=mode.benchmark).delete()
                endpoint = eo.Endpoint.objects.create(
                    name=mode.benchmark,
                    base_url=server.base_url,
                    model="perf",
                    style=eo.Endpoint.Style.CHAT,
                    max_concurrency=args.concurrency,
                    timeout_seconds=30,
                )
                srv = eo.server_pids(server)
                services = eo.service_pids()
                wpids = [w.pid for w in workers]
                n = args.items
                print("per item, ms of CPU (pg/redis: PostgreSQL's and Redis's servers):")
                for pair in range(args.pairs):
                    eo.ResponseCache.objects.filter(model="perf").delete()
                    c0, s0 = children_cpu(), honest.tree_cpu(srv)
                    wall_b = eo.bare_loops(server.base_url, bodies, args.concurrency, 2)
                    bare = (children_cpu() - c0) * 1000 / n
                    srv_b = (honest.tree_cpu(srv) - s0) * 1000 / n
                    w0, p0, s0 = (
                        honest.tree_cpu(wpids),
                        honest.tree_cpu(services),
                        honest.tree_cpu(srv),
                    )
                    m0 = sum(honest.process_cpu(p) for p in wpids)
                    redis_pids = honest.pids_named("redis-server")
                    r0 = honest.tree_cpu(redis_pids)
                    me0 = time.process_time()
                    wall_p, _run = eo.platform(benchmark, endpoint, mode)
                    me = (time.process_time() - me0) * 1000 / n
                    work = (honest.tree_cpu(wpids) - w0) * 1000 / n
                    svc = (honest.tree_cpu(services) - p0) * 1000 / n
                    srv_p = (honest.tree_cpu(srv) - s0) * 1000 / n
                    mains = (sum(honest.process_cpu(p) for p in wpids) - m0) * 1000 / n
                    red = (honest.tree_cpu(redis_pids) - r0) * 1000 / n
                    print(
                        f"  of which the workers' main processes {mains:.2f}, redis {red:.2f};"
                        f" the workers' threads so far (s): {thread_cpu(wpids)}"
                    )
                    print(
                        f"pair {pair + 1}: bare {bare:.2f} (server {srv_b:.2f}, "
                        f"wall {wall_b:.2f} s)"
                        f" | platform workers {work:.2f} + pg/redis {svc:.2f} + launcher {me:.2f}"
                        f" = {work + svc + me:.2f} (server {srv_p:.2f}, wall {wall_p:.2f} s)"
                        f" | extra {work + svc + me - bare:.2f}",
                        flush=True,
                    )
        finally:
            eo._forget(mode.benchmark)
            eo.Endpoint.objects.filter(name=mode.benchmark).delete()
            for w in workers:
                w.terminate()
                w.wait(timeout=20)


if __name__ == "__main__":
    main()
