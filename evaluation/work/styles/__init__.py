"""The registry of API styles: style name -> its ApiStyle (evaluation.work.styles.base). An
endpoint's `style` names one; everything that differs between styles (the body a prompt gives,
the path it goes to, how the answer is read, the prompt form suites write, whether tools can be
declared) is the style's, and the platform asks the registry, never compares names.

The built-in styles are one module each here (`STYLE` in evaluation/work/styles/<name>.py),
named in BUILT_IN; any other is registered with `register(STYLE)` when its app starts (or by a
test, as tests/evaluation/styles/single_turn.py is). Endpoint.style and Run.style take their
choices from `style_choices`, evaluated when asked, so a style added needs no migration.
Pure Python, no Django."""

from __future__ import annotations

from importlib import import_module

from benchmarks.kit.protocol import Style
from evaluation.work.styles.base import (
    TOKEN_FIELDS,
    ApiStyle,
    PostedStyle,
    Reply,
    Unusable,
    token_counts,
)

__all__ = [
    "BUILT_IN",
    "TOKEN_FIELDS",
    "ApiStyle",
    "PostedStyle",
    "Reply",
    "UnknownStyle",
    "Unusable",
    "prompt_form",
    "register",
    "style_choices",
    "style_named",
    "styles",
    "token_counts",
    "unregister",
]

BUILT_IN = ("chat", "completion", "responses")

_registry: dict[str, ApiStyle] = {}


class UnknownStyle(ValueError):
    """No API style of that name is registered."""


def _load() -> None:
    for name in BUILT_IN:
        if name not in _registry:
            _registry[name] = import_module(f"evaluation.work.styles.{name}").STYLE


def register(style: ApiStyle) -> ApiStyle:
    """Add a style (or replace one of the same name); returns it."""
    if not getattr(style, "name", ""):
        raise ValueError("an API style needs a name")
    _load()
    _registry[style.name] = style
    return style


def unregister(name: str) -> None:
    """Forget a style added with register (a built-in one comes back on the next lookup)."""
    _registry.pop(name, None)


def styles() -> dict[str, ApiStyle]:
    """Every registered style by name, the built-in ones first."""
    _load()
    return dict(_registry)


def style_named(name: str) -> ApiStyle:
    """The style registered as `name`; UnknownStyle when there is none."""
    style = _registry.get(name)
    if style is None:
        _load()
        style = _registry.get(name)
        if style is None:
            raise UnknownStyle(f"unknown API style {name!r}; styles: {', '.join(_registry)}")
    return style


def style_choices() -> list[tuple[str, str]]:
    """(name, label) of every registered style: the choices of Endpoint.style and Run.style."""
    _load()
    return [(style.name, style.label) for style in _registry.values()]


def prompt_form(name: str) -> Style:
    """The form of prompt the suites write for style `name` (Context.style): its prompt_form,
    "chat" for no style (a run imported from published outputs)."""
    return style_named(name).prompt_form if name else "chat"
