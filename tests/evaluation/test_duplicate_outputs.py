"""Published output files that give a sample more than one line (issue 14, part 3).

MTU-Bench's published S-M GPT-4 responses repeat S-M_23 and S-M_30 and lack S-M_24 and S-M_31;
its scorer loops over the file's lines and scores each against its id's gold. The import refuses
such a file by default (both lines and the way out named), and `--on-duplicate` says what a
repeat means: `reference` scores every line as an item of its own, `first` / `last` keep one
line per sample. The policy belongs to the shared import path, so every suite's reader has it:
tested here on MTU-Bench (single- and multi-turn), the generic format and StableToolBench's
converted predictions (a JSON object, whose repeated key json.loads would silently collapse).
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.core.management import CommandError
from django.test import Client

from benchmarks.models import Benchmark, Sample
from benchmarks.services import benchmark_import
from benchmarks.suites.stabletoolbench import evaluate as stabletoolbench
from evaluation import judging
from evaluation.models import JudgeJob, Prediction, Run
from evaluation.services import RunError, predictions_import, run_compute_intervals
from tests.evaluation.conftest import make_counting_benchmark, make_endpoint
from tests.evaluation.test_commands import command, write_jsonl
from tests.factories import make_user

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("broker")]

ROOT = Path(__file__).resolve().parents[2]
DEMO_MTUBENCH = ROOT / "benchmarks" / "demo" / "mtubench"
NO_CALL = "Thought: The user's request needs no API call."


def demo_mtubench() -> Benchmark:
    manifest = json.loads((DEMO_MTUBENCH / "manifest.json").read_text("utf-8"))
    benchmark_import(
        suite="mtubench",
        paths=[DEMO_MTUBENCH / name for name in manifest["files"]],
        benchmark_name=manifest["benchmark"],
    )
    return Benchmark.objects.get(name=manifest["benchmark"])


def gold_answer(sample: Sample) -> str:
    """The sample's gold calls written as a model would answer them (MTU-Eval's format)."""
    lines = ["Thought: I will call the APIs the request needs."]
    for call in sample.reference["calls"]:
        if call["name"]:
            lines += [f"Action: {call['name']}", f"Action Input: {json.dumps(call['arguments'])}"]
    return "\n".join(lines) if len(lines) > 1 else NO_CALL


def response_file(path: Path, benchmark: Benchmark, lines: list[tuple[str, str | None]]) -> Path:
    """An MTU-Eval response file: (sample id, response; None for the gold answer) per line."""
    samples = {s.external_id: s for s in benchmark.samples.all()}
    records = [
        {"id": sid, "model": "ours", "response": text or gold_answer(samples[sid])}
        for sid, text in lines
    ]
    return write_jsonl(path, records)


def import_json(*args: str) -> dict[str, Any]:
    return json.loads(command("import_predictions", *args, "--json"))


def stored(run: Run, *scores: str) -> list[tuple[Any, ...]]:
    """(sample id, repeat, position, *scores) of each prediction, in the run's order."""
    return [
        (p.sample.external_id, p.repeat, p.position, *(p.scores[name] for name in scores))
        for p in run.predictions.select_related("sample").order_by("position")
    ]


# --- MTU-Bench S-M: our own response file over the demo benchmark -------------------------------


@pytest.fixture
def s_m_file(tmp_path: Path) -> Path:
    # S-M_0 answered right on line 1 and with no call on line 3; S-M_1 wrong; S-M_2 never.
    return response_file(
        tmp_path / "S-M_ours_response.jsonl",
        demo_mtubench(),
        [("S-M_0", None), ("S-M_1", NO_CALL), ("S-M_0", NO_CALL)],
    )


def import_s_m(path: Path, *args: str) -> dict[str, Any]:
    return import_json(
        "mtubench", "S-M", str(path), "--benchmark", "MTU-Bench (demo)", "--name", "m", *args
    )


def test_a_repeated_id_is_refused_by_default_naming_both_lines_and_the_option(
    s_m_file: Path,
) -> None:
    with pytest.raises(CommandError) as info:
        import_s_m(s_m_file)
    message = str(info.value)
    assert message.startswith(f"Nothing imported. {s_m_file}, line 3: sample 'S-M_0' ")
    assert "line 1" in message
    assert "--on-duplicate reference" in message
    assert "first" in message and "last" in message
    assert not Run.objects.exists()
    assert not Prediction.objects.exists()
    # The policy is the service's: the same refusal without the command.
    with pytest.raises(RunError, match="line 1"):
        predictions_import(benchmark=Benchmark.objects.get(), task="S-M", path=s_m_file, name="m")


