"""A StableToolBench response cache holding what PostgreSQL cannot store (NUL, lone
surrogates), in a response, a key, the arguments a key's Python escapes make, or a folder name:
`cache_import` and `import_api_cache` stop naming the file, the line and the key, and store
nothing. And an entry over the record limit is refused before its file is parsed."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from benchmarks.kit import base
from benchmarks.kit.base import ImportFormatError
from evaluation.models import ApiResponse, VirtualApi
from evaluation.virtualapi.cache import cache_import

pytestmark = pytest.mark.django_db

LONE = "\\ud800"  # a lone surrogate as a JSON file writes it
GOOD_KEY = "{'city': 'Oban'}"  # keys are str(arguments), as the reference server writes them


def cache_file(
    root: Path, entries: dict[str, Any], folders: tuple[str, str] = ("Weather", "tides")
) -> Path:
    """<root>/<Category>/<tool>/lookup.json with one entry a line from line 2 on."""
    folder = root.joinpath(*folders)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "lookup.json"
    lines = [f"{json.dumps(k)}: {json.dumps(v)}" for k, v in entries.items()]
    path.write_text("{\n" + ",\n".join(lines) + "\n}\n", "utf-8")
    return path


def good(root: Path) -> None:
    cache_file(root, {GOOD_KEY: {"error": "", "response": {"high": "06:12"}}}, ("Sea", "tide"))


def refused(root: Path) -> ImportFormatError:
    with pytest.raises(ImportFormatError) as err:
        cache_import(root)
    with pytest.raises(CommandError) as command_err:
        call_command("import_api_cache", str(root), stdout=io.StringIO())
    message = str(command_err.value)
    assert message.startswith("Nothing imported.")
    assert str(err.value) in message
    message.encode("utf-8")  # printable: the character is shown as an escape
    assert not ApiResponse.objects.exists() and not VirtualApi.objects.exists()
    return err.value


def test_a_lone_surrogate_in_a_response(tmp_path: Path) -> None:
    good(tmp_path)
    entries = {
        GOOD_KEY: {"error": "", "response": "calm"},
        "{'city': 'Mull'}": {"error": "", "response": {"tides": ["06:12", "x@@"]}},
    }
    path = cache_file(tmp_path, entries)
    path.write_text(path.read_text("utf-8").replace("@@", LONE), "utf-8")
    error = refused(tmp_path)
    assert (error.file, error.line, error.record) == (str(path), 3, "{'city': 'Mull'}")
    assert error.field == "response.tides[1]"
    assert "lone surrogate U+D800" in error.message


def test_a_nul_in_an_error(tmp_path: Path) -> None:
    path = cache_file(tmp_path, {GOOD_KEY: {"error": "time\x00out", "response": ""}})
    error = refused(tmp_path)
    assert (error.file, error.line, error.field) == (str(path), 2, "error")
    assert "NUL" in error.message


def test_a_lone_surrogate_in_a_key(tmp_path: Path) -> None:
    path = cache_file(tmp_path, {"{'city': 'O@@ban'}": {"error": "", "response": "calm"}})
    path.write_text(path.read_text("utf-8").replace("@@", LONE), "utf-8")
    error = refused(tmp_path)
    assert (error.file, error.line, error.field) == (str(path), 2, "key")
    assert "lone surrogate U+D800" in error.message


def test_a_python_escape_in_a_key_that_makes_a_lone_surrogate(tmp_path: Path) -> None:
    # The key is valid text; the arguments it is read as hold the character.
    path = cache_file(tmp_path, {"{'city': '\\ud800'}": {"error": "", "response": "calm"}})
    error = refused(tmp_path)
    assert (error.file, error.line, error.field) == (str(path), 2, "arguments.city")


def test_a_folder_name_that_is_not_utf8(tmp_path: Path) -> None:
    good(tmp_path)
    tool = os.fsdecode(b"ti\xffdes")
    cache_file(tmp_path, {GOOD_KEY: {"error": "", "response": "calm"}}, ("Weather", tool))
    error = refused(tmp_path)
    assert (error.file, error.field) == (str(tmp_path / "Weather" / tool), "file name")
    assert "U+DCFF" in error.message


def test_bytes_that_are_not_utf8_name_the_key_they_are_in(tmp_path: Path) -> None:
    path = cache_file(tmp_path, {GOOD_KEY: {"error": "", "response": "caXm"}})
    path.write_bytes(path.read_bytes().replace(b"caXm", b"ca\xffm"))
    error = refused(tmp_path)
    assert (error.file, error.line, error.record) == (str(path), 2, GOOD_KEY)
    assert error.field == "response"
    assert "not valid UTF-8" in error.message


def test_an_entry_over_the_record_limit_is_refused_before_parsing(tmp_path: Path) -> None:
    path = cache_file(
        tmp_path,
        {
            GOOD_KEY: {"error": "", "response": "calm"},
            "{'city': 'Mull'}": {"error": "", "response": "x" * base.MAX_RECORD_BYTES},
        },
    )
    error = refused(tmp_path)
    assert (error.file, error.line, error.record) == (str(path), 3, "{'city': 'Mull'}")
    assert "per record" in error.message
