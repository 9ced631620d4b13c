"""Judge versions (evaluation.judge_versions) and the answer mode.

Judges defined before this migration answered in text: they keep answer_mode "text" (new
judges default to "call"). Each existing judge gets version 1, pinned from its state at
migration time (template texts as this code has them, its endpoint's model, address, style and
parameters, mode text), and every existing job and judgment of it records that version: the
verdicts given before versions existed are attributed to the judge as it stood when versions
were introduced, which is the closest record there is of it, not a proof of it."""

import hashlib
import json

import django.db.models.deletion
from django.db import migrations, models


def _state(judge):
    from benchmarks.kit import judging as pure  # pure, no Django models: safe in a migration

    try:
        template = pure.template_named(judge.template)
        kind, prompt, schema = (
            template.kind,
            pure.prompt_texts(template),
            pure.verdict_schema(template),
        )
    except ValueError:  # a template this code no longer registers
        kind, prompt, schema = judge.kind, {}, {}
    endpoint = judge.endpoint
    return {
        "template": judge.template,
        "kind": kind,
        "prompt": prompt,
        "model": endpoint.model if endpoint else "",
        "endpoint": (
            {"id": endpoint.pk, "base_url": endpoint.base_url, "style": endpoint.style}
            if endpoint
            else None
        ),
        "params": {**(endpoint.default_params if endpoint else {}), **(judge.params or {})},
        "schema": schema,
        "mode": "text",
    }


def backfill(apps, schema_editor):
    Judge = apps.get_model("evaluation", "Judge")
    JudgeVersion = apps.get_model("evaluation", "JudgeVersion")
    JudgeJob = apps.get_model("evaluation", "JudgeJob")
    Judgment = apps.get_model("evaluation", "Judgment")
    for judge in Judge.objects.select_related("endpoint").iterator():
        state = _state(judge)
        text = json.dumps(state, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        version = JudgeVersion.objects.create(
            judge=judge,
            number=1,
            mode="text",
            model=state["model"],
            endpoint=judge.endpoint,
            pinned=state,
            digest=hashlib.sha256(text.encode()).hexdigest(),
        )
        JudgeJob.objects.filter(judge=judge).update(version=version)
        Judgment.objects.filter(job__judge=judge).update(version=version)


class Migration(migrations.Migration):
    dependencies = [
        ("evaluation", "0021_endpoint_styles_registered"),
    ]

    operations = [
        migrations.AddField(
            model_name="judge",
            name="answer_mode",
            field=models.CharField(
                choices=[
                    ("call", "Forced call of the verdict function (text where the style cannot)"),
                    ("text", "Text, read by the template's parser"),
                ],
                default="text",
                max_length=10,
            ),
        ),
        migrations.AlterField(
            model_name="judge",
            name="answer_mode",
            field=models.CharField(
                choices=[
                    ("call", "Forced call of the verdict function (text where the style cannot)"),
                    ("text", "Text, read by the template's parser"),
                ],
                default="call",
                help_text="How the judge answers: a forced call of a `verdict` function whose "
                "parameters are the verdict's JSON schema, where the endpoint's API style can "
                "declare tools (text otherwise); or always text.",
                max_length=10,
            ),
        ),
        migrations.CreateModel(
            name="JudgeVersion",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("number", models.PositiveIntegerField()),
                (
                    "mode",
                    models.CharField(
                        choices=[("call", "Forced function call"), ("text", "Text")],
                        max_length=10,
                    ),
                ),
                ("model", models.CharField(blank=True, max_length=200)),
                ("pinned", models.JSONField()),
                ("digest", models.CharField(max_length=64)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "endpoint",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="judge_versions",
                        to="evaluation.endpoint",
                    ),
                ),
                (
                    "judge",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="versions",
                        to="evaluation.judge",
                    ),
                ),
            ],
            options={"ordering": ["judge", "number"]},
        ),
        migrations.AddField(
            model_name="judgejob",
            name="version",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="jobs",
                to="evaluation.judgeversion",
            ),
        ),
        migrations.AddField(
            model_name="judgment",
            name="version",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="judgments",
                to="evaluation.judgeversion",
            ),
        ),
        migrations.AddConstraint(
            model_name="judgeversion",
            constraint=models.UniqueConstraint(
                fields=("judge", "number"), name="judge_version_number"
            ),
        ),
        migrations.AddConstraint(
            model_name="judgeversion",
            constraint=models.UniqueConstraint(
                fields=("judge", "digest"), name="judge_version_digest"
            ),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
