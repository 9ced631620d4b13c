"""The benchmark list (/benchmarks/, URL name benchmarks:home) and the login page."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from tests.factories import make_benchmark, make_sample, make_superuser, make_tool, make_user
from tests.roles import grant

pytestmark = pytest.mark.django_db


def test_home_requires_login(client: Client) -> None:
    response = client.get("/benchmarks/")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/benchmarks/"


def test_login_page_renders_and_logs_in(client: Client) -> None:
    make_user(username="ada", password="secret-pw")
    page = client.get("/accounts/login/?next=/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "ToolEval Studio" in html
    assert 'name="username"' in html
    assert 'name="next" value="/"' in html
    assert "/static/vendor/htmx/htmx.min.js" in html
    assert "/static/css/app.css" in html
    response = client.post("/accounts/login/", {"username": "ada", "password": "secret-pw"})
    assert response.status_code == 302
    assert response["Location"] == "/"


def test_login_failure_shows_an_error(client: Client) -> None:
    make_user(username="ada", password="secret-pw")
    response = client.post("/accounts/login/", {"username": "ada", "password": "wrong"})
    assert response.status_code == 200
    assert 'role="alert"' in response.content.decode()


def test_home_lists_benchmarks_with_counts(
    client: Client, django_assert_max_num_queries: Any
) -> None:
    wtu = make_benchmark(name="WTU-Eval", suite="wtueval", is_demo=True)
    make_benchmark(name="MTU-Bench", suite="mtubench")
    make_tool(benchmark=wtu)
    for split, n in (("R1", 3), ("R3", 2)):
        for _ in range(n):
            make_sample(benchmark=wtu, split=split)
    client.force_login(grant(make_user(), "view_benchmark"))
    # session, user, the user's permissions (its own and its groups'), benchmarks with counts,
    # split counts
    with django_assert_max_num_queries(6):
        response = client.get("/benchmarks/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "WTU-Eval" in html
    assert "MTU-Bench" in html
    assert html.count('class="badge"') == 1  # only the demo benchmark is marked
    assert '<span class="split-name">R1</span> <span class="num">3</span>' in html
    assert '<span class="split-name">R3</span> <span class="num">2</span>' in html
    assert "5 in all" in html
    # Admin links and the Admin nav item are for operators (superusers) only.
    assert "/admin/" not in html


def test_home_shows_admin_links_to_operators(client: Client) -> None:
    wtu = make_benchmark(name="WTU-Eval")
    client.force_login(make_superuser())
    html = client.get("/benchmarks/").content.decode()
    assert f"/admin/benchmarks/sample/?benchmark__id__exact={wtu.pk}" in html
    assert f"/admin/benchmarks/benchmark/{wtu.pk}/change/" in html


def test_home_escapes_benchmark_text(client: Client) -> None:
    make_benchmark(
        name="<script>alert(1)</script>",
        description='<img src=x onerror="alert(2)">',
        suite="<b>x</b>",
    )
    client.force_login(grant(make_user(), "view_benchmark"))
    html = client.get("/benchmarks/").content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img src=x" not in html
    assert "<b>x</b>" not in html


def test_an_annotator_is_sent_from_home_to_their_campaigns(client: Client) -> None:
    make_benchmark(name="Gold inside")
    client.force_login(make_user())
    response = client.get("/benchmarks/")
    assert response.status_code == 302 and response["Location"] == "/annotate/"
    html = client.get("/annotate/").content.decode()
    assert "Gold inside" not in html
    # the navigation offers only what they may open
    assert 'href="/runs/"' not in html and 'href="/judging/"' not in html
    assert 'href="/annotate/"' in html


def test_base_layout_has_csrf_header_and_logout_post_form(client: Client) -> None:
    client.force_login(make_user())
    html = client.get("/benchmarks/", follow=True).content.decode()
    assert '<body hx-headers=\'{"X-CSRFToken": "' in html
    assert '<form method="post" action="/accounts/logout/"' in html
    assert "/api/schema/" in html
    assert "http://" not in html and "https://" not in html  # no CDN


def test_logout_is_a_post(client: Client) -> None:
    client.force_login(make_user())
    response = client.post("/accounts/logout/")
    assert response.status_code == 302
    assert client.get("/benchmarks/").status_code == 302
