"""The role groups and the researchers' permissions (annotation.roles)."""

from django.db import migrations


def grant(apps, schema_editor):
    from annotation.roles import role_groups_ensure

    # What exists at this point of the history; post_migrate grants the permissions of the
    # models added since (an applied migration's dependencies never change).
    role_groups_ensure(apps, strict=False)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0003_agreement_report"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("benchmarks", "0002_alter_sample_input"),
        ("evaluation", "0004_virtualapi_call_permission"),
    ]

    operations = [migrations.RunPython(grant, migrations.RunPython.noop)]
