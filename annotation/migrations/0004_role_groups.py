"""The role groups and the researchers' permissions (annotation.roles)."""

from django.db import migrations


def grant(apps, schema_editor):
    from annotation.roles import role_groups_ensure

    role_groups_ensure(apps)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0003_agreement_report"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        # Every model the researchers hold a permission on exists before the grant (a fresh
        # database runs this once; the models added since are listed here).
        ("benchmarks", "0005_import_job"),
        ("evaluation", "0004_virtualapi_call_permission"),
    ]

    operations = [migrations.RunPython(grant, migrations.RunPython.noop)]
