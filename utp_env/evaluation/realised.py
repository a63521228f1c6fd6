"""The realised outcome of a trip lived through in `utp_env/UTP-Replan-v0` (docs/METRICS.md,
"Realised outcome"; docs/REPLAN.md): what the trip did, measured.

The plan measured here is the trip as it happened (`utp_env.simulation.realise.Realiser.realised_plan`:
lost items removed, executed items at their actual times). The measures:

- `completion`: the share of the commitments the query calls for (`planned_activities` of the
  submitted plan, at least as many as the reference plan's) actually done;
- `realised_hard`: the hard constraints of the realised trip, the budget including the extra costs
  (`extra_fares`: fares paid again for missed legs and fares of booked legs not taken;
  `booked_nights_cost`: submitted nights changed by a repair) and `returns_home` (the traveller
  ends the trip in the query's origin);
- `punctuality`: 1 - min(1, late minutes at fixed commitments / scale) (`late_minutes`: events'
  starts and the trip's real end, the end of its last committed step), 0 when a commitment was
  missed altogether (`unreplaced_legs`).

The env's realised reward (utp_env/env/reward/, `realised_terms`) weighs these with the reward's
gates and scales.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from utp_env.config import UncertaintyConfig
from utp_env.evaluation.context import PlanContext, Visit, build_context
from utp_env.evaluation.hard import budget, hard_checks, trip_cost
from utp_env.evaluation.report import CheckResult, CostBreakdown, EvaluationReport, build, pass_rate
from utp_env.evaluation.uncertainty import base_visit_minutes
from utp_env.itinerary import Day, Plan, TransportLeg
from utp_env.query import Query
from utp_env.simulation.compile import ELASTIC, KIND_NAMES
from utp_env.tools.database import Database, normalize
from utp_env.tools.schema import VENUE_TABLE

if TYPE_CHECKING:
    from utp_env.simulation.trip_steps import ExecutedStep

DEFAULT_MEALS = UncertaintyConfig()
"""The meal windows that give a restaurant visit its base length (`uncertainty.base_visit_minutes`)."""
ELASTIC_STEP = KIND_NAMES[ELASTIC]
"""The kind of an executed step that ends at its planned end however late it starts (a stay, a rest,
an event: `utp_env.simulation.compile`): it absorbs lateness, so it never marks the trip's end."""


ACTIVITY_KINDS = ("attraction", "restaurant", "event")


def planned_activities(ctx: PlanContext) -> list[Visit]:
    """The commitments `completion` counts: the timed visits, meals and events of venues found in
    the database (`context.build_context`) that last at least half their base length v (an event:
    a minute), each venue once per trip and each meal once per day. A visit without a time commits
    to nothing, an invented venue cannot be done, a repeated one is done once. The env's reward
    passes the submitted plan's counted context (utp_env/env/reward/)."""
    seen: set[tuple[Any, ...]] = set()
    out: list[Visit] = []
    meals = DEFAULT_MEALS.restaurant_meals
    for v in ctx.visits:
        if v.kind not in ACTIVITY_KINDS or not v.timed or v.ref is None or v.item is None:
            continue
        start, end = v.item.start, v.item.end
        assert start is not None and end is not None  # v.timed
        table = VENUE_TABLE["restaurant" if v.kind == "restaurant" else "attraction"]
        shortest = 1.0 if v.kind == "event" else base_visit_minutes(ctx.db, table, v.ref.row, start, meals) / 2
        if end - start < shortest:  # a visit of a few minutes is not done (a 0-minute one least of all)
            continue
        key = _done_key(v)
        if key not in seen:
            seen.add(key)
            out.append(v)
    return out


def completion(submitted: PlanContext, realised: PlanContext, expected: int = 0) -> float | None:
    """Share of what the query calls for that the traveller did: the submitted plan's commitments
    (`planned_activities`) done in the realised trip over the larger of their number and
    `expected` (the commitments of the query's reference plan), so a plan that commits to little
    cannot complete all of it.

    A meal counts as done when the same meal of the same day was eaten (at any restaurant: a repair
    may change the place); a visit or an event when the same venue was visited on any day (a repair
    may move it). None only when neither the plan nor the query calls for anything.
    """
    wanted = planned_activities(submitted)
    if not wanted and expected <= 0:
        return None
    pool: Counter[Any] = Counter(_done_key(v) for v in planned_activities(realised))
    done = 0
    for v in wanted:
        key = _done_key(v)
        if pool[key] > 0:
            pool[key] -= 1
            done += 1
    return done / max(len(wanted), expected)


def _done_key(v: Visit) -> tuple[Any, ...]:
    return ("meal", v.day, v.meal) if v.meal is not None else (v.kind, v.key)


def extra_fares(legs: Iterable[tuple[int, TransportLeg]], query: Query, db: Database) -> float:
    """What `legs` (day index, leg) cost for the party, priced as `hard.trip_cost` prices legs:
    used for the fares paid again after a missed leg and the booked fares of legs not taken."""
    days: list[Day] = []
    for d, leg in legs:
        days.append(Day(day=len(days) + 1, date=query.dates[d] if d < len(query.dates) else None,
                        cities=[leg.origin, leg.destination], transport=[leg]))
    if not days:
        return 0.0
    return trip_cost(build_context(Plan(query_id=query.query_id, days=days), query, db)).transport