def test_reference_scores_every_line_against_its_ids_gold(s_m_file: Path) -> None:
    printed = import_s_m(s_m_file, "--on-duplicate", "reference")
    run = Run.objects.get()
    # Lines 1, 2, 3 score TN 1, 0, 0: the mean over the three lines, as MTU-Eval's loop.
    assert printed == {
        "run": run.pk,
        "items": 3,
        "metrics": {"TN": 33.33, "TO": 33.33, "Avg": 33.33},
        "outputs": 3,
        "on_duplicate": "reference",
        "repeated": ["S-M_0"],
        "repeats_scored": 1,
        "repeats_dropped": 0,
        "missing": ["S-M_2"],
        "missing_count": 1,
    }
    assert stored(run, "TN") == [("S-M_0", 0, 0, 1.0), ("S-M_1", 0, 1, 0.0), ("S-M_0", 1, 2, 0.0)]
    assert run.predictions.get(repeat=1).output == NO_CALL
    assert run.import_report["on_duplicate"] == "reference"
    assert run.import_report["repeated"] == [
        {"sample": "S-M_0", "sources": [f"{s_m_file}, line 1", f"{s_m_file}, line 3"]}
    ]


def test_first_keeps_the_first_line_of_each_sample(s_m_file: Path) -> None:
    printed = import_s_m(s_m_file, "--on-duplicate", "first")
    run = Run.objects.get()
    assert printed["items"] == 2
    assert printed["metrics"] == {"TN": 50.0, "TO": 50.0, "Avg": 50.0}
    assert (printed["repeats_scored"], printed["repeats_dropped"]) == (0, 1)
    assert printed["missing"] == ["S-M_2"]
    assert stored(run, "TN") == [("S-M_0", 0, 0, 1.0), ("S-M_1", 0, 1, 0.0)]


def test_last_keeps_the_last_line_of_each_sample(s_m_file: Path) -> None:
    printed = import_s_m(s_m_file, "--on-duplicate", "last")
    run = Run.objects.get()
    assert printed["items"] == 2
    assert printed["metrics"] == {"TN": 0.0, "TO": 0.0, "Avg": 0.0}
    assert (printed["repeats_scored"], printed["repeats_dropped"]) == (0, 1)
    # The kept lines in the file's order: S-M_1 (line 2), then S-M_0's line 3.
    assert stored(run, "TN") == [("S-M_1", 0, 0, 0.0), ("S-M_0", 0, 1, 0.0)]
    assert run.predictions.get(sample__external_id="S-M_0").output == NO_CALL


def test_the_command_says_what_it_did_with_repeats_and_what_is_missing(s_m_file: Path) -> None:
    out = command(
        "import_predictions",
        *("mtubench", "S-M", str(s_m_file), "--benchmark", "MTU-Bench (demo)", "--name", "m"),
        *("--on-duplicate", "reference"),
    )
    run = Run.objects.get()
    assert out.splitlines() == [
        f'Run {run.pk} (m): 3 items, {{"TN": 33.33, "TO": 33.33, "Avg": 33.33}}',
        "Read 3 outputs. 1 sample has several lines (S-M_0): 1 repeat scored as an item "
        "of its own (--on-duplicate reference).",
        "No output for 1 sample: S-M_2",
    ]


