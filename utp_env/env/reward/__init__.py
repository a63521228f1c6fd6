"""The env's reward, in one package: the table of its terms and the functions that score a submitted
plan (utp_env/UTP-v0) and a lived trip (utp_env/UTP-Replan-v0) here; the rule of what a plan gets
credit for in `counted.py`, the checks it applies in `checks.py`, how each metric is read on what
counts in `measures.py`. docs/ENV.md "Reward" is this package in words.

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

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from utp_env.config import UncertaintyConfig
from utp_env.env.reward.checks import FOLDED_INTO, OWN_CHECKS, reward_checks, reward_gate, reward_hard
from utp_env.env.reward.counted import Scope, counted_context, knows_something, scoped_context
from utp_env.env.reward.measures import (
    Measure,
    PlanReading,
    measure_attraction,
    measure_bas,
    measure_cats,
    measure_meal,
    measure_ordering,
    measure_persona,
    measure_spatial,
    measure_tdas,
    read_plan,
)
from utp_env.evaluation.context import PlanContext, build_context
from utp_env.evaluation.evaluate import (
    DEFAULT_CONFIG,
    evaluate_context,
)
from utp_env.evaluation.report import CheckResult, EvaluationReport, pass_rate
from utp_env.itinerary import Plan
from utp_env.query import Query
from utp_env.tools.database import Database
from utp_env.tools.memo import remember

if TYPE_CHECKING:
    from utp_env.env.levels import LevelTask
    from utp_env.simulation.trip_steps import ExecutedStep

# ---------------------------------------------------------------- the terms


@dataclass(frozen=True)
class RewardTerm:
    """One row of the reward's table: the term's name, its default weight, what it reads, how it is
    covered (weighed by what the query calls for) and how it is gated."""

    name: str
    weight: float
    reads: str
    covered: str
    gated: str
    measure: Callable[[PlanReading], Measure] | None = None
    """For a metric term, how it is read from a plan (`read_plan`); None for a pass rate or a realised term."""


VALIDITY = "x the commonsense pass rate"
SUM_OVER = "sum of the counted items' scores / max(counted, called for)"
VALUE_TIMES = "value x min(1, counted / called for)"


PLAN_TERMS: tuple[RewardTerm, ...] = (
    RewardTerm("commonsense_pass_rate", 1.0,
               "the reward's checks (`reward_checks`): the paper's ten, open hours, transit distances and its own",
               "-", "the whole reward is 0 when nothing of the plan counts (`knows_something`)"),
    RewardTerm("hard_pass_rate", 1.0,
               "the query's hard constraints on what counts (budget and banned mode on everything named)",
               "-", "0 unless complete information and within sandbox pass (the paper's gate)"),
    RewardTerm("bas", 1.0, "BAS of each counted timed attraction and meal", SUM_OVER, VALIDITY, measure_bas),
    RewardTerm("cats", 1.0, "CATS of each counted visit with crowd data", SUM_OVER, VALIDITY, measure_cats),
    RewardTerm("tdas", 1.0, "TDAS of each counted leg", SUM_OVER, VALIDITY, measure_tdas),
    RewardTerm("temporal_meal", 0.5, "TripCraft's meal score of each counted meal", SUM_OVER, VALIDITY, measure_meal),
    RewardTerm("temporal_attraction", 0.5, "T_attr of the counted attraction visits", VALUE_TIMES, VALIDITY,
               measure_attraction),
    RewardTerm("spatial", 0.5, "the database's transit distance of each counted venue, once per trip, "
               "when the plan states one", SUM_OVER, VALIDITY, measure_spatial),
    RewardTerm("ordering", 0.5, "O_ord of the counted sequence against the reference plan's", VALUE_TIMES,
               VALIDITY, measure_ordering),
    RewardTerm("persona", 0.5, "share of counted attractions, restaurants and stays that fit the persona",
               SUM_OVER, VALIDITY, measure_persona),
)
"""The terms of the plan reward (utp_env/UTP-v0), in `EvaluationReport` order for the metrics."""
REALISED_TERMS: tuple[RewardTerm, ...] = (
    RewardTerm("completion", 1.0, "the submitted plan's counted visits, meals and events done",
               "done / max(planned, the reference plan's)", VALIDITY + " of the submitted plan"),
    RewardTerm("hard", 1.0, "the hard constraints of the realised trip (budget with extra fares, back home)",
               "-", "0 unless the submitted plan passes complete information and within sandbox"),
    RewardTerm("punctuality", 0.5, "1 - min(1, late minutes at events and at the trip's real end / scale)",
               "x min(1, planned / the reference plan's)", VALIDITY + " of the submitted plan"),
    RewardTerm("commonsense", 0.5, "the reward's checks of the realised trip", "-", "-"),
)
"""The terms of the realised reward (utp_env/UTP-Replan-v0)."""
PASS_RATES = ("commonsense_pass_rate", "hard_pass_rate")
DEFAULT_REWARD_WEIGHTS: dict[str, float] = {t.name: t.weight for t in PLAN_TERMS}
DEFAULT_REALISED_WEIGHTS: dict[str, float] = {t.name: t.weight for t in REALISED_TERMS}
REALISED_TERM_NAMES: tuple[str, ...] = tuple(t.name for t in REALISED_TERMS)
MEASURES: dict[str, Callable[[PlanReading], Measure]] = {t.name: t.measure for t in PLAN_TERMS if t.measure}


def measures(reading: PlanReading) -> dict[str, Measure]:
    """Every metric term's `Measure` of a plan."""
    return {name: measure(reading) for name, measure in MEASURES.items()}


