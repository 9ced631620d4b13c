"""The predictions CSV, written by PostgreSQL's COPY and streamed in blocks, reads as what the
export gave before (the ORM read twice, one line per row, Python's csv module), on a hand-made
run whose cells are hostile: formulas, quotes, separators, line breaks, JSON of every shape,
keys in a different order on each row, a price, a count metric. A CSV reader gets the same
cells: every text cell (neutralised or not), flag, count and cost exactly; JSON cells (answers
and scores that are numbers, objects or lists) as equal values, since jsonb writes its own key
order and numbers (1e-05 as 0.00001). Lines end with \n (COPY's), the header's too."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator, Sequence
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from psycopg import sql

from evaluation.models import Endpoint, Prediction, Run
from evaluation.selectors import as_count, cost_cell_sql, prediction_score_names, task_spec
from evaluation.views import CSV_COLUMNS
from evaluation.work.budget import Prices, Tokens
from tests.factories import make_benchmark, make_researcher, make_sample

pytestmark = pytest.mark.django_db

# --- the export as it was (config/csvexport.py and evaluation/views.py before the change) ---

OLD_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def old_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return value
    if not isinstance(value, str):
        value = json.dumps(value, ensure_ascii=False, sort_keys=True)
    if value.startswith(OLD_FORMULA_STARTS):
        return "'" + value
    return value


class _Echo:
    def write(self, value: str) -> str:
        return value


def old_lines(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Iterator[str]:
    writer = csv.writer(_Echo())
    yield writer.writerow([old_cell(name) for name in header])
    for row in rows:
        yield writer.writerow([old_cell(value) for value in row])


def old_export(run: Run) -> bytes:
    spec = task_spec(run)
    prices = Prices.of(run.endpoint)
    predictions = run.predictions.order_by("position")
    score_names: list[str] = []
    for scores in predictions.values_list("scores", flat=True).iterator(chunk_size=2000):
        score_names.extend(name for name in scores or {} if name not in score_names)
    whole = {
        name
        for name in score_names
        if spec is not None
        and (metric := spec.item_metric(name)) is not None
        and metric.kind in ("count", "flag")
    }

    def cell(scores: dict[str, Any] | None, name: str) -> Any:
        value = (scores or {}).get(name)
        return as_count(value) if name in whole else value

    trials = run.trials > 1
    fields = (
        "position",
        "sample__split",
        "sample__external_id",
        "repeat",
        "status",
        "output",
        "answer",
        "tool_calls",
        "parsed",
        "note",
        "error",
        "attempts",
        "latency_ms",
        "cached",
        "prompt_tokens",
        "completion_tokens",
        "cached_tokens",
        "scores",
    )
    rows = []
    for values in predictions.values_list(*fields).iterator(chunk_size=2000):
        position, split, sample_id, repeat, *head, prompt, completion, cached, scores = values
        cost = str(prices.cost(Tokens(prompt, completion, cached))) if prices else ""
        rows.append(
            [
                run.pk,
                position,
                split,
                sample_id,
                repeat,
                repeat if trials else 0,
                *head,
                prompt,
                completion,
                cached,
                cost,
                *(cell(scores, name) for name in score_names),
            ]
        )
    header = CSV_COLUMNS + [f"score:{name}" for name in score_names]
    return "".join(old_lines(header, rows)).encode()


# --- a hostile run ------------------------------------------------------------------------------

HOSTILE_TEXTS = [
    '=HYPERLINK("http://x","y")',
    "+1+1",
    "-2",
    "@SUM(A1:A2)",
    "\tTAB",
    "\rCR",
    'a "quoted", comma; semi',
    "line one\nline two\r\nline three",
    "ünïcødé ✓ 表",
    "",
    " =not a formula (space first)",
    "'already an apostrophe",
]
HOSTILE_ANSWERS: list[Any] = [
    {"zeta": 1, "aa": [1, "=x"], "b": {"yy": None, "x": True}},
    "=1+1",
    3.0,
    7,
    True,
    None,
    ["-a", {"k": "@v"}],
    "plain",
    {"ключ": "значение", "a": 0.1},
    1e-05,
    "",
    {"": "empty key", "=": "+"},
]
HOSTILE_SCORES: list[Any] = [
    {"accuracy": 100.0, "zz": 0.5},
    {"n_calls": 2.0, "accuracy": 0.0},  # a new name on the second row
    {},
    {},
    {"b": 1, "a": 2, "accuracy": 1e-07},
    {"accuracy": -0.0, "=evil": "=1+1"},
    {"zz": None},
    {"accuracy": 50.0, "nested": {"y": 1, "x": [2, 1]}},
    {"accuracy": float(10**17)},
    {"aaaa": 1, "b": 2},
    {"accuracy": 33.333333333333336},
    {"zz": True, "n_calls": 3.5},
]


def hostile_run(*, trials: int = 1, tag: str = "") -> Run:
    benchmark = make_benchmark(name=f"=cmd|' /C calc'!A0{tag}", suite="generic")
    samples = [
        make_sample(benchmark=benchmark, split=f"=split{i % 2}", external_id=HOSTILE_TEXTS[i])
        for i in range(len(HOSTILE_TEXTS))
    ]
    endpoint = Endpoint.objects.create(
        name=f"priced{tag}",
        base_url="http://127.0.0.1:9/v1",
        model="m",
        price_in=Decimal("0.0000025"),
        price_out=Decimal("0.00001"),
        price_cached=Decimal("0.00000125"),
    )
    run = Run.objects.create(
        benchmark=benchmark,
        task="answer",
        split="default",
        endpoint=endpoint,
        status=Run.Status.DONE,
        model_name="m",
        options={"trials": trials} if trials > 1 else {},
    )
    # Positions written out of order, so the export's order is the database's ORDER BY.
    order = [5, 0, 11, 3, 8, 1, 10, 2, 9, 4, 7, 6]
    for i in order:
        Prediction.objects.create(
            run=run,
            sample=samples[i],
            position=i,
            repeat=i % trials,
            status="done" if i % 3 else "failed",
            attempts=i,
            output=HOSTILE_TEXTS[(i + 1) % len(HOSTILE_TEXTS)],
            answer=HOSTILE_ANSWERS[i],
            # the calls a native run sent (null in text mode), with hostile names and arguments
            tool_calls=None
            if i % 2
            else [
                {
                    "id": f"call_{i}",
                    "type": "function",
                    "function": {"name": HOSTILE_TEXTS[i], "arguments": '{"q": "=1+1"}'},
                }
            ],
            parsed=bool(i % 2),
            note=HOSTILE_TEXTS[(i + 2) % len(HOSTILE_TEXTS)],
            error=HOSTILE_TEXTS[(i + 3) % len(HOSTILE_TEXTS)],
            latency_ms=None if i == 4 else 10 * i,
            cached=i % 4 == 0,
            usage={} if i == 7 else {"prompt_tokens": 100 + i, "completion_tokens": 7 * i},
            scores=HOSTILE_SCORES[i],
        )
    # As the view reads it (the prices as stored: six decimal places).
    return Run.objects.select_related("endpoint").get(pk=run.pk)


def new_export(client: Client, run: Run) -> tuple[bytes, int]:
    client.force_login(make_researcher())
    response = client.get(f"/runs/{run.pk}/predictions.csv")
    assert response.status_code == 200 and response.streaming
    chunks = list(response.streaming_content)
    return b"".join(chunks), len(chunks)


def cells(text: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text.decode(), newline="")))


def as_json(cell: str) -> Any:
    try:
        value = json.loads(cell)
    except ValueError:
        return None
    # a JSON string is a text cell: compared exactly
    return None if isinstance(value, str) else value


def assert_reads_the_same(got: bytes, expected: bytes) -> None:
    """The same cells, JSON cells (answer, tool calls, scores) as equal JSON values, all else
    exactly."""
    old, new = cells(expected), cells(got)
    assert new[0] == old[0], "the same header"
    assert len(new) == len(old)
    json_columns = {
        i
        for i, name in enumerate(old[0])
        if name in ("answer", "tool_calls") or name[:6] == "score:"
    }
    for old_row, new_row in zip(old[1:], new[1:], strict=True):
        assert len(new_row) == len(old_row)
        for i, (was, now) in enumerate(zip(old_row, new_row, strict=True)):
            if was == now:
                continue
            assert i in json_columns, (old[0][i], was, now)
            assert as_json(was) is not None and as_json(now) == as_json(was), (old[0][i], was, now)
    # the header's line ends as the rows' do
    header_end = got.index(b"\nrun,") if got.startswith(b"\n") else got.index(b"\n")
    assert not got[:header_end].endswith(b"\r")


@pytest.mark.parametrize("trials", [1, 3])
@pytest.mark.parametrize("stored_names", [False, True])
def test_the_streamed_export_reads_as_the_old_one(
    client: Client, trials: int, stored_names: bool
) -> None:
    run = hostile_run(trials=trials)
    if stored_names:
        Run.objects.filter(pk=run.pk).update(score_names=prediction_score_names(run.pk))
    expected = old_export(run)
    # the hand-made set does reach every rule: a neutralised formula, JSON, a cost
    text = expected.decode()
    assert "'=HYPERLINK" in text and "'@SUM" in text and "'\tTAB" in text
    assert '{""aa"": [1, ""=x""], ""b"": {""x"": true, ""yy"": null}, ""zeta"": 1}' in text
    assert "score:=evil" in text
    got, _chunks = new_export(client, run)
    assert_reads_the_same(got, expected)
    # what differs is only what the module says: line ends, jsonb's JSON text
    new_text = got.decode()
    assert "'=HYPERLINK" in new_text and "'@SUM" in new_text and "'\tTAB" in new_text
    assert "\n" in new_text and "\r\n" not in new_text.replace("line two\r\n", "")
    assert '{""b"": {""x"": true, ""yy"": null}, ""aa"": [1, ""=x""], ""zeta"": 1}' in new_text


def test_rows_come_in_blocks_after_a_header_of_their_own(client: Client, monkeypatch: Any) -> None:
    from config import csvexport

    monkeypatch.setattr(csvexport, "COPY_BLOCK_BYTES", 1)
    run = hostile_run()
    got, chunks = new_export(client, run)
    # the header alone, then each of the 12 rows (one COPY message each) at once
    assert chunks == 13
    assert_reads_the_same(got, old_export(run))


def test_a_run_without_predictions_exports_its_header() -> None:
    run = hostile_run()
    run.predictions.all().delete()
    client = Client()
    got, chunks = new_export(client, run)
    assert chunks == 1
    assert got == old_export(run).replace(b"\r\n", b"\n")
    assert got.decode().startswith("run,position,split,sample_id,repeat,trial,status,")


def test_a_header_cell_with_a_line_break_is_quoted(client: Client) -> None:
    run = hostile_run()
    Prediction.objects.filter(run=run, position=0).update(scores={"a\rb": 1, "c\nd": 2})
    got, _chunks = new_export(client, run)
    header, *rows = cells(got)
    assert header[len(CSV_COLUMNS) : len(CSV_COLUMNS) + 2] == ["score:a\rb", "score:c\nd"]
    assert len(rows) == 12 and all(len(row) == len(header) for row in rows)


PRICES = [
    Prices(Decimal("0.000003"), Decimal("0.000010"), Decimal("0.000001")),
    Prices(Decimal("2.500000"), Decimal("10.000000"), None),
    Prices(Decimal("0.150000"), Decimal("0.600000"), Decimal("0.075000")),
    Prices(Decimal("0.000000"), Decimal("0.000000"), None),
    Prices(Decimal("123456.789012"), Decimal("0.000001"), Decimal("7.000000")),
]
TOKENS = [
    (0, 0, 0),
    (1, 0, 0),
    (0, 1, 0),
    (100, 7, 0),
    (100, 7, 150),
    (120, 9, 40),
    (10**6, 3, 10**5),
    (3, 1, 3),
    (999_999_999, 123_456, 5),
    (7, 0, 2),
]


@pytest.mark.parametrize("prices", PRICES)
def test_the_cost_is_the_text_of_its_decimal(prices: Prices) -> None:
    query = sql.SQL(
        "SELECT {cost} FROM (VALUES {rows}) AS p(prompt_tokens, completion_tokens, cached_tokens)"
    ).format(
        cost=cost_cell_sql(prices),
        rows=sql.SQL(", ").join(
            sql.SQL("({}::bigint, {}::bigint, {}::bigint)").format(*map(sql.Literal, t))
            for t in TOKENS
        ),
    )
    with connection.cursor() as cursor:
        cursor.execute(query.as_string(cursor.cursor))
        got = [row[0] for row in cursor.fetchall()]
    assert got == [str(prices.cost(Tokens(*t))) for t in TOKENS]
