"""The reward of a level below the whole trip (utp_env/env/levels.py): the level-4 reward read on the part of
the trip the level asks.

`score_level` is `score_plan` with three restrictions, each the level-4 definition applied to the part:

- **what counts** (`read_plan(..., scope=task)`): only the elements the level asks (`LevelTask.asks_element`:
  its days and parts) count for the metric terms and for "something counts", and the query calls for the
  reference plan's same part (`expected_content(..., scope=task)`);
- **the checks**: the reward's checks the level names (`Level.checks`), with the rules folded into them
  (utp_env/env/reward/checks.py) except the whole trip's route; Complete Information is its parts the level
  names (`Level.completeness_parts`, TripCraft's rules, `complete_information_parts`) and `asked_content`
  (each asked day holds what the level asks); the route is the outbound one at level 1 (`route_verdict` to
  the level's first city) and not scored where the level asks no legs;
- **the hard constraints** the level names (`Level.hard`), on what counts, with the paper's gate;
- **the terms** the level names (`Level.terms`), with the weights of the env.
"""

from __future__ import annotations

from collections.abc import Mapping

from utp_env.config import UncertaintyConfig
from utp_env.env.levels import LevelTask
from utp_env.env.reward.checks import own_checks, reward_checks, reward_gate, reward_hard, route_verdict
from utp_env.env.reward.counted import knows_something
from utp_env.env.reward.measures import read_plan
from utp_env.env.reward.terms import PlanScore, expected_content, reward_terms, weighted_reward
from utp_env.evaluation.complete_information import complete_information_parts
from utp_env.evaluation.context import PlanContext, build_context
from utp_env.evaluation.evaluate import evaluate_context
from utp_env.evaluation.report import CheckResult, EvaluationReport, combine, verdict
from utp_env.itinerary import Plan
from utp_env.tools.database import Database


def asked_content(ctx: PlanContext, task: LevelTask) -> CheckResult:
    """Each day the level asks is in the plan, dated as the query dates it, and holds content of a part the
    level asks (a leg at level 1; a visit or a meal at level 2)."""
    problems: list[str] = []
    by_number = {day.day.day: day for day in ctx.days}
    for number in task.days:
        day = by_number.get(number)
        if day is None:
            problems.append(f"the plan has no day {number}")
            continue
        asks_legs = bool(day.legs) and task.asks_element(number, "transport")
        if not asks_legs and not any(task.asks_element(number, v.kind) for v in day.items):
            parts = " or ".join(sorted(task.level.asks))
            problems.append(f"day {number} holds no {parts}")
    return verdict(problems)


def level_checks(report: EvaluationReport, ctx: PlanContext, task: LevelTask) -> dict[str, CheckResult]:
    """The reward's commonsense checks of a level (module docstring), each with its reason."""
    level = task.level
    paper = dict(report.commonsense)
    own = own_checks(ctx)
    if level.completeness_parts is not None:
        parts = complete_information_parts(ctx)
        chosen = {name: parts[name] for name in level.completeness_parts if name in parts}
        paper["complete_information"] = combine({**chosen, "asked": asked_content(ctx, task)})
    if level.route != "trip":
        del own["legs_form_the_trip"]  # the whole trip's route: the level asks no return
    if level.route == "outbound":
        assert task.first_city is not None  # levels 1-2 name it (levels.level_task)
        legs = [lc for day in ctx.days for lc in day.legs if task.asks_element(day.day.day, "transport")]
        paper["reasonable_city_route"] = route_verdict(ctx, legs, ends_in=task.first_city, reaches=None)
    checks = reward_checks(report, ctx, paper=paper, own=own)
    if level.checks is None:
        return checks
    return {name: checks[name] for name in level.checks if name in checks}


def level_hard(report: EvaluationReport, counted: PlanContext, task: LevelTask) -> dict[str, CheckResult]:
    """The hard constraints a level scores (`Level.hard`) of those the query sets, on what counts."""
    checks = reward_hard(report, counted)
    if task.level.hard is None:
        return checks
    return {name: check for name, check in checks.items() if name in task.level.hard}


def score_level(plan: Plan, task: LevelTask, db: Database, *, weights: Mapping[str, float],
                reference: Plan | None, config: UncertaintyConfig | None = None) -> PlanScore:
    """`score_plan` of `plan` at the level of `task` (module docstring): the paper's report of the whole plan
    as `evaluate` gives it, the level's checks, terms and reward."""
    query = task.query
    ctx = build_context(plan, query, db)
    report = evaluate_context(ctx, config, reference)
    expected = expected_content(query, db, None if reference is None else task.view(reference), config, scope=task)
    reading = read_plan(ctx, config, report, expected.reference, scope=task)
    checks = level_checks(report, ctx, task)
    hard = level_hard(report, reading.counted, task) if reward_gate(checks) else None
    terms = reward_terms(reading, checks, expected, hard=hard)
    asked = task.level.terms
    scored = {name: value for name, value in terms.items() if asked is None or name in asked}
    something = bool(plan.days) and knows_something(reading.counted)
    reward = weighted_reward(scored, weights) if something else 0.0
    return PlanScore(report, checks, scored, reward, hard or {}, something)
