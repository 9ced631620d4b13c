"""The annotation app's refusal (annotation.assign re-exports it for its callers)."""

from __future__ import annotations

from config.errors import ApplicationError


class AnnotationError(ApplicationError):
    """The request cannot be carried out; the message says why, for the annotator."""
