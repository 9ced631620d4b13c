"""AnyOf (config/lookups.py): the rows whose field is one of the values, as `__in` finds them,
with the values sent as one array."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.models import F
from django.test.utils import CaptureQueriesContext

from benchmarks.models import Benchmark, Sample
from config.lookups import AnyOf

pytestmark = pytest.mark.django_db


@pytest.fixture
def samples() -> list[Sample]:
    benchmark = Benchmark.objects.create(name="B", suite="generic")
    return [
        Sample.objects.create(benchmark=benchmark, split="s", external_id=str(i), input={})
        for i in range(5)
    ]


def test_it_finds_what_in_finds(samples: list[Sample]) -> None:
    wanted = {samples[0].pk, samples[3].pk, 10**12}
    found = set(Sample.objects.filter(AnyOf(F("pk"), wanted)).values_list("pk", flat=True))
    assert found == set(Sample.objects.filter(pk__in=wanted).values_list("pk", flat=True))
    assert found == {samples[0].pk, samples[3].pk}


def test_no_values_find_nothing(samples: list[Sample]) -> None:
    assert not Sample.objects.filter(AnyOf(F("pk"), [])).exists()


def test_a_foreign_key_across_a_join(samples: list[Sample]) -> None:
    benchmark = samples[0].benchmark
    other = Benchmark.objects.create(name="C", suite="generic")
    found = Benchmark.objects.filter(AnyOf(F("samples__pk"), [samples[1].pk])).distinct()
    assert list(found) == [benchmark] and other not in found


def test_many_values_are_one_parameter(samples: list[Sample]) -> None:
    many = list(range(1, 20_001))
    with CaptureQueriesContext(connection) as queries:
        count = Sample.objects.filter(AnyOf(F("pk"), many)).count()
    assert count == sum(1 for s in samples if s.pk <= 20_000)
    (query,) = queries.captured_queries
    assert "= ANY(" in query["sql"] and " IN (" not in query["sql"]
