"""One domain error: what every service raises and how the API answers it."""

from rest_framework.test import APIRequestFactory

from annotation.agreement.data import AgreementError
from annotation.assign import AnnotationError
from annotation.draft_editing import RefineError
from benchmarks.services import RevisionConflict
from config.errors import ApplicationError, api_exception_handler
from config.untrusted import UntrustedInputError
from evaluation.credentials import KeyVariableError
from evaluation.judging import JudgeError
from evaluation.services import RunError


def test_every_area_error_is_the_one_application_error():
    for cls in (
        AnnotationError,
        AgreementError,
        RefineError,
        RevisionConflict,
        RunError,
        JudgeError,
        KeyVariableError,
        UntrustedInputError,
    ):
        assert issubclass(cls, ApplicationError), cls
        # Code written against ValueError still catches them.
        assert issubclass(cls, ValueError), cls


def test_the_api_answers_an_application_error_with_what_and_where():
    request = APIRequestFactory().post("/api/x/")
    response = api_exception_handler(
        ApplicationError("the label names no question", field="answers.q1"), {"request": request}
    )
    assert response.status_code == 400
    assert response.data == {
        "detail": "the label names no question",
        "code": "invalid",
        "field": "answers.q1",
    }


def test_an_error_may_carry_its_own_status_and_code():
    error = RunError("the run is finished", code="conflict", status=409)
    response = api_exception_handler(error, {})
    assert response.status_code == 409
    assert response.data["code"] == "conflict"


def test_untrusted_input_keeps_its_path_as_the_field():
    error = UntrustedInputError("a NUL character", "answers.note")
    assert str(error) == "answers.note: a NUL character"
    assert error.message == "a NUL character"
    assert error.as_dict()["field"] == "answers.note"


def test_other_exceptions_are_left_to_drf():
    assert api_exception_handler(KeyError("x"), {}) is None
