from typing import Any

from django.apps import AppConfig
from django.core import checks
from django.db.models.signals import post_migrate

from config.address import check_trusted_proxies


def every_url_has_a_rule(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """config.access's system check. The access table (and Django REST framework, which it
    imports) is imported when the checks run, not at the start-up of every command."""
    # Here, not at the top: see the docstring.
    from config.access import check_every_url_has_a_rule

    return check_every_url_has_a_rule(app_configs, **kwargs)


class AnnotationConfig(AppConfig):
    name = "annotation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # In ready(): roles reads the models, which exist once the app registry is loaded.
        from annotation.kinds import declare
        from annotation.roles import after_migrate

        # The built-in campaign kinds, in the order the setup page and the admin offer them,
        # imported when a kind is first asked for (annotation.kinds).
        declare(
            "annotation.kinds.refinement",
            "annotation.kinds.motivation",
            "annotation.kinds.turing",
            "annotation.kinds.pairwise",
            "annotation.kinds.baseline",
            "annotation.kinds.error_types",
            "annotation.kinds.answer_check",
            "annotation.kinds.step_review",
        )

        # The access table's system check: every URL has a rule.
        checks.register(every_url_has_a_rule, checks.Tags.security)
        # check --deploy: behind a TLS proxy, the proxies whose X-Forwarded-For is believed.
        checks.register(check_trusted_proxies, checks.Tags.security, deploy=True)
        # After every migrate and every flush: the role groups and their permissions.
        post_migrate.connect(after_migrate, sender=self, dispatch_uid="annotation-role-groups")
