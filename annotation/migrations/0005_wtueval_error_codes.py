"""WTU-Eval's error type "invalid tool called repeatedly" had two codes: `invalid_repeated` in the
studio's question and `invalid_tool_repeated` in the suite's evaluator (errors[...] scores). The
question now uses the suite's code; this renames it in the questions, labels, adjudications and
item golds already stored, so that old and new answers are the same answer."""

from __future__ import annotations

from typing import Any

from django.db import migrations

OLD, NEW = "invalid_repeated", "invalid_tool_repeated"


def _renamed(value: Any, old: str, new: str) -> Any:
    if value == old:
        return new
    if isinstance(value, list):
        return [_renamed(v, old, new) for v in value]
    return value


def _rename(apps: Any, old: str, new: str) -> None:
    Question = apps.get_model("annotation", "Question")
    Label = apps.get_model("annotation", "Label")
    Adjudication = apps.get_model("annotation", "Adjudication")
    Item = apps.get_model("annotation", "Item")
    keys: dict[int, set[str]] = {}
    for question in Question.objects.filter(scale="categories").iterator():
        values = [c.get("value") for c in question.choices or [] if isinstance(c, dict)]
        if old not in values:
            continue
        question.choices = [
            {**c, "value": new} if isinstance(c, dict) and c.get("value") == old else c
            for c in question.choices
        ]
        question.save(update_fields=["choices"])
        keys.setdefault(question.campaign_id, set()).add(question.key)
    for campaign_id, names in keys.items():
        for model, field, rows in (
            (Label, "answers", Label.objects.filter(campaign_id=campaign_id)),
            (Adjudication, "answers", Adjudication.objects.filter(item__campaign_id=campaign_id)),
            (Item, "gold", Item.objects.filter(campaign_id=campaign_id, gold__isnull=False)),
        ):
            changed = []
            for row in rows.iterator():
                data = getattr(row, field) or {}
                renamed = {
                    k: _renamed(v, old, new) if k in names else v for k, v in data.items()
                }
                if renamed != data:
                    setattr(row, field, renamed)
                    changed.append(row)
            model.objects.bulk_update(changed, [field], batch_size=1000)


def forwards(apps: Any, schema_editor: Any) -> None:
    _rename(apps, OLD, NEW)


def backwards(apps: Any, schema_editor: Any) -> None:
    _rename(apps, NEW, OLD)


class Migration(migrations.Migration):
    dependencies = [("annotation", "0004_role_groups")]

    operations = [migrations.RunPython(forwards, backwards)]
