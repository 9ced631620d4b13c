"""The run page writes a prediction's calls as calls (the partial every page uses), its other
answers as JSON, never as Python reprs, and escapes what the model wrote."""

from __future__ import annotations

import pytest
from django.test import Client

from evaluation.models import Endpoint, Prediction, Run
from tests.factories import make_benchmark, make_sample, make_superuser

pytestmark = pytest.mark.django_db


def test_the_run_page_shows_calls_as_calls_and_answers_as_json(client: Client) -> None:
    benchmark = make_benchmark()
    endpoint = Endpoint.objects.create(name="e", base_url="http://127.0.0.1:9/v1", model="m")
    run = Run.objects.create(
        benchmark=benchmark, task="answer", endpoint=endpoint, status=Run.Status.DONE
    )
    rows = [
        {"answer": {"calls": [{"name": "get_weather", "arguments": {"days": 3}}]}},
        {
            "answer": {"calls": []},
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": '{"q": "<b>x</b>"}'},
                }
            ],
        },
        {"answer": ["WeatherTool", "It's"]},
        {
            "answer": "done",
            "trace": [{"action": "search", "arguments": {"q": "<i>y</i>"}, "observation": "ok"}],
        },
    ]
    for position, fields in enumerate(rows):
        Prediction.objects.create(
            run=run,
            sample=make_sample(benchmark=benchmark),
            position=position,
            status=Prediction.Status.DONE,
            **fields,
        )
    client.force_login(make_superuser())
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert "get_weather(days=3)" in page
    # a native run's tool_calls as sent: read from the function's JSON arguments, escaped
    assert "1 tool call sent" in page
    assert "lookup(q=&quot;&lt;b&gt;x&lt;/b&gt;&quot;)" in page
    assert "no tool call" in page
    # an answer that is not calls: JSON, not a Python list
    assert "[&quot;WeatherTool&quot;, &quot;It&#x27;s&quot;]" in page
    assert "[&#x27;WeatherTool&#x27;" not in page and "{&#x27;calls&#x27;" not in page
    # the trace's call
    assert "search(q=&quot;&lt;i&gt;y&lt;/i&gt;&quot;)" in page
    assert "<b>x</b>" not in page and "<i>y</i>" not in page
