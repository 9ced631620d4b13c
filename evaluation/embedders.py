"""Text embedders for tasks that build candidate lists by similarity (MetaTool's similar task).

The default is local and needs no download (benchmarks.suites.embedding.local_embed). A run
option `embedding_endpoint` names an Endpoint instead: its OpenAI-compatible /v1/embeddings is
called with the endpoint's model, and every vector is kept in the response cache, so a rerun
embeds nothing again.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Sequence
from typing import Any

from evaluation.credentials import key_from_environment
from evaluation.models import Endpoint, ResponseCache

Embed = Callable[[Sequence[str]], list[list[float]]]
BATCH = 256


def embedder_for(options: dict[str, Any]) -> Embed:
    name = options.get("embedding_endpoint")
    if not name:
        from benchmarks.suites.embedding import local_embed

        return local_embed
    endpoint = Endpoint.objects.filter(name=name).first()
    if endpoint is None:
        raise ValueError(f"embedding_endpoint {name!r}: no endpoint has that name")
    return lambda texts: remote_embed(endpoint, texts)


def _key(model: str, text: str) -> str:
    canonical = json.dumps({"embeddings": model, "input": text}, ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _unit(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


def remote_embed(endpoint: Endpoint, texts: Sequence[str]) -> list[list[float]]:
    keys = [_key(endpoint.model, text) for text in texts]
    found = {
        row.key: row.response["embedding"]
        for row in ResponseCache.objects.filter(key__in=set(keys))
    }
    missing = sorted({i for i, key in enumerate(keys) if key not in found}, key=keys.__getitem__)
    if missing:
        api_key = key_from_environment(endpoint.api_key_env) if endpoint.api_key_env else "unused"
        if not api_key:
            raise ValueError(f"the environment variable {endpoint.api_key_env} is not set")
        import openai  # here: the client library is seconds of start-up for every process

        client = openai.OpenAI(
            base_url=endpoint.base_url, api_key=api_key, timeout=endpoint.timeout_seconds
        )
        unique = list(dict.fromkeys(keys[i] for i in missing))
        text_of = {keys[i]: texts[i] for i in missing}
        rows = []
        for start in range(0, len(unique), BATCH):
            batch = unique[start : start + BATCH]
            response = client.embeddings.create(
                model=endpoint.model, input=[text_of[key] for key in batch]
            )
            for key, data in zip(batch, sorted(response.data, key=lambda d: d.index), strict=True):
                found[key] = list(data.embedding)
                rows.append(
                    ResponseCache(
                        key=key,
                        model=endpoint.model,
                        request={"embeddings": endpoint.model, "input": text_of[key]},
                        response={"embedding": found[key]},
                    )
                )
        ResponseCache.objects.bulk_create(rows, ignore_conflicts=True)
    return [_unit(found[key]) for key in keys]
