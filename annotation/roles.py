"""The two role groups every installation has, and what researchers may do (config.access says
which page needs which of these). Annotators get no model permission: they work through
campaign membership alone.

Researchers curate benchmarks, set up endpoints, runs, judges and campaigns, and read every
result; they never delete (a superuser does) and never write labels, reviews or adjudications
(only the studio does, for members).

`role_groups_ensure` runs in the migration annotation 0004 and after every `migrate` (and every
test database flush, which empties the tables but keeps the schema): it adds what is missing and
never takes a permission away, so an administrator may give the groups more.
"""

from __future__ import annotations

from typing import Any

from django.apps import apps as global_apps
from django.contrib.auth.management import create_permissions

RESEARCHERS = "researchers"
ANNOTATORS = "annotators"

CURATE = ("view", "add", "change")
RESEARCHER_PERMISSIONS: dict[str, dict[str, tuple[str, ...]]] = {
    "benchmarks": {
        "benchmark": CURATE,
        "tool": CURATE,
        "sample": CURATE,
        "samplerevision": CURATE,
        # Imports from the browser (/benchmarks/import/): started and read, never edited.
        "importjob": ("view", "add"),
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


def role_groups_ensure(apps: Any = global_apps, *, strict: bool = True) -> None:
    """Both groups, and every researcher permission on the researchers group (`apps`: the
    migration's historical models, or the real ones). `strict=False` (the data migration, which
    runs before the models added since exist) grants what exists; post_migrate then grants the
    rest, strictly, once every migration has run."""
    # Permissions are made after the last migration; make them now, so that the grant below
    # finds them on a database migrated a moment ago.
    for app_config in apps.get_app_configs():
        if app_config.label in (*RESEARCHER_PERMISSIONS, "auth", "contenttypes"):
            # (a migration's app configs are stubs without models_module, which
            # create_permissions takes as "this app has no models")
            models_module = getattr(app_config, "models_module", None)
            app_config.models_module = models_module or True
            create_permissions(app_config, apps=apps, verbosity=0)
            app_config.models_module = models_module
    group_model = apps.get_model("auth", "Group")
    permission_model = apps.get_model("auth", "Permission")
    researchers, _ = group_model.objects.get_or_create(name=RESEARCHERS)
    group_model.objects.get_or_create(name=ANNOTATORS)
    wanted = [
        (app_label, f"{action}_{model}")
        for app_label, models in RESEARCHER_PERMISSIONS.items()
        for model, actions in models.items()
        for action in actions
    ]
    found = {
        (p.content_type.app_label, p.codename): p
        for p in permission_model.objects.filter(
            content_type__app_label__in=RESEARCHER_PERMISSIONS
        ).select_related("content_type")
    }
    missing = [key for key in wanted if key not in found]
    if missing and strict:
        raise RuntimeError(f"permissions not found: {missing}")
    researchers.permissions.add(*(found[key] for key in wanted if key in found))


def after_migrate(sender: Any, **kwargs: Any) -> None:
    """post_migrate receiver (annotation is the last of the apps: every permission exists)."""
    role_groups_ensure(kwargs.get("apps") or global_apps)
