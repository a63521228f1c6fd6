"""The checks the env's reward applies (`reward_checks`): the paper's ten commonsense checks, each
failing also when one of the reward's own rules folded into it fails (`OWN_CHECKS`, `FOLDED_INTO`),
the evaluator's extra checks the reward counts (`EXTRA_CHECKS_COUNTED`), the hard constraints on
what counts (`reward_hard`) and the paper's gate on them (`reward_gate`). docs/ENV.md "Reward" shows
the table of the own rules (`utp_env.env.reward.checks_table`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from itertools import pairwise

from utp_env.env.reward.counted import departure_of, is_night_stay, night_keys, off_timetable, stay_key
from utp_env.evaluation.commonsense import (
    VENUE_KINDS,
    in_destination,
)
from utp_env.evaluation.context import DayContext, LegContext, PlanContext, summary_names
from utp_env.evaluation.hard import hard_checks
from utp_env.evaluation.report import HARD_GATE, CheckResult, EvaluationReport, verdict
from utp_env.tools.clock import format_hhmm
from utp_env.tools.database import normalize


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
        if day.index >= last and stay_key(day.day.accommodation) is not None:
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
            if departure_of(ctx, day, v, day.legs, taken) is None:
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
    time, takes its scheduled time, and is not planned to arrive before its scheduled arrival; a cab
    states no number."""
    problems: list[str] = []
    applicable = False
    for day in ctx.days:
        for lc in day.legs:
            if lc.resolved.row is None and lc.leg.mode != "cab":
                continue
            applicable = applicable or lc.resolved.row is not None
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
    q = ctx.query
    return route_verdict(ctx, [lc for day in ctx.days for lc in day.legs], ends_in=q.org,
                         reaches=q.visiting_city_number)


def route_verdict(ctx: PlanContext, legs: list[LegContext], *, ends_in: str, reaches: int | None) -> CheckResult:
    """Whether `legs` (taken day by day, by departure) run from the query's origin to `ends_in`: the first
    leaves from the origin, each leaves from where the one before arrived, every leg runs between cities
    of the trip, the last arrives in `ends_in`, and (unless `reaches` is None) they reach that many
    cities. Not applicable without legs. `legs_form_the_trip` is the whole trip's (back to the origin);
    level 1 checks the outbound leg with it (utp_env/env/reward/levels.py)."""
    legs = sorted(legs, key=lambda lc: (lc.day, lc.leg.dep))
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
    if reaches is not None and len(reached) != reaches:
        problems.append(f"the legs reach {len(reached)} cities, the query asks for {reaches}")
    if legs[-1].dest_key != normalize(ends_in):
        back = "back in " if normalize(ends_in) == org else "in "
        problems.append(f"the last leg arrives in {legs[-1].leg.destination}, not {back}{ends_in}")
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


def reward_checks(report: EvaluationReport, ctx: PlanContext, paper: Mapping[str, CheckResult] | None = None,
                  own: Mapping[str, CheckResult] | None = None) -> dict[str, CheckResult]:
    """The commonsense checks as the reward counts them: the paper's ten, each failing also when a
    rule folded into it fails (`FOLDED_INTO`: the evaluator's `timed_items` and `OWN_CHECKS` of the
    resolved plan `ctx`, the report's plan), and the extra checks of `EXTRA_CHECKS_COUNTED`.

    A level that asks part of the trip (utp_env/env/reward/levels.py) gives the paper's checks read on
    that part (`paper`, default the report's) and the own rules that apply to it (`own`, default all)."""
    checks = dict(report.commonsense if paper is None else paper)
    rules = {"timed_items": report.extra.get("timed_items"), **(own_checks(ctx) if own is None else own)}
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
