"""StableToolBench's Turing test of the virtual API server (the paper's section on the
simulator's quality): for a call, a real API response (A) and a simulated one (B), shown in
random order; which is better, overall and on format and relevance. Plain data: the annotation
app's Turing campaigns ask it (annotation.kinds.turing)."""

from __future__ import annotations

# 1: A (the real response) is better; 0: a tie; -1: B (the simulated one) is better.
PAIRWISE_CHOICES = [
    {"value": 1, "label": "A is better", "key": "1"},
    {"value": 0, "label": "Tie", "key": "2"},
    {"value": -1, "label": "B is better", "key": "3"},
]

TURING_QUESTIONS = [
    {"key": key, "text": text, "scale": "pairwise", "choices": PAIRWISE_CHOICES}
    for key, text in (
        ("overall", "Overall, which response is better?"),
        ("format", "Which response's format is more accurate?"),
        ("relevance", "Which response is more relevant to the call?"),
    )
]
