"""The env's reward, in one place: the table of its terms, the rule of what a plan gets credit for,
the checks it applies, and the functions that score a submitted plan (utp_env/UTP-v0) and a lived
trip (utp_env/UTP-Replan-v0). docs/ENV.md "Reward" is this module in words.

**The terms** (`PLAN_TERMS`, `REALISED_TERMS`): each row names a term, what it reads, its default
weight, how it is covered and how it is gated. `EnvConfig`'s and `ReplanConfig`'s default weights,
the table of docs/ENV.md (`terms_table`, a test compares) and the closed loop's realised terms are
read from these rows; configs/env.yaml and configs/replan.yaml name only the weights a researcher
changes.

**What counts** (`counted_context`): the reward credits an element of a plan only if
- the plan *schedules* it: a point-of-interest item with a start and a later end (a name only in a
  day's summary fields, an untimed or a zero-length item earns nothing);
- the database *knows* it, in a city of the trip the query asks for (its origin, its destination or
  the destination state's cities) that is that day's city: a venue found there (an attraction or
  restaurant open for the whole visit, an event on that date); a stay that is that night's
  accommodation or the previous night's; an arrival at the departure point of a leg that leaves that
  day after it; a flight, train or bus that runs on the day's date at the stated times (a cab: a
  road route), between that day's cities;
- *once*: a venue once per trip, a leg once, an arrival once per leg.

Every metric term is computed on what counts (`read_plan`), against what the query calls for: the
same counts of its reference plan (`expected_content`). **The checks** (`reward_checks`) fail a plan
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
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import TYPE_CHECKING, Any, NamedTuple

from utp_env.config import UncertaintyConfig
from utp_env.evaluation.commonsense import (
    VENUE_KINDS,
    in_destination,
    transit_distance,
    venue_closed_because,
    verdict,
)
from utp_env.evaluation.context import DayContext, LegContext, PlanContext, Visit, build_context, summary_names
from utp_env.evaluation.evaluate import (
    DEFAULT_CONFIG,
    ScoredItems,
    evaluate_context,
    ordering_of,
    scored_items,
    temporal_attraction,
)
from utp_env.evaluation.hard import hard_checks
from utp_env.evaluation.report import HARD_GATE, CheckResult, EvaluationReport, pass_rate
from utp_env.evaluation.tripcraft import ordering_token, preferred_categories, preferred_tiers, spatial_item_score
from utp_env.itinerary import Plan
from utp_env.plan_format.text import is_absent
from utp_env.query import Query
from utp_env.resolve import VenueName, departure_point_names
from utp_env.tools.clock import MINUTES_PER_DAY, format_hhmm
from utp_env.tools.database import Database, normalize
from utp_env.tools.memo import remember
from utp_env.tools.schema import VENUE_TABLE

if TYPE_CHECKING:
    from utp_env.simulation.realise import ExecutedStep

# ---------------------------------------------------------------- the terms


class Measure(NamedTuple):
    """A metric as the reward reads it on what counts: its `value` (a mean, or the metric's own
    formula), the number of counted items it scores (`have`), and for a plain mean the sum of their
    scores (`total`; None for a metric that is not a plain mean)."""

    value: float | None
    have: int
    total: float | None = None


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


# ---------------------------------------------------------------- what counts


def trip_cities(ctx: PlanContext) -> frozenset[str]:
    """The normalised cities of the trip the query asks for: its origin and every city the trip may
    go to (`commonsense.in_destination`)."""
    org = normalize(ctx.query.org)
    return frozenset({org, *(key for day in ctx.days for key in day.city_keys if in_destination(ctx, key))})


StayKey = tuple[str, str | None]
"""A stay as a summary field names it: its normalised name and the normalised city it states (None
when it states none)."""


def _stay_key(text: str | None) -> StayKey | None:
    if is_absent(text):
        return None
    assert text is not None  # is_absent(None)
    name = VenueName.of(text)
    return name.key, normalize(name.stated_city) if name.stated_city is not None else None


def night_keys(ctx: PlanContext) -> list[frozenset[StayKey]]:
    """Per day, the stays its accommodation items may name: that night's accommodation (its summary
    field; no night follows the trip's last day) and the previous night's (the morning end of it)."""
    last = ctx.query.days - 1
    tonight = [_stay_key(day.day.accommodation) if day.index < last else None for day in ctx.days]
    return [frozenset(k for k in (tonight[i], tonight[i - 1] if i else None) if k is not None)
            for i in range(len(ctx.days))]


def is_night_stay(v: Visit, nights: frozenset[StayKey]) -> bool:
    """Whether an accommodation item is at one of `nights`: the same name, in the city the summary
    field states (the city the item states, else the one it was found in): a hotel chain's branch in
    another city is another stay."""
    city = normalize(v.stated_city) if v.stated_city is not None else v.city_key
    return any(key == v.key and (stated is None or stated == city) for key, stated in nights)


def _leg_key(lc: LegContext) -> tuple[Any, ...]:
    return (lc.leg.mode, lc.leg.number, lc.origin_key, lc.dest_key, lc.day)


def off_timetable(lc: LegContext, date: str | None) -> str | None:
    """Why a found flight, train or bus is not as its timetable runs (another date, departure or
    journey time, or a planned arrival before the scheduled one), or None when it is (and for a cab)."""
    leg, res = lc.leg, lc.resolved
    if res.row is None or res.scheduled_dep is None or res.scheduled_arr is None:
        return None
    if res.runs_on_date is False:
        return f"does not run on {date}"
    if leg.dep % MINUTES_PER_DAY != res.scheduled_dep:
        return f"departs {format_hhmm(res.scheduled_dep)}, not {format_hhmm(leg.dep)}"
    if leg.arr - leg.dep != res.scheduled_arr - res.scheduled_dep:
        return (f"takes {res.scheduled_arr - res.scheduled_dep} min as scheduled, not the stated "
                f"{leg.arr - leg.dep}")
    if leg.planned_arrival < leg.arr:
        return f"is planned to arrive at {format_hhmm(leg.planned_arrival)}, before its scheduled arrival"
    return None


def leg_counts(lc: LegContext, day: DayContext, trip: frozenset[str]) -> bool:
    """Whether a leg is one the reward credits: found in the database, as its timetable runs on the
    day's date (`off_timetable`), between two different cities of that day and of the trip."""
    return (lc.resolved.found and off_timetable(lc, day.date) is None and lc.origin_key != lc.dest_key
            and lc.origin_key in trip and lc.dest_key in trip
            and lc.origin_key in day.city_keys and lc.dest_key in day.city_keys)


