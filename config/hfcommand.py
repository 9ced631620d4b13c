"""What the commands that write a Hugging Face dataset folder share: the folder they may
write (new, or an empty folder) and the progress bar."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError


def empty_folder(name: str) -> Path:
    """`name` as the folder to write: refused, nothing written, when it is a file or a folder
    that holds anything."""
    out = Path(name)
    if out.exists() and not out.is_dir():
        raise CommandError(f"Nothing written. {out} is a file, not a folder")
    if out.exists() and any(out.iterdir()):
        raise CommandError(f"Nothing written. {out} is not empty")
    return out
