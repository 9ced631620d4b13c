"""Text embedders for tasks that build candidate lists by similarity (MetaTool's similar task).

The default is local and needs no download (benchmarks.kit.embedding.local_embed). A run
option `embedding_endpoint` names an Endpoint instead: its OpenAI-compatible /v1/embeddings is
called with the endpoint's model, and every vector is kept in the response cache, so a rerun
embeds nothing again.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from evaluation.models import Endpoint, ResponseCache
from evaluation.work.caller import Origin, cache_key, endpoint_client
from evaluation.work.engine import ConfigurationError, endpoint_config

Embed = Callable[[Sequence[str]], list[list[float]]]
BATCH = 256


def embedder_for(options: dict[str, Any]) -> Embed:
    name = options.get("embedding_endpoint")
    if not name:
        # On first use: numpy and the local embedder load only in runs that embed locally.
        from benchmarks.kit.embedding import local_embed

        return local_embed
    endpoint = Endpoint.objects.filter(name=name).first()
    if endpoint is None:
        raise ValueError(f"embedding_endpoint {name!r}: no endpoint has that name")
    return lambda texts: remote_embed(endpoint, texts)


EMBEDDINGS = "embeddings"  # the style part of an embedding's cache key


def _body(model: str, text: str) -> dict[str, Any]:
    return {"model": model, "input": text}


def _unit(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


def remote_embed(endpoint: Endpoint, texts: Sequence[str]) -> list[list[float]]:
    """Each text's unit vector from `endpoint`'s /v1/embeddings, through the response cache
    under the same key as every other answer (caller.cache_key: the server, the model, the
    request), so that a vector is only reused for the server that gave it."""
    try:
        config = endpoint_config(endpoint)
    except ConfigurationError as exc:
        raise ValueError(str(exc)) from None
    origin = Origin.of(config.base_url, config.model, EMBEDDINGS)
    keys = [cache_key(origin, _body(config.model, text)) for text in texts]
    found = {
        row.key: row.response["embedding"]
        for row in ResponseCache.objects.filter(key__in=set(keys))
    }
    missing = sorted({i for i, key in enumerate(keys) if key not in found}, key=keys.__getitem__)
    if missing:
        client = endpoint_client(config, blocking=True, retries=max(0, config.max_attempts - 1))
        unique = list(dict.fromkeys(keys[i] for i in missing))
        text_of = {keys[i]: texts[i] for i in missing}
        rows = []
        for start in range(0, len(unique), BATCH):
            batch = unique[start : start + BATCH]
            response = client.embeddings.create(
                model=config.model, input=[text_of[key] for key in batch]
            )
            for key, data in zip(batch, sorted(response.data, key=lambda d: d.index), strict=True):
                found[key] = list(data.embedding)
                rows.append(
                    ResponseCache(
                        key=key,
                        model=config.model,
                        base_url=origin.base_url,
                        request=_body(config.model, text_of[key]),
                        response={"embedding": found[key]},
                    )
                )
        ResponseCache.objects.bulk_create(rows, ignore_conflicts=True)
    return [_unit(found[key]) for key in keys]
