"""Coverage: how much of the content a query calls for a plan commits to (the reward's guard against
plans that leave content out, copy one venue or invent them; docs/METRICS.md "Coverage").

Every metric of the report is a mean over what it scores (BAS over timed visits, TDAS over legs,
T_meal over meals, ...). A mean rewards leaving out the items that would lower it, and a plan that
scores nothing gets no mean at all (None, which a weighted reward would skip). The reward therefore
weighs each metric by its coverage:

- `content_units(ctx, scored)`: per metric, how many *distinct, known* items of the plan it scores
  (a venue or service found in the database, counted once per trip however often it appears: a
  copied venue adds nothing, an invented one scores nothing), and for a plain mean the sum of their
  scores. BAS, CATS, T_meal and T_attr count only timed visits: an untimed visit commits to no time
  and has no buffer to absorb anything.
- `expected_units(query, reference)`: what the query calls for: the units of its reference plan
  when the dataset has one, else the least Complete Information asks (`required_units`).
- `reward_checks(report)`: the commonsense checks as a reward reads them (an untimed item fails
  complete information), and `reward_gate`, the hard constraints' gate on them.
- `covered_metric(value, have, want, total)`: for a plain mean (BAS, CATS, TDAS, T_meal, S_spatial,
  P_persona) the sum of the counted items' scores over max(have, want), so removing an item never
  raises it; for T_attr and O_ord value x min(1, have / want). 0 when the plan has nothing to score
  but the query calls for something; None (left out of the reward) only when the query calls for
  nothing of the kind (e.g. CATS where no venue of the query's cities has crowd data).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from utp_env.evaluation.context import LegContext, PlanContext, Visit
from utp_env.evaluation.report import HARD_GATE, METRICS, CheckResult, EvaluationReport, LegDetail, PoiDetail
from utp_env.query import Query

SCORED_VISITS = ("attraction", "restaurant")


@dataclass(frozen=True)
class ScoredItems:
    """The per-item scores of one plan the evaluator computed (utp_env/evaluation/evaluate.py),
    each with the plan element it scores."""

    pois: Sequence[tuple[Visit, PoiDetail]]  # BAS / CATS, `evaluate.scored_visits` with their details
    legs: Sequence[tuple[LegContext, LegDetail]]  # TDAS
    meals: Sequence[tuple[Visit, float]]  # T_meal, `evaluate.meal_scores`
    spatial: Sequence[Sequence[tuple[Visit, float]]]  # S_spatial by day, `evaluate.spatial_scores`
    persona: tuple[int, int] | None  # (matched, judged) of the keyword backend; None: not judged that way


def content_units(ctx: PlanContext, scored: ScoredItems) -> tuple[dict[str, int], dict[str, float]]:
    """(units, sums): per metric (`report.METRICS`), how many items of the plan it scores as content
    and, for the metrics that are a plain mean over items, the sum of their scores.

    Units are distinct and known: a venue or service found in the database, once per trip (the
    first time). BAS, CATS, T_meal and T_attr count timed visits only. S_spatial counts every known
    item with a distance (a stay is an item on every day) and P_persona every judged visit, as their
    means do. T_attr (a per-day score) and O_ord (a sequence score) have units but no sum."""
    first: set[tuple[str, int]] = set()
    bas = cats = 0.0
    n_bas = n_cats = 0
    for visit, detail in scored.pois:
        if visit.ref is None or (visit.kind, visit.ref.row) in first:
            continue
        first.add((visit.kind, visit.ref.row))
        n_bas += 1
        bas += 1.0 - min(1.0, detail.q)
        if detail.crowd_score is not None:
            n_cats += 1
            cats += detail.crowd_score
    seen_legs: set[tuple[object, ...]] = set()
    tdas = 0.0
    for lc, leg in scored.legs:
        key = (lc.leg.mode, lc.leg.number, lc.origin_key, lc.dest_key, lc.day)
        if lc.resolved.found and key not in seen_legs:
            seen_legs.add(key)
            tdas += 1.0 - min(1.0, leg.q)
    meal_rows: set[int] = set()
    meal = 0.0
    for visit, score in scored.meals:
        if visit.ref is not None and visit.ref.row not in meal_rows:
            meal_rows.add(visit.ref.row)
            meal += score
    spatial = [score for day in scored.spatial for visit, score in day if visit.ref is not None]
    attractions = {visit.ref.row for visit, _ in scored.pois if visit.kind == "attraction" and visit.ref is not None}
    items = {(v.kind, v.ref.row) for day in ctx.days for v in day.items if v.ref is not None}
    matched, judged = scored.persona if scored.persona is not None else (0, 0)
    units = {"bas": n_bas, "cats": n_cats, "tdas": len(seen_legs), "temporal_meal": len(meal_rows),
             "temporal_attraction": len(attractions), "spatial": len(spatial),
             "persona": judged if scored.persona is not None else sum(len(day.items) for day in ctx.days),
             "ordering": len(items) + len(seen_legs)}
    sums = {"bas": bas, "cats": cats, "tdas": tdas, "temporal_meal": meal, "spatial": sum(spatial)}
    if scored.persona is not None:
        sums["persona"] = float(matched)
    return units, sums


def required_units(query: Query) -> dict[str, int]:
    """The least content Complete Information asks of any plan for `query` (used when the query has
    no reference plan): an attraction and three meals on each day without a journey, one journey
    per city change. CATS and O_ord ask for nothing without a reference."""
    journeys = query.visiting_city_number + 1
    full_days = max(0, query.days - journeys)
    visits = 4 * full_days
    return {"bas": visits, "cats": 0, "tdas": journeys, "temporal_meal": 3 * full_days,
            "temporal_attraction": full_days, "spatial": visits, "persona": visits, "ordering": 0}


def expected_units(query: Query, reference_units: Mapping[str, int] | None) -> dict[str, int]:
    """What the query calls for: its reference plan's units (`content_units`), else `required_units`."""
    return dict(reference_units) if reference_units is not None else required_units(query)


