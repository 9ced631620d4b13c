"""The annotation app's refusal (annotation.assign re-exports it, where it was first defined)."""

from __future__ import annotations

from config.errors import ApplicationError


class AnnotationError(ApplicationError):
    """The request cannot be carried out; the message says why, for the annotator."""
