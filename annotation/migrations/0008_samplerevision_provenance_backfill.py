"""Revisions made by refinements before SampleRevision recorded how they were settled get their
reviewer and verdict from the refinement that made them (benchmarks 0004 added the fields;
refinement_apply fills them from now on), so that an export's provenance.json names them too.

The refinement that made revision n of a sample is the approved "fixed" label on that sample by
the revision's author whose base revision was n - 1 (sample_revise makes n = base + 1); its
approving review names the reviewer, and a label approved without one came from a campaign
without a review stage. Revisions no refinement made stay as they are."""

from __future__ import annotations

from typing import Any

from django.db import migrations


def forwards(apps: Any, schema_editor: Any) -> None:
    SampleRevision = apps.get_model("benchmarks", "SampleRevision")
    Label = apps.get_model("annotation", "Label")
    Review = apps.get_model("annotation", "Review")
    for revision in SampleRevision.objects.filter(number__gt=0, verdict="").iterator():
        label = (
            Label.objects.filter(
                item__sample_id=revision.sample_id,
                annotator_id=revision.author_id,
                review="approved",
                answers__verdict="fixed",
                answers__base_revision=revision.number - 1,
            )
            .order_by("-created_at")
            .first()
        )
        if label is None:
            continue
        review = (
            Review.objects.filter(label=label, decision="approved").order_by("-created_at").first()
        )
        revision.reviewer_id = review.reviewer_id if review else None
        revision.verdict = "approved" if review else "unreviewed"
        revision.save(update_fields=["reviewer", "verdict"])


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0007_campaign_show_gold"),
        ("benchmarks", "0004_samplerevision_reviewer_verdict"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
