"""The registry of campaign kinds: kind name -> its CampaignKind (annotation.kinds.base).

The built-in kinds are one module each here (`KIND` in annotation/kinds/<name>.py), loaded the
first time a kind is asked for, so that the models, services and selectors can ask the registry
without importing what each kind uses (the kinds' modules import them).

Adding a kind: one module defining a CampaignKind subclass (its name, label, questions, the ways
its items are built, and any hook it overrides) and, for the annotation page, one template
`annotation/items/<name>.html` showing what its item_view puts in `view`. A built-in kind is
named in BUILT_IN; any other is registered with `register(KIND)` when its app starts (or by a
test, as tests/annotation/toy_kind.py is). No migration: Campaign.kind takes any registered
kind."""

from __future__ import annotations

from importlib import import_module
from typing import Any

from annotation.errors import AnnotationError
from annotation.kinds.base import BuildRequest, CampaignKind, Submission

__all__ = [
    "BUILT_IN",
    "BuildRequest",
    "CampaignKind",
    "Submission",
    "UnknownKind",
    "kind_named",
    "kind_of",
    "kinds",
    "register",
    "unregister",
]

BUILT_IN = ("refinement", "motivation", "turing", "pairwise", "baseline", "error_types")

_registry: dict[str, CampaignKind] = {}


class UnknownKind(AnnotationError):
    """No campaign kind of that name is registered."""


def _load() -> None:
    for name in BUILT_IN:
        if name not in _registry:
            _registry[name] = import_module(f"annotation.kinds.{name}").KIND


def register(kind: CampaignKind) -> CampaignKind:
    """Add a kind (or replace one of the same name); returns it."""
    if not kind.name:
        raise ValueError("a campaign kind needs a name")
    _load()
    _registry[kind.name] = kind
    return kind


def unregister(name: str) -> None:
    """Forget a kind added with register (a built-in one comes back on the next lookup)."""
    _registry.pop(name, None)


def kinds() -> dict[str, CampaignKind]:
    """Every registered kind by name, the built-in ones first."""
    _load()
    return dict(_registry)


def kind_named(name: str) -> CampaignKind:
    _load()
    kind = _registry.get(name)
    if kind is None:
        raise UnknownKind(f"unknown kind {name!r}; kinds: {', '.join(_registry)}", field="kind")
    return kind


def kind_of(campaign: Any) -> CampaignKind:
    """The kind of a campaign."""
    return kind_named(campaign.kind)
