"""Prediction.derived: the values of a record its suite's analyses count it by
(benchmarks.kit.analyses.RecordValue), kept with the answer. Two triggers keep them honest
whatever writes the rows (the ORM, the inference's SQL, COPY): a change to the answer, its
scores or its context empties them, and so does a change to the content of its sample; they
are computed again when an analysis next needs them (evaluation.analyses.fill_record_values).
The first trigger runs only on rows that hold values (none while a run is answered)."""

from django.db import migrations, models

PREDICTION_RESET = """
CREATE FUNCTION evaluation_prediction_derived_reset() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.derived IS NOT DISTINCT FROM OLD.derived AND (
        NEW.status, NEW.output, NEW.answer, NEW.parsed, NEW.trace, NEW.note, NEW.scores,
        NEW.context, NEW.tool_calls, NEW.leaked, NEW.sample_id, NEW.repeat, NEW.run_id
    ) IS DISTINCT FROM (
        OLD.status, OLD.output, OLD.answer, OLD.parsed, OLD.trace, OLD.note, OLD.scores,
        OLD.context, OLD.tool_calls, OLD.leaked, OLD.sample_id, OLD.repeat, OLD.run_id
    ) THEN
        NEW.derived := '{}'::jsonb;
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER prediction_derived_reset BEFORE UPDATE ON evaluation_prediction
FOR EACH ROW WHEN (OLD.derived <> '{}'::jsonb)
EXECUTE FUNCTION evaluation_prediction_derived_reset();
"""

SAMPLE_RESET = """
CREATE FUNCTION evaluation_sample_derived_reset() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE evaluation_prediction SET derived = '{}'::jsonb
    WHERE sample_id = NEW.id AND derived <> '{}'::jsonb;
    RETURN NULL;
END
$$;
CREATE TRIGGER sample_derived_reset AFTER UPDATE ON benchmarks_sample
FOR EACH ROW WHEN (
    (OLD.split, OLD.external_id, OLD.kind, OLD.input, OLD.reference, OLD.candidate_tools,
     OLD.metadata)
    IS DISTINCT FROM
    (NEW.split, NEW.external_id, NEW.kind, NEW.input, NEW.reference, NEW.candidate_tools,
     NEW.metadata)
)
EXECUTE FUNCTION evaluation_sample_derived_reset();
"""


class Migration(migrations.Migration):
    dependencies = [
        ("evaluation", "0022_judge_versions"),
        ("benchmarks", "0009_sample_search_and_revised_indexes"),
    ]

    operations = [
        migrations.AddField(
            model_name="prediction",
            name="derived",
            field=models.JSONField(
                blank=True, db_default=models.Value({}, models.JSONField()), default=dict
            ),
        ),
        migrations.RunSQL(
            PREDICTION_RESET,
            reverse_sql="DROP TRIGGER prediction_derived_reset ON evaluation_prediction;"
            " DROP FUNCTION evaluation_prediction_derived_reset();",
        ),
        migrations.RunSQL(
            SAMPLE_RESET,
            reverse_sql="DROP TRIGGER sample_derived_reset ON benchmarks_sample;"
            " DROP FUNCTION evaluation_sample_derived_reset();",
        ),
    ]
