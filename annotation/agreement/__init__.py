"""Agreement between raters (annotators, LLM judges, automatic metrics) on a campaign's items.

stats: the statistics and their bootstrap intervals (pure numpy, no Django); ratings: the rating
matrices as plain dataclasses; data: those matrices read from the database; report: the report
assembled per question and rater pair from the ratings alone (no Django).
"""
