"""The local model's build reports real progress: its phases, then the compiler's steps.

The lines are as pip -v passes on scikit-build-core's build of llama-cpp-python (Ninja) and, for
the fallback generator, CMake's Makefiles."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from config import localmodel
from config.localmodel import BuildReporter, BuildStep, build_step

NINJA_BUILD = """\
Using pip 23.2.1 from /work/.venv/lib/python3.11/site-packages/pip (python 3.11)
Collecting llama-cpp-python==0.3.36
  Downloading llama_cpp_python-0.3.36.tar.gz (50.7 MB)
  Running command pip subprocess to install build dependencies
  Installing build dependencies: started
  Installing build dependencies: finished with status 'done'
  Getting requirements to build wheel: started
  Running command Getting requirements to build wheel
  Getting requirements to build wheel: finished with status 'done'
  Running command Building wheel for llama-cpp-python (pyproject.toml)
  *** scikit-build-core 0.11.6 using CMake 3.31.6 (wheel)
  *** Configuring CMake...
  loading initial cache file /tmp/tmpq1w2/build/CMakeInit.txt
  -- The C compiler identification is GNU 12.2.0
  -- Configuring done (2.3s)
  -- Generating done (0.1s)
  *** Building project with Ninja...
  [1/193] Building C object vendor/llama.cpp/ggml/src/CMakeFiles/ggml-base.dir/ggml.c.o
  [2/193] Building CXX object vendor/llama.cpp/ggml/src/CMakeFiles/ggml-base.dir/ggml.cpp.o
  [10/193] Building C object vendor/llama.cpp/ggml/src/CMakeFiles/ggml-cpu.dir/ggml-cpu/ggml-cpu.c.o
  [11/193] Building CXX object vendor/llama.cpp/src/CMakeFiles/llama.dir/llama.cpp.o
  [20/193] Building CXX object vendor/llama.cpp/src/CMakeFiles/llama.dir/llama-model.cpp.o
  [97/193] Building CXX object vendor/llama.cpp/common/CMakeFiles/common.dir/arg.cpp.o
  [192/193] Linking CXX shared library vendor/llama.cpp/src/libllama.so
  [193/193] Linking CXX executable vendor/llama.cpp/tools/mtmd/llama-mtmd-cli
  *** Installing project into wheel...
  -- Install configuration: "Release"
  *** Making wheel...
  *** Created llama_cpp_python-0.3.36-py3-none-linux_x86_64.whl
  Building wheel for llama-cpp-python (pyproject.toml): finished with status 'done'
Saved /root/.cache/toolevals/wheels/llama_cpp_python-0.3.36-py3-none-linux_x86_64.whl
"""


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "  [120/325] Building CXX object vendor/llama.cpp/src/CMakeFiles/llama.dir/llama.cpp.o",
            BuildStep("compiling llama.cpp", 120, 325),
        ),
        (
            "[325/325] Linking CXX shared library bin/libllama.so",
            BuildStep("compiling llama.cpp", 325, 325),
        ),
        (
            "[ 37%] Building C object vendor/llama.cpp/ggml/src/CMakeFiles/ggml-base.dir/ggml.c.o",
            BuildStep("compiling llama.cpp", 37, 100, counted=False),
        ),
        ("[100%] Built target llama", BuildStep("compiling llama.cpp", 100, 100, counted=False)),
        ("  *** Configuring CMake...", BuildStep("configuring llama.cpp")),
        ("  Installing build dependencies: started", BuildStep("fetching the build tools")),
        # Not progress: a compiler message quoting brackets, a count past its total, other output
        ("ggml.c:12: warning: [12/10] looks like a step", None),
        ("[12/10] Building C object x.o", None),
        ("[0/0] nothing to do", None),
        ("-- Configuring done (2.3s)", None),
        ("  Downloading llama_cpp_python-0.3.36.tar.gz (50.7 MB)", None),
    ],
)
def test_build_step_reads_one_line(line: str, expected: BuildStep | None) -> None:
    assert build_step(line) == expected


def test_build_step_says_percentage_and_steps() -> None:
    assert str(BuildStep("compiling llama.cpp", 120, 325)) == (
        "compiling llama.cpp: 36% (120/325 steps)"
    )
    assert (
        str(BuildStep("compiling llama.cpp", 37, 100, counted=False)) == "compiling llama.cpp: 37%"
    )
    assert str(BuildStep("configuring llama.cpp")) == "configuring llama.cpp"


def _reports(every: int) -> list[str]:
    reports: list[str] = []
    reporter = BuildReporter(reports.append, every=every)
    for line in NINJA_BUILD.splitlines():
        reporter(line)
    return reports


def test_a_build_reports_each_phase_and_its_compilation_every_few_percent() -> None:
    assert _reports(every=10) == [
        "fetching the build tools",
        "preparing the build",
        "configuring llama.cpp",
        "compiling llama.cpp",
        "compiling llama.cpp: 0% (1/193 steps)",
        "compiling llama.cpp: 10% (20/193 steps)",
        "compiling llama.cpp: 50% (97/193 steps)",
        "compiling llama.cpp: 99% (192/193 steps)",
        "compiling llama.cpp: 100% (193/193 steps)",
        "packaging the wheel",
    ]


def test_a_finer_reporter_reports_more_often() -> None:
    fine = _reports(every=1)
    assert "compiling llama.cpp: 5% (10/193 steps)" in fine
    assert "compiling llama.cpp: 5% (11/193 steps)" not in fine  # not a new percent
    assert len(fine) > len(_reports(every=10))


# --- the priority make run gives the build and the server ---------------------------------------

# The child prints its niceness, its I/O class as `ionice` reports it, and the niceness of a
# process it starts itself (as pip starts CMake and CMake the compilers).
REPORT_PRIORITY = (
    "import os, shutil, subprocess, sys\n"
    "print(os.nice(0))\n"
    "tool = shutil.which('ionice')\n"
    "print(subprocess.run([tool, '-p', str(os.getpid())], capture_output=True, text=True)"
    ".stdout.strip() if tool else 'no ionice')\n"
    "print(subprocess.run([sys.executable, '-c', 'import os; print(os.nice(0))'],"
    " capture_output=True, text=True).stdout.strip())\n"
)


def test_low_priority_runs_the_command_and_its_children_at_nice_19_and_idle_io() -> None:
    base = os.nice(0)
    if base > 0:
        pytest.skip(f"this test process is already at nice {base}")
    shown = subprocess.run(
        localmodel.low_priority([sys.executable, "-c", REPORT_PRIORITY]),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.split("\n")
    assert shown[0] == "19"
    assert shown[2] == "19"  # inherited: the compilers a build starts run at nice 19 too
    if shutil.which("ionice") is None:
        assert shown[1] == "no ionice"
    else:
        assert shown[1] == "idle"


def test_low_priority_without_the_tools_runs_the_command_as_it_is() -> None:
    assert localmodel.low_priority(["python", "x"], which=lambda name: None) == ["python", "x"]
    only_nice = localmodel.low_priority(
        ["python", "x"], which=lambda name: "/bin/nice" if name == "nice" else None
    )
    assert only_nice == ["/bin/nice", "-n", "19", "python", "x"]
    both = localmodel.low_priority(["python", "x"], which=lambda name: f"/usr/bin/{name}")
    assert both == ["/usr/bin/ionice", "-c", "3", "-t", "/usr/bin/nice", "-n", "19", "python", "x"]
