"""`utp-env levels`: the levels of the task (utp_env/env/levels.py), each with its ceiling and its baseline.

For each level, on the queries of a split that the level views: the mean reward and the success rate of the
reference planner's plans (the level's ceiling: what a policy that plans as well as the planner earns) and of
the deterministic baseline's (the planner without buffers), each read as the level's plan (`LevelTask.view`)
and scored by the level's reward. docs/ENV.md "Levels" quotes the table.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass
from typing import Any

from utp_env.cli import positive_int
from utp_env.query import SPLITS


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("levels", help="the levels of the task with their ceiling and baseline",
                              description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--profile", choices=("full", "mini"), default="full", help="embedded sandbox (default full)")
    p.add_argument("--db", help="a database directory instead of the embedded sandbox")
    p.add_argument("--split", default="validation", choices=SPLITS, help="the split scored (default validation)")
    p.add_argument("--limit", type=positive_int, help="the first N queries of each level (default: all)")
    p.add_argument("--json", action="store_true", help="print the table as JSON")
    p.set_defaults(handler=cmd_levels)


@dataclass(frozen=True)
class LevelRow:
    """One level's line of the table."""

    level: int
    env_id: str
    title: str
    queries: int
    reference_reward: float
    reference_success: float
    deterministic_reward: float
    deterministic_success: float


def level_rows(dataset: Any, split: str, limit: int | None = None) -> list[LevelRow]:
    """The table's rows (module docstring) for `dataset`'s `split`."""
    from utp_env.agents.base import Toolkit
    from utp_env.agents.reference import ReferencePlanner
    from utp_env.env.config import level_pool
    from utp_env.env.levels import LEVELS, level_task
    from utp_env.env.reward import DEFAULT_REWARD_WEIGHTS, score_plan

    deterministic = ReferencePlanner(buffers=False)
    plans: dict[str, Any] = {}
    rows = []
    for number, level in LEVELS.items():
        sums = {"reference": [0.0, 0], "deterministic": [0.0, 0]}
        queries = [q for q in level_pool(dataset.db, split, level, limit) if dataset.reference(q.query_id)]
        for query in queries:
            reference = dataset.reference(query.query_id)
            task = level_task(level, query, reference)
            if query.query_id not in plans:
                plans[query.query_id] = deterministic.run(query, Toolkit(dataset.db)).plan
            for name, plan in (("reference", reference), ("deterministic", plans[query.query_id])):
                if plan is None:
                    continue
                score = score_plan(task.view(plan), query, dataset.db, weights=DEFAULT_REWARD_WEIGHTS,
                                   reference=reference, task=task)
                sums[name][0] += score.reward
                sums[name][1] += int(score.success)
        n = max(len(queries), 1)
        rows.append(LevelRow(number, level.env_id, level.title, len(queries), sums["reference"][0] / n,
                             sums["reference"][1] / n, sums["deterministic"][0] / n, sums["deterministic"][1] / n))
    return rows


def cmd_levels(args: argparse.Namespace) -> int:
    from utp_env.dataset import open_dataset

    dataset = open_dataset(args.db, profile=args.profile, progress=True)
    try:
        rows = level_rows(dataset, args.split, args.limit)
    except ValueError as exc:
        raise SystemExit(f"utp-env levels: {exc}") from None
    if args.json:
        print(json.dumps([asdict(r) for r in rows], indent=2))
        return 0
    print(f"levels of the task on the {args.split} split ({dataset.db.content_hash[:12]}): mean reward and success "
          "of the reference planner (the ceiling) and of the deterministic baseline")
    print("| level | id | what it asks | queries | reference (ceiling) | success | deterministic | success |")
    print("|---:|---|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r.level} | `{r.env_id}` | {r.title} | {r.queries} | {r.reference_reward:.3f} | "
              f"{r.reference_success:.0%} | {r.deterministic_reward:.3f} | {r.deterministic_success:.0%} |")
    return 0
