"""A new API style without touching the platform: a style defined in the test tree (one module,
tests/evaluation/toy_style.py), registered by the test, answers a run end to end against the
fake OpenAI server: its bodies are what the server gets, its answers are scored, and the
response cache keys them under the style."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError

from evaluation import services
from evaluation.models import Endpoint, Prediction, ResponseCache, Run
from evaluation.services import RunError
from evaluation.work.caller import Origin, cache_key
from evaluation.work.styles import (
    BUILT_IN,
    ApiStyle,
    UnknownStyle,
    register,
    style_choices,
    style_named,
    styles,
    unregister,
)
from tests.evaluation.conftest import (
    counting_answer,
    execute_run,
    make_counting_benchmark,
    make_endpoint,
)
from tests.evaluation.toy_style import STYLE, SingleTurn
from tests.fake_openai import FakeOpenAI


@pytest.fixture
def single_turn() -> Iterator[SingleTurn]:
    register(STYLE)
    yield STYLE
    unregister(STYLE.name)


def test_the_built_in_styles_are_registered_under_the_names_endpoints_use() -> None:
    registered = styles()
    assert tuple(registered)[: len(BUILT_IN)] == BUILT_IN
    assert {Endpoint.Style.CHAT, Endpoint.Style.COMPLETION, Endpoint.Style.RESPONSES} <= set(
        registered
    )
    assert all(
        isinstance(style, ApiStyle) and registered[n] is style for n, style in registered.items()
    )
    assert [name for name, _ in style_choices()] == list(registered)
    with pytest.raises(UnknownStyle, match="unknown API style 'single-turn'"):
        style_named("single-turn")


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("broker")
def test_a_style_registered_by_a_test_answers_a_run_end_to_end(
    tmp_path: Path, single_turn: SingleTurn
) -> None:
    # given an endpoint of the test's style on a fake server that keeps the bodies it gets
    assert (single_turn.name, single_turn.label) in style_choices()
    benchmark = make_counting_benchmark(tmp_path, 6)
    with FakeOpenAI(responder=counting_answer, keep_bodies=True) as server:
        endpoint = make_endpoint(server.base_url, style=single_turn.name)
        endpoint.full_clean()  # the model takes any registered style
        # when a run is launched and answered, then launched again
        run = services.run_launch(
            benchmark=benchmark, task="answer", endpoint=endpoint, split="default"
        )
        execute_run(run)
        again = services.run_launch(
            benchmark=benchmark, task="answer", endpoint=endpoint, split="default"
        )
        execute_run(again)
        records = server.records()
    # then the server got the style's bodies on the style's path, one per item
    assert run.status == Run.Status.DONE, run.error
    assert run.style == single_turn.name
    assert len(records) == 6
    for record in records:
        assert record.path == "/v1/chat/completions"
        assert record.body is not None
        [message] = record.body["messages"]
        assert message["role"] == "user"
        assert "user: " in message["content"]
    # and its answers were read and scored like any other
    assert run.metrics["accuracy"] == 50.0
    predictions = list(run.predictions.order_by("position"))
    assert {p.status for p in predictions} == {Prediction.Status.DONE}
    assert predictions[0].output == "Answer: 1"
    assert all(len(p.prompt["messages"]) == 1 for p in predictions)
    # and the cache keeps them under the style: the second run asked the server nothing
    origin = Origin.of(server.base_url, endpoint.model, single_turn.name)
    expected = {
        cache_key(origin, {"model": run.model_name, **run.params, **p.prompt}) for p in predictions
    }
    assert set(ResponseCache.objects.values_list("key", flat=True)) == expected
    assert again.status == Run.Status.DONE, again.error
    assert again.metrics == run.metrics
    assert all(p.cached for p in again.predictions.all())


@pytest.mark.django_db
def test_an_endpoint_of_a_style_not_registered_is_refused(
    tmp_path: Path, single_turn: SingleTurn
) -> None:
    endpoint = make_endpoint("http://127.0.0.1:9/v1", style=single_turn.name)
    benchmark = make_counting_benchmark(tmp_path, 2)
    unregister(single_turn.name)
    with pytest.raises(ValidationError) as refused:
        endpoint.full_clean()
    assert "style" in refused.value.message_dict
    with pytest.raises(RunError, match="'single-turn', not a registered API style"):
        services.run_launch(benchmark=benchmark, task="answer", endpoint=endpoint, split="default")