def test_the_demo_response_file_prints_what_the_readme_shows() -> None:
    demo_mtubench()
    path = DEMO_MTUBENCH / "S-M_demo_responses.jsonl"
    args = ("mtubench", "S-M", str(path), "--benchmark", "MTU-Bench (demo)")
    with pytest.raises(CommandError) as info:
        command("import_predictions", *args, "--name", "demo model")
    assert str(info.value).startswith(
        f"Nothing imported. {path}, line 3: sample 'S-M_1' already has an output on line 2. "
        "To import a file that gives a sample several lines, say what a repeat means: "
        "--on-duplicate reference ("
    )
    out = command(
        "import_predictions", *args, "--name", "demo model", "--on-duplicate", "reference"
    )
    run = Run.objects.get()
    # S-M_1's first line texts the wrong contact: TN 1/3 (P = [ConvertCurrency,
    # SendTextMessagewrong]), TO cos(0) * 1/2; both other lines are the gold calls.
    assert out.splitlines() == [
        f'Run {run.pk} (demo model): 3 items, {{"TN": 77.78, "TO": 83.33, "Avg": 80.56}}',
        "Read 3 outputs. 1 sample has several lines (S-M_1): 1 repeat scored as an item of "
        "its own (--on-duplicate reference).",
        "No output for 1 sample: S-M_2",
    ]


def test_a_file_without_repeats_imports_as_before_under_every_policy(tmp_path: Path) -> None:
    benchmark = demo_mtubench()
    path = response_file(tmp_path / "S-M_r.jsonl", benchmark, [("S-M_0", None), ("S-M_1", None)])
    for policy in ("refuse", "reference", "first", "last"):
        printed = import_s_m(path, "--on-duplicate", policy)
        assert printed["metrics"] == {"TN": 100.0, "TO": 100.0, "Avg": 100.0}
        assert (printed["repeated"], printed["repeats_scored"], printed["repeats_dropped"]) == (
            [],
            0,
            0,
        )
    assert Prediction.objects.filter(repeat__gt=0).count() == 0


def test_an_unknown_policy_is_refused(s_m_file: Path) -> None:
    with pytest.raises(RunError, match="on_duplicate must be refuse, reference, first or last"):
        predictions_import(
            benchmark=demo_mtubench(), task="S-M", path=s_m_file, name="m", on_duplicate="all"
        )
    with pytest.raises(CommandError, match="invalid choice"):
        import_s_m(s_m_file, "--on-duplicate", "all")


# --- MTU-Bench M-S: a repeated turn inside a dialogue -------------------------------------------


def test_reference_on_a_dialogue_counts_every_line_per_turn_and_the_last_per_dialogue(
    tmp_path: Path,
) -> None:
    benchmark = demo_mtubench()
    # Dialogue M-S_0 has turns 0-3, M-S_1 turns 0-1. Turn M-S_0_3 is answered wrong (no call),
    # then right on line 7. MTU-Eval counts both lines in TS/PS, and its per-dialogue list
    # keeps one slot per turn, overwritten by the later line.
    path = response_file(
        tmp_path / "M-S_ours_response.jsonl",
        benchmark,
        [
            ("M-S_0_0", None),
            ("M-S_0_1", None),
            ("M-S_0_2", None),
            ("M-S_0_3", NO_CALL),
            ("M-S_1_0", None),
            ("M-S_1_1", None),
            ("M-S_0_3", None),
        ],
    )

    def metrics(policy: str) -> dict[str, Any]:
        run = predictions_import(
            benchmark=benchmark, task="M-S", path=path, name=policy, on_duplicate=policy
        )
        return run.metrics

    # TS = PS = 6/7; every turn of both dialogues is right once the repeat replaces the miss.
    assert metrics("reference") == {
        "TS": 85.71,
        "PS": 85.71,
        "ATS": 100.0,
        "SATS": 100.0,
        "SR": 100.0,
        "TPR": 100.0,
        "Avg": 95.24,
    }
    # first: M-S_0 ends on a wrong turn: ATS (3/4 + 1) / 2, SR 1/2, TPR (3/4 + 1) / 2.
    assert metrics("first") == {
        "TS": 83.33,
        "PS": 83.33,
        "ATS": 87.5,
        "SATS": 87.5,
        "SR": 50.0,
        "TPR": 87.5,
        "Avg": 79.86,
    }
    assert metrics("last")["SR"] == 100.0
    reference = Run.objects.get(name="reference")
    # The intervals resample dialogues with their repeats inside them.
    intervals = run_compute_intervals(run_id=reference.pk, resamples=50)
    assert intervals["SR"] == [100.0, 100.0]


# --- the generic format (any suite) -------------------------------------------------------------


