"""The perf scripts' shared rules (perf/honest.py), by hand-computed cases: when a measurement
counts as disturbed, the verdicts and exit status, the machine's CPU read from /proc, and the
table `make perf` writes."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from perf import honest


def test_spread_is_the_range_over_the_median() -> None:
    # median 10, range 12 - 9 = 3
    assert honest.spread([9.0, 10.0, 12.0]) == pytest.approx(0.3)
    assert honest.spread([5.0]) == 0.0
    assert honest.spread([]) == 0.0


def test_a_quiet_measurement_has_no_reasons() -> None:
    # spread (1.05 - 1.00) / 1.02 = 4.9%, others 0.10 cores
    assert honest.disturbed([1.00, 1.02, 1.05], 0.10) == []


def test_a_baseline_that_did_not_hold_still_is_disturbed() -> None:
    # spread (1.30 - 1.00) / 1.10 = 27% > 15%
    (reason,) = honest.disturbed([1.00, 1.10, 1.30], 0.0)
    assert reason.startswith("baseline repeats spread 27% (> 15%)")


def test_other_processes_over_the_threshold_disturb() -> None:
    (reason,) = honest.disturbed([1.0, 1.0], 0.40, max_others=0.25)
    assert reason == "other processes took 0.40 cores (> 0.25)"
    # at the threshold exactly it is still quiet
    assert honest.disturbed([1.0, 1.0], 0.25, max_others=0.25) == []


def test_one_baseline_repeat_cannot_show_a_spread() -> None:
    assert honest.disturbed([3.0], 0.0) == []


def test_a_disturbed_measurement_never_passes() -> None:
    assert honest.verdict(True, []) == "pass"
    assert honest.verdict(False, []) == "MISSED"
    assert honest.verdict(True, ["noisy"]) == "disturbed"
    assert honest.verdict(False, ["noisy"]) == "MISSED (disturbed)"
    assert honest.exit_status(["pass", "pass"]) == 0
    assert honest.exit_status(["pass", "disturbed"]) == 3
    assert honest.exit_status(["disturbed", "MISSED"]) == 1
    assert honest.exit_status(["MISSED (disturbed)"]) == 1


def test_others_is_the_machine_less_ours_less_the_load_we_started() -> None:
    # 10 s: the machine busy 16 CPU-s, ours 9, the competing load 5: others 2 / 10 = 0.2 cores
    load = honest.Load(
        cores=2, seconds=10, busy=16, ours=9, burner=5, load_before=1.0, load_after=2.0
    )
    assert load.others == pytest.approx(0.2)
    # ticks can make ours exceed the machine's count by a little: never below zero
    assert honest.Load(2, 1, 1.0, 1.01, 0, 0, 0).others == 0.0
    text = load.text()
    assert "1.60 of 2 cores busy" in text and "other processes 0.20" in text
    assert "competing load we started 0.50" in text


def test_merged_stretches_sum_their_cpu() -> None:
    a = honest.Load(2, 5, 6, 4, 0, 1.0, 1.5)
    b = honest.Load(2, 5, 8, 4, 0, 1.5, 2.5)
    merged = honest.merge([a, b])
    assert (merged.seconds, merged.busy, merged.ours) == (10, 14, 8)
    assert (merged.load_before, merged.load_after) == (1.0, 2.5)
    assert merged.others == pytest.approx(0.6)


def test_machine_cpu_reads_the_first_line_of_proc_stat() -> None:
    # user nice system idle iowait irq softirq steal (ticks): busy = 100+0+50+5+5+0 = 160,
    # total = 160 + 800 + 40 = 1000
    stat = "cpu  100 0 50 800 40 5 5 0 0 0\ncpu0 1 2 3 4 5 6 7 8\n"
    busy, total = honest.machine_cpu(stat)
    assert (busy, total) == (160 / honest.TICK, 1000 / honest.TICK)
    assert honest.loadavg("0.52 0.58 0.59 1/467 1234\n") == 0.52


def test_descendants_walk_the_whole_tree() -> None:
    tree = {10: 1, 11: 10, 12: 11, 13: 10, 20: 1}
    assert honest.descendants(10, tree) == {10, 11, 12, 13}
    assert honest.descendants(99, tree) == {99}


def test_a_competing_load_takes_a_core_and_is_counted_apart() -> None:
    with honest.CpuLoad(1) as burner:
        watch = honest.Watch(burner=burner.pids).start()
        time.sleep(1.0)
        load = watch.stop()
    assert len(burner.pids) == 1
    # It spun for most of the second (the machine may be shared: a loose bound).
    assert load.burner > 0.2
    assert all(proc.poll() is not None for proc in burner.procs)  # stopped by pid


def test_the_watch_counts_our_own_cpu() -> None:
    watch = honest.Watch().start()
    deadline = time.process_time() + 0.3
    while time.process_time() < deadline:
        pass
    load = watch.stop()
    assert load.ours >= 0.25 and load.cores == os.cpu_count()


def test_results_round_trip_and_make_one_markdown_table(tmp_path: Path) -> None:
    rows = [
        honest.Result(
            script="import_speed.py",
            measured="import of 20,614 rows",
            value="0.90 s",
            baseline="0.30 s (COPY)",
            ratio="3.00x",
            target="<= 3x",
            verdict="pass",
            load="machine 1.00 of 2 cores busy",
            command="./dev python perf/import_speed.py --repeat 3",
            notes=["re-import 0.2 s"],
        ),
        honest.Result(
            script="annotate_load.py",
            measured="next | submit",
            value="12 ms",
            baseline="8 ms",
            ratio="1.50x",
            target="<= 1.5x",
            verdict="disturbed",
            load="other processes 0.90",
        ),
    ]
    path = tmp_path / "results.jsonl"
    honest.results_append(path, rows[:1])
    honest.results_append(path, rows[1:])
    honest.results_append(None, rows)  # no path: nothing written
    assert honest.results_read(path) == rows
    table = honest.markdown_table(rows, date="2026-11-26", machine="2 cores")
    lines = table.splitlines()
    assert lines[0] == "Measured 2026-11-26 on 2 cores."
    assert lines[2] == "| script | measured | value | baseline | ratio | target | verdict | load |"
    assert lines[4] == (
        "| import_speed.py | import of 20,614 rows | 0.90 s | 0.30 s (COPY) | 3.00x | <= 3x |"
        " pass | machine 1.00 of 2 cores busy |"
    )
    # a pipe in a cell cannot break the table
    assert lines[5].startswith("| annotate_load.py | next \\| submit |")
    assert "- import of 20,614 rows: re-import 0.2 s" in lines
    assert lines[-1] == "- `./dev python perf/import_speed.py --repeat 3`"


def test_the_table_command_writes_the_file_and_exits_by_the_verdicts(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    honest.results_append(
        path, [honest.Result("s.py", "m", "1", "1", "1x", "<= 2x", "disturbed", "quiet")]
    )
    out = tmp_path / "PERF.md"
    with pytest.raises(SystemExit) as stopped:
        honest.main([str(path), str(out)])
    assert stopped.value.code == 3
    assert "| s.py | m | 1 | 1 | 1x | <= 2x | disturbed | quiet |" in out.read_text()


def test_a_script_that_left_no_result_is_a_missed_row(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    honest.results_append(
        path, [honest.Result("a.py", "m", "1", "1", "1x", "<= 2x", "pass", "quiet")]
    )
    out = tmp_path / "PERF.md"
    with pytest.raises(SystemExit) as stopped:
        honest.main([str(path), str(out), "a.py", "b.py"])
    assert stopped.value.code == 1
    text = out.read_text()
    assert "| a.py | m | 1 | 1 | 1x | <= 2x | pass | quiet |" in text
    assert "| b.py | (no result: the script stopped before reporting; see its output) |" in text


def test_the_command_is_shown_without_where_its_results_went() -> None:
    argv = ["/x/perf/import_speed.py", "--repeat", "3", "--results", "out.jsonl", "--cpu-load=1"]
    assert honest.command_line(argv) == "./dev python perf/import_speed.py --repeat 3 --cpu-load=1"
    argv = ["perf/csv_speed.py", "--results=out.jsonl", "--rows", "10"]
    assert honest.command_line(argv) == "./dev python perf/csv_speed.py --rows 10"


def test_the_machine_line_says_how_fast_the_machine_was() -> None:
    line = honest.machine_name()
    assert "cores" in line and "reference loop" in line
    ms = float(line.split("reference loop ")[1].split(" ms")[0])
    assert 1 < ms < 5000


# --- the time limit -----------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]

OVERRUN = """
import argparse, subprocess, sys, time
sys.path.insert(0, {root!r})
from perf import honest

