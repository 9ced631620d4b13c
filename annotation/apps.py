from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The access table's system check (every URL has a rule) registers on import.
        import config.access  # noqa: F401
