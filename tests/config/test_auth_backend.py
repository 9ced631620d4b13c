"""config.auth.SessionUserBackend: a session's user read by a statement written once is the
user ModelBackend reads, with the same rule for inactive users; sessions that name ModelBackend
keep working."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import BACKEND_SESSION_KEY
from django.contrib.auth.backends import ModelBackend
from django.forms.models import model_to_dict
from django.test import Client

from config.auth import SessionUserBackend
from tests.factories import TEST_PASSWORD, make_researcher, make_user

pytestmark = pytest.mark.django_db


def test_the_user_read_is_the_one_the_orm_reads() -> None:
    user = make_researcher(first_name="Ada", last_name="=Lovelace", email="ada@example.org")
    ours = SessionUserBackend().get_user(str(user.pk))
    theirs = ModelBackend().get_user(user.pk)
    assert ours is not None and theirs is not None
    assert model_to_dict(ours) == model_to_dict(theirs)
    assert (ours.pk, ours.password, ours.last_login) == (
        theirs.pk,
        theirs.password,
        theirs.last_login,
    )
    assert ours.get_session_auth_hash() == theirs.get_session_auth_hash()
    assert ours.has_perm("evaluation.view_run") and not ours._state.adding


def test_no_user_for_an_inactive_a_missing_or_a_garbled_id() -> None:
    inactive = make_user(is_active=False)
    backend = SessionUserBackend()
    assert backend.get_user(inactive.pk) is None
    assert backend.get_user(987654321) is None
    assert backend.get_user("not a number") is None


def test_signing_in_names_the_new_backend_and_an_old_session_still_works(client: Client) -> None:
    user = make_researcher()
    assert client.login(username=user.username, password=TEST_PASSWORD)
    assert client.session[BACKEND_SESSION_KEY] == "config.auth.SessionUserBackend"
    assert client.get("/runs/").status_code == 200
    old = Client()
    old.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    assert old.session[BACKEND_SESSION_KEY] == "django.contrib.auth.backends.ModelBackend"
    assert old.get("/runs/").status_code == 200


def test_a_signed_in_request_reads_its_user_once(
    client: Client, django_assert_num_queries: Any
) -> None:
    user = make_user()
    client.force_login(user)
    client.get("/accounts/password_change/")
    # the session (in PostgreSQL, never in Redis) and the user, and nothing else for a page
    # that needs only a signed-in user
    with django_assert_num_queries(2):
        assert client.get("/accounts/password_change/").status_code == 200
