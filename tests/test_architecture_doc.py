"""ARCHITECTURE.md names the code it describes: every file, folder, module and attribute it names
in backticks must exist, so a rename or a removal that leaves the map behind fails here.

Read: a span starting with a top-level folder of the project and holding a "/" is a path (a
`<name>` part stands for any name: its folder must exist; `{a,b}` lists alternatives); a span
starting with one of the project's packages and holding a "." is a dotted name, imported as far
as it is a module and then read attribute by attribute."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "ARCHITECTURE.md"
FOLDERS = (
    "annotation",
    "benchmarks",
    "config",
    "evaluation",
    "perf",
    "static",
    "templates",
    "tests",
)
PACKAGES = ("annotation", "benchmarks", "config", "evaluation")
SPAN = re.compile(r"`([^`\s]+)`")


def _expand(span: str) -> list[str]:
    """`a.{b,c}` -> [a.b, a.c]."""
    found = re.search(r"\{([^}]*)\}", span)
    if not found:
        return [span]
    head, tail = span[: found.start()], span[found.end() :]
    return [e for part in found.group(1).split(",") for e in _expand(head + part + tail)]


def _spans() -> list[str]:
    seen: dict[str, None] = {}
    for span in SPAN.findall(DOC.read_text(encoding="utf-8")):
        for one in _expand(span):
            seen.setdefault(one, None)
    return list(seen)


PATHS = [s for s in _spans() if "/" in s and s.split("/")[0] in FOLDERS]
DOTTED = [
    s
    for s in _spans()
    if "/" not in s and "." in s and s.split(".")[0] in PACKAGES and re.fullmatch(r"[\w.]+", s)
]


def test_the_document_names_code_at_all() -> None:
    # The parsing below must keep finding the map's references (a format change would make
    # the checks vacuous).
    assert len(PATHS) > 40 and len(DOTTED) > 20


@pytest.mark.parametrize("path", PATHS)
def test_every_path_it_names_exists(path: str) -> None:
    if "<" in path:
        path = path[: path.index("<")]
    assert (ROOT / path).exists(), f"ARCHITECTURE.md names {path}, which does not exist"


@pytest.mark.parametrize("name", DOTTED)
def test_every_module_and_attribute_it_names_exists(name: str) -> None:
    parts = name.split(".")
    module = None
    for end in range(len(parts), 0, -1):
        try:
            module = importlib.import_module(".".join(parts[:end]))
        except ModuleNotFoundError:
            continue
        break
    assert module is not None, f"ARCHITECTURE.md names {name}: no such module"
    value: object = module
    for attribute in parts[end:]:
        assert hasattr(value, attribute), f"ARCHITECTURE.md names {name}: no {attribute!r}"
        value = getattr(value, attribute)
