"""python manage.py seed_demo [--demo-dir DIR]

Demo groups and accounts for a local run, then every demo benchmark under benchmarks/demo/.
Idempotent: accounts are created only when missing (an existing password is never reset) and the
imports write nothing the second time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from benchmarks.kit.base import ImportFormatError
from benchmarks.services import benchmark_import

DEMO_DIR = Path(__file__).resolve().parents[2] / "demo"
RESEARCHERS = "researchers"
ANNOTATORS = "annotators"


@dataclass(frozen=True)
class DemoAccount:
    username: str
    password: str
    groups: tuple[str, ...] = ()
    is_staff: bool = False
    is_superuser: bool = False
    role: str = ""


# Public by being in the repository: for a local demo only (the accounts exist only where
# seed_demo was run, which `make run` does and a deployment does not).
DEMO_ACCOUNTS = (
    DemoAccount("admin", "demo-admin-2026", is_staff=True, is_superuser=True, role="superuser"),
    DemoAccount(
        "researcher", "demo-researcher-2026", (RESEARCHERS,), is_staff=True, role="researcher"
    ),
    DemoAccount("annotator1", "demo-annotator1-2026", (ANNOTATORS,), role="annotator"),
    DemoAccount("annotator2", "demo-annotator2-2026", (ANNOTATORS,), role="annotator"),
)


@dataclass(frozen=True)
class Manifest:
    folder: Path
    suite: str
    benchmark: str
    files: list[Path]


def read_manifest(path: Path) -> Manifest:
    """Read benchmarks/demo/<suite>/manifest.json; raise ImportFormatError on any problem."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ImportFormatError(f"cannot read the manifest: {exc}", file=path) from None
    if not isinstance(raw, dict):
        raise ImportFormatError("the manifest must be a JSON object", file=path)
    for key in ("suite", "benchmark"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise ImportFormatError("must be a non-empty string", file=path, field=key)
    files = raw.get("files")
    if not isinstance(files, list) or not files or not all(isinstance(f, str) for f in files):
        raise ImportFormatError("must be a non-empty list of paths", file=path, field="files")
    folder = path.parent.resolve()
    resolved = []
    for name in files:
        file_path = (folder / name).resolve()
        # Manifest paths are relative to its folder; refuse one that climbs out of it.
        if not file_path.is_relative_to(folder):
            raise ImportFormatError(
                f"{name!r} is outside the manifest's folder", file=path, field="files"
            )
        if not file_path.is_file():
            raise ImportFormatError(f"{name!r} does not exist", file=path, field="files")
        resolved.append(file_path)
    return Manifest(folder, raw["suite"], raw["benchmark"], resolved)


def demo_groups_ensure() -> dict[str, Group]:
    """The role groups; `migrate` made them with their permissions (annotation 0004), so a
    deployment has them without the demo. Made here only if someone deleted them since."""
    researchers, _ = Group.objects.get_or_create(name=RESEARCHERS)
    annotators, _ = Group.objects.get_or_create(name=ANNOTATORS)
    return {RESEARCHERS: researchers, ANNOTATORS: annotators}


def demo_accounts_ensure() -> list[tuple[DemoAccount, bool]]:
    """Create the missing demo accounts; returns (account, created) pairs. Existing users keep
    their password and flags; only missing group memberships are added."""
    user_model = get_user_model()
    results = []
    with transaction.atomic():
        groups = demo_groups_ensure()
        for account in DEMO_ACCOUNTS:
            user = user_model.objects.filter(username=account.username).first()
            created = user is None
            if user is None:
                user = user_model.objects.create_user(
                    username=account.username,
                    password=account.password,
                    is_staff=account.is_staff,
                    is_superuser=account.is_superuser,
                )
            user.groups.add(*(groups[name] for name in account.groups))
            results.append((account, created))
    return results


class Command(BaseCommand):
    help = (
        "Create the demo groups and accounts (only if missing) and import every demo "
        "benchmark under benchmarks/demo/<suite>/manifest.json."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--demo-dir",
            type=Path,
            default=DEMO_DIR,
            help="Folder holding <suite>/manifest.json (default: benchmarks/demo).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write("Demo logins (local use only):")
        for account, created in demo_accounts_ensure():
            note = "created" if created else "exists, password left as it was"
            self.stdout.write(
                f"  {account.username:<11} {account.password:<22} {account.role} ({note})"
            )

        demo_dir: Path = options["demo_dir"]
        if not demo_dir.is_dir():
            raise CommandError(f"demo folder {demo_dir} does not exist")
        failures = []
        for manifest_path in sorted(demo_dir.glob("*/manifest.json")):
            try:
                manifest = read_manifest(manifest_path)
                summary = benchmark_import(
                    suite=manifest.suite,
                    paths=manifest.files,
                    benchmark_name=manifest.benchmark,
                    is_demo=True,
                )
            except (ImportFormatError, ImportError) as exc:
                # ImportError: a manifest naming a suite whose module is missing.
                failures.append(manifest_path)
                self.stderr.write(
                    self.style.ERROR(f"Demo {manifest_path}: nothing imported. {exc}")
                )
                continue
            splits = ", ".join(f"{k}: {n}" for k, n in summary.samples.items()) or "none"
            self.stdout.write(
                self.style.SUCCESS(
                    f"Demo {summary.benchmark}: {summary.tools} tools, samples {splits} "
                    f"(written now: {summary.samples_written})"
                )
            )
        if failures:
            names = ", ".join(str(p) for p in failures)
            raise CommandError(f"{len(failures)} demo manifest(s) failed: {names}")
