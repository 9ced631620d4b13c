"""Plain factory functions: each makes one saved row with sensible defaults; keyword arguments
override any field."""

from __future__ import annotations

from itertools import count
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser

from benchmarks.models import Benchmark, Sample, SampleRevision, Tool

_seq = count(1)
# Test-only; a test that logs in through the form passes its own.
TEST_PASSWORD = "pw"


def make_user(
    *, username: str | None = None, password: str = TEST_PASSWORD, **fields: Any
) -> AbstractUser:
    user_model = get_user_model()
    return user_model.objects.create_user(
        username=username or f"user{next(_seq)}", password=password, **fields
    )


def make_researcher(
    *, username: str | None = None, password: str = TEST_PASSWORD, **fields: Any
) -> AbstractUser:
    """A staff user in the `researchers` group, with what the migrations granted it."""
    from django.contrib.auth.models import Group

    user = make_user(username=username, password=password, is_staff=True, **fields)
    user.groups.add(Group.objects.get(name="researchers"))
    return user


def make_superuser(*, username: str | None = None, password: str = TEST_PASSWORD) -> AbstractUser:
    return get_user_model().objects.create_superuser(
        username=username or f"admin{next(_seq)}", password=password, email=""
    )


def make_benchmark(**fields: Any) -> Benchmark:
    fields.setdefault("name", f"bench-{next(_seq)}")
    fields.setdefault("suite", "generic")
    return Benchmark.objects.create(**fields)


def make_tool(*, benchmark: Benchmark | None = None, **fields: Any) -> Tool:
    fields.setdefault("name", f"tool_{next(_seq)}")
    fields.setdefault("description", "Does one thing.")
    fields.setdefault("parameters", {"type": "object", "properties": {"x": {"type": "string"}}})
    return Tool.objects.create(benchmark=benchmark or make_benchmark(), **fields)


def make_sample(*, benchmark: Benchmark | None = None, **fields: Any) -> Sample:
    n = next(_seq)
    fields.setdefault("split", "test")
    fields.setdefault("external_id", f"s-{n}")
    fields.setdefault("input", {"query": f"question {n}?"})
    fields.setdefault("reference", {"answer": n})
    return Sample.objects.create(benchmark=benchmark or make_benchmark(), **fields)


def make_revision(*, sample: Sample | None = None, **fields: Any) -> SampleRevision:
    sample = sample or make_sample()
    fields.setdefault("number", sample.revisions.count())
    fields.setdefault("input", sample.input)
    fields.setdefault("reference", sample.reference)
    fields.setdefault("candidate_tools", sample.candidate_tools)
    return SampleRevision.objects.create(sample=sample, **fields)


def store_label(**fields: Any) -> tuple[Any, bool]:
    """A label stored as a submit stores it (annotation.submit.answers_submit's locked step),
    for tests that set up labels: the answers are given as stored (pairwise in the canonical
    order), without the questions' checks or the kind's on_submit."""
    from annotation.assign import _label_store

    return _label_store(**fields)