def _scheduled(v: Visit) -> bool:
    item = v.item
    return item is not None and item.start is not None and item.end is not None and item.end > item.start


def known_here(v: Visit, day: DayContext, trip: frozenset[str]) -> bool:
    """Whether a venue item was found in the database in one of that day's cities, a city of the trip,
    and in the city it states, if it states one (`Name, Surat` found only in Amritsar is not known
    where the plan puts it)."""
    if v.ref is None or v.city_key not in day.city_keys or v.city_key not in trip:
        return False
    return v.stated_city is None or normalize(v.stated_city) == v.city_key


def _open(ctx: PlanContext, v: Visit, date: str | None) -> bool:
    if v.kind not in ("attraction", "restaurant") or v.ref is None or v.item is None:
        return True
    start, end = v.item.start, v.item.end
    assert start is not None and end is not None  # scheduled
    return venue_closed_because(ctx.db, VENUE_TABLE[v.kind], v.ref.row, date, start, end) is None


def _departure_of(ctx: PlanContext, day: DayContext, v: Visit, legs: Iterable[LegContext],
                  taken: set[int]) -> LegContext | None:
    """The first leg of `legs` not yet `taken` that leaves after arrival item `v` ends from the place
    it names (`resolve.departure_point_names`; any name for a cab), or None."""
    end = v.item.end if v.item is not None else None
    for lc in sorted(legs, key=lambda lc: lc.leg.dep):
        if id(lc) in taken or (end is not None and lc.leg.dep < end):
            continue
        names = departure_point_names(ctx.db, lc.leg.mode, lc.resolved.row, lc.leg.origin)
        if lc.leg.mode == "cab" or v.key in names:
            taken.add(id(lc))
            return lc
    return None


