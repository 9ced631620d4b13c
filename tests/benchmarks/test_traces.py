"""The step-level review's error types: the common ones, then a suite's own."""

import pytest

from benchmarks.kit.registry import all_suites
from benchmarks.kit.traces import COMMON_STEP_ERRORS, StepError, step_errors


def test_common_error_types_are_the_issue_s_six():
    assert [e.key for e in COMMON_STEP_ERRORS] == [
        "wrong_tool",
        "wrong_argument",
        "hallucinated_result",
        "unnecessary_call",
        "missed_call",
        "format",
    ]


def test_a_suite_adds_its_own_after_the_common_ones():
    own = StepError("state_mismatch", "State mismatch")
    assert [e.key for e in step_errors((own,))][-2:] == ["format", "state_mismatch"]


def test_a_suite_cannot_redefine_a_common_type():
    with pytest.raises(ValueError, match="wrong_tool"):
        step_errors((StepError("wrong_tool", "Mine"),))


def test_every_suite_s_taxonomy_has_distinct_keys():
    for suite in all_suites():
        keys = [e.key for e in suite.step_errors]
        assert len(keys) == len(set(keys)), suite.name
