"""WTU-Eval's error types of failed traces (the paper's section 5.2 and Table 4), as a human
labels them: every type that applies to one failed attempt. The codes are the suite's own
(benchmarks.suites.wtueval.evaluate.ERROR_TYPES), so that a human's label and the evaluator's
per-item `errors[<type>]` score name an error alike; "incorrect_invocation" is the paper's
first type, which the evaluator splits into wrong_answer and unnecessary_tool. Plain data: the
annotation app's error-type campaigns ask it (annotation.kinds.error_types)."""

from __future__ import annotations

ERROR_TYPE_CHOICES = [
    {
        "value": "incorrect_invocation",
        "label": "Incorrect or unnecessary tool invocation",
        "key": "1",
    },
    {"value": "null_content", "label": "Null content", "key": "2"},
    {
        "value": "no_reasoning",
        "label": "Correct tool, but no reasoning over its result",
        "key": "3",
    },
    {
        "value": "invalid_tool_repeated",
        "label": "Invalid tool called repeatedly after a reminder",
        "key": "4",
    },
    {"value": "endless_retry", "label": "Endless retry", "key": "5"},
]

ERROR_TYPE_QUESTIONS = [
    {
        "key": "types",
        "text": "What went wrong?",
        "scale": "categories",
        "choices": ERROR_TYPE_CHOICES,
        "multiple": True,
        "min_choices": 1,
        "allow_note": True,
    }
]
