"""Real agent traces for the step-level review's tests: the StableToolBench and MTU-Bench demo
benchmarks (benchmarks/demo), a StableToolBench run imported from the demo's published
predictions (two queries, each a call and its Finish) and an MTU-Bench run of our own responses
to the second multi-turn dialogue (M-S_1: its first turn answered without a call; its second,
after the given first turn, with a call whose date is wrong and whose whiteboard is missing),
each read by its suite's trace hook (benchmarks/suites/*/traces.py)."""

from __future__ import annotations

import io
import json
from pathlib import Path

from django.core.management import call_command

from annotation import services
from annotation.models import Campaign, Member
from benchmarks.models import Benchmark
from evaluation.models import Run

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "benchmarks" / "demo"
STB_PREDICTIONS = (
    DEMO
    / "stabletoolbench/data_example/model_predictions_converted"
    / "virtual_chatgpt_cot/G1_instruction.json"
)
MTU_RESPONSES = [
    {
        "id": "M-S_1_0",
        "model": "demo-agent",
        "response": "Thought: The user wants a room but gave no branch or time.\n"
        "Assistant: Which branch, and at what time?",
    },
    {
        "id": "M-S_1_1",
        "model": "demo-agent",
        "response": "Thought: Book the room at Riverside.\nAction: ReserveStudyRoom\n"
        'Action Input: {"branch": "Riverside", "date": "2024-01-06", "start_time": "09:30"}',
    },
]


def _manifest_files(suite: str) -> list[str]:
    manifest = json.loads((DEMO / suite / "manifest.json").read_text(encoding="utf-8"))
    return [str(DEMO / suite / name) for name in manifest["files"]]


def import_demo(suite: str) -> Benchmark:
    """A demo benchmark (benchmarks/demo/<suite>), imported by the command."""
    quiet = {"stdout": io.StringIO(), "stderr": io.StringIO()}
    call_command("import_benchmark", suite, *_manifest_files(suite), **quiet)
    return Benchmark.objects.get(suite=suite)


def agent_runs(folder: Path) -> tuple[Run, Run]:
    """(the StableToolBench run, the MTU-Bench run), imported as a researcher would."""
    quiet = {"stdout": io.StringIO(), "stderr": io.StringIO()}
    call_command(
        "import_benchmark", "stabletoolbench", *_manifest_files("stabletoolbench"), **quiet
    )
    call_command("import_benchmark", "mtubench", *_manifest_files("mtubench"), **quiet)
    call_command(
        "import_predictions",
        "stabletoolbench",
        "pass_rate",
        str(STB_PREDICTIONS),
        "--name",
        "stb-agent",
        "--split",
        "G1_instruction",
        **quiet,
    )
    responses = folder / "M-S_responses.jsonl"
    responses.write_text(
        "".join(json.dumps(line) + "\n" for line in MTU_RESPONSES), encoding="utf-8"
    )
    call_command(
        "import_predictions", "mtubench", "M-S", str(responses), "--name", "mtu-agent", **quiet
    )
    return Run.objects.get(name="stb-agent"), Run.objects.get(name="mtu-agent")


def review_campaign(run: Run, annotators: list[object], name: str = "") -> Campaign:
    """An open step-level review of every trace of the run, by these annotators."""
    campaign = services.campaign_create(
        name=name or f"Steps of {run.name}", kind="step_review", labels_per_item=len(annotators)
    )
    services.items_from_traces(campaign=campaign, run=run)
    services.members_add(campaign=campaign, users=annotators, role=Member.Role.ANNOTATOR)
    services.campaign_activate(campaign=campaign)
    return campaign
