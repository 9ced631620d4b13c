"""A model's answer is untrusted input like a request's: JSON in it that PostgreSQL's jsonb cannot
hold (numbers beyond a double, NaN, Infinity, as Python's json reads them) must not stop the
run or lose the item. The answer is stored and scored as its suite reads it; what goes into a
jsonb column holds no non-finite number. Real PostgreSQL, the fake OpenAI server at the edge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluation import services
from evaluation.models import Prediction, Run
from tests.evaluation.conftest import execute_run, make_endpoint
from tests.evaluation.test_native_runs import generic_benchmark
from tests.fake_openai import FakeCall, FakeOpenAI, tool_reply

pytestmark = pytest.mark.django_db(transaction=True)

HOSTILE = '{"city": 1e999, "minutes": -1e999, "days": NaN, "hours": Infinity}'
# Characters PostgreSQL cannot store (NUL; a lone surrogate, as a JSON escape can write it), in
# the answer's text and in its JSON.
CHARACTERS = (
    'Here\x00 it is \ud800: {"name": "weather.get", "arguments": {"city": "G\\u0000h\\ud800"}}'
)


def _stored_json_is_finite(run: Run) -> None:
    # What PostgreSQL stored reads back as strict JSON (no NaN or Infinity token).
    for row in Prediction.objects.filter(run=run).values("parsed", "answer", "scores", "trace"):
        json.loads(json.dumps(row), parse_constant=lambda token: pytest.fail(token))


@pytest.mark.parametrize("mode", ["native", "text"])
def test_numbers_jsonb_cannot_hold_in_an_answer_neither_stop_the_run_nor_lose_an_item(
    tmp_path: Path, broker: None, mode: str
) -> None:
    benchmark = generic_benchmark(tmp_path)
    if mode == "native":
        answer = tool_reply(FakeCall("weather_get", HOSTILE))
    else:
        answer = '{"tool_calls": [{"name": "weather.get", "arguments": ' + HOSTILE + "}]}"
    with FakeOpenAI(responder=lambda request: answer) as server:
        run = services.run_launch(
            benchmark=benchmark,
            task="tool_calls",
            endpoint=make_endpoint(server.base_url),
            split="default",
            options={"tool_mode": mode},
        )
        execute_run(run)
    assert run.status == Run.Status.DONE, run.error
    predictions = Prediction.objects.filter(run=run)
    assert predictions.count() == 4
    assert set(predictions.values_list("status", flat=True)) == {Prediction.Status.DONE}
    # read as the suite reads it: a call of the weather tool, wrong against every gold
    assert run.metrics["call_exact"] == 0.0
    _stored_json_is_finite(run)


def test_characters_postgresql_cannot_store_in_an_answer_neither_stop_the_run_nor_lose_an_item(
    tmp_path: Path, broker: None
) -> None:
    benchmark = generic_benchmark(tmp_path)
    with FakeOpenAI(responder=lambda request: CHARACTERS) as server:
        run = services.run_launch(
            benchmark=benchmark,
            task="tool_calls",
            endpoint=make_endpoint(server.base_url),
            split="default",
        )
        execute_run(run)
    assert run.status == Run.Status.DONE, run.error
    predictions = Prediction.objects.filter(run=run)
    assert set(predictions.values_list("status", flat=True)) == {Prediction.Status.DONE}
    assert predictions.count() == 4
    _stored_json_is_finite(run)
    # the text is kept with those characters as escapes; the call is read (and scored) as the
    # suite reads it, its argument stored with the same escapes
    one = predictions.get(sample__external_id="one")
    assert one.output == "Here\\u0000 it is \\ud800" + CHARACTERS[CHARACTERS.index(":") :]
    assert one.answer == [{"name": "weather.get", "arguments": {"city": "G\\u0000h\\ud800"}}]
