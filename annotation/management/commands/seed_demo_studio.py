"""python manage.py seed_demo_studio

After seed_demo (accounts and demo benchmarks): two demo runs imported from our own MTU-Bench
style outputs, one demo campaign of each kind, open to annotator1 and annotator2, with the
researcher as reviewer and adjudicator, and the demo StableToolBench response cache in the
virtual API server. Idempotent: what exists is left as it is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from annotation import services
from annotation.assign import AnnotationError
from annotation.models import Campaign, Member
from benchmarks.models import Benchmark
from evaluation.models import ApiResponse, Run
from evaluation.services import RunError, predictions_import
from evaluation.virtualapi.cache import apis_from_benchmark, cache_import

DEMO_DIR = Path(__file__).resolve().parents[2] / "demo"
STABLETOOLBENCH_DEMO = (
    Path(__file__).resolve().parents[3] / "benchmarks" / "demo" / "stabletoolbench"
)
RUNS = {
    "Demo model A (MTU-Bench S-S)": "S-S_demo_model_a.jsonl",
    "Demo model B (MTU-Bench S-S)": "S-S_demo_model_b.jsonl",
}


class Command(BaseCommand):
    help = "Demo runs and one demo annotation campaign of each kind (after seed_demo)."

    def handle(self, *args: Any, **options: Any) -> None:
        users = {
            u.username: u
            for u in get_user_model().objects.filter(
                username__in=["researcher", "annotator1", "annotator2"]
            )
        }
        if len(users) < 3:
            raise CommandError("run seed_demo first: the demo accounts are missing")
        try:
            runs = self.demo_runs()
            for spec in self.campaigns(runs):
                self.campaign(spec, users)
            self.demo_virtual_server()
        except (AnnotationError, RunError, Benchmark.DoesNotExist) as exc:
            raise CommandError(f"demo studio: {exc}") from None

    def demo_virtual_server(self) -> None:
        """The demo StableToolBench benchmark's response cache in the virtual API server, as
        real responses (our own demo data: make_turing_pairs pairs them with simulated ones),
        with its APIs' documentation."""
        benchmark = Benchmark.objects.get(name="StableToolBench (demo)")
        apis_from_benchmark(benchmark)
        cache = STABLETOOLBENCH_DEMO / "response_cache"
        counts = cache_import(cache, origin=ApiResponse.Origin.REAL)
        if counts["added"]:
            self.stdout.write(f"Demo virtual API server: {counts['added']} cached responses")

    def demo_runs(self) -> dict[str, Run]:
        benchmark = Benchmark.objects.get(name="MTU-Bench (demo)")
        runs = {}
        for name, file in RUNS.items():
            run = Run.objects.filter(name=name, benchmark=benchmark).first()
            if run is None:
                run = predictions_import(
                    benchmark=benchmark, task="S-S", path=DEMO_DIR / file, name=name
                )
                self.stdout.write(f"Demo run {run.pk}: {name} {run.metrics}")
            runs[name] = run
        return runs

    def campaigns(self, runs: dict[str, Run]) -> list[dict[str, Any]]:
        run_a, run_b = runs.values()
        return [
            {
                "name": "Refine UltraTool plans (demo)",
                "kind": "refinement",
                "benchmark": "UltraTool (demo)",
                "review_stage": True,
                "guidelines": "# Refining plans\n\nFix the gold plan so that every step is "
                "right, necessary and in order; each tool step must call a tool of the "
                "sample's toolset with valid arguments. Choose **keep** if it is already "
                "right, **fixed** after your edits, **drop** if the sample cannot be saved.",
                "build": lambda c: services.items_from_split(campaign=c, split="test"),
            },
            {
                "name": "Why tools (demo)",
                "kind": "motivation",
                "benchmark": "MetaTool (demo)",
                "labels_per_item": 2,
                "guidelines": "# Why would a model need this tool?\n\n- **A** the answer "
                "depends on data the model cannot know (today's prices, the weather)\n- **B** "
                "it takes or gives special inputs or outputs (files, images)\n- **C** it does "
                "expert work beyond the model\n- **D** it personalises or acts for the user",
                "build": lambda c: services.items_from_tools(campaign=c),
            },
            {
                "name": "Real or simulated? (demo)",
                "kind": "turing",
                "labels_per_item": 2,
                "guidelines": "# Turing test\n\nOne response is the real API's, the other a "
                "simulator's. For each question, pick the better one, or a tie.",
                "build": lambda c: services.items_from_pairs_file(
                    campaign=c, path=DEMO_DIR / "turing_pairs.json"
                ),
            },
            {
                "name": "Which model is better? (demo)",
                "kind": "pairwise",
                "labels_per_item": 2,
                "adjudication_stage": True,
                "guidelines": "# Pairwise\n\nWhich answer calls the right tool with the right "
                "arguments? Sides are shuffled.",
                "build": lambda c: services.items_from_runs(campaign=c, run_a=run_a, run_b=run_b),
            },
            {
                "name": "Answer like a model (demo)",
                "kind": "baseline",
                "benchmark": "MetaTool (demo)",
                "task": "reliability",
                "guidelines": "# Human baseline\n\nChoose the tools you would use, or none if "
                "no listed tool fits (key **0**).",
                "build": lambda c: services.items_from_split(campaign=c, split="reliability"),
            },
            {
                "name": "What went wrong? (demo)",
                "kind": "error_types",
                "guidelines": "# Error types\n\nMark every kind of error in the failed attempt.",
                "build": lambda c: services.items_from_failures(campaign=c, run=run_b),
            },
        ]

    def campaign(self, spec: dict[str, Any], users: dict[str, Any]) -> None:
        if Campaign.objects.filter(name=spec["name"]).exists():
            return
        build = spec.pop("build")
        benchmark = spec.pop("benchmark", None)
        campaign = services.campaign_create(
            benchmark=Benchmark.objects.get(name=benchmark) if benchmark else None, **spec
        )
        added = build(campaign)
        services.members_add(
            campaign=campaign,
            users=[users["annotator1"], users["annotator2"]],
            role=Member.Role.ANNOTATOR,
        )
        for role in (Member.Role.REVIEWER, Member.Role.ADJUDICATOR):
            services.members_add(campaign=campaign, users=[users["researcher"]], role=role)
        services.campaign_activate(campaign=campaign)
        self.stdout.write(f"Demo campaign {campaign.pk}: {campaign.name} ({added} items)")