def counted_context(ctx: PlanContext) -> PlanContext:
    """The plan as the reward credits it: a `PlanContext` whose days hold only the items and legs
    that count (the module's rule, in plan order; the `Visit` and `LegContext` objects are `ctx`'s)."""
    trip = trip_cities(ctx)
    nights = night_keys(ctx)
    venues: set[tuple[str, int]] = set()
    leg_keys: set[tuple[Any, ...]] = set()
    days: list[DayContext] = []
    for day in ctx.days:
        legs = []
        for lc in day.legs:
            key = _leg_key(lc)
            if key not in leg_keys and leg_counts(lc, day, trip):
                leg_keys.add(key)
                legs.append(lc)
        taken: set[int] = set()
        items: list[Visit] = []
        for v in day.items:
            if not _scheduled(v):
                continue
            if v.kind == "transit":
                if _departure_of(ctx, day, v, legs, taken) is None:
                    continue
            elif v.kind in VENUE_KINDS:
                if not known_here(v, day, trip):
                    continue
                if v.kind == "accommodation":
                    if not is_night_stay(v, nights[day.index]):
                        continue
                else:
                    assert v.ref is not None  # known_here
                    venue = (v.ref.table, v.ref.row)
                    if venue in venues or not _open(ctx, v, day.date):
                        continue
                    venues.add(venue)
            else:  # a journey item (the legs are the journey), or an item of no known kind
                continue
            items.append(v)
        timed = [(v, v.item.start, v.item.end) for v in items if v.item is not None
                 and v.item.start is not None and v.item.end is not None]
        days.append(DayContext(day.index, day.day, day.date, day.city_keys, items, legs, items, timed))
    visits = [v for day in days for v in day.visits]
    by_kind: dict[str, list[Visit]] = {}
    for v in visits:
        by_kind.setdefault(v.kind, []).append(v)
    return replace(ctx, days=days, visits=visits, legs=[lc for day in days for lc in day.legs], by_kind=by_kind)


def knows_something(counted: PlanContext) -> bool:
    """Whether anything of the plan counts: a venue, stay or service the database knows where the plan
    puts it. A plan with nothing (an invented plan, another city's) scores 0."""
    return bool(counted.legs) or any(v.kind in VENUE_KINDS for v in counted.visits)


# ---------------------------------------------------------------- the reward's own checks


def _day_of(day: DayContext) -> str:
    return f"day {day.index + 1}"


def summary_matches_schedule(ctx: PlanContext) -> CheckResult:
    """The summary fields agree with the schedule: every venue a day's summary fields name (meals,
    attractions, events, the night's stay) is scheduled that day as a point-of-interest item, every
    scheduled attraction, meal and event is named in them, every scheduled stay is that night's
    accommodation or the previous night's, and no night is booked after the trip's last day."""
    problems: list[str] = []
    nights = night_keys(ctx)
    last = ctx.query.days - 1
    applicable = False
    for day in ctx.days:
        named = {(kind, name.key) for kind, name, _ in summary_names(day.day)}
        applicable |= bool(named) or bool(day.items)
        if day.index >= last and _stay_key(day.day.accommodation) is not None:
            problems.append(f"{_day_of(day)} books a night ({day.day.accommodation}) after the trip's last day")
        for v in day.visits:
            if v.item is None:
                problems.append(f"{_day_of(day)}: {v.name!r} is in the summary fields but not scheduled")
            elif v.kind == "accommodation":
                if not is_night_stay(v, nights[day.index]):
                    problems.append(f"{_day_of(day)}: {v.name!r} is neither that night's accommodation "
                                    "nor the previous night's")
            elif v.kind in VENUE_KINDS and (v.kind, v.key) not in named:
                problems.append(f"{_day_of(day)}: {v.kind} {v.name!r} is scheduled but not in the summary fields")
    return verdict(problems, applicable, "no summary fields and no point-of-interest items")


