"""The agreement fixture of the perf scripts (agreement_speed.py, scale_out.py): a pairwise
campaign over two runs, every annotator answering every question on every item, written with
COPY. Import it after django.setup()."""

from __future__ import annotations

import json

import django
import numpy as np
from django.contrib.auth.models import User
from django.db import connection

from annotation.models import Campaign, Question
from benchmarks.models import Benchmark
from evaluation.models import Endpoint, Run
from perf.labels import LABEL_COLUMNS, label_row


def questions_spec(count: int) -> list[dict]:
    kinds = ("pairwise", "ordinal", "categories")
    spec = []
    for q in range(count):
        kind = kinds[q % 3]
        if kind == "pairwise":
            choices = [{"value": v, "label": str(v)} for v in (1, 0, -1)]
        elif kind == "ordinal":
            choices = [{"value": v, "label": str(v)} for v in range(1, 6)]
        else:
            choices = [{"value": c, "label": c} for c in ("A", "B", "C", "D")]
        spec.append({"key": f"q{q:02d}", "scale": kind, "choices": choices})
    return spec


def designed_answers(
    items: int, annotators: int, spec: list[dict], seed: int = 0
) -> dict[str, np.ndarray]:
    """Per question key, items x annotators answers: a per-item truth, each answer replaced
    by a random choice with probability 0.3."""
    rng = np.random.default_rng(seed)
    out = {}
    for question in spec:
        values = np.array([c["value"] for c in question["choices"]], dtype=object)
        truth = rng.integers(len(values), size=items)
        noise = rng.random((items, annotators)) < 0.3
        chosen = np.where(
            noise, rng.integers(len(values), size=(items, annotators)), truth[:, None]
        )
        out[question["key"]] = values[chosen]
    return out


def copy_rows(table: str, columns: str, rows: list[tuple]) -> None:
    with (
        connection.cursor() as cursor,
        cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy,
    ):
        for row in rows:
            copy.write_row(row)


def fixture_build(items: int, annotators: int, question_count: int) -> tuple[int, dict]:
    with connection.cursor() as cursor:
        cursor.execute(
            "TRUNCATE annotation_campaign, evaluation_run, benchmarks_benchmark, "
            "django_session CASCADE"
        )
    User.objects.filter(username__startswith="perf-agree-").delete()
    users = User.objects.bulk_create(
        # "!" is Django's unusable password: nobody signs in as them.
        [User(username=f"perf-agree-{j}", password="!") for j in range(annotators)]  # noqa: S106
    )
    benchmark = Benchmark.objects.create(name="perf agreement", suite="generic")
    endpoint, _ = Endpoint.objects.get_or_create(
        name="perf-agreement", defaults={"base_url": "http://127.0.0.1:9/v1", "model": "perf"}
    )
    run_a, run_b = (
        Run.objects.create(
            benchmark=benchmark, task="answer", endpoint=endpoint, status="done", name=name
        )
        for name in ("model A", "model B")
    )
    now = django.utils.timezone.now()
    copy_rows(
        "benchmarks_sample",
        "benchmark_id, split, external_id, kind, input, candidate_tools, metadata, revision, "
        "created_at, updated_at",
        [
            (
                benchmark.pk,
                "test",
                f"s{i}",
                "",
                json.dumps({"query": f"q {i}"}),
                "[]",
                "{}",
                0,
                now,
                now,
            )
            for i in range(items)
        ],
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id FROM benchmarks_sample WHERE benchmark_id = %s ORDER BY id", [benchmark.pk]
        )
        samples = [row[0] for row in cursor.fetchall()]
    rng = np.random.default_rng(1)
    scores = rng.random((items, 2)).round(1)
    for r, run in enumerate((run_a, run_b)):
        copy_rows(
            "evaluation_prediction",
            "run_id, sample_id, position, status, attempts, context, output, trace, note, "
            "scores, error, cached, usage, updated_at",
            [
                (
                    run.pk,
                    s,
                    i,
                    "done",
                    1,
                    "{}",
                    "",
                    "[]",
                    "",
                    json.dumps({"accuracy": scores[i, r]}),
                    "",
                    False,
                    "{}",
                    now,
                )
                for i, s in enumerate(samples)
            ],
        )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT a.id, b.id FROM evaluation_prediction a JOIN evaluation_prediction b "
            "ON a.sample_id = b.sample_id AND b.run_id = %s WHERE a.run_id = %s "
            "ORDER BY a.position",
            [run_b.pk, run_a.pk],
        )
        pairs = cursor.fetchall()
    campaign = Campaign.objects.create(
        name="perf agreement", kind="pairwise", labels_per_item=annotators, status="active"
    )
    spec = questions_spec(question_count)
    Question.objects.bulk_create(
        [
            Question(
                campaign=campaign,
                key=q["key"],
                text=f"Question {q['key']}",
                scale=q["scale"],
                choices=q["choices"],
                order=n,
            )
            for n, q in enumerate(spec)
        ]
    )
    copy_rows(
        "annotation_item",
        "campaign_id, position, sample_id, prediction_id, prediction_b_id, payload, active, "
        "submitted, is_open",
        [
            (campaign.pk, i, samples[i], a, b, "{}", annotators, annotators, False)
            for i, (a, b) in enumerate(pairs)
        ],
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id FROM annotation_item WHERE campaign_id = %s ORDER BY position", [campaign.pk]
        )
        item_ids = [row[0] for row in cursor.fetchall()]
    copy_rows(
        "annotation_assignment",
        "campaign_id, item_id, annotator_id, status, shown_order, leased_at, lease_until, "
        "submitted_at",
        [
            (campaign.pk, item, user.pk, "submitted", "AB" if (i + j) % 2 else "BA", now, now, now)
            for i, item in enumerate(item_ids)
            for j, user in enumerate(users)
        ],
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, item_id, annotator_id FROM annotation_assignment WHERE campaign_id = %s",
            [campaign.pk],
        )
        assignment_of = {(item, user): pk for pk, item, user in cursor.fetchall()}
    answers = designed_answers(items, annotators, spec)
    keys = [q["key"] for q in spec]
    buffer = []
    for i, item in enumerate(item_ids):
        for j, user in enumerate(users):
            given = {key: answers[key][i, j] for key in keys}
            buffer.append(
                label_row(
                    campaign.pk, item, assignment_of[(item, user.pk)], user.pk, given, 4000 + j, now
                )
            )
    copy_rows("annotation_label", LABEL_COLUMNS, buffer)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE annotation_label")
        cursor.execute("VACUUM ANALYZE annotation_item")
    metric = np.sign(scores[:, 0] - scores[:, 1])
    return campaign.pk, {"spec": spec, "answers": answers, "metric": metric}
