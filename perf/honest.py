"""What every perf script needs to report a figure it can stand behind: the machine's load while
it measured, whether its baseline was disturbed, a competing load it can start itself, and one
result row per target for the table `make perf` writes.

Pure standard library (no Django): the scripts import it before Django is set up, and its rules
are tested with hand cases (tests/perf/test_honest.py).

Disturbed, the rule every script applies before it reports a pass:
- its baseline's repeats spread more than MAX_SPREAD (max - min over the median): the baseline
  itself did not hold still, so a ratio to it means little; or
- other processes (not this script, its children, or the servers it measures) took more than
  MAX_OTHERS cores on average while it measured: it shared the machine.
A disturbed measurement is printed with its reasons and never reported as a pass; its exit status
is 3 (2 is argparse's, 1 a missed target or a failed check).

Every script runs under a time limit (`--time-limit SECONDS`, each script's own default; see
`within_time_limit`): a script still working when it expires is stopped, cleans up, and leaves a
result marked TIMEOUT (a failure: exit status 1) that names the limit and what it was doing,
never silence.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import platform
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

MAX_SPREAD = 0.15
MAX_OTHERS = 0.25  # cores
TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

EXIT_PASS, EXIT_MISSED, EXIT_DISTURBED = 0, 1, 3


# --- reading the machine ------------------------------------------------------------------------


def machine_cpu(stat: str | None = None) -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot, from /proc/stat's first line
    (iowait counts as idle)."""
    text = stat if stat is not None else Path("/proc/stat").read_text()
    values = [int(v) for v in text.split("\n", 1)[0].split()[1:9]]
    idle = values[3] + values[4]
    return (sum(values) - idle) / TICK, sum(values) / TICK


def process_cpu(pid: int, *, reaped: bool = False) -> float:
    """CPU seconds of one process (utime + stime), and with `reaped` those of its children it
    has waited for (cutime + cstime); 0 when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = int(fields[11]) + int(fields[12])
    if reaped:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / TICK


def parents() -> dict[int, int]:
    """pid -> parent pid of every live process."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            found[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    return found


def descendants(root: int, tree: dict[int, int]) -> set[int]:
    """`root` and every live process below it."""
    children: dict[int, list[int]] = {}
    for pid, parent in tree.items():
        children.setdefault(parent, []).append(pid)
    seen, stack = {root}, [root]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return seen


def tree_cpu(roots: Iterable[int]) -> float:
    """CPU seconds of these processes and everything below them, live or reaped."""
    tree = parents()
    pids: set[int] = set()
    for root in roots:
        pids |= descendants(root, tree)
    # A root's reaped children are in its cutime; a live child's own reaped ones in its own.
    return sum(process_cpu(pid, reaped=True) for pid in pids)


def postmaster_of(backend_pid: int) -> int | None:
    """The PostgreSQL server's pid, from one of its backends' (None when it is not on this
    machine)."""
    try:
        stat = Path(f"/proc/{backend_pid}/stat").read_text()
        if "postgres" not in Path(f"/proc/{backend_pid}/cmdline").read_text():
            return None
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])