def items_have_length(ctx: PlanContext) -> CheckResult:
    """Every point-of-interest item with a start and an end ends after it starts (a zero-length item
    is nothing done)."""
    problems = [f"{_day_of(day)}: {v.name!r} starts and ends at {format_hhmm(v.item.start)}"
                for day in ctx.days for v in day.items
                if v.item is not None and v.item.start is not None and v.item.start == v.item.end]
    return verdict(problems, any(day.timed for day in ctx.days), "no timed items")


def known_departure_points(ctx: PlanContext) -> CheckResult:
    """Every arrival item (`arrive`, at an airport, station or stop) names the departure point of a
    flight, train, bus or cab that leaves that day after it ends, one arrival per leg (a flight's
    airport as search_flights lists it, a train's station, `<City> Bus Stand`; a cab's pickup may be
    anywhere)."""
    problems: list[str] = []
    applicable = False
    for day in ctx.days:
        taken: set[int] = set()
        for v in day.items:
            if v.kind != "transit":
                continue
            applicable = True
            if _departure_of(ctx, day, v, day.legs, taken) is None:
                problems.append(f"{_day_of(day)}: {v.name!r} is the departure point of no leg that leaves after it")
    return verdict(problems, applicable, "no arrival items")


def days_in_order(ctx: PlanContext) -> CheckResult:
    """The days are numbered 1..n in order, each on the query's date for it."""
    problems: list[str] = []
    dates = ctx.query.dates
    for i, day in enumerate(ctx.days):
        if day.day.day != i + 1:
            problems.append(f"the plan's day {i + 1} is numbered {day.day.day}")
        elif day.day.date is not None and i < len(dates) and day.day.date != dates[i]:
            problems.append(f"day {i + 1} is dated {day.day.date}, the query's {dates[i]}")
    return verdict(problems, bool(ctx.days), "no days")


def services_as_scheduled(ctx: PlanContext) -> CheckResult:
    """Every flight, train and bus found in the database runs on the day's date, departs at the stated
    time, takes its scheduled time, and is not planned to arrive before its scheduled arrival."""
    problems: list[str] = []
    applicable = False
    for day in ctx.days:
        for lc in day.legs:
            if lc.resolved.row is None:
                continue
            applicable = True
            why = off_timetable(lc, day.date)
            if why is not None:
                leg = lc.leg
                problems.append(f"{_day_of(day)}: {leg.mode} {leg.number} {leg.origin}->{leg.destination} {why}")
    return verdict(problems, applicable, "no timetabled service found")


def legs_form_the_trip(ctx: PlanContext) -> CheckResult:
    """The legs, day by day and by departure, form the trip the query asks for: the first leaves from
    the origin, each leaves from where the one before arrived, every leg runs between cities of the
    trip (the destination, or cities of the destination state), as many cities are reached as the
    query asks, and the last leg returns to the origin."""
    legs = [lc for day in ctx.days for lc in sorted(day.legs, key=lambda lc: lc.leg.dep)]
    if not legs:
        return verdict([], False, "no legs")
    q = ctx.query
    org = normalize(q.org)
    problems: list[str] = []
    if legs[0].origin_key != org:
        problems.append(f"the first leg leaves from {legs[0].leg.origin}, not {q.org}")
    for a, b in pairwise(legs):
        if a.dest_key != b.origin_key:
            problems.append(f"a leg arrives in {a.leg.destination} and the next leaves from {b.leg.origin}")
    outside = sorted({c for lc in legs for c in (lc.leg.origin, lc.leg.destination)
                      if normalize(c) != org and not in_destination(ctx, normalize(c))})
    if outside:
        problems.append(f"legs go to {', '.join(outside)}, outside the trip to {q.dest}")
    reached = {lc.dest_key for lc in legs} - {org}
    if len(reached) != q.visiting_city_number:
        problems.append(f"the legs reach {len(reached)} cities, the query asks for {q.visiting_city_number}")
    if legs[-1].dest_key != org:
        problems.append(f"the last leg arrives in {legs[-1].leg.destination}, not back in {q.org}")
    return verdict(problems)