# ---------------------------------------------------------------- what the query calls for


@dataclass(frozen=True)
class Expected:
    """What a query calls for: per metric term, how many counted items (`units`), and the counted
    context of its reference plan (None without one: O_ord is then left out)."""

    units: dict[str, int]
    reference: PlanContext | None = None


def required_units(query: Query) -> dict[str, int]:
    """The least content Complete Information asks of any plan for `query` (used when the query has
    no reference plan): an attraction and three meals on each day without a journey, one journey
    per city change. CATS and O_ord ask for nothing without a reference."""
    journeys = query.visiting_city_number + 1
    full_days = max(0, query.days - journeys)
    visits = 4 * full_days
    return {"bas": visits, "cats": 0, "tdas": journeys, "temporal_meal": 3 * full_days,
            "temporal_attraction": full_days, "spatial": visits, "persona": visits, "ordering": 0}


EXPECTED_MEMO_LIMIT = 1024
"""Queries whose `expected_content` a database keeps (then the memo starts afresh): an RL group scores
many plans of one query against the same reference."""


class _ExpectedMemo:
    """Per-database memo of `expected_content`, keyed on everything it reads: the query and the
    reference plan (as their JSON: a plan is mutable) and the evaluation config."""

    def __init__(self, db: Database) -> None:
        self.entries: dict[tuple[str, str, str], Expected] = {}


def expected_content(query: Query, db: Database, reference: Plan | None,
                     config: UncertaintyConfig | None = None, scope: Scope | None = None) -> Expected:
    """What the query calls for: the counts of its reference plan's reading (of the part `scope` asks,
    for a level), else `required_units`. Memoised per database (`_ExpectedMemo`)."""
    if reference is None or not reference.days:
        if scope is not None:
            raise ValueError(f"query {query.query_id}: a level is scored against the query's reference plan, "
                             "and it has none")
        return Expected(required_units(query))
    config = config or DEFAULT_CONFIG
    memo = db.derived(_ExpectedMemo).entries
    key = (query.model_dump_json(), reference.model_dump_json(), config.model_dump_json(),
           "" if scope is None else scope.scope_key)
    hit = memo.get(key)
    if hit is None:
        reading = read_plan(build_context(reference, query, db), config, scope=scope)
        hit = remember(memo, key, Expected({name: m.have for name, m in measures(reading).items()}, reading.counted),
                       EXPECTED_MEMO_LIMIT)
    return hit


# ---------------------------------------------------------------- the plan reward


def covered_metric(value: float | None, have: int, want: int, total: float | None = None) -> float | None:
    """A metric as the reward weighs it: `total` / max(have, want) for a plain mean (removing an item
    never raises it), else value x min(1, have / want); 0 when there is nothing to score but something
    is called for; None only when nothing of the kind is called for and the plan scores nothing."""
    if value is None or have == 0:
        return 0.0 if want > 0 else value
    if total is not None:
        return total / max(have, want)
    return value if want <= 0 else value * min(1.0, have / want)


