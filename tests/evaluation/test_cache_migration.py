"""Migration 0017 keeps each stored answer for the endpoint that wrote it (issue 27, finding 1):
an answer under the old key (style and request only) gets the key that names its server when
the rows tell which endpoint wrote it, and stays where no endpoint's key reaches it when they do
not. The new keys are the ones the running code computes (caller.cache_key)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from benchmarks.kit.protocol import Prompt
from evaluation.models import Endpoint, ResponseCache
from evaluation.work.caller import Origin, cache_key
from evaluation.work.engine import endpoint_config, request_key

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("evaluation", "0016_unsettled_items")]
AFTER = [("evaluation", "0017_endpoint_keys_cache_origin")]
SYSTEM = {"role": "system", "content": "Answer the question."}


def old_key(style: str, body: dict[str, Any], salt: str = "") -> str:
    key: dict[str, Any] = {"style": style, "body": body}
    if salt:
        key["salt"] = salt
    text = json.dumps(key, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def ask(question: str) -> dict[str, Any]:
    return {"messages": [SYSTEM, {"role": "user", "content": question}]}


def body(model: str, question: str, **params: Any) -> dict[str, Any]:
    return {"model": model, **params, **ask(question)}


def latest() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def test_the_migration_keeps_each_answer_for_the_endpoint_that_wrote_it() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    apps = executor.loader.project_state(BEFORE).apps
    model = apps.get_model
    benchmark = model("benchmarks", "Benchmark").objects.create(name="b", suite="generic")
    samples = [
        model("benchmarks", "Sample").objects.create(
            benchmark=benchmark, split="default", external_id=str(i), input={"query": str(i)}
        )
        for i in range(4)
    ]
    endpoints = {
        name: model("evaluation", "Endpoint").objects.create(
            name=name, base_url=url, model=model_name, style="chat"
        )
        for name, url, model_name in (
            # two servers, one model name: the old key mixed them up
            ("local-fake", "http://127.0.0.1:8001/v1", "gpt-4o"),
            ("real", "https://api.openai.com/v1/", "gpt-4o"),
            # one server for its model
            ("solo", "HTTP://Solo.Example:80/v1", "solo-model"),
            ("embedder", "https://embed.example/v1", "embed-model"),
        )
    }
    params = {"temperature": 0}
    runs = {
        name: model("evaluation", "Run").objects.create(
            benchmark=benchmark,
            task="answer",
            endpoint=endpoints[name],
            model_name="gpt-4o",
            style="chat",
            params=params,
        )
        for name in ("local-fake", "real")
    }
    Prediction = model("evaluation", "Prediction")

    def asked(run: str, position: int, question: str, cached_calls: int) -> None:
        Prediction.objects.create(
            run=runs[run],
            sample=samples[position],
            position=position,
            status="done",
            prompt=ask(question),
            usage={"calls": 1, "cached_calls": cached_calls},
        )

    # q1: asked over HTTP by the fake, then found in the cache by the run on the real server
    asked("local-fake", 0, "q1", cached_calls=0)
    asked("real", 0, "q1", cached_calls=1)
    # q2: asked over HTTP by both (at once): who wrote it cannot be told
    asked("local-fake", 1, "q2", cached_calls=0)
    asked("real", 1, "q2", cached_calls=0)
    judge = model("evaluation", "Judge").objects.create(
        name="j", template="generic.pairwise", kind="pairwise", endpoint=endpoints["solo"]
    )
    job = model("evaluation", "JudgeJob").objects.create(judge=judge, run=runs["local-fake"])
    Cache = model("evaluation", "ResponseCache")
    rows = {
        "q1": (old_key("chat", body("gpt-4o", "q1", **params)), body("gpt-4o", "q1", **params)),
        "q2": (old_key("chat", body("gpt-4o", "q2", **params)), body("gpt-4o", "q2", **params)),
        # an agent's later step: no item records it, and two servers could have asked it
        "step": (old_key("chat", body("gpt-4o", "step 2")), body("gpt-4o", "step 2")),
        "solo": (old_key("chat", body("solo-model", "q")), body("solo-model", "q")),
        "judge": (
            old_key("chat", body("solo-model", "judge this"), "judge-repeat-1"),
            body("solo-model", "judge this"),
        ),
        "unknown style": ("f" * 64, body("solo-model", "?")),
    }
    for key, request in rows.values():
        Cache.objects.create(key=key, model=request["model"], request=request, response={"t": 1})
    embedding_key = hashlib.sha256(
        json.dumps({"embeddings": "embed-model", "input": "a tool"}, ensure_ascii=False).encode()
    ).hexdigest()
    Cache.objects.create(
        key=embedding_key,
        model="embed-model",
        request={"embeddings": "embed-model", "input": "a tool"},
        response={"embedding": [1.0, 0.0]},
    )
    assert job.pk and Cache.objects.count() == 7

    # when
    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)
    latest()

    # then the answers whose writer the rows tell have the key the code computes for it
    def origin(name: str, style: str = "chat") -> Origin:
        endpoint = Endpoint.objects.get(name=name)
        return Origin.of(endpoint.base_url, endpoint.model, style)

    moved = {row.key: row for row in ResponseCache.objects.all()}
    expected = {
        "q1": (origin("local-fake"), rows["q1"][1], ""),
        "solo": (origin("solo"), rows["solo"][1], ""),
        "judge": (origin("solo"), rows["judge"][1], "judge-repeat-1"),
    }
    for name, (who, request, salt) in expected.items():
        key = cache_key(who, request, salt)
        assert key in moved, name
        assert moved[key].base_url == who.base_url
    assert moved[cache_key(origin("solo"), rows["solo"][1])].base_url == "http://solo.example/v1"
    embedded = cache_key(
        Origin.of("https://embed.example/v1", "embed-model", "embeddings"),
        {"model": "embed-model", "input": "a tool"},
    )
    assert moved[embedded].request == {"model": "embed-model", "input": "a tool"}
    # and those it cannot tell stay under their old keys, which no endpoint asks for
    for name in ("q2", "step", "unknown style"):
        assert rows[name][0] in moved, name
        assert moved[rows[name][0]].base_url == ""
    assert len(moved) == 7
    # the fake's answer is found by the fake's own requests, never by the real server's
    prompt = Prompt(messages=ask("q1")["messages"])
    fake_config = endpoint_config(Endpoint.objects.get(name="local-fake"), params=params)
    real_config = endpoint_config(Endpoint.objects.get(name="real"), params=params)
    assert request_key(prompt, fake_config) in moved
    assert request_key(prompt, real_config) not in moved
