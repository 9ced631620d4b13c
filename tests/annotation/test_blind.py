"""Blind studies stay blind: for every sided kind in the kind registry, a
campaign with real sides (a text run against a native run of the same task; a real API response
against a simulated one), and everything its annotator is sent (the pages, the htmx fragments,
the API's answers) read for anything that maps a side to what made it: the runs' names and
models, the endpoints, the campaign's private name, the order shown against the canonical one,
and a side presented differently from the other."""

from __future__ import annotations

import json
import random
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from annotation import services
from annotation.assign import item_next
from annotation.kinds import BuildRequest, kinds
from annotation.models import Assignment, Campaign, Member, Question
from benchmarks.models import Benchmark
from benchmarks.services import benchmark_import
from evaluation import services as evaluation_services
from evaluation.models import Run
from tests.evaluation.conftest import execute_run, make_endpoint
from tests.factories import make_researcher, make_user, store_label
from tests.fake_openai import FakeOpenAI, ToolRequest, oracle, tool_reply
from tests.workers import flush_test_broker

pytestmark = pytest.mark.django_db(transaction=True)

METATOOL_DEMO = Path(__file__).resolve().parents[2] / "benchmarks" / "demo" / "metatool"
SIDED = sorted(name for name, kind in kinds().items() if kind.sided)


@dataclass
class Sides:
    """What a sided campaign is built from, and every string that would tell its sides apart."""

    request: BuildRequest
    private_name: str
    secrets: list[str] = field(default_factory=list)
    # Words that may appear only in the sentences listed (the Turing page says, once, that one
    # response is real and the other simulated).
    words: tuple[str, ...] = ()
    allowed_sentences: tuple[str, ...] = ()


def answering(request: ToolRequest) -> Any:
    """A model that needs a tool: natively it calls the first tool declared; in text it says
    so in words."""
    if request.tools:
        return tool_reply((request.tools[0], {}))
    return "Yes, I would need a tool for this."


def text_and_native_runs(tmp_path: Path) -> Iterator[Sides]:
    """Two launched runs of MetaTool's awareness task on the demo benchmark, one in text mode
    (zero-shot: no tool list in its prompt) and one in native mode (each item offered a drawn
    list of tools), each on its own endpoint and model, answered by the fake server."""
    manifest = json.loads((METATOOL_DEMO / "manifest.json").read_text())
    benchmark_import(
        suite="metatool",
        paths=[METATOOL_DEMO / name for name in manifest["files"]],
        benchmark_name="Blind MetaTool",
    )
    benchmark = Benchmark.objects.get(name="Blind MetaTool")
    flush_test_broker()
    with FakeOpenAI(responder=oracle(answering)) as server:
        runs = []
        for mode, model in (("text", "zephyr-textual-7b"), ("native", "quasar-native-9b")):
            endpoint = make_endpoint(
                server.base_url, name=f"endpoint-of-{model}", model=model, max_concurrency=2
            )
            run = evaluation_services.run_launch(
                benchmark=benchmark,
                task="awareness",
                endpoint=endpoint,
                name=f"Secret {mode} run of {model}",
                options={"tool_mode": mode},
            )
            execute_run(run)
            assert run.status == Run.Status.DONE, run.error
            runs.append(run)
    flush_test_broker()
    text, native = runs
    secrets = []
    for run in runs:
        secrets += [run.name, run.model_name, run.endpoint.name, run.endpoint.model]
        secrets += [f"/runs/{run.pk}/", f"run #{run.pk}", f"run {run.pk}"]
    secrets += [server.base_url, "native", "tool_mode", "text mode"]
    yield Sides(
        request=BuildRequest(run=text, run_b=native),
        # what "Make a pairwise campaign from these" names a campaign of two runs
        private_name=f"{text} vs {native}",
        secrets=secrets,
    )


TURING_NOTE = (
    "One response came from the real API, the other from a simulator; which is which is hidden."
)