@dataclass(frozen=True)
class PlanScore:
    """A scored plan: the evaluator's report (the paper's, as `evaluate` gives it), the reward's
    checks, its terms and the reward; the hard constraints as the reward counts them (empty when the
    gate did not let them count) and whether anything of the plan counts."""

    report: EvaluationReport
    checks: dict[str, CheckResult]
    terms: dict[str, float | None]
    reward: float
    hard: Mapping[str, CheckResult]
    counts_something: bool

    @property
    def success(self) -> bool:
        """Every check the reward scores passes (commonsense, and hard behind the paper's gate) and something
        of the plan counts: the pass of a level (utp_env/env/levels.py); at level 4 the reward's own pass,
        stricter than the report's `final_pass` by the rules folded into the paper's checks."""
        return (self.counts_something and reward_gate(self.checks)
                and all(c.passed is not False for c in (*self.checks.values(), *self.hard.values())))


def reward_terms(reading: PlanReading, checks: Mapping[str, CheckResult], expected: Expected,
                 hard: Mapping[str, CheckResult] | None = None) -> dict[str, float | None]:
    """The value of every term of `PLAN_TERMS` for a plan: the two pass rates (the hard one gated),
    and each metric on what counts, covered against what the query calls for and scaled by the
    commonsense pass rate (a plan that breaks the rules earns its metrics in the share it keeps).
    `hard`: the hard constraints that count (a level's); default `reward_hard` of what counts."""
    assert reading.report is not None
    commonsense = pass_rate(checks)
    if not reward_gate(checks):
        hard_rate: float | None = 0.0
    else:
        hard_rate = pass_rate(reward_hard(reading.report, reading.counted) if hard is None else hard)
    terms: dict[str, float | None] = {"commonsense_pass_rate": commonsense, "hard_pass_rate": hard_rate}
    validity = commonsense or 0.0
    for name, m in measures(reading).items():
        value = covered_metric(m.value, m.have, expected.units.get(name, 0), m.total)
        terms[name] = None if value is None else value * validity
    return terms


def weighted_reward(values: Mapping[str, float | None], weights: Mapping[str, float]) -> float:
    """Σ w·m / Σ w over the terms with a value and a positive weight; 0 when none has both.

    The weights are scaled by the power of two of the largest first, so any finite weights (1e308
    included) give a finite mean; a weight that is not finite and >= 0 is a ValueError."""
    bad = {name: w for name, w in weights.items() if not (math.isfinite(w) and w >= 0)}
    if bad:
        raise ValueError(f"reward weights must be finite and >= 0; got {bad}")
    top = max((w for w in weights.values()), default=0.0)
    if top <= 0:
        return 0.0
    shift = -math.frexp(top)[1]  # scaling by a power of two is exact: small weights keep their sums
    num = den = 0.0
    for name, weight in weights.items():
        value = values.get(name)
        if value is None or weight <= 0:
            continue
        if not math.isfinite(value):
            raise ValueError(f"reward term {name} is {value}, not a finite number")
        scaled = math.ldexp(weight, shift)
        num += scaled * float(value)
        den += scaled
    return num / den if den > 0 else 0.0


def score_plan(plan: Plan, query: Query, db: Database, *, weights: Mapping[str, float],
               reference: Plan | None = None, config: UncertaintyConfig | None = None,
               task: LevelTask | None = None) -> PlanScore:
    """Evaluate `plan` (`evaluate`, the paper's report) and reward it: 0 for a plan without days or in
    which nothing counts, else the weighted mean of `reward_terms`. With a level's `task` below the whole
    trip, the level's reward (`levels.score_level`: the same reward on the part the level asks)."""
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


__all__ = ["DEFAULT_REALISED_WEIGHTS", "DEFAULT_REWARD_WEIGHTS", "PASS_RATES", "PLAN_TERMS", "REALISED_TERMS",
           "Expected", "PlanScore", "RewardTerm", "checks_table", "covered_metric", "expected_content",
           "realised_reward", "realised_terms", "required_units", "reward_note", "reward_terms", "score_plan",
           "terms_table", "weighted_reward"]
