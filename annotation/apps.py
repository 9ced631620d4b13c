from django.apps import AppConfig
from django.db.models.signals import post_migrate


class AnnotationConfig(AppConfig):
    name = "annotation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The access table's system check (every URL has a rule) registers on import.
        import config.access  # noqa: F401
        from annotation import analysis_inputs
        from annotation.roles import after_migrate

        # The papers' analyses read the human labels of a run's outputs (WTU-Eval's error
        # types): evaluation may not import this app, so the input is registered from here.
        analysis_inputs.register()

        # After every migrate and every flush: the role groups and their permissions.
        post_migrate.connect(after_migrate, sender=self, dispatch_uid="annotation-role-groups")
