"""The registry of campaign kinds, the one list of them: kind name -> its CampaignKind
(annotation.kinds.base). Campaign.kind takes any name registered here, the setup pages and the
admin offer these, and nothing else names the kinds.

The registry imports no kind: a kind's module imports what it uses (the models, the item
sources, the report's sections), and the models ask the registry, so the built-in kinds
(`KIND` in annotation/kinds/<name>.py) are registered when the app starts
(annotation.apps.AnnotationConfig.ready), after the models exist.

Adding a kind: one module defining a CampaignKind subclass (its name, label, questions, item
sources, report sections and any hook it overrides) and, for the annotation page, one template
`annotation/items/<name>.html` showing what its item_view puts in `view`. A built-in kind is
registered by the app's start; any other with `register(KIND)` when its own app starts (or by a
test, as tests/annotation/toy_kind.py is). No migration: Campaign.kind takes any registered
kind."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError

from annotation.errors import AnnotationError
from annotation.kinds.base import BuildRequest, CampaignKind, Submission

__all__ = [
    "BuildRequest",
    "CampaignKind",
    "Submission",
    "UnknownKind",
    "kind_choices",
    "kind_named",
    "kind_of",
    "kind_validator",
    "kinds",
    "register",
    "unregister",
]

_registry: dict[str, CampaignKind] = {}


class UnknownKind(AnnotationError):
    """No campaign kind of that name is registered."""


def register(kind: CampaignKind) -> CampaignKind:
    """Add a kind (or replace one of the same name, keeping its place); returns it."""
    if not kind.name:
        raise ValueError("a campaign kind needs a name")
    _registry[kind.name] = kind
    return kind


def unregister(name: str) -> None:
    """Forget a kind added with register."""
    _registry.pop(name, None)


def kinds() -> dict[str, CampaignKind]:
    """Every registered kind by name, in the order they were registered (the built-in ones
    first)."""
    return dict(_registry)


def kind_named(name: str) -> CampaignKind:
    kind = _registry.get(name)
    if kind is None:
        raise UnknownKind(f"unknown kind {name!r}; kinds: {', '.join(_registry)}", field="kind")
    return kind


def kind_of(campaign: Any) -> CampaignKind:
    """The kind of a campaign."""
    return kind_named(campaign.kind)


def kind_validator(value: str) -> None:
    """Campaign.kind's validator: a registered kind (a form shows the message)."""
    if value not in _registry:
        raise ValidationError(f"unknown kind {value!r}; kinds: {', '.join(_registry)}")


def kind_choices() -> list[tuple[str, str]]:
    """The registered kinds as a form's choices (name, label)."""
    return [(name, kind.label) for name, kind in _registry.items()]
