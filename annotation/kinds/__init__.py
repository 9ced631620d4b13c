"""The registry of campaign kinds, the one list of them: kind name -> its CampaignKind
(annotation.kinds.base). Campaign.kind takes any name registered here, the setup pages and the
admin offer these, and nothing else names the kinds.

The registry imports no kind: a kind's module imports what it uses (the models, the item
sources, the report's sections), and the models ask the registry. The app names its built-in
kinds' modules when it starts (annotation.apps.AnnotationConfig.ready, `declare`), and the
registry imports them and registers their `KIND` when a kind is first asked for: a process that
never asks (an import command) does not load them, nor the statistics and the access table
they import.

Adding a kind: one module defining a CampaignKind subclass (its name, label, questions, item
sources, report sections and any hook it overrides) and, for the annotation page, one template
`annotation/items/<name>.html` showing what its item_view puts in `view`. A built-in kind is
declared by the app's start; any other with `register(KIND)` when its own app starts (or by a
test, as tests/annotation/toy_kind.py is). No migration: Campaign.kind takes any registered
kind."""

from __future__ import annotations

import importlib
from typing import Any

from django.core.exceptions import ValidationError

from annotation.errors import AnnotationError
from annotation.kinds.base import BuildRequest, CampaignKind, Submission

__all__ = [
    "BuildRequest",
    "CampaignKind",
    "Submission",
    "UnknownKind",
    "declare",
    "kind_choices",
    "kind_named",
    "kind_of",
    "kind_validator",
    "kinds",
    "register",
    "unregister",
]

_registry: dict[str, CampaignKind] = {}
# Modules whose KIND is registered when a kind is first asked for (declare).
_declared: list[str] = []


class UnknownKind(AnnotationError):
    """No campaign kind of that name is registered."""


def register(kind: CampaignKind) -> CampaignKind:
    """Add a kind (or replace one of the same name, keeping its place); returns it."""
    if not kind.name:
        raise ValueError("a campaign kind needs a name")
    _registry[kind.name] = kind
    return kind


def declare(*modules: str) -> None:
    """Name modules (dotted paths) whose `KIND` is registered, in this order, when a kind is
    first asked for."""
    _declared.extend(module for module in modules if module not in _declared)


def _registered() -> dict[str, CampaignKind]:
    while _declared:
        register(importlib.import_module(_declared.pop(0)).KIND)
    return _registry


def unregister(name: str) -> None:
    """Forget a kind added with register."""
    _registered().pop(name, None)


def kinds() -> dict[str, CampaignKind]:
    """Every registered kind by name, in the order they were registered (the built-in ones
    first)."""
    return dict(_registered())


def kind_named(name: str) -> CampaignKind:
    kind = _registered().get(name)
    if kind is None:
        raise UnknownKind(f"unknown kind {name!r}; kinds: {', '.join(_registry)}", field="kind")
    return kind


def kind_of(campaign: Any) -> CampaignKind:
    """The kind of a campaign."""
    return kind_named(campaign.kind)


def kind_validator(value: str) -> None:
    """Campaign.kind's validator: a registered kind (a form shows the message)."""
    if value not in _registered():
        raise ValidationError(f"unknown kind {value!r}; kinds: {', '.join(_registry)}")


def kind_choices() -> list[tuple[str, str]]:
    """The registered kinds as a form's choices (name, label)."""
    return [(name, kind.label) for name, kind in _registered().items()]