def real_and_simulated_pairs(tmp_path: Path) -> Iterator[Sides]:
    """API-response pairs: a real response and a simulated one to the same call."""
    pairs = [
        {
            "api": f"tide_times_{i}",
            "documentation": {"name": "tide_times", "description": "High and low tides."},
            "arguments": {"port": f"Oban {i}"},
            "real": {"high": f"06:1{i}", "low": "12:30", "source": "harbour office"},
            "simulated": {"high": f"07:4{i}", "low": "13:55", "source": "tide model"},
        }
        for i in range(6)
    ]
    path = tmp_path / "pairs.json"
    path.write_text(json.dumps(pairs), encoding="utf-8")
    yield Sides(
        request=BuildRequest(pairs=path, pairs_name="pairs.json"),
        private_name="Turing: gpt-sim against the Oban harbour API",
        secrets=["gpt-sim", "shown_order"],
        words=("real", "simulated", "simulator", "canonical"),
        allowed_sentences=(TURING_NOTE,),
    )


# The sides of each way of building a sided kind's items. A sided kind built another way fails
# the test below until it is given its sides here.
SIDES_OF: dict[str, Callable[[Path], Iterator[Sides]]] = {
    "runs": text_and_native_runs,
    "api_pairs": real_and_simulated_pairs,
}


def answers_for(campaign: Campaign, view: dict[str, Any] | None = None) -> dict[str, Any]:
    """A valid answer to every question, as the form or the API sends it."""
    answers: dict[str, Any] = {}
    for question in campaign.questions.all():
        if question.scale == Question.Scale.PAIRWISE:
            value: Any = "left"
        elif question.scale == Question.Scale.ITEM_CHOICES:
            value = (view or {}).get("choices", [{}])[0].get("value", "")
        else:
            value = str(question.choices[0]["value"])
        answers[question.key] = [value] if question.multiple else value
    return answers


class Sections(HTMLParser):
    """Each side's skeleton: the labels its sections are read by (its heading, and the summary
    of each collapsible section, without a note in a nested span such as "(not read)"), with
    numbers and the side's own name taken out. What a section holds is the output's content."""

    def __init__(self) -> None:
        super().__init__()
        self.sides: list[list[str]] = []
        self.depth = 0  # <article> nesting inside the current side (0: outside any side)
        self.grab: str | None = None
        self.nested = 0  # spans inside the label being read
        self.text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = (dict(attrs).get("class") or "").split()
        if tag == "article" and "side" in classes and not self.depth:
            self.sides.append([])
            self.depth = 1
            return
        if tag == "article" and self.depth:
            self.depth += 1
        if not self.depth:
            return
        if self.grab is not None and tag == "span":
            self.nested += 1
        elif tag == "summary" or (tag == "p" and "kicker" in classes):
            self.grab, self.text, self.nested = tag, "", 0

    def handle_endtag(self, tag: str) -> None:
        if tag == "article" and self.depth:
            self.depth -= 1
        if self.grab is not None and tag == "span" and self.nested:
            self.nested -= 1
        elif self.depth and tag == self.grab:
            label = re.sub(r"\d+", "N", " ".join(self.text.split()))
            label = re.sub(r"\b(Left|Right|A|B)\b", "SIDE", label)
            self.sides[-1].append(f"{tag}: {label}")
            self.grab = None

    def handle_data(self, data: str) -> None:
        if self.grab is not None and not self.nested:
            self.text += data


def side_skeletons(html: str) -> list[list[str]]:
    parser = Sections()
    parser.feed(html)
    return parser.sides