OWN_CHECKS: dict[str, Callable[[PlanContext], CheckResult]] = {
    "summary_matches_schedule": summary_matches_schedule,
    "items_have_length": items_have_length,
    "known_departure_points": known_departure_points,
    "days_in_order": days_in_order,
    "services_as_scheduled": services_as_scheduled,
    "legs_form_the_trip": legs_form_the_trip,
}
"""The reward's own checks, beside the paper's (each a function of the resolved plan; its docstring is
its rule, stated in the task text by `reward_note`)."""
FOLDED_INTO: dict[str, str] = {
    "timed_items": "complete_information",
    "items_have_length": "complete_information",
    "days_in_order": "complete_information",
    "known_departure_points": "within_sandbox",
    "services_as_scheduled": "within_sandbox",
    "summary_matches_schedule": "valid_poi_list",
    "legs_form_the_trip": "reasonable_city_route",
}
"""Which of the paper's checks each rule of the reward's fails with: an item without times or without
length, and days out of order, leave information out; an arrival at no departure point and a service
off its timetable are not in the sandbox as stated (and so gate the hard constraints, as the paper's
within sandbox does); a summary that disagrees with the schedule makes the point-of-interest list
invalid; legs that do not form the trip make an unreasonable route. A rule folded into a check of the
paper keeps the number of checks, so breaking it costs what breaking the paper's check costs."""
EXTRA_CHECKS_COUNTED = ("open_hours", "transit_distances")
"""The evaluator's extra checks (`report.EXTRA_CHECKS`) the reward counts as checks of their own: a
visit at an hour the venue is closed would buy quiet crowd hours (CATS) at 03:00, and a stated
distance the database refutes is a forged fact."""


def own_checks(ctx: PlanContext) -> dict[str, CheckResult]:
    """`OWN_CHECKS` of a resolved plan."""
    return {name: check(ctx) for name, check in OWN_CHECKS.items()}


def reward_checks(report: EvaluationReport, ctx: PlanContext) -> dict[str, CheckResult]:
    """The commonsense checks as the reward counts them: the paper's ten, each failing also when a
    rule folded into it fails (`FOLDED_INTO`: the evaluator's `timed_items` and `OWN_CHECKS` of the
    resolved plan `ctx`, the report's plan), and the extra checks of `EXTRA_CHECKS_COUNTED`."""
    checks = dict(report.commonsense)
    rules = {"timed_items": report.extra.get("timed_items"), **own_checks(ctx)}
    for name, rule in rules.items():
        parent = FOLDED_INTO[name]
        if rule is None or rule.passed is not False or parent not in checks:
            continue
        reason = f"{name.replace('_', ' ')}: {rule.reason}"
        before = checks[parent]
        if before.passed is False:
            reason = f"{before.reason}; {reason}"
        checks[parent] = CheckResult(passed=False, reason=reason)
    checks.update({name: report.extra[name] for name in EXTRA_CHECKS_COUNTED if name in report.extra})
    return checks


def reward_gate(checks: Mapping[str, CheckResult]) -> bool:
    """Whether the hard constraints count: complete information and within sandbox of `reward_checks`
    did not fail (the paper's gate, `EvaluationReport.hard_evaluated`, on the reward's checks)."""
    return all(checks[name].passed is not False for name in HARD_GATE if name in checks)


def reward_hard(report: EvaluationReport, counted: PlanContext) -> dict[str, CheckResult]:
    """The hard constraints on what counts: the required cuisines, attraction categories and event
    types by counted visits, the stay constraints by counted stays; the budget and the banned mode as
    the report reads them (every venue and leg the plan names costs, and counts against a ban)."""
    checks = hard_checks(counted, report.cost)
    for name in ("budget", "transportation"):
        if name in report.hard:
            checks[name] = report.hard[name]
    return checks


