"""Hostile input is a 4xx with a message, never a 500 (issue 13, finding 5): JSON nested 100,000
levels deep on every URL that takes a body, control characters in every filter of every page,
and the one bounded JSON reader itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from annotation.models import Label
from config import access
from config.untrusted import (
    MAX_JSON_DEPTH,
    UntrustedInputError,
    check_tree,
    control_character,
    json_loads_bounded,
)
from tests.config.test_access import calls_for
from tests.roles import VIRTUAL_CALL, World, build_world

DEEP = "[" * 100_000
CONTROLS = ("\x00", "\x01", "\x0b", "\x1f", "\x7f", "\x85")
# Every query parameter a page or the API reads.
FILTERS = (
    "benchmark",
    "split",
    "kind",
    "category",
    "q",
    "task",
    "status",
    "run",
    "page",
    "part",
    "after",
    "item",
    "seed",
    "metric",
    "judge",
    "question",
    "resamples",
    "limit",
    "offset",
    "format",
    "next",
)


# --- the reader ---------------------------------------------------------------------------------


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_the_reader_takes_json_up_to_the_depth_limit_and_refuses_deeper() -> None:
    # the imports' rule: at most MAX_JSON_DEPTH levels below the outermost value
    deepest = nested(MAX_JSON_DEPTH + 1)
    assert json_loads_bounded(deepest, max_bytes=10_000) == json.loads(deepest)
    with pytest.raises(UntrustedInputError, match=f"nested more than {MAX_JSON_DEPTH} levels"):
        json_loads_bounded(nested(MAX_JSON_DEPTH + 2), max_bytes=10_000)
    # the decoder's own recursion limit is met before any check could run: still refused
    with pytest.raises(UntrustedInputError, match="nested more than"):
        json_loads_bounded(DEEP, max_bytes=1_000_000)
    with pytest.raises(UntrustedInputError, match="nested more than"):
        json_loads_bounded('{"a":' * 50_000 + "1" + "}" * 50_000, max_bytes=1_000_000)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"note": "a\\u0000b"}', "note: contains a NUL character"),
        ('{"note": "\\ud800"}', "note: contains a lone surrogate U+D800"),
        ('{"a": {"\\udfff": 1}}', "a.\udfff: a key contains a lone surrogate U+DFFF"),
        ('{"x": NaN}', "x: the number NaN cannot be stored"),
        ("[1, Infinity]", "line 1 column 5: the number Infinity cannot be stored"),
        ('{"a": {"b": 1e999}}', "b: the number 1e999 (Infinity as a float) cannot be stored"),
        ('{"n": ' + "9" * 4301 + "}", "n: a whole number of 4,301 digits (more than 4,300)"),
        ("not json", "not JSON"),
        (b"\xff\xfe", "not UTF-8"),
    ],
)
def test_the_reader_refuses_what_no_database_can_store(text: Any, problem: str) -> None:
    with pytest.raises(UntrustedInputError) as refused:
        json_loads_bounded(text, max_bytes=10_000)
    assert problem in str(refused.value)


def test_the_reader_refuses_a_body_over_its_size_before_decoding_it() -> None:
    with pytest.raises(UntrustedInputError, match="over 100 bytes"):
        json_loads_bounded(b" " * 101, max_bytes=100)


def test_the_tree_check_has_no_depth_it_cannot_walk() -> None:
    value: Any = 1
    for _ in range(10_000):
        value = [value]
    with pytest.raises(UntrustedInputError, match="nested more than 64"):
        check_tree(value)


def test_control_characters_are_named() -> None:
    assert control_character("plain text") == ""
    assert control_character("a\x00b") == "contains a NUL character (U+0000)"
    assert control_character("line\nbreak") == "contains a control character (U+000A)"
    assert control_character("line\nbreak\ttab", allow_whitespace=True) == ""
    assert control_character("\x85") == "contains a control character (U+0085)"


# --- over HTTP ----------------------------------------------------------------------------------


@pytest.fixture
def world(tmp_path: Path) -> World:
    return build_world(tmp_path)


def as_allowed(world: World, name: str) -> Client:
    """A client of a role the table lets through to this URL (the studio needs a member)."""
    for role in ("superuser", "annotator", "reviewer", "adjudicator"):
        if access.allows(world.users[role], name, method="POST", **_kwargs(world, name)):
            return world.client(role)
    return world.client("superuser")


def _kwargs(world: World, name: str) -> dict[str, Any]:
    if name.startswith("campaign-"):
        return {"pk": world.motivation.pk}
    if name in ("annotation:review-submit", "annotation:refine-edit"):
        return {"campaign_id": world.refinement.pk}
    return {"campaign_id": world.motivation.pk}


def posting_names(world: World) -> list[tuple[str, str]]:
    """(URL name, path) of every page and API URL that takes a POST."""
    found = []
    for name in access.url_names():
        if name.startswith("admin:") or name == "logout":
            continue
        for key, call in calls_for(name, world):
            if call.method == "POST":
                found.append((key, call.path))
    return found


# The URLs that read a JSON body (the others take forms, or no body at all).
READ_JSON = ("campaign-submit", "campaign-skip", "endpoint-list POST", "evaluation:virtual")


@pytest.mark.django_db
def test_json_nested_100000_levels_deep_is_refused_on_every_url_that_takes_a_body(
    world: World,
) -> None:
    posts = posting_names(world)
    assert {"campaign-submit", "endpoint-list POST", "evaluation:virtual"} <= {n for n, _ in posts}
    wrong = []
    for name, path in posts:
        client = as_allowed(world, name.removesuffix(" POST"))
        response = client.post(path, DEEP, content_type="application/json")
        if response.status_code >= 500:
            wrong.append(f"{name} {path}: {response.status_code}")
        # the JSON endpoints read the body and say why they refuse it
        refused = response.status_code == 400 and "nested more than" in response.content.decode()
        if name in READ_JSON and not refused:
            wrong.append(f"{name} {path}: {response.status_code} {response.content[:200]!r}")
    assert not wrong, "\n".join(wrong)
    # and anonymously, where the body once was parsed before anyone was asked who they are
    anonymous = Client().post("/virtual/", DEEP, content_type="application/json")
    assert anonymous.status_code == 400
    assert "nested more than" in anonymous.json()["error"]


@pytest.mark.django_db
def test_a_json_body_with_a_nul_or_a_lone_surrogate_is_refused(world: World) -> None:
    client = world.client("annotator")
    pk = world.motivation.pk
    body = f'{{"assignment": {world.assignment.pk}, "answers": {{"reason": ["A"]}}, "token": '
    for text in (
        '"00000000-0000-0000-0000-000000000000", "note": "\\ud800"}',
        '"00000000-0000-0000-0000-000000000000", "note": "a\\u0000"}',
    ):
        response = client.post(
            f"/api/campaigns/{pk}/submit/", body + text, content_type="application/json"
        )
        assert response.status_code == 400, response.content
        assert "JSON body refused" in response.json()["detail"]
    assert not Label.objects.filter(annotator=world.users["annotator"]).exists()
    virtual = world.client("researcher").post(
        "/virtual/",
        json.dumps({**VIRTUAL_CALL, "tool_input": {"city": "\ud800"}}),
        content_type="application/json",
    )
    assert virtual.status_code == 400


@pytest.mark.django_db
@pytest.mark.parametrize("control", CONTROLS)
def test_a_control_character_in_any_filter_of_any_page_is_a_400(control: str, world: World) -> None:
    client = world.client("superuser")
    wrong = []
    for name in access.url_names():
        for key, call in calls_for(name, world):
            if call.method != "GET":
                continue
            for parameter in FILTERS:
                response = client.get(call.path.split("?")[0], {parameter: f"x{control}y"})
                if response.status_code != 400 or parameter not in response.content.decode():
                    wrong.append(f"{key} ?{parameter}: {response.status_code}")
    assert not wrong, "\n".join(wrong[:40])


@pytest.mark.django_db
def test_the_reported_filters_are_refused_with_what_is_wrong(world: World) -> None:
    client = world.client("researcher")
    for path in ("/api/samples/?split=%00", "/api/runs/?task=%00", "/runs/?benchmark=%00"):
        response = client.get(path)
        assert response.status_code == 400, path
        assert "contains a NUL character (U+0000)" in response.content.decode(), path


@pytest.mark.django_db
def test_a_nul_in_a_form_field_is_refused_and_nothing_is_stored(world: World) -> None:
    client = world.client("annotator")
    m = world.motivation.pk
    response = client.post(
        f"/annotate/{m}/submit/{world.assignment.pk}/", {"reason": "A", "note": "bad\x00note"}
    )
    assert response.status_code == 400
    assert "the form field 'note' contains a NUL character" in response.content.decode()
    assert not Label.objects.filter(annotator=world.users["annotator"]).exists()
    # line breaks in a note are what notes are made of
    fine = client.post(
        f"/annotate/{m}/submit/{world.assignment.pk}/", {"note": "two\nlines\twith a tab"}
    )
    assert fine.status_code == 200


@pytest.mark.django_db
def test_a_huge_id_in_a_path_is_a_404_not_a_crash(world: World) -> None:
    client = world.client("superuser")
    huge = "9" * 30
    for path in (
        f"/runs/{huge}/",
        f"/judging/{huge}/",
        f"/api/samples/{huge}/",
        f"/api/runs/{huge}/",
        f"/campaigns/{huge}/progress/",
        f"/campaigns/{huge}/agreement/",
        f"/leaderboard/{huge}/answer/",
    ):
        assert client.get(path).status_code == 404, path
    # the admin says the object does not exist, on its index page
    assert client.get(f"/admin/evaluation/run/{huge}/change/").status_code == 302
    annotator = world.client("annotator")
    assert annotator.get(f"/annotate/{huge}/").status_code == 404
