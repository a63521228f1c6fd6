"""The env's reward, in one package: the functions that score a submitted plan (utp_env/UTP-v0) and a lived
trip (utp_env/UTP-Replan-v0) here; the table of its terms and what they are computed against in
`terms.py`, the rule of what a plan gets credit for in `counted.py`, the checks it applies in
`checks.py`, how each metric is read on what counts in `measures.py`. docs/ENV.md "Reward" is this package in words.

**The terms** (`PLAN_TERMS`, `REALISED_TERMS`): each row names a term, what it reads, its default
weight, how it is covered and how it is gated. `EnvConfig`'s and `ReplanConfig`'s default weights,
the table of docs/ENV.md (`terms_table`, a test compares) and the closed loop's realised terms are
read from these rows; configs/env.yaml and configs/replan.yaml name only the weights a researcher
changes.

**What counts** (`counted.counted_context`): the reward credits an element of a plan only if
- the plan *schedules* it: a point-of-interest item with a start and a later end (a name only in a
  day's summary fields, an untimed or a zero-length item earns nothing);
- the database *knows* it, in a city of the trip the query asks for (its origin, its destination or
  the destination state's cities) that is that day's city: a venue found there (an attraction or
  restaurant open for the whole visit, an event on that date); a stay that is that night's
  accommodation or the previous night's; an arrival at the departure point of a leg that leaves that
  day after it; a flight, train or bus that runs on the day's date at the stated times (a cab: a
  road route), between that day's cities;
- *once*: a venue once per trip, a leg once, an arrival once per leg.

Every metric term is computed on what counts (`measures.read_plan`), against what the query calls for: the
same counts of its reference plan (`expected_content`). **The checks** (`checks.reward_checks`) fail a plan
for what does not count: the paper's ten, the extra rules `open_hours` and `transit_distances`, and
the reward's own rules (`OWN_CHECKS`: summary fields that disagree with the schedule, zero-length
items, arrivals at no departure point, days out of order, services off their timetable, legs that do
not form the trip), each folded into the paper's check it belongs to (`FOLDED_INTO`). A plan in which
nothing counts (no venue, stay or service the database knows where the plan puts it) scores 0
(`knows_something`).

`evaluate` (the paper's report, Table 3) reads the whole plan as the paper does, summary fields
included; the reward is the env's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from utp_env.config import UncertaintyConfig
from utp_env.env.reward.checks import FOLDED_INTO, OWN_CHECKS, reward_checks, reward_gate, reward_hard
from utp_env.env.reward.counted import counted_context, knows_something, scoped_context
from utp_env.env.reward.measures import read_plan
from utp_env.env.reward.terms import (
    DEFAULT_REALISED_WEIGHTS,
    DEFAULT_REWARD_WEIGHTS,
    PASS_RATES,
    PLAN_TERMS,
    REALISED_TERM_NAMES,
    REALISED_TERMS,
    Expected,
    PlanScore,
    RewardTerm,
    covered_metric,
    expected_content,
    required_units,
    reward_terms,
    weighted_reward,
)
from utp_env.evaluation.context import build_context
from utp_env.evaluation.evaluate import evaluate_context
from utp_env.evaluation.report import CheckResult, EvaluationReport, pass_rate
from utp_env.itinerary import Plan, check_plan_query
from utp_env.query import Query
from utp_env.tools.database import Database

if TYPE_CHECKING:
    from utp_env.env.levels import LevelTask
    from utp_env.simulation.trip_steps import ExecutedStep


def score_plan(plan: Plan, query: Query, db: Database, *, weights: Mapping[str, float],
               reference: Plan | None = None, config: UncertaintyConfig | None = None,
               task: LevelTask | None = None) -> PlanScore:
    """Evaluate `plan` (`evaluate`, the paper's report) and reward it: 0 for a plan without days or in
    which nothing counts, else the weighted mean of `reward_terms`. With a level's `task` below the whole
    trip, the level's reward (`levels.score_level`: the same reward on the part the level asks). A plan that
    names another query is refused (`itinerary.check_plan_query`)."""
    check_plan_query(plan, query.query_id)
    if task is not None and not task.level.whole_task:
        from utp_env.env.reward.levels import score_level

        return score_level(plan, task, db, weights=weights, reference=reference, config=config)
    ctx = build_context(plan, query, db)
    report = evaluate_context(ctx, config, reference)
    expected = expected_content(query, db, reference, config)
    reading = read_plan(ctx, config, report, expected.reference)
    checks = reward_checks(report, ctx)
    hard = reward_hard(report, reading.counted) if reward_gate(checks) else None
    terms = reward_terms(reading, checks, expected, hard=hard)
    something = bool(plan.days) and knows_something(reading.counted)
    reward = weighted_reward(terms, weights) if something else 0.0
    return PlanScore(report, checks, terms, reward, hard or {}, something)


def plan_checks(plan: Plan, query: Query, db: Database, report: EvaluationReport, task: LevelTask | None = None
                ) -> tuple[dict[str, CheckResult], dict[str, CheckResult]]:
    """(`reward_checks`, `reward_hard`) of a plan whose report is already computed (what `check_plan`
    shows the agent); at a level below the whole trip (`task`), the level's (`levels.level_checks`)."""
    ctx = build_context(plan, query, db)
    if task is not None and not task.level.whole_task:
        from utp_env.env.reward.levels import level_checks, level_hard

        return level_checks(report, ctx, task), level_hard(report, scoped_context(counted_context(ctx), task), task)
    return reward_checks(report, ctx), reward_hard(report, counted_context(ctx))


# ---------------------------------------------------------------- the closed loop


def expected_commitments(query: Query, db: Database, reference: Plan | None) -> int:
    """How many commitments (`realised.planned_activities` of what counts) the query calls for: its
    reference plan's, else the least Complete Information asks (`required_units`)."""
    from utp_env.evaluation.realised import planned_activities

    if reference is not None and reference.days:
        return len(planned_activities(counted_context(build_context(reference, query, db))))
    return required_units(query)["bas"]


def realised_terms(submitted: Plan, realised: Plan, report: EvaluationReport, steps: list[ExecutedStep],
                   query: Query, db: Database, *, extra_cost: float, rebookings: int,
                   submitted_end: float | None, punctuality_scale: float, final_city: str | None = None,
                   submitted_report: EvaluationReport | None = None, reference: Plan | None = None
                   ) -> dict[str, Any]:
    """Every term of the realised outcome (`REALISED_TERMS`) and the reported `rebookings`,
    `extra_cost` (INR), `late_minutes`, `missed_commitments` (`realised.unreplaced_legs`), `items_kept`
    (done / planned visits, meals and events), `items_planned`, `cost` and `hard_checks`.
    `final_city`: where the traveller ended the trip (`realised.returns_home`; None skips that check).

    The plan reward's rule holds here too: the commitments are what counts of the submitted plan
    (`counted_context`), completion is over what the query calls for (`reference`'s commitments, else
    the least Complete Information asks), the hard term counts only when the submitted plan
    (`submitted_report`) passes the reward's complete information and within sandbox, punctuality is
    weighed by completion's coverage, and completion and punctuality are scaled by the submitted
    plan's pass rate on the reward's checks; `commonsense` is the realised trip's."""
    from utp_env.evaluation.realised import (
        completion,
        event_items,
        late_minutes,
        planned_activities,
        punctuality,
        realised_hard,
        returns_home,
        unreplaced_legs,
    )

    realised_ctx = build_context(realised, query, db)
    home = returns_home(final_city, query) if final_city is not None else None
    hard, detail = realised_hard(realised_ctx, extra_cost, home)
    submitted_ctx = build_context(submitted, query, db)
    submitted_checks = reward_checks(submitted_report, submitted_ctx) if submitted_report is not None else None
    if submitted_checks is not None and not reward_gate(submitted_checks):
        hard = 0.0
    committed = counted_context(submitted_ctx)
    late = late_minutes(steps, event_items(realised_ctx), submitted_end)
    missed = unreplaced_legs((leg for day in submitted.days for leg in day.transport),
                             (leg for day in realised.days for leg in day.transport))
    expected = expected_commitments(query, db, reference)
    kept = completion(committed, realised_ctx, expected)
    wanted = len(planned_activities(committed))
    covered = min(1.0, wanted / expected) if expected > 0 else 1.0
    on_time = punctuality(late, punctuality_scale, missed) * covered
    if submitted_checks is not None:  # as in the plan reward: a plan that breaks rules earns in their share
        validity = pass_rate(submitted_checks) or 0.0
        kept = None if kept is None else kept * validity
        on_time *= validity
    return {"completion": kept, "hard": hard, "punctuality": on_time,
            "commonsense": pass_rate(reward_checks(report, realised_ctx)), "rebookings": rebookings,
            "extra_cost": extra_cost, "late_minutes": late, "missed_commitments": missed,
            "items_kept": None if kept is None else round(kept * wanted),
            "items_planned": wanted, "cost": detail["cost"], "hard_checks": detail["checks"]}


def realised_reward(terms: Mapping[str, Any], weights: Mapping[str, float]) -> float:
    """The realised reward: the weighted mean of the `REALISED_TERMS` of `terms`."""
    return weighted_reward({name: terms[name] for name in REALISED_TERM_NAMES}, weights)


# ---------------------------------------------------------------- what the agent and the docs read


def reward_note() -> str:
    """The task text's paragraph on the reward (utp_env/env/core.py): what counts and each check the
    reward applies beyond the paper's rules, read from the check functions' docstrings."""
    rules = " ".join(" ".join((check.__doc__ or name).split()) for name, check in OWN_CHECKS.items())
    return ("REWARD: the two pass rates and the metrics. A metric counts only what the plan schedules (an item "
            "with a start and a later end) and the database knows in that day's city of the trip (a venue, "
            "open then; the night's stay; a service that runs then), each venue once; names only in the "
            "summary fields, repeated or invented venues add nothing. It weighs them against what the query "
            "calls for and is scaled by the commonsense pass rate. An item without times counts as missing "
            "information; visits outside opening hours and transit distances other than nearest_transit's "
            "fail checks, and so does breaking these rules: " + rules)


def terms_table(terms: Iterable[RewardTerm] = PLAN_TERMS) -> str:
    """The Markdown table of `terms` that docs/ENV.md "Reward" shows (a test compares)."""
    lines = ["| term | weight | reads | covered | gated |", "|---|---:|---|---|---|"]
    lines += [f"| `{t.name}` | {t.weight:g} | {t.reads} | {t.covered} | {t.gated} |" for t in terms]
    return "\n".join(lines)


def checks_table() -> str:
    """The Markdown table of the reward's own checks (`OWN_CHECKS`): the paper's check each fails with
    (`FOLDED_INTO`) and its rule, for docs/ENV.md."""
    lines = ["| rule | fails | what it asks |", "|---|---|---|"]
    lines += [f"| `{name}` | `{FOLDED_INTO[name]}` | {' '.join((check.__doc__ or '').split())} |"
              for name, check in OWN_CHECKS.items()]
    return "\n".join(lines)


__all__ = [
    "DEFAULT_REALISED_WEIGHTS",
    "DEFAULT_REWARD_WEIGHTS",
    "PASS_RATES",
    "PLAN_TERMS",
    "REALISED_TERMS",
    "REALISED_TERM_NAMES",
    "Expected",
    "PlanScore",
    "RewardTerm",
    "checks_table",
    "covered_metric",
    "expected_content",
    "plan_checks",
    "realised_reward",
    "realised_terms",
    "required_units",
    "reward_note",
    "reward_terms",
    "score_plan",
    "terms_table",
    "weighted_reward",
]