parser = argparse.ArgumentParser()
honest.add_arguments(parser, time_limit=60)
args = parser.parse_args()

def work():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    open({pid!r}, "w").write(str(child.pid))
    try:
        honest.doing("the measured loop, repeat 2 of 3")
        time.sleep(120)
        return 0
    finally:
        {cleanup}
        child.kill()
        child.wait()
        open({cleaned!r}, "w").write("cleaned")

sys.exit(honest.within_time_limit(args, "overrun.py", work, grace={grace}))
"""


def overrun(tmp_path: Path, *, cleanup: str = "pass", grace: float = 30) -> tuple[int, float]:
    """A script whose work sleeps two minutes, run with --time-limit 1: (exit status, seconds)."""
    import subprocess
    import sys

    script = tmp_path / "overrun.py"
    script.write_text(
        OVERRUN.format(
            root=str(ROOT),
            pid=str(tmp_path / "child.pid"),
            cleaned=str(tmp_path / "cleaned"),
            cleanup=cleanup,
            grace=grace,
        )
    )
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(script), "--time-limit", "1", "--results", str(tmp_path / "r.jsonl")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.returncode, time.perf_counter() - started


def child_alive(tmp_path: Path) -> bool:
    """Whether the process the script started still runs (a SIGKILL takes effect when the
    process is next scheduled: a busy machine is given five seconds)."""
    pid = int((tmp_path / "child.pid").read_text())
    for _ in range(50):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return False
        if state in "ZX":
            return False
        time.sleep(0.1)
    return True


def test_a_script_over_its_time_limit_cleans_up_and_reports_a_timeout(tmp_path: Path) -> None:
    status, seconds = overrun(tmp_path)
    assert status == honest.EXIT_MISSED and seconds < 30
    assert (tmp_path / "cleaned").read_text() == "cleaned"  # its own finally ran
    assert not child_alive(tmp_path)
    [result] = honest.results_read(tmp_path / "r.jsonl")
    assert result.script == "overrun.py" and result.verdict == honest.TIMEOUT
    assert result.target == "finish within --time-limit 1 s"
    assert "the measured loop, repeat 2 of 3" in result.measured
    assert result.command.endswith("overrun.py --time-limit 1")
    # the summary of `make perf` shows it and fails
    out = tmp_path / "PERF.md"
    with pytest.raises(SystemExit) as stopped:
        honest.main([str(tmp_path / "r.jsonl"), str(out), "overrun.py"])
    assert stopped.value.code == honest.EXIT_MISSED
    assert "| overrun.py | (stopped by its time limit while running: the measured loop" in (
        out.read_text()
    )


def test_a_cleanup_that_hangs_is_cut_short_after_the_grace(tmp_path: Path) -> None:
    status, seconds = overrun(tmp_path, cleanup="time.sleep(120)", grace=2)
    assert status == honest.EXIT_MISSED and seconds < 30
    assert not (tmp_path / "cleaned").exists()
    assert not child_alive(tmp_path)  # killed by pid as a process the script started
    [result] = honest.results_read(tmp_path / "r.jsonl")
    assert result.verdict == honest.TIMEOUT


def test_work_within_its_limit_returns_its_own_status() -> None:
    args = type("Args", (), {"time_limit": 30.0, "results": ""})()
    assert honest.within_time_limit(args, "quick.py", lambda: 3) == 3
    assert honest.within_time_limit(args, "quick.py", lambda: None) == 0


def test_a_timeout_fails_the_summary() -> None:
    assert honest.exit_status(["pass", honest.TIMEOUT]) == honest.EXIT_MISSED
    assert honest.exit_status(["disturbed", honest.TIMEOUT]) == honest.EXIT_MISSED


def test_every_perf_script_runs_under_the_time_limit() -> None:
    """Each script with a main() takes --time-limit and runs its work through
    within_time_limit (the helper modules have no main)."""
    scripts = [
        p
        for p in sorted((ROOT / "perf").glob("*.py"))
        if "\ndef main(" in p.read_text() and p.name != "honest.py"  # the table, not a script
    ]
    assert len(scripts) >= 8
    for path in scripts:
        text = path.read_text()
        assert "honest.add_arguments(parser, time_limit=" in text, path.name
        assert f'honest.within_time_limit(args, "{path.name}"' in text or (
            f'honest.within_time_limit(options, "{path.name}"' in text
        ), path.name