@pytest.fixture
def generic_file(tmp_path: Path) -> Path:
    make_counting_benchmark(tmp_path, 4)
    # 0 right, 1 wrong, 0 again wrong (naming its split this time), 2 right; 3 never.
    return write_jsonl(
        tmp_path / "outputs.jsonl",
        [
            {"sample_id": 0, "output": "Answer: 1"},
            {"sample_id": 1, "output": "Answer: 5"},
            {"sample_id": 0, "output": "Answer: 7", "split": "default"},
            {"sample_id": 2, "output": "Answer: 3"},
        ],
    )


def import_generic(path: Path, *args: str) -> dict[str, Any]:
    return import_json(
        *("generic", "answer", str(path), "--name", "g", "--format", "generic"),
        *("--split", "default", *args),
    )


def test_generic_outputs_refuse_a_second_line_for_a_sample(generic_file: Path) -> None:
    with pytest.raises(CommandError) as info:
        import_generic(generic_file)
    message = str(info.value)
    assert message.startswith(f"Nothing imported. {generic_file}, line 3: sample '0' ")
    assert "line 1" in message and "--on-duplicate" in message
    assert not Run.objects.exists()


@pytest.mark.parametrize(
    ("policy", "items", "accuracy", "kept"),
    [
        ("reference", 4, 50.0, [("0", 0, 100.0), ("1", 0, 0.0), ("0", 1, 0.0), ("2", 0, 100.0)]),
        ("first", 3, 66.67, [("0", 0, 100.0), ("1", 0, 0.0), ("2", 0, 100.0)]),
        ("last", 3, 33.33, [("1", 0, 0.0), ("0", 0, 0.0), ("2", 0, 100.0)]),
    ],
)
def test_generic_outputs_under_each_policy(
    generic_file: Path, policy: str, items: int, accuracy: float, kept: list[tuple[Any, ...]]
) -> None:
    printed = import_generic(generic_file, "--on-duplicate", policy)
    assert printed["items"] == items
    assert printed["metrics"] == {"accuracy": accuracy, "unparsed": 0.0}
    assert printed["repeated"] == ["0"]
    assert printed["missing"] == ["3"]
    run = Run.objects.get()
    assert [(sid, repeat, score) for sid, repeat, _, score in stored(run, "accuracy")] == kept


# --- StableToolBench: a converted predictions file repeating a query id ------------------------


@pytest.fixture
def stabletoolbench_file(seeddata: Path, tmp_path: Path) -> Path:
    stb = seeddata / "stabletoolbench"
    benchmark_import(
        suite="stabletoolbench",
        paths=[
            stb / "solvable_queries/test_instruction/G1_instruction.first50.json",
            stb / "solvable_queries/test_query_ids/G1_instruction.json",
        ],
    )
    converted = stb / "data_example/model_predictions_converted"
    cot = json.loads((converted / "virtual_chatgpt_cot/G1_instruction.json").read_text())
    dfs = json.loads((converted / "virtual_chatgpt_dfs/G1_instruction.json").read_text())
    # CoT ran out of steps on 588 (no final answer), DFS answered it; one member per line.
    members = [("588", cot["588"]), ("1073", cot["1073"]), ("588", dfs["588"])]
    text = "{\n" + ",\n".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in members) + "\n}\n"
    path = tmp_path / "G1_instruction.json"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_stabletoolbench_reader_hands_over_every_member_of_a_repeated_key(
    stabletoolbench_file: Path,
) -> None:
    outputs = list(stabletoolbench.read_predictions("pass_rate", stabletoolbench_file))
    assert [(o.external_id, o.split, o.source) for o in outputs] == [
        ("588", "G1_instruction", f"{stabletoolbench_file}, line 2, record 588"),
        # A key the file gives once keeps its usual source.
        ("1073", "G1_instruction", f"{stabletoolbench_file}, record 1073"),
        ("588", "G1_instruction", f"{stabletoolbench_file}, line 4, record 588"),
    ]
    first, last = (json.loads(outputs[i].output) for i in (0, 2))
    assert first["method"].startswith("CoT") and last["method"].startswith("DFS")


def import_stabletoolbench(path: Path, *args: str) -> dict[str, Any]:
    return import_json("stabletoolbench", "pass_rate", str(path), "--name", "s", *args)


def test_a_query_id_given_twice_is_refused_with_both_lines(stabletoolbench_file: Path) -> None:
    with pytest.raises(CommandError) as info:
        import_stabletoolbench(stabletoolbench_file)
    message = str(info.value)
    assert message.startswith(f"Nothing imported. {stabletoolbench_file}, line 4, record 588: ")
    assert "line 2" in message and "--on-duplicate" in message


