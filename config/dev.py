"""`./dev CMD [ARGS...]`: run one command with the development environment.

    ./dev python manage.py migrate
    ./dev python manage.py shell
    ./dev bash                       (or `make shell`)

The environment is the one `make run` gives its web server and worker: the project's .venv first
on PATH (so `python`, `celery`, `gunicorn` are the venv's), DEBUG=1 and the public development
SECRET_KEY (unless DEBUG is set otherwise: `DEBUG=0 SECRET_KEY=... ./dev ...` is production-like),
and, unless DATABASE_URL / REDIS_URL are set, the URLs of the embedded PostgreSQL and Redis under
.data/. Those are started when they are not running and, unlike `python manage.py`'s own start,
left running for the next command (it says so; `make stack-down` stops them), so a series of
commands does not start and stop a database each time.

The `./dev` script at the root creates or updates .venv first, then runs this module.
No Django import here: it only prepares the environment and replaces itself with CMD.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from config import devstack

# The key the settings accept only while DEBUG is on (config/settings.py refuses it otherwise).
DEV_SECRET_KEY = "dev-insecure-key-never-use-in-production"  # noqa: S105
VENV = devstack.ROOT / ".venv"
_ON = {"1", "true", "yes", "on"}


def dev_environ(environ: Mapping[str, str]) -> dict[str, str]:
    """`environ` with the development settings added: DEBUG on unless set, the development key
    while DEBUG is on and no key is set, and the venv first on PATH. The URLs are not here:
    they need the servers (see main)."""
    env = dict(environ)
    if not env.get("DEBUG"):
        env["DEBUG"] = "1"
    if env["DEBUG"].strip().lower() in _ON and not env.get("SECRET_KEY"):
        env["SECRET_KEY"] = DEV_SECRET_KEY
    venv_bin = str(VENV / "bin")
    path = [part for part in env.get("PATH", "").split(os.pathsep) if part and part != venv_bin]
    env["PATH"] = os.pathsep.join([venv_bin, *path])
    env["VIRTUAL_ENV"] = str(VENV)
    env.pop("PYTHONHOME", None)
    return env


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: ./dev CMD [ARGS...]   e.g. ./dev python manage.py migrate", file=sys.stderr)
        return 2
    env = dev_environ(os.environ)
    if not env.get("DATABASE_URL") or not env.get("REDIS_URL"):
        already = set(devstack.started_here(include_kept=True))
        try:
            # keep=True: the servers outlive this process (and the command it becomes).
            urls = devstack.ensure_env(keep=True)
        except devstack.DevStackError as exc:
            print(f"dev: {exc}", file=sys.stderr)
            return 1
        started = [s for s in devstack.started_here(include_kept=True) if s not in already]
        if started:
            print(
                f"dev: started the embedded {' and '.join(started)} under {devstack.data_dir()}; "
                "they keep running for the next commands (`make stack-down` stops them)",
                file=sys.stderr,
                flush=True,
            )
        env.update(urls)
    try:
        os.execvpe(args[0], args, env)  # noqa: S606 - running the caller's command is the point
    except OSError as exc:
        print(f"dev: cannot run {args[0]}: {exc.strerror}", file=sys.stderr)
        return 127
    return 0  # not reached: exec replaced this process


if __name__ == "__main__":
    sys.exit(main())
