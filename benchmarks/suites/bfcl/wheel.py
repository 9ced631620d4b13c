"""The pinned `bfcl-eval` wheel: where BFCL's data and simulator classes come from.

The wheel is downloaded without its dependencies (`pip download --no-deps`: it pins numpy 1.26.4
and pulls torch, which must never enter this project's environment) and checked against the
hash pinned here, so that every import and every multi-turn execution reads the same files.
The importer reads its `bfcl_eval/data/` members; `multi_turn.load_classes` imports its
simulator modules from it. Nothing of it is installed. Pure Python.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = [
    "PINNED_SHA256",
    "PINNED_VERSION",
    "WHEEL_NAME",
    "WheelError",
    "fetch_wheel",
    "file_sha256",
    "find_wheel",
]

PINNED_VERSION = "2026.3.23"
WHEEL_NAME = f"bfcl_eval-{PINNED_VERSION}-py3-none-any.whl"
# sha256 of WHEEL_NAME as PyPI serves it (checked on 2026-12-07).
PINNED_SHA256 = "3bb6dfa5f0c68ad403c9ec50b00db2bb3b4cc9b38ab1ff33f48fe30d853d3a0a"
DEFAULT_DIR = Path(".data") / "bfcl"
DOWNLOAD_SECONDS = 300

Runner = Callable[[Sequence[str]], "subprocess.CompletedProcess[str]"]


class WheelError(Exception):
    """The wheel could not be had: no network, pip failed, or a file whose hash is not the
    pinned one. The message says which and what to do."""


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _check(path: Path, sha256: str) -> Path:
    actual = file_sha256(path)
    if actual != sha256:
        raise WheelError(
            f"{path} has sha256 {actual}, not the pinned {sha256}: it is not the wheel of "
            f"bfcl-eval {PINNED_VERSION} this platform reads. Delete it and fetch it again."
        )
    return path


def find_wheel(directory: Path = DEFAULT_DIR, *, sha256: str = PINNED_SHA256) -> Path | None:
    """The pinned wheel in `directory`, checked, or None when it is not there."""
    path = directory / WHEEL_NAME
    return _check(path, sha256) if path.is_file() else None


def _run(command: Sequence[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(command), capture_output=True, text=True, timeout=DOWNLOAD_SECONDS, check=False
    )


# What pip prints when it reached no index (an index it reached lists the versions it has).
_OFFLINE = (
    "from versions: none",
    "Failed to establish a new connection",
    "Temporary failure in name resolution",
    "Network is unreachable",
    "Max retries exceeded",
    "ConnectionError",
    "ProxyError",
)


def fetch_wheel(
    directory: Path = DEFAULT_DIR,
    *,
    version: str = PINNED_VERSION,
    sha256: str = PINNED_SHA256,
    runner: Runner = _run,
) -> Path:
    """The pinned wheel in `directory`: found there, or downloaded there with
    `python -m pip download --no-deps bfcl-eval==<version>`, and checked against `sha256`.
    Raises WheelError naming the cause (no network, pip's failure, a wrong hash)."""
    wheel = directory / f"bfcl_eval-{version}-py3-none-any.whl"
    if wheel.is_file():
        return _check(wheel, sha256)
    directory.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        f"bfcl-eval=={version}",
        "-d",
        str(directory),
    ]
    try:
        done = runner(command)
    except subprocess.TimeoutExpired:
        raise WheelError(
            f"pip download did not finish in {DOWNLOAD_SECONDS} s: is the network reachable?"
        ) from None
    except OSError as exc:
        raise WheelError(f"pip could not be started: {exc}") from None
    if done.returncode != 0:
        output = (done.stderr or "") + (done.stdout or "")
        offline = any(sign in output for sign in _OFFLINE)
        last = "; ".join(line.strip() for line in output.strip().splitlines()[-3:])
        if offline:
            raise WheelError(
                f"could not download bfcl-eval=={version}: no network, or the package index is "
                f"not reachable ({last}). Copy {wheel.name} into {directory} by hand instead."
            )
        raise WheelError(f"pip download failed (exit {done.returncode}): {last}")
    if not wheel.is_file():
        raise WheelError(f"pip download finished but {wheel} is not there")
    return _check(wheel, sha256)
