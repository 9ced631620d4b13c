"""A judge version named as a researcher names it on the command line."""

from __future__ import annotations

from annotation.errors import AnnotationError
from evaluation.models import Judge, JudgeVersion


def version_named(judge: str, number: int | None = None) -> JudgeVersion:
    """The judge's version `number`, or its latest; AnnotationError naming what is missing."""
    found = Judge.objects.filter(name=judge).first()
    if found is None:
        raise AnnotationError(f"no judge named {judge!r}", field="judge")
    versions = JudgeVersion.objects.select_related("judge").filter(judge=found)
    version = (
        versions.order_by("-number").first()
        if number is None
        else versions.filter(number=number).first()
    )
    if version is None:
        known = ", ".join(f"v{n}" for n in versions.values_list("number", flat=True)) or "none"
        raise AnnotationError(
            f"judge {judge!r} has no version {number if number is not None else ''} "
            f"(versions: {known})".replace("version  (", "version ("),
            field="version",
        )
    return version
