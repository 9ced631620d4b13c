"""export_benchmark refuses what it cannot do with a message and writes nothing."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from benchmarks.services import benchmark_import

pytestmark = pytest.mark.django_db
DEMO = Path(__file__).resolve().parents[2] / "benchmarks" / "demo"


@pytest.fixture(autouse=True)
def wtueval() -> None:
    benchmark_import(suite="wtueval", paths=[DEMO / "wtueval" / "questions.jsonl"])


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["Nope"], "no benchmark named 'Nope'; known: WTU-Eval"),
        (["WTU-Eval", "--split", "nope"], "benchmark 'WTU-Eval' has no split 'nope'"),
    ],
)
def test_refusals_name_what_is_wrong(tmp_path: Path, arguments: list[str], message: str) -> None:
    out = tmp_path / "out"
    with pytest.raises(CommandError, match=f"Nothing written. {message}"):
        call_command("export_benchmark", *arguments, "--out", str(out), verbosity=0)
    assert not out.exists()


def test_an_out_that_is_a_file_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "a-file"
    out.write_text("mine")
    with pytest.raises(CommandError, match="is a file, not a folder"):
        call_command("export_benchmark", "WTU-Eval", "--out", str(out), verbosity=0)
    assert out.read_text() == "mine"


def test_the_command_says_how_to_read_the_export_back(tmp_path: Path) -> None:
    stdout = io.StringIO()
    call_command("export_benchmark", "WTU-Eval", "--out", str(tmp_path), stdout=stdout)
    said = stdout.getvalue()
    assert "WTU-Eval: 10 samples (0 refined, 0 dropped) in 2 files" in said
    assert (
        f"./dev python manage.py import_benchmark wtueval {tmp_path}/questions.jsonl "
        "--benchmark 'WTU-Eval (exported)'"
    ) in said
