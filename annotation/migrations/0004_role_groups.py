"""The two role groups every installation has, and what researchers may do (config.access says
which page needs which of these). Annotators get no model permission: they work through
campaign membership alone.

Researchers curate benchmarks, set up endpoints, runs, judges and campaigns, and read every
result; they never delete (a superuser does) and never write labels, reviews or adjudications
(only the studio does, for members).
"""

from django.db import migrations

RESEARCHERS = "researchers"
ANNOTATORS = "annotators"

CURATE = ("view", "add", "change")
RESEARCHER_PERMISSIONS = {
    "benchmarks": {
        "benchmark": CURATE,
        "tool": CURATE,
        "sample": CURATE,
        "samplerevision": CURATE,
    },
    "evaluation": {
        "endpoint": CURATE,
        "run": CURATE,
        "prediction": ("view",),
        "responsecache": ("view",),
        "judge": CURATE,
        "judgejob": CURATE,
        "judgment": ("view",),
        "virtualapi": (*CURATE, "call"),
        "apiresponse": ("view",),
        "servedcall": ("view",),
        "realapi": CURATE,
        "turingpair": ("view",),
    },
    "annotation": {
        "campaign": CURATE,
        # Edited inline on the campaign's page: removing a member or a question is setup.
        "question": (*CURATE, "delete"),
        "member": (*CURATE, "delete"),
        "item": ("view",),
        "assignment": ("view",),
        "label": ("view",),
        "review": ("view",),
        "adjudication": ("view",),
        "agreementreport": ("view",),
    },
}


def grant(apps, schema_editor):
    # Permissions are made after the last migration; make them now, so that a fresh database
    # has the group's grants as soon as it is migrated.
    from django.contrib.auth.management import create_permissions

    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    group_model = apps.get_model("auth", "Group")
    permission_model = apps.get_model("auth", "Permission")
    researchers, _ = group_model.objects.get_or_create(name=RESEARCHERS)
    group_model.objects.get_or_create(name=ANNOTATORS)
    wanted = []
    for app_label, models in RESEARCHER_PERMISSIONS.items():
        for model, actions in models.items():
            for action in actions:
                wanted.append(
                    permission_model.objects.get(
                        content_type__app_label=app_label, codename=f"{action}_{model}"
                    )
                )
    researchers.permissions.add(*wanted)


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0003_agreement_report"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("benchmarks", "0002_alter_sample_input"),
        ("evaluation", "0004_virtualapi_call_permission"),
    ]

    operations = [migrations.RunPython(grant, migrations.RunPython.noop)]