def covered_metric(value: float | None, have: int, want: int, total: float | None = None) -> float | None:
    """A metric as the reward weighs it: `total` / max(have, want) for a plain mean over items (the
    sum of the item scores: removing an item never raises it), else value x min(1, have / want);
    0 when there is nothing to score but something is called for; None only when nothing of the
    kind is called for and the plan scores nothing either."""
    if value is None or have == 0:
        return 0.0 if want > 0 else value
    if total is not None:
        return total / max(have, want)
    return value if want <= 0 else value * min(1.0, have / want)


def covered_metrics(report: EvaluationReport, expected: Mapping[str, int]) -> dict[str, float | None]:
    """`covered_metric` of each of the report's eight metrics, from its `units` and `unit_sums`."""
    values = report.metrics()
    return {name: covered_metric(values[name], report.units.get(name, 0), expected.get(name, 0),
                                 report.unit_sums.get(name)) for name in METRICS}


UNTIMED_IS_INCOMPLETE = "timed_items"
"""The extra check the reward folds into complete_information (`reward_checks`)."""
REWARD_EXTRA_CHECKS = ("open_hours", "transit_distances")
"""Extra checks the reward counts beside the paper's ten (`reward_checks`): a visit at an hour the
venue is closed would otherwise buy quiet crowd hours (CATS) at 03:00, and a stated distance the
database refutes is a forged fact (S_spatial reads the database's distance either way)."""


def reward_checks(report: EvaluationReport) -> dict[str, CheckResult]:
    """The commonsense checks as the reward reads them: the paper's ten, except that a plan whose
    point-of-interest items state no times also fails complete_information (the extra check
    `timed_items`). The paper's pass rates leave the times out of that check (docs/PAPER.md); the
    reward cannot, or a plan that never commits to a time would escape BAS, CATS and the TripCraft
    timing metrics, which are the benchmark's point. The extra checks of `REWARD_EXTRA_CHECKS`
    count as checks of their own. The task text says so."""
    checks = dict(report.commonsense)
    checks.update({name: report.extra[name] for name in REWARD_EXTRA_CHECKS if name in report.extra})
    timed = report.extra.get(UNTIMED_IS_INCOMPLETE)
    info = checks.get("complete_information")
    if timed is not None and timed.passed is False and info is not None and info.passed is not False:
        checks["complete_information"] = CheckResult(passed=False, reason=timed.reason)
    return checks


def reward_gate(checks: Mapping[str, CheckResult]) -> bool:
    """Whether the hard constraints count in a reward: complete information and within sandbox of
    `reward_checks` did not fail (the paper's gate, `EvaluationReport.hard_evaluated`, on the reward's checks)."""
    return all(checks[name].passed is not False for name in HARD_GATE if name in checks)