def pids_named(name: str) -> list[int]:
    """Live processes whose command name is `name` (e.g. redis-server, the broker and cache)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                comm = (entry / "comm").read_text().strip()
            except OSError:
                continue
            if comm == name:
                found.append(int(entry.name))
    return found


def loadavg(text: str | None = None) -> float:
    """The 1-minute load average."""
    source = text if text is not None else Path("/proc/loadavg").read_text()
    return float(source.split()[0])


@dataclass
class Load:
    """The machine while something was measured: its cores, wall seconds, the whole machine's
    busy CPU, ours (this script's processes and the servers it measures), the competing load it
    started itself (--cpu-load), and the 1-minute load average before and after."""

    cores: int
    seconds: float
    busy: float
    ours: float
    burner: float
    load_before: float
    load_after: float

    @property
    def others(self) -> float:
        """Cores other processes took on average (never below zero: /proc counts in ticks)."""
        if self.seconds <= 0:
            return 0.0
        return max(0.0, self.busy - self.ours - self.burner) / self.seconds

    def text(self) -> str:
        per = self.seconds or math.nan
        burner = f", competing load we started {self.burner / per:.2f}" if self.burner else ""
        return (
            f"machine {self.busy / per:.2f} of {self.cores} cores busy over {self.seconds:.1f} s"
            f" (ours {self.ours / per:.2f}{burner}, other processes {self.others:.2f});"
            f" load average {self.load_before:.2f} -> {self.load_after:.2f}"
        )


class Watch:
    """Measures the machine between `start()` and `stop()`. `roots` are the pids whose process
    trees are ours (this script by default; add servers it started, PostgreSQL's postmaster
    when it is local); `burner` the competing load's pids."""

    def __init__(self, roots: Sequence[int] = (), burner: Sequence[int] = ()) -> None:
        self.roots = [os.getpid(), *roots]
        self.burner = list(burner)

    def start(self) -> Watch:
        self.t0 = time.perf_counter()
        self.load0 = loadavg()
        self.busy0 = machine_cpu()[0]
        self.ours0 = tree_cpu(self.roots)
        self.burner0 = tree_cpu(self.burner) if self.burner else 0.0
        return self

    def stop(self) -> Load:
        seconds = time.perf_counter() - self.t0
        busy = machine_cpu()[0] - self.busy0
        ours = tree_cpu(self.roots) - self.ours0
        burner = (tree_cpu(self.burner) - self.burner0) if self.burner else 0.0
        return Load(
            cores=os.cpu_count() or 1,
            seconds=seconds,
            busy=busy,
            ours=ours,
            burner=burner,
            load_before=self.load0,
            load_after=loadavg(),
        )


def merge(loads: Sequence[Load]) -> Load:
    """Several measured stretches as one (sums; the first load average before, the last after)."""
    return Load(
        cores=loads[0].cores,
        seconds=sum(x.seconds for x in loads),
        busy=sum(x.busy for x in loads),
        ours=sum(x.ours for x in loads),
        burner=sum(x.burner for x in loads),
        load_before=loads[0].load_before,
        load_after=loads[-1].load_after,
    )


# --- the rule -----------------------------------------------------------------------------------


def spread(values: Sequence[float]) -> float:
    """(max - min) / median; 0 for fewer than two values."""
    if len(values) < 2:
        return 0.0
    middle = statistics.median(values)
    return (max(values) - min(values)) / middle if middle else math.inf


def disturbed(
    baseline: Sequence[float],
    others: float,
    *,
    max_spread: float = MAX_SPREAD,
    max_others: float = MAX_OTHERS,
) -> list[str]:
    """Why a measurement cannot be trusted (empty when it can): its baseline's repeats spread
    over `max_spread`, or other processes took over `max_others` cores while it ran."""
    reasons = []
    if len(baseline) >= 2 and spread(baseline) > max_spread:
        shown = ", ".join(f"{v:.4g}" for v in baseline)
        reasons.append(
            f"baseline repeats spread {spread(baseline):.0%} (> {max_spread:.0%}): {shown}"
        )
    if others > max_others:
        reasons.append(f"other processes took {others:.2f} cores (> {max_others:.2f})")
    return reasons


TIMEOUT = "TIMEOUT"


def verdict(met: bool, reasons: Sequence[str]) -> str:
    """'pass', 'MISSED', or, when disturbed, never a pass: 'disturbed' (met, but not to be
    trusted) or 'MISSED (disturbed)'."""
    if reasons:
        return "disturbed" if met else "MISSED (disturbed)"
    return "pass" if met else "MISSED"


def exit_status(verdicts: Iterable[str]) -> int:
    """A missed target or a timeout outweighs a disturbance; only all-pass exits 0."""
    found = list(verdicts)
    if any(v.startswith(("MISSED", TIMEOUT)) for v in found):
        return EXIT_MISSED
    if any(v != "pass" for v in found):
        return EXIT_DISTURBED
    return EXIT_PASS


# --- a competing load ---------------------------------------------------------------------------

BURN = "import time\nwhile True:\n    time.process_time()\n"


class CpuLoad:
    """`cores` processes that each keep one core busy (the issue's 'another process holds one
    core busy'), started by the script itself and stopped by pid."""

    def __init__(self, cores: float) -> None:
        self.cores = cores
        self.procs: list[subprocess.Popen[bytes]] = []

    def __enter__(self) -> CpuLoad:
        for _ in range(math.ceil(self.cores)):
            self.procs.append(
                subprocess.Popen([sys.executable, "-c", BURN], start_new_session=True)
            )
        return self

    @property
    def pids(self) -> list[int]:
        return [proc.pid for proc in self.procs]

    def __exit__(self, *exc: object) -> None:
        for proc in self.procs:
            proc.kill()
            proc.wait(timeout=10)


# --- the options every script has ----------------------------------------------------------------


def add_arguments(parser: Any, *, time_limit: float) -> None:
    """--results, --cpu-load, --max-spread, --max-others and --time-limit (argparse), the last
    with this script's default (seconds of wall time for the whole script, setup included)."""
    parser.add_argument(
        "--time-limit",
        type=float,
        default=time_limit,
        help="stop after this many seconds of wall time, clean up and report a TIMEOUT result"
        f" (default {time_limit:g})",
    )
    parser.add_argument(
        "--results", default="", help="append the results as JSON lines to this file (make perf)"
    )
    parser.add_argument(
        "--cpu-load",
        type=float,
        default=0,
        help="start this many processes that each keep one core busy while measuring (a "
        "competing load, counted apart from other processes)",
    )
    parser.add_argument(
        "--max-spread",
        type=float,
        default=MAX_SPREAD,
        help="baseline repeats spreading more than this (max-min over median) are disturbed",
    )
    parser.add_argument(
        "--max-others",
        type=float,
        default=MAX_OTHERS,
        help="other processes taking more cores than this on average are a disturbance",
    )


def command_line(argv: Sequence[str] | None = None) -> str:
    """How the script was started, as a `./dev python ...` command (without --results, where
    its output went)."""
    args = list(sys.argv if argv is None else argv)
    script = Path(args[0])
    name = f"perf/{script.name}" if script.parent.name == "perf" else str(script)
    kept: list[str] = []
    rest = iter(args[1:])
    for arg in rest:
        if arg == "--results":
            next(rest, None)
        elif not arg.startswith("--results="):
            kept.append(arg)
    return " ".join(["./dev python", name, *kept])


# --- the time limit -----------------------------------------------------------------------------


class OutOfTime(SystemExit):
    """Raised in the main thread when the time limit expires. A SystemExit, so that no
    `except Exception` swallows it, every `finally` and context manager on the way out cleans up
    (servers stopped, rows deleted), and psycopg cancels the query it is waiting for in the
    server instead of leaving it running there."""

    def __init__(self, limit: float) -> None:
        super().__init__(EXIT_MISSED)
        self.limit = limit


_DOING = ["starting"]


def doing(what: str) -> None:
    """Say what the script is doing now: a timeout's result names it ("setup: 1,000,000
    predictions", "repeat 2 of 3: the export")."""
    _DOING[0] = what
    print(f"[{time.strftime('%H:%M:%S')}] {what}", flush=True)


def timeout_result(script: str, limit: float, what: str, seconds: float) -> Result:
    """The result of a script stopped by its time limit: a failure, with the limit and what
    was running."""
    return Result(
        script=script,
        measured=f"(stopped by its time limit while running: {what})",
        value=f"did not finish in {seconds:.0f} s",
        baseline="-",
        ratio="-",
        target=f"finish within --time-limit {limit:g} s",
        verdict=TIMEOUT,
        load="-",
        command=command_line(),
        notes=[f"time limit of {limit:g} s expired while running: {what}"],
    )


def _kill_descendants() -> None:
    """SIGKILL every process this script started (by pid, below it in the process tree)."""
    me = os.getpid()
    for pid in descendants(me, parents()) - {me}:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def within_time_limit(
    args: Any, script: str, work: Callable[[], int | None], *, grace: float = 60.0
) -> int:
    """Run `work()` (the script's whole measuring, setup and cleanup included) under
    `args.time_limit` seconds of wall time and return its exit status (None is 0).

    On expiry a watchdog thread writes a TIMEOUT result (timeout_result) to `args.results` and
    prints it at once, so that it exists whatever happens next; then it interrupts the main
    thread with OutOfTime, whose unwinding stops the measured work and runs the script's own
    cleanup, and this returns EXIT_MISSED. If the cleanup has not finished `grace` seconds
    later, the processes the script started are killed and the script exits with EXIT_MISSED.
    A SystemExit from `work` (a script's own sys.exit) passes through."""
    limit = float(args.time_limit)
    started = time.perf_counter()
    finished = threading.Event()
    expired = threading.Event()
    main = threading.main_thread().ident

    def interrupt(signum: int, frame: Any) -> None:
        if not finished.is_set():
            raise OutOfTime(limit)

    def watchdog() -> None:
        if finished.wait(limit):
            return
        expired.set()
        result = timeout_result(script, limit, _DOING[0], time.perf_counter() - started)
        result.print()
        results_append(args.results, [result])
        if main is not None:
            signal.pthread_kill(main, signal.SIGALRM)
        if finished.wait(grace):
            return
        print(f"{script}: cleanup unfinished {grace:g} s after the time limit; exiting", flush=True)
        _kill_descendants()
        os._exit(EXIT_MISSED)

    previous = signal.signal(signal.SIGALRM, interrupt)
    thread = threading.Thread(target=watchdog, name="time-limit", daemon=True)
    thread.start()
    try:
        status = work()
    except OutOfTime:
        return EXIT_MISSED
    finally:
        finished.set()
        signal.signal(signal.SIGALRM, previous)
    # The limit expired while `work` swallowed the interruption: still a timeout.
    return EXIT_MISSED if expired.is_set() else (status or 0)


# --- the table ----------------------------------------------------------------------------------


@dataclass
class Result:
    """One target's measurement: what was measured, its value, the baseline, their ratio, the
    target, the verdict and the machine's load; `command` reproduces it."""

    script: str
    measured: str
    value: str
    baseline: str
    ratio: str
    target: str
    verdict: str
    load: str
    command: str = ""
    notes: list[str] = field(default_factory=list)

    def print(self) -> None:
        print(
            f"RESULT {self.measured}: {self.value} against {self.baseline} = {self.ratio}"
            f" (target {self.target}) -> {self.verdict}\n       load: {self.load}"
        )
        for note in self.notes:
            print(f"       {note}")


def results_append(path: str | Path | None, results: Sequence[Result]) -> None:
    """Append results as JSON lines (the file `make perf` collects); nothing without a path."""
    if not path:
        return
    with Path(path).open("a", encoding="utf-8") as handle:
        for result in results:
            handle.write(json.dumps(asdict(result)) + "\n")


def results_read(path: str | Path) -> list[Result]:
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [Result(**json.loads(line)) for line in lines if line.strip()]


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def markdown_table(results: Sequence[Result], *, date: str, machine: str) -> str:
    """The table `make perf` writes: one row per target, and what each verdict means."""
    lines = [
        f"Measured {date} on {machine}.",
        "",
        "| script | measured | value | baseline | ratio | target | verdict | load |",
        "|---|---|---:|---:|---:|---|---|---|",
    ]
    for r in results:
        cells = [r.script, r.measured, r.value, r.baseline, r.ratio, r.target, r.verdict, r.load]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    lines += [
        "",
        "A verdict is `pass` only when the target was met and the measurement was not disturbed"
        f" (baseline repeats within {MAX_SPREAD:.0%} of their median, other processes under"
        f" {MAX_OTHERS:g} cores); `disturbed` means met on a machine that was not quiet enough"
        " to say so; `TIMEOUT` that the script was stopped by its time limit (--time-limit)"
        " before it could measure, a failure.",
    ]
    notes = [(r.measured, n) for r in results for n in r.notes]
    if notes:
        lines.append("")
        lines += [f"- {_cell(m)}: {_cell(n)}" for m, n in notes]
    commands = list(dict.fromkeys(r.command for r in results if r.command))
    if commands:
        lines += ["", "Commands:", ""]
        lines += [f"- `{command}`" for command in commands]
    return "\n".join(lines) + "\n"


def reference_loop_ms(repeat: int = 5) -> float:
    """This machine's speed now, in one number: the best of `repeat` timings of a fixed pure
    Python loop (the sum of the squares below a million), in milliseconds. A shared or
    virtual machine's speed drifts over a day (the same 2-core machine gave 50 and 100 ms on
    one day, and every figure of `make perf` moved with it); the table states it, so that two
    tables are compared knowing how fast the machine was."""
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        sum(i * i for i in range(1_000_000))
        best = min(best, time.perf_counter() - start)
    return best * 1000


def machine_name() -> str:
    """The machine in words: CPU model, cores, memory, kernel, Python, and its speed now
    (reference_loop_ms)."""
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        memory = f", {kb / 1024 / 1024:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return (
        f"{model or platform.machine()}, {os.cpu_count()} cores{memory},"
        f" Linux {platform.release()}, Python {platform.python_version()};"
        f" reference loop {reference_loop_ms():.0f} ms (the sum of the squares below a million,"
        " best of 5: lower is faster)"
    )


def missing(results: Sequence[Result], expected: Sequence[str]) -> list[Result]:
    """A row for each expected script that left no result (it failed before reporting)."""
    reported = {r.script for r in results}
    return [
        Result(
            script=name,
            measured="(no result: the script stopped before reporting; see its output)",
            value="-",
            baseline="-",
            ratio="-",
            target="-",
            verdict="MISSED (no result)",
            load="-",
        )
        for name in expected
        if name not in reported
    ]


def main(argv: Sequence[str] | None = None) -> None:
    """`python perf/honest.py RESULTS.jsonl OUT.md [SCRIPT ...]`: the markdown table of a
    `make perf` run; each SCRIPT (e.g. import_speed.py) is expected to have left a result."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 2:
        raise SystemExit("usage: python perf/honest.py RESULTS.jsonl OUT.md [SCRIPT ...]")
    path = Path(args[0])
    results = results_read(path) if path.exists() else []
    results += missing(results, args[2:])
    table = markdown_table(
        results, date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), machine=machine_name()
    )
    Path(args[1]).write_text(table, encoding="utf-8")
    print(table)
    sys.exit(exit_status(r.verdict for r in results))


if __name__ == "__main__":
    main()
