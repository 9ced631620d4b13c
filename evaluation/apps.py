from django.apps import AppConfig
from django.core import checks

from config.secrets import deploy_check


class EvaluationConfig(AppConfig):
    name = "evaluation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # `check --deploy`: SECRET_KEY and the key that encrypts the endpoints' keys (the
        # settings refuse both already when they read them; this holds settings made otherwise).
        checks.register(deploy_check, checks.Tags.security, deploy=True)
