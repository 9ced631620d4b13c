"""Endpoint.max_attempts meant two things: HTTP attempts per call, and how many times a worker
may claim an item before it is failed. The second gets its own field, starting from the value
each endpoint had, so that no endpoint's behaviour changes."""

from django.db import migrations, models


def copy_attempts(apps, schema_editor):
    Endpoint = apps.get_model("evaluation", "Endpoint")
    Endpoint.objects.update(max_claims=models.F("max_attempts"))


class Migration(migrations.Migration):
    dependencies = [("evaluation", "0006_prediction_repeat_import_report")]

    operations = [
        migrations.AlterField(
            model_name="endpoint",
            name="max_attempts",
            field=models.PositiveSmallIntegerField(
                default=4,
                help_text="Attempts per request (retries of 429, 5xx, timeouts... with backoff) "
                "before the item is failed with the last reason.",
                verbose_name="HTTP attempts per call",
            ),
        ),
        migrations.AddField(
            model_name="endpoint",
            name="max_claims",
            field=models.PositiveSmallIntegerField(
                default=4,
                help_text="How many times a worker may take an item: an item whose worker was "
                "lost this many times (a poison item that kills workers) is failed instead of "
                "redone.",
                verbose_name="claims per item",
            ),
        ),
        migrations.RunPython(copy_attempts, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="endpoint",
            constraint=models.CheckConstraint(
                condition=models.Q(max_claims__gte=1), name="endpoint_claims_positive"
            ),
        ),
    ]
