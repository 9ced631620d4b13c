"""A run's predictions as a Hugging Face dataset folder, read back by the real `datasets`:
every field of every prediction equal to what is stored (hostile texts, JSON of every shape,
scores of every kind), split by the samples' splits (names `datasets` refuses renamed), the
card declaring what `datasets` finds and the run it came from."""

from __future__ import annotations

import io
import json
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from evaluation.hf import PREDICTION_COLUMNS, RunExportRefused, run_hf_export
from evaluation.models import Prediction, Run
from tests.evaluation.test_predictions_csv import hostile_run
from tests.factories import make_benchmark, make_researcher
from tests.hf_load import card, decoded, features_yaml, load, load_by_card

pytestmark = pytest.mark.django_db

JSON_COLUMNS = {c.name for c in PREDICTION_COLUMNS if c.kind == "json"}


def stored(run: Run) -> dict[int, dict[str, Any]]:
    """Per position, the prediction as the export must give it."""
    out = {}
    for p in Prediction.objects.filter(run=run).select_related("sample"):
        out[p.position] = {
            "run": run.pk,
            "position": p.position,
            "split": p.sample.split,
            "sample_id": p.sample_id,
            "external_id": p.sample.external_id,
            "repeat": p.repeat,
            "trial": p.repeat if run.trials > 1 else 0,
            "status": p.status,
            "output": p.output,
            "answer": p.answer,
            "tool_calls": p.tool_calls,
            "parsed": p.parsed,
            "leaked": p.leaked,
            "trace": p.trace,
            "note": p.note,
            "error": p.error,
            "attempts": p.attempts,
            "latency_ms": p.latency_ms,
            "cached": p.cached,
            "usage": p.usage,
            "prompt_tokens": p.prompt_tokens,
            "completion_tokens": p.completion_tokens,
            "cached_tokens": p.cached_tokens,
            "scores": p.scores,
        }
    return out


def test_every_field_of_every_prediction_comes_back_equal(tmp_path: Path) -> None:
    run = hostile_run()
    Prediction.objects.filter(run=run, position=0).update(
        trace=[{"call": {"name": "f", "arguments": {"x": "=1"}}, "result": "\x01 ok"}],
        tool_calls=[{"id": "c1", "function": {"name": "f", "arguments": '{"x": 1}'}}],
        usage={"prompt_tokens": 10, "completion_tokens": 3},
        latency_ms=12,
    )
    out = tmp_path / "hf"
    export = run_hf_export(run=run, folder=out)
    assert export.rows == {"_split0": 6, "_split1": 6}
    assert export.renamed == {"=split0": "_split0", "=split1": "_split1"}
    loaded = load(out, tmp_path / "cache")
    assert set(loaded) == {"_split0", "_split1"}
    expected = stored(run)
    names = list(export.score_names)
    assert set(names) == {n for p in expected.values() for n in p["scores"]}
    seen = []
    for split in loaded.values():
        assert split.column_names == [c.name for c in PREDICTION_COLUMNS] + [
            f"score:{n}" for n in names
        ]
        for row in split:
            scores_cells = {n: row.pop(f"score:{n}") for n in names}
            row = decoded(row, JSON_COLUMNS)
            want = expected[row["position"]]
            assert row == want
            # a number as itself, a flag as 1/0, anything else (a text, an object) null
            for n in names:
                value = want["scores"].get(n)
                number = float(value) if isinstance(value, (int, float)) else None
                assert scores_cells[n] == number, (n, value)
            seen.append(row["position"])
    assert sorted(seen) == sorted(expected)
    # the hand-checked cells: a formula stays text, a flag is 1.0, a text score is null
    by_position = {row["position"]: row for s in loaded.values() for row in s}
    assert by_position[0]["trace"] == json.dumps(
        [{"call": {"name": "f", "arguments": {"x": "=1"}}, "result": "\x01 ok"}],
        ensure_ascii=False,
    )
    assert any(row.get("score:=evil") is None for row in by_position.values())
    assert {row["score:zz"] for row in by_position.values()} >= {1.0, 0.5}


def test_the_card_names_the_run_and_declares_the_features(tmp_path: Path) -> None:
    run = hostile_run()
    run.params = {"temperature": 0.2}
    run.save(update_fields=["params"])
    out = tmp_path / "hf"
    run_hf_export(run=run, folder=out)
    header, body = card(out)
    loaded = load(out, tmp_path / "cache")
    [info] = header["dataset_info"]
    assert info["features"] == features_yaml(loaded["_split0"])
    assert header["configs"] == [
        {
            "config_name": "default",
            "data_files": [
                {"split": "_split0", "path": "data/_split0-*"},
                {"split": "_split1", "path": "data/_split1-*"},
            ],
        }
    ]
    provenance = header["provenance"]
    assert provenance["run"] == run.pk and provenance["kind"] == "run predictions"
    assert provenance["benchmark"] == run.benchmark.name  # a formula-like name, quoted
    assert provenance["endpoint"] == run.endpoint.name and provenance["model"] == "m"
    assert provenance["params"] == {"temperature": 0.2} and provenance["task"] == "answer"
    assert "127.0.0.1" not in (out / "README.md").read_text()  # never the endpoint's address
    assert "`=split0` is written as `_split0`" in body
    by_card = load_by_card(out, tmp_path / "cache2")
    assert by_card["_split1"].to_list() == loaded["_split1"].to_list()


def test_a_run_without_predictions_is_refused(tmp_path: Path) -> None:
    run = Run.objects.create(benchmark=make_benchmark(name="b", suite="generic"), task="answer")
    with pytest.raises(RunExportRefused, match=f"run {run.pk} has no predictions"):
        run_hf_export(run=run, folder=tmp_path / "x")
    with pytest.raises(CommandError, match=f"Nothing written. run {run.pk} has no predictions"):
        call_command("export_run", str(run.pk), "--out", str(tmp_path / "y"), verbosity=0)


def test_the_command_and_the_download(
    tmp_path: Path, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = hostile_run()
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    stdout = io.StringIO()
    call_command("export_run", str(run.pk), "--out", str(tmp_path / "cmd"), stdout=stdout)
    assert f"run {run.pk}: 12 predictions in splits _split0 (6), _split1 (6)" in stdout.getvalue()

    client.force_login(make_researcher())
    response = client.get(f"/runs/{run.pk}/predictions-hf.zip")
    assert response.status_code == 200
    assert len(list(temporary.iterdir())) == 1  # written before the first byte
    assert response["Content-Type"] == "application/zip"
    assert f'filename="run-{run.pk}-predictions-hf.zip"' in response["Content-Disposition"]
    with zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))) as archive:
        archive.extractall(tmp_path / "zip")
    folder = tmp_path / "zip" / f"run-{run.pk}-predictions-hf"
    from_zip = load(folder, tmp_path / "cache1")
    from_command = load(tmp_path / "cmd", tmp_path / "cache2")
    assert {k: v.to_list() for k, v in from_zip.items()} == {
        k: v.to_list() for k, v in from_command.items()
    }
    # the temporary folder is gone once the zip is sent
    assert list(temporary.iterdir()) == []