# ---------------------------------------------------------------- reading a plan


@dataclass(frozen=True)
class PlanReading:
    """A plan as the reward reads it: its resolved context, what counts of it, the evaluator's
    per-item scores (of the whole plan; a measure keeps the counted ones), and the reference plan's
    counted context (O_ord compares with it)."""

    ctx: PlanContext
    counted: PlanContext
    scored: ScoredItems
    config: UncertaintyConfig
    report: EvaluationReport | None = None
    reference: PlanContext | None = None
    ids: frozenset[int] = frozenset()
    """`id` of every element of `ctx` that is in `counted`."""

    def counts(self, element: Visit | LegContext) -> bool:
        """Whether an element of `ctx` is one the reward credits (it is in `counted`)."""
        return id(element) in self.ids


def read_plan(ctx: PlanContext, config: UncertaintyConfig | None = None, report: EvaluationReport | None = None,
              reference: PlanContext | None = None) -> PlanReading:
    """The reading of a resolved plan (`report`, when given, supplies the per-item details the
    evaluator already computed)."""
    config = config or DEFAULT_CONFIG
    scored = scored_items(ctx, config, report.pois if report is not None else None,
                          report.legs if report is not None else None)
    counted = counted_context(ctx)
    ids = frozenset(id(e) for e in (*counted.visits, *counted.legs))
    return PlanReading(ctx, counted, scored, config, report, reference, ids)


def _mean(total: float, have: int) -> Measure:
    return Measure(total / have if have else None, have, total)


def _bas(r: PlanReading) -> Measure:
    """BAS: 1 - min(1, Q) of each counted timed attraction and meal."""
    scores = [1.0 - min(1.0, d.q) for v, d in r.scored.pois if r.counts(v)]
    return _mean(sum(scores), len(scores))


def _cats(r: PlanReading) -> Measure:
    """CATS: the crowd-timing score of each counted visit of a venue with crowd data."""
    scores = [d.crowd_score for v, d in r.scored.pois if r.counts(v) and d.crowd_score is not None]
    return _mean(sum(scores), len(scores))


def _tdas(r: PlanReading) -> Measure:
    """TDAS: 1 - min(1, Q) of each counted leg."""
    scores = [1.0 - min(1.0, d.q) for lc, d in r.scored.legs if r.counts(lc)]
    return _mean(sum(scores), len(scores))


def _meal(r: PlanReading) -> Measure:
    """T_meal: TripCraft's meal score of each counted meal (0 for a meal at no meal's hour)."""
    scores = {id(v): s for v, s in r.scored.meals}
    meals = r.counted.of_kind("restaurant")
    return _mean(sum(scores.get(id(v), 0.0) for v in meals), len(meals))


def _attraction(r: PlanReading) -> Measure:
    """T_attr of the counted attraction visits (TripCraft's per-day score)."""
    return Measure(temporal_attraction(r.counted, r.config), len(r.counted.of_kind("attraction")))


def _spatial(r: PlanReading) -> Measure:
    """S_spatial: each counted venue with a recorded stop, once per trip, scored on the database's
    distance to it when the plan states a distance for it (0 when it states none)."""
    p = r.config.tripcraft
    first: dict[tuple[str, int], tuple[float, bool]] = {}
    for v in r.counted.visits:
        if v.ref is None:
            continue
        venue = (v.ref.table, v.ref.row)
        stated = v.item is not None and v.item.transit_distance_m is not None
        if venue in first:
            first[venue] = (first[venue][0], first[venue][1] or stated)
            continue
        distance = transit_distance(r.ctx, v)
        if distance is not None:
            first[venue] = (spatial_item_score(distance, p.spatial_near_m, p.spatial_decay_per_m), stated)
    return _mean(sum(score for score, stated in first.values() if stated), len(first))


