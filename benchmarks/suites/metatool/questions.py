"""MetaTool's human study of tools (the paper's section 3.2, ToolE): why would a model need this
tool? Each tool gets one of four usage motivations, A to D. Plain data: the annotation app's
motivation campaigns ask it (annotation.kinds.motivation)."""

from __future__ import annotations

MOTIVATION_CHOICES = [
    {"value": "A", "label": "Real-time or external data", "key": "1"},
    {"value": "B", "label": "Specialized inputs or outputs", "key": "2"},
    {"value": "C", "label": "Domain tasks beyond the model", "key": "3"},
    {"value": "D", "label": "Customization and interaction", "key": "4"},
]

MOTIVATION_QUESTIONS = [
    {
        "key": "reason",
        "text": "Why would a model need this tool?",
        "scale": "categories",
        "choices": MOTIVATION_CHOICES,
        "allow_note": True,
    }
]