@pytest.mark.parametrize(
    ("policy", "items", "answered"),
    [
        ("reference", 3, 66.67),  # 588 twice (0, then 1) and 1073 (1)
        ("first", 2, 50.0),
        ("last", 2, 100.0),  # what json.loads keeps, so what StableToolBench's own code reads
    ],
)
def test_stabletoolbench_under_each_policy(
    stabletoolbench_file: Path, policy: str, items: int, answered: float
) -> None:
    printed = import_stabletoolbench(stabletoolbench_file, "--on-duplicate", policy)
    assert (printed["items"], printed["metrics"]) == (items, {"answered": answered})
    assert printed["repeated"] == ["588"]


def test_a_judge_job_judges_every_scored_line(stabletoolbench_file: Path) -> None:
    import_stabletoolbench(stabletoolbench_file, "--on-duplicate", "reference")
    run = Run.objects.get()
    endpoint = make_endpoint("http://127.0.0.1:9/v1")
    judge = judging.judge_create(name="pass", template="stabletoolbench.pass", endpoint=endpoint)
    job = judging.judge_launch(judge=judge, run=run, repeats=2)
    judged = list(
        job.judgments.order_by("position").values_list(
            "position", "prediction_id", "sample_id", "other_id", "repeat", "order"
        )
    )
    lines = list(run.predictions.order_by("position").values_list("id", "sample_id"))
    expected = [(pid, sample, None, repeat, "") for repeat in range(2) for pid, sample in lines]
    assert [row[1:] for row in judged] == expected
    assert [row[0] for row in judged] == list(range(len(expected)))
    assert JudgeJob.objects.count() == 1


def test_a_pairwise_campaign_pairs_each_line_with_the_other_runs_first_line(
    stabletoolbench_file: Path,
) -> None:
    from annotation import services as annotation

    import_stabletoolbench(stabletoolbench_file, "--on-duplicate", "reference")
    import_stabletoolbench(stabletoolbench_file, "--on-duplicate", "first")
    repeated, first = (
        Run.objects.get(import_report__on_duplicate="reference"),
        Run.objects.get(import_report__on_duplicate="first"),
    )
    campaign = annotation.campaign_create(name="pairs", kind="pairwise")
    # B repeats 588: every one of A's answers is paired with B's first line for its sample.
    annotation.items_from_runs(campaign=campaign, run_a=first, run_b=repeated)
    b_first = {p.sample_id: p.pk for p in repeated.predictions.filter(repeat=0)}
    pairs = list(
        campaign.items.order_by("position").values_list("prediction_id", "prediction_b_id")
    )
    assert pairs == [(p.pk, b_first[p.sample_id]) for p in first.predictions.order_by("position")]


def test_a_human_baseline_of_a_run_with_repeats_scores_an_answer_per_item(s_m_file: Path) -> None:
    import uuid

    from annotation import services as annotation
    from annotation.assign import item_next
    from annotation.models import Member
    from tests.factories import store_label

    import_s_m(s_m_file, "--on-duplicate", "reference")
    run = Run.objects.get()
    campaign = annotation.campaign_create(name="baseline", kind="baseline", benchmark=run.benchmark)
    assert annotation.items_from_run(campaign=campaign, run=run) == 3
    human = make_user(username="human1")
    annotation.members_add(campaign=campaign, users=[human], role=Member.Role.ANNOTATOR)
    annotation.campaign_activate(campaign=campaign)
    while (assignment := item_next(campaign=campaign, user=human)) is not None:
        store_label(
            campaign=assignment.campaign,
            assignment_id=assignment.pk,
            user=human,
            token=uuid.uuid4(),
            answers={"tools": assignment.item.payload["choices"][:1]},
        )
    (baseline,) = annotation.baseline_runs_build(campaign=campaign)
    assert [(sid, repeat) for sid, repeat, _ in stored(baseline)] == [
        ("S-M_0", 0),
        ("S-M_1", 0),
        ("S-M_0", 1),
    ]


# --- what people see: the run page and the CSV ---------------------------------------------------


