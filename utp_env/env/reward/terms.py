"""The reward's terms and what they are computed against, below `score_plan` (utp_env/env/reward/__init__.py):
the table of terms (`PLAN_TERMS`, `REALISED_TERMS`), what a query calls for (`expected_content`), a plan's
score (`PlanScore`), its terms (`reward_terms`) and their weighted mean (`weighted_reward`). The package
re-exports every name; the level reward (`levels.py`) reads them from here, so that the package may dispatch to
it without an import circle."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from utp_env.config import UncertaintyConfig
from utp_env.env.reward.checks import reward_gate, reward_hard
from utp_env.env.reward.counted import Scope
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
)
from utp_env.evaluation.report import CheckResult, EvaluationReport, pass_rate
from utp_env.itinerary import Plan
from utp_env.query import Query
from utp_env.tools.database import Database
from utp_env.tools.memo import remember

if TYPE_CHECKING:
    pass

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
        self.entries: dict[tuple[str, str, str, str], Expected] = {}


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
