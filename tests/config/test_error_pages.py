"""A refused or missing page is a page of the site: its navigation, what happened, a way back."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from tests.factories import make_user

pytestmark = pytest.mark.django_db


def text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_a_page_outside_your_role_says_so_with_the_navigation() -> None:
    # given an annotator, who may not launch runs
    client = Client()
    client.force_login(make_user(username="ann"))
    # when they open the run launcher
    response = client.get("/runs/new/")
    # then a styled 403: the site's navigation, what the page needs, who they are, a way back
    assert response.status_code == 403
    html = response.content.decode()
    assert 'nav aria-label="Main"' in html and "Log out" in html
    words = text(html)
    assert "This page is not open to you" in words
    assert "This page needs" in words
    assert "signed in as ann" in words
    assert 'href="/"' in html and "Back to your start page" in words


def test_an_address_with_nothing_says_so_with_the_navigation() -> None:
    client = Client()
    client.force_login(make_user(username="ann"))
    response = client.get("/no/such/<page>/")
    assert response.status_code == 404
    html = response.content.decode()
    assert 'nav aria-label="Main"' in html
    assert "Nothing is here" in text(html)
    assert "/no/such/%3Cpage%3E/" in html and "<page>" not in html  # the address, quoted
    assert "Back to the start page" in text(html)


def test_the_api_still_answers_json_for_what_it_does_not_have() -> None:
    client = Client()
    client.force_login(make_user(username="ann"))
    response = client.get("/api/no-such-thing/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