def counted_sequences(counted: PlanContext) -> list[list[str]]:
    """Each day's counted items as O_ord's tokens (`tripcraft.ordering_token`), in order, a run of
    items at the same venue one token (a stay and the checkout after it; a copy adds nothing)."""
    out = []
    for day in counted.days:
        tokens: list[str] = []
        last: object = None
        for v in day.items:
            venue = (v.ref.table, v.ref.row) if v.ref is not None else (v.kind, v.key)
            if venue != last:
                tokens.append(ordering_token(v.kind))
            last = venue
        out.append(tokens)
    return out


def _ordering(r: PlanReading) -> Measure:
    """O_ord of the counted items' sequence against the reference plan's (`counted_sequences`, in
    the configured reading); counted as the distinct venues and the legs."""
    venues = {(v.ref.table, v.ref.row) for v in r.counted.visits if v.ref is not None}
    value = None if r.reference is None else ordering_of(counted_sequences(r.counted),
                                                          counted_sequences(r.reference),
                                                          r.config.readings.ordering)
    return Measure(value, len(venues) + len(r.counted.legs))


STAY_STARS: dict[str, frozenset[int]] = {
    "luxur": frozenset({4, 5}),
    "moderate": frozenset({2, 3, 4}),
    "econom": frozenset({0, 1, 2, 3}),
    "budget": frozenset({0, 1, 2, 3}),
}
"""Spending keyword (as `tripcraft.SPENDING_TIERS`) -> the stays' star ratings it favours: the stay's
quality against the spending persona, judged with the restaurants' price tiers."""


def stay_stars(spending: str) -> frozenset[int]:
    """The star ratings a spending persona favours (union over the keywords it contains)."""
    low = spending.casefold()
    return frozenset().union(*(stars for key, stars in STAY_STARS.items() if key in low))


def _persona(r: PlanReading) -> Measure:
    """P_persona, keyword backend: the share of the counted attractions (a favoured category),
    restaurants (a favoured price tier) and stays (a favoured star rating, `STAY_STARS`), each venue
    once; with the bert backend the report's value over the counted visits."""
    if r.config.readings.persona != "keyword":
        return Measure(r.report.persona if r.report is not None else None, len(r.counted.visits))
    pe = r.ctx.query.persona
    columns = r.ctx.db.tables
    judged: list[bool] = []
    categories = preferred_categories(pe.location_preference, pe.purpose, pe.traveler_type)
    if categories:
        judged += [bool(categories.intersection(columns["attractions"].columns["categories"][v.ref.row]))
                   for v in r.counted.of_kind("attraction") if v.ref is not None]
    tiers = preferred_tiers(pe.spending)
    if tiers:
        judged += [columns["restaurants"].columns["price_tier"][v.ref.row] in tiers
                   for v in r.counted.of_kind("restaurant") if v.ref is not None]
    stars = stay_stars(pe.spending)
    if stars:
        stays = {v.ref.row for v in r.counted.of_kind("accommodation") if v.ref is not None}
        judged += [int(columns["accommodations"].columns["star_rating"][row]) in stars for row in sorted(stays)]
    return _mean(float(sum(judged)), len(judged))


