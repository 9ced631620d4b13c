"""StableToolBench's stability experiment (sections 2.3 and 4.2): the same queries run again
with a share of the tools made unavailable (0, 10, 20, 50 %), each run judged with the pass
judge; SoPR per share. With the virtual API server (mode "simulate") a call to a tool that is
down goes to the simulator at once; without it (mode "fail") it answers the failure response of
section 2.3. The tools are a seeded sample of those the selected queries offer, the same queries
in every run (one seed and item limit)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import Count

from benchmarks.kit.registry import get_suite
from benchmarks.models import Benchmark, Sample
from evaluation.judging import judge_launch
from evaluation.models import Endpoint, Judge, JudgeJob, Run, ServedCall
from evaluation.services import run_launch
from evaluation.virtualapi.server import sample_down_tools

SHARES = (0.0, 0.1, 0.2, 0.5)


@dataclass
class Arm:
    share: float
    down: list[str]
    run: Run
    job: JudgeJob | None = None

    def row(self) -> dict[str, Any]:
        metrics = self.job.metrics if self.job is not None else {}
        sources = dict.fromkeys(ServedCall.Source.values, 0)
        counted = ServedCall.objects.filter(run=self.run).values("source").annotate(n=Count("id"))
        sources.update({row["source"]: row["n"] for row in counted})
        return {
            "share": self.share,
            "tools_down": len(self.down),
            "run": self.run.pk,
            "run_status": self.run.status,
            "answered": self.run.metrics.get("answered"),
            "judge_job": self.job.pk if self.job else None,
            # The pass judge's job reports SoPR in percent, with its std over the rounds.
            "sopr": metrics.get("SoPR"),
            "sopr_std": metrics.get("SoPR_std"),
            "calls": sources,
        }


def agent_task(benchmark: Benchmark) -> str:
    """The task whose runs call the tools the server serves to this benchmark's suite."""
    served = get_suite(benchmark.suite).served_tools
    if served is None or not served.agent_task:
        raise ValueError(f"the virtual API server serves no task of {benchmark.name}")
    return served.agent_task


def runs_launch(
    *,
    benchmark: Benchmark,
    endpoint: Endpoint,
    split: str,
    limit: int | None,
    shares: Sequence[float],
    mode: str,
    seed: int,
    name: str = "stability",
) -> list[Arm]:
    """One run per share over the same queries. The first is the baseline, no tool down (0 is
    put first when missing): it fixes the queries, whose tools the others sample from."""
    if mode not in ("simulate", "fail"):
        raise ValueError("mode is simulate (virtual API server) or fail (no server)")
    task = agent_task(benchmark)
    shares = [0.0, *(s for s in shares if s != 0)]
    arms: list[Arm] = []
    tools: list[str] = []
    for share in shares:
        down = sample_down_tools(tools, share, seed) if arms else []
        run = run_launch(
            benchmark=benchmark,
            task=task,
            endpoint=endpoint,
            split=split,
            item_limit=limit,
            seed=seed,
            options={"down_tools": down, "down_mode": mode},
            name=f"{name}: {share:.0%} of tools down ({mode})",
        )
        if not arms:
            sample_ids = run.predictions.values_list("sample_id", flat=True)
            tools = sorted(
                {t for s in Sample.objects.filter(pk__in=sample_ids) for t in s.candidate_tools}
            )
        arms.append(Arm(share, down, run))
    return arms


def judge_arms(arms: list[Arm], judge: Judge, repeats: int) -> None:
    for arm in arms:
        arm.run.refresh_from_db()
        arm.job = judge_launch(judge=judge, run=arm.run, repeats=repeats)


def table(arms: list[Arm]) -> list[dict[str, Any]]:
    return [arm.row() for arm in arms]