def shape(value: Any) -> Any:
    """A JSON value's structure: its keys and their types, not its content."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in sorted(value.items())}
    if isinstance(value, list):
        return "list"
    return type(value).__name__


def keys_in(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for item in value.values() for k in keys_in(item)}
    if isinstance(value, list):
        return {k for item in value for k in keys_in(item)}
    return set()


@dataclass
class Seen:
    """Everything the annotator was sent, by what asked for it."""

    pages: dict[str, str] = field(default_factory=dict)
    payloads: dict[str, Any] = field(default_factory=dict)

    def page(self, what: str, response: Any) -> str:
        assert response.status_code < 400, (what, response.status_code)
        body = response.content.decode()
        self.pages[f"{what} #{len(self.pages)}"] = body
        return body

    def json(self, what: str, response: Any) -> Any:
        assert response.status_code < 400, (what, response.status_code, response.content)
        body = response.json() if response.content else None
        self.pages[f"{what} #{len(self.pages)}"] = response.content.decode()
        self.payloads[f"{what} #{len(self.payloads)}"] = body
        return body


def token_and_action(html: str) -> tuple[str, str]:
    token = re.search(r'name="token" value="([^"]+)"', html)
    action = re.search(r'hx-post="(/annotate/\d+/submit/\d+/)"', html)
    assert token and action, "no answer form on the page"
    return token.group(1), action.group(1)


def walk_as_annotator(client: Client, campaign: Campaign) -> Seen:
    """Every annotator-facing response of the campaign, over several of its items (each shown
    in an order of its own): the home page, the campaign list, the studio page and its htmx
    fragments (next, submit, skip, undo, guidelines), and the API's list, next, submit and
    skip."""
    seen = Seen()
    c = campaign.pk
    hx = {"HTTP_HX_REQUEST": "true"}
    seen.page("home", client.get("/"))
    seen.page("campaign list", client.get("/annotate/"))
    seen.page("guidelines", client.get(f"/annotate/{c}/guidelines/", **hx))
    seen.json("API campaigns", client.get("/api/campaigns/"))
    # the studio page, then a submit answered with the next item's fragment
    page = seen.page("studio page", client.get(f"/annotate/{c}/"))
    seen.page("studio fragment", client.get(f"/annotate/{c}/", **hx))
    token, action = token_and_action(page)
    posted = {**answers_for(campaign), "token": token, "time_ms": "900"}
    fragment = seen.page("submit fragment", client.post(action, posted, **hx))
    # undo brings the answered item back, with the answer as the annotator gave it
    seen.page("undo fragment", client.post(f"/annotate/{c}/undo/", **hx))
    token, action = token_and_action(fragment)
    fragment = seen.page(
        "submit again", client.post(action, {**posted, "token": str(uuid.uuid4())}, **hx)
    )
    # a skip answers with the next item
    skip = re.search(r'hx-post="(/annotate/\d+/skip/\d+/)"', fragment)
    assert skip is not None
    seen.page("skip fragment", client.post(skip.group(1), **hx))
    # the API: next, a submit answered with the next item, a skip
    api = f"/api/campaigns/{c}"
    given = seen.json("API next", client.post(f"{api}/next/"))
    for _ in range(2):
        assert given["assignment"] is not None, "the campaign ran out of items"
        body = {
            "assignment": given["assignment"],
            "answers": answers_for(campaign, given["item"]),
            "token": str(uuid.uuid4()),
            "time_ms": 700,
            "next": True,
        }
        submitted = seen.json(
            "API submit",
            client.post(f"{api}/submit/", json.dumps(body), content_type="application/json"),
        )
        given = submitted["next"]
    seen.json(
        "API skip",
        client.post(
            f"{api}/skip/",
            json.dumps({"assignment": given["assignment"]}),
            content_type="application/json",
        ),
    )
    seen.json("API next after a skip", client.post(f"{api}/next/"))
    seen.page("home afterwards", client.get("/"))
    return seen


@pytest.fixture(params=SIDED)
def sided_kind(request: Any) -> str:
    return str(request.param)


def test_no_annotator_response_maps_a_side_to_what_made_it(
    sided_kind: str, tmp_path: Path, client: Client
) -> None:
    kind = kinds()[sided_kind]
    builders = [b for b in sorted(kind.builders) if b in SIDES_OF]
    assert builders, f"give the sides of a {sided_kind} campaign in SIDES_OF ({kind.builders})"
    making = SIDES_OF[builders[0]](tmp_path)
    sides = next(making)
    # given a blind campaign named the way its researcher knows it
    campaign = services.campaign_create(name=sides.private_name, kind=sided_kind)
    services.items_build(campaign=campaign, request=sides.request)
    annotator = make_user(username="blind-annotator")
    services.members_add(campaign=campaign, users=[annotator], role=Member.Role.ANNOTATOR)
    services.campaign_activate(campaign=campaign)
    client.force_login(annotator)
    # when the annotator works through it by every way the studio offers (each lease draws its
    # order at random: seeded, so that both orders are drawn every time, where six unseeded
    # draws were all one order once in 32 runs)
    random.seed(27)
    seen = walk_as_annotator(client, campaign)
    # then the items were shown in both orders (so an order would have had something to tell)
    orders = set(Assignment.objects.filter(campaign=campaign).values_list("shown_order", flat=True))
    assert orders == {"AB", "BA"}
    leaks = []
    for what, body in seen.pages.items():
        # nothing names the runs, their models or endpoints, or the researcher's own title
        for secret in [sides.private_name, *sides.secrets]:
            if secret.lower() in body.lower():
                leaks.append(f"{what}: names {secret!r}")
        for word in ("shown_order", "canonical"):
            if word in body:
                leaks.append(f"{what}: carries {word!r}")
        plain = body
        for sentence in sides.allowed_sentences:
            plain = plain.replace(sentence, "")
        for word in sides.words:
            if re.search(rf"\b{word}\b", plain, re.IGNORECASE):
                leaks.append(f"{what}: says {word!r}")
        # the two sides are presented alike: the same sections under the same labels
        skeletons = side_skeletons(body)
        if skeletons:
            assert len(skeletons) == 2, (what, skeletons)
            if skeletons[0] != skeletons[1]:
                leaks.append(f"{what}: the sides differ: {skeletons[0]} against {skeletons[1]}")
    for what, payload in seen.payloads.items():
        for key in ("shown_order", "real", "simulated", "run", "run_a", "run_b", "model"):
            if key in keys_in(payload):
                leaks.append(f"{what}: has a {key!r} field")
        if not isinstance(payload, dict):
            continue
        items = [payload.get("item"), (payload.get("next") or {}).get("item")]
        for item in [i for i in items if isinstance(i, dict)]:
            shapes = [shape(side) for side in item.get("sides", [])]
            if len(shapes) == 2 and shapes[0] != shapes[1]:
                leaks.append(f"{what}: the sides differ in shape: {shapes[0]} / {shapes[1]}")
    assert not leaks, "\n".join(leaks)
    # what the annotator is shown instead: the campaign's neutral name
    assert all(campaign.shown_name in seen.pages[what] for what in seen.pages if "studio" in what)


def test_an_adjudicator_of_a_blind_campaign_is_as_blind_as_its_annotators(
    tmp_path: Path, client: Client
) -> None:
    # given a Turing campaign with an adjudication stage whose every item is disputed: one
    # annotator found the real response better on every question, the other the simulated one
    sides = next(real_and_simulated_pairs(tmp_path))
    pairs = json.loads(Path(str(sides.request.pairs)).read_text())
    pairs = [{**pair, "api": f"tide_times_{i}"} for i in range(4) for pair in pairs]  # 24 items
    Path(str(sides.request.pairs)).write_text(json.dumps(pairs))
    campaign = services.campaign_create(
        name=sides.private_name, kind="turing", labels_per_item=2, adjudication_stage=True
    )
    services.items_build(campaign=campaign, request=sides.request)
    first, second, adjudicator = make_user(), make_user(), make_user()
    services.members_add(campaign=campaign, users=[first, second], role=Member.Role.ANNOTATOR)
    services.members_add(campaign=campaign, users=[adjudicator], role=Member.Role.ADJUDICATOR)
    services.campaign_activate(campaign=campaign)
    keys = list(campaign.questions.values_list("key", flat=True))
    for user, value in ((first, 1), (second, -1)):
        while (assignment := item_next(campaign=campaign, user=user)) is not None:
            store_label(
                campaign=assignment.campaign,
                assignment_id=assignment.pk,
                user=user,
                answers=dict.fromkeys(keys, value),
                token=uuid.uuid4(),
            )
    client.force_login(adjudicator)
    real_on_the_left = []
    for item in campaign.items.order_by("position"):
        page = client.get(f"/adjudicate/{campaign.pk}/?item={item.pk}").content.decode()
        # when the adjudicator opens it: the sides in an order of their own, named left and
        # right, with every answer as the side it is on for them; nothing canonical
        for word in ("A is better", "B is better", "A better", "B better", "against A and B"):
            assert word not in page, word
        lefts = re.findall(
            r'<article class="card side".*?<pre class="output">([^<]*)</pre>', page, re.S
        )
        assert len(lefts) == 2, lefts
        real_left = "harbour office" in lefts[0]
        assert real_left != ("harbour office" in lefts[1])
        real_on_the_left.append(real_left)
        # the first annotator (real better) is "left better" exactly when the real one is left
        expected = "left better" if real_left else "right better"
        assert f"<td>{expected}</td>" in page
        # then the answer they settle on, about the sides as they saw them, is stored
        # against the canonical order
        token = re.search(r'name="replaces" value="([^"]*)"', page)
        assert token is not None
        posted = client.post(
            f"/adjudicate/{campaign.pk}/{item.pk}/",
            {**dict.fromkeys(keys, "left"), "replaces": token.group(1)},
        )
        assert posted.status_code == 200
        settled = item.adjudications.get(is_current=True)
        assert settled.answers == dict.fromkeys(keys, 1 if real_left else -1)
    # and the real response is not always on the same side
    assert set(real_on_the_left) == {True, False}


def test_a_researcher_names_what_members_see_and_keeps_their_own_name(client: Client) -> None:
    researcher = make_researcher()
    client.force_login(researcher)
    # created as the run comparison's link names it, with the name members see beside it
    response = client.post(
        "/campaigns/new/",
        {"kind": "turing", "name": "gpt-sim vs the Oban API", "public_name": "Tide study"},
    )
    assert response.status_code == 302
    campaign = Campaign.objects.get(name="gpt-sim vs the Oban API")
    assert campaign.shown_name == "Tide study"
    # the researcher's pages show their own name, and what members see
    overview = client.get("/campaigns/").content.decode()
    assert "gpt-sim vs the Oban API" in overview and "Tide study" in overview
    details = client.get(f"/campaigns/{campaign.pk}/setup/").content.decode()
    assert 'value="Tide study"' in details
    # changed (blank: a blind campaign's members see its kind and number), or too long: refused
    # naming the field
    too_long = client.post(
        f"/campaigns/{campaign.pk}/setup/",
        {"name": campaign.name, "public_name": "x" * 201, "labels_per_item": "3"},
    )
    assert too_long.status_code == 400
    assert re.search(r'id="public_name"[^>]*aria-invalid="true"', too_long.content.decode())
    client.post(
        f"/campaigns/{campaign.pk}/setup/",
        {"name": campaign.name, "public_name": " ", "labels_per_item": "3"},
    )
    campaign.refresh_from_db()
    assert campaign.public_name == ""
    assert campaign.shown_name == f"Turing test of API responses #{campaign.pk}"
    # a campaign without sides shows its members its name when it has no public one
    plain = services.campaign_create(name="Tool motivations", kind="motivation")
    assert plain.shown_name == "Tool motivations"