PLAN_TERMS: tuple[RewardTerm, ...] = (
    RewardTerm("commonsense_pass_rate", 1.0,
               "the reward's checks (`reward_checks`): the paper's ten, open hours, transit distances and its own",
               "-", "the whole reward is 0 when nothing of the plan counts (`knows_something`)"),
    RewardTerm("hard_pass_rate", 1.0,
               "the query's hard constraints on what counts (budget and banned mode on everything named)",
               "-", "0 unless complete information and within sandbox pass (the paper's gate)"),
    RewardTerm("bas", 1.0, "BAS of each counted timed attraction and meal", SUM_OVER, VALIDITY, _bas),
    RewardTerm("cats", 1.0, "CATS of each counted visit with crowd data", SUM_OVER, VALIDITY, _cats),
    RewardTerm("tdas", 1.0, "TDAS of each counted leg", SUM_OVER, VALIDITY, _tdas),
    RewardTerm("temporal_meal", 0.5, "TripCraft's meal score of each counted meal", SUM_OVER, VALIDITY, _meal),
    RewardTerm("temporal_attraction", 0.5, "T_attr of the counted attraction visits", VALUE_TIMES, VALIDITY,
               _attraction),
    RewardTerm("spatial", 0.5, "the database's transit distance of each counted venue, once per trip, "
               "when the plan states one", SUM_OVER, VALIDITY, _spatial),
    RewardTerm("ordering", 0.5, "O_ord of the counted sequence against the reference plan's", VALUE_TIMES,
               VALIDITY, _ordering),
    RewardTerm("persona", 0.5, "share of counted attractions, restaurants and stays that fit the persona",
               SUM_OVER, VALIDITY, _persona),
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
                     config: UncertaintyConfig | None = None) -> Expected:
    """What the query calls for: the counts of its reference plan's reading, else `required_units`.
    Memoised per database (`_ExpectedMemo`)."""
    if reference is None or not reference.days:
        return Expected(required_units(query))
    config = config or DEFAULT_CONFIG
    memo = db.derived(_ExpectedMemo).entries
    key = (query.model_dump_json(), reference.model_dump_json(), config.model_dump_json())
    hit = memo.get(key)
    if hit is None:
        reading = read_plan(build_context(reference, query, db), config)
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
    checks, its terms and the reward."""

    report: EvaluationReport
    checks: dict[str, CheckResult]
    terms: dict[str, float | None]
    reward: float


def reward_terms(reading: PlanReading, checks: Mapping[str, CheckResult], expected: Expected
                 ) -> dict[str, float | None]:
    """The value of every term of `PLAN_TERMS` for a plan: the two pass rates (the hard one gated),
    and each metric on what counts, covered against what the query calls for and scaled by the
    commonsense pass rate (a plan that breaks the rules earns its metrics in the share it keeps)."""
    assert reading.report is not None
    commonsense = pass_rate(checks)
    hard = pass_rate(reward_hard(reading.report, reading.counted)) if reward_gate(checks) else 0.0
    terms: dict[str, float | None] = {"commonsense_pass_rate": commonsense, "hard_pass_rate": hard}
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
               reference: Plan | None = None, config: UncertaintyConfig | None = None) -> PlanScore:
    """Evaluate `plan` (`evaluate`, the paper's report) and reward it: 0 for a plan without days or in
    which nothing counts, else the weighted mean of `reward_terms`."""
    ctx = build_context(plan, query, db)
    report = evaluate_context(ctx, config, reference)
    expected = expected_content(query, db, reference, config)
    reading = read_plan(ctx, config, report, expected.reference)
    checks = reward_checks(report, ctx)
    terms = reward_terms(reading, checks, expected)
    reward = weighted_reward(terms, weights) if plan.days and knows_something(reading.counted) else 0.0
    return PlanScore(report, checks, terms, reward)


def plan_checks(plan: Plan, query: Query, db: Database, report: EvaluationReport
                ) -> tuple[dict[str, CheckResult], dict[str, CheckResult]]:
    """(`reward_checks`, `reward_hard`) of a plan whose report is already computed (what `check_plan`
    shows the agent)."""
    ctx = build_context(plan, query, db)
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


__all__ = ["DEFAULT_REALISED_WEIGHTS", "DEFAULT_REWARD_WEIGHTS", "FOLDED_INTO", "OWN_CHECKS", "PASS_RATES",
           "PLAN_TERMS", "REALISED_TERMS", "Expected", "Measure", "PlanReading", "PlanScore", "RewardTerm",
           "checks_table", "counted_context", "counted_sequences", "covered_metric", "expected_content",
           "knows_something", "read_plan", "realised_reward", "realised_terms", "required_units", "reward_checks",
           "reward_gate", "reward_note", "reward_terms", "score_plan", "stay_stars", "terms_table", "trip_cities",
           "weighted_reward"]