def booked_nights_cost(submitted: Plan, final: Plan, query: Query, db: Database) -> float:
    """What the submitted plan's nights that a repair changed cost (booked at submission and not
    refunded), priced as `hard.trip_cost` prices stays: a night whose accommodation the final plan
    names differently (or no longer names)."""
    changed = Plan(query_id=submitted.query_id, days=[])
    for d, day in enumerate(submitted.days):
        now = final.days[d].accommodation if d < len(final.days) else None
        kept = day.accommodation is not None and normalize(now or "") != normalize(day.accommodation)
        changed.days.append(Day(day=day.day, date=day.date, cities=day.cities,
                                accommodation=day.accommodation if kept else None))
    if not any(day.accommodation for day in changed.days):
        return 0.0
    return trip_cost(build_context(changed, query, db)).stays


def returns_home(final_city: str, query: Query) -> CheckResult:
    """Whether the traveller ended the trip in the query's origin (the trip is a round trip)."""
    if normalize(final_city) == normalize(query.org):
        return CheckResult(passed=True)
    return CheckResult(passed=False, reason=f"the trip ends in {final_city}, not back in {query.org}")


def realised_hard(ctx: PlanContext, extra_cost: float, home: CheckResult | None = None
                  ) -> tuple[float | None, dict[str, Any]]:
    """(pass rate, checks) of the hard constraints of the realised trip (`ctx`, its `build_context`):
    the query's checks (`hard.hard_checks`), with the budget over its cost plus `extra_cost`, and
    `home` (`returns_home`) when given. Not gated on complete information (a trip that lost a meal
    to a delay is still a trip)."""
    cost = trip_cost(ctx)
    total = cost.model_dump()
    total["total"] = cost.total + extra_cost
    paid = build(CostBreakdown, **total)
    checks = hard_checks(ctx, paid)
    checks["budget"] = budget(ctx, paid)
    if home is not None:
        checks["returns_home"] = home
    return pass_rate(checks), {"checks": {k: c.model_dump() for k, c in checks.items()}, "cost": paid.total}


def unreplaced_legs(submitted: Iterable[TransportLeg], taken: Iterable[TransportLeg]) -> int:
    """Submitted legs whose destination no taken leg reached instead: per destination city, how many
    more submitted legs go there than taken legs do (a missed leg taken later, or a rebooking on
    another service or day, replaces it; a dropped return flight does not)."""
    wanted = Counter(normalize(leg.destination) for leg in submitted)
    wanted.subtract(Counter(normalize(leg.destination) for leg in taken))
    return sum(n for n in wanted.values() if n > 0)


def event_items(ctx: PlanContext) -> set[tuple[int, str]]:
    """(day index, item name) of the plan's event items (the evaluator's reading of the venues)."""
    return {(v.day, v.item.name) for v in ctx.visits if v.kind == "event" and v.item is not None}


def within_leg_ranges(plan: Plan, report: EvaluationReport) -> Plan:
    """`plan` with each leg's planned arrival no later than its TDAS range allows (departure +
    historical duration + the range's high buffer, `report.legs`): what the trip's end lateness is
    measured against (`late_minutes`), so padding a leg with hours of buffer cannot make a trip
    punctual. The plan as given when the report's legs do not line up with it."""
    legs = [leg for day in plan.days for leg in day.transport]
    if len(legs) != len(report.legs):
        return plan
    details = iter(report.legs)
    days = []
    for day in plan.days:
        bounded = []
        for leg in day.transport:
            detail = next(details)
            latest = leg.dep + math.ceil(detail.hist_duration + detail.range_high)
            bounded.append(leg.model_copy(update={"planned_arr": max(leg.arr, min(leg.planned_arrival, latest))}))
        days.append(day.model_copy(update={"transport": bounded}))
    return plan.model_copy(update={"days": days})


def late_minutes(steps: Iterable[ExecutedStep], events: set[tuple[int, str]], submitted_end: float | None) -> float:
    """Lateness at fixed commitments, minutes: how late each attended event started (`events`: an
    event keeps its time), plus how much later than the submitted plan's real end (`submitted_end`,
    the planned end of its last committed step) the trip really ended: the actual end of its last
    committed step reached, a leg home or a visit, never a stay, rest or event (`ELASTIC_STEP`),
    which would absorb the delay of the leg before it (a missed last flight taken the next day costs
    a day)."""
    steps = list(steps)
    late = sum(max(0.0, s.actual_start - s.planned_start) for s in steps
               if s.element == "item" and (s.day_index, s.name) in events and not s.lost)
    reached = [s for s in steps if not s.unreachable and s.kind != ELASTIC_STEP]
    if reached and submitted_end is not None:
        late += max(0.0, max(s.actual_end for s in reached) - submitted_end)
    return float(late)


def punctuality(late: float, scale: float, missed_commitments: int = 0) -> float:
    """1 - min(1, late / scale): 1 when every commitment was met on time, 0 at `scale` minutes late,
    and 0 when a commitment was missed altogether (`unreplaced_legs`)."""
    if missed_commitments > 0:
        return 0.0
    return 1.0 - min(1.0, max(0.0, late) / scale)