def login(client: Client) -> None:
    user = make_user()
    for codename in ("view_run", "view_prediction", "view_judgejob", "view_judgment"):
        user.user_permissions.add(Permission.objects.get(codename=codename))
    client.force_login(user)


def test_the_run_page_and_the_csv_show_the_repeats(client: Client, s_m_file: Path) -> None:
    import_s_m(s_m_file, "--on-duplicate", "reference")
    run = Run.objects.get()
    login(client)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert "every line scored as an item of its own (--on-duplicate reference)" in page
    assert "No output for 1 sample: S-M_2" in page
    assert page.count('class="badge">repeat 1</span>') == 1
    response = client.get(f"/runs/{run.pk}/predictions.csv")
    text = b"".join(response.streaming_content).decode()
    header, *rows = list(csv.reader(io.StringIO(text, newline="")))
    assert header[:7] == ["run", "position", "split", "sample_id", "repeat", "trial", "status"]
    assert [(row[3], row[4]) for row in rows] == [("S-M_0", "0"), ("S-M_1", "0"), ("S-M_0", "1")]
    # a published file's further line is not a trial
    assert [row[5] for row in rows] == ["0", "0", "0"]


# --- MTU-Bench's published S-M GPT-4 responses ---------------------------------------------------


S_M_RESPONSES = "MTU-Eval/responses/S-M_gpt4_response.jsonl"


def published_s_m(seeddata: Path) -> Path:
    """MTU-Bench's MTU-Eval/responses/S-M_gpt4_response.jsonl: in the seed data when it holds
    it, or in the folder MTUBENCH_RESPONSES names."""
    folder = Path(os.environ.get("MTUBENCH_RESPONSES") or seeddata / "mtubench")
    path = folder / "S-M_gpt4_response.jsonl"
    if not path.is_file():
        pytest.skip(
            f"needs MTU-Bench's published S-M GPT-4 responses, {S_M_RESPONSES}, in the seed "
            "data's mtubench folder or in the folder MTUBENCH_RESPONSES names"
        )
    return path


def test_the_skip_names_the_published_file_not_a_folder_of_this_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A skip reason is read on other machines: it says which file is missing, not where this
    # one looked for it.
    monkeypatch.delenv("MTUBENCH_RESPONSES", raising=False)
    with pytest.raises(pytest.skip.Exception) as info:
        published_s_m(tmp_path)
    reason = str(info.value)
    assert S_M_RESPONSES in reason
    assert str(tmp_path) not in reason and "/" not in reason.replace(S_M_RESPONSES, "")


@pytest.mark.parametrize(
    ("policy", "items", "metrics"),
    [
        # MTU-Eval's cal_score.py on this file: num_acc 62.44, order_acc 64.85 (its average
        # multiplies by 100 twice; Avg here is their mean once).
        ("reference", 94, {"TN": 62.44, "TO": 64.85, "Avg": 63.64}),
        # cal_score.py on the file without lines 27 and 31 (the second S-M_23 and S-M_30) ...
        ("first", 92, {"TN": 63.08, "TO": 65.47, "Avg": 64.28}),
        # ... and without lines 23 and 30.
        ("last", 92, {"TN": 62.96, "TO": 65.17, "Avg": 64.06}),
    ],
)
def test_the_published_s_m_gpt4_file_scores_as_mtu_evals_scorer_does(
    seeddata: Path, policy: str, items: int, metrics: dict[str, float]
) -> None:
    path = published_s_m(seeddata)
    benchmark_import(suite="mtubench", paths=[seeddata / "mtubench" / "S-M_eval.jsonl"])
    with pytest.raises(CommandError) as info:
        import_json("mtubench", "S-M", str(path), "--name", "gpt-4")
    assert f"{path}, line 27: sample 'S-M_23' already has an output on line 23" in str(info.value)
    printed = import_json("mtubench", "S-M", str(path), "--name", "gpt-4", "--on-duplicate", policy)
    assert (printed["items"], printed["metrics"]) == (items, metrics)
    assert printed["outputs"] == 94
    assert printed["repeated"] == ["S-M_23", "S-M_30"]
    assert (printed["repeats_scored"], printed["repeats_dropped"]) == (
        (2, 0) if policy == "reference" else (0, 2)
    )
    assert printed["missing"] == ["S-M_24", "S-M_31"]
