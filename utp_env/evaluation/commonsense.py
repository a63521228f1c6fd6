"""Commonsense checks (paper Table 8; formulas in docs/METRICS.md). Each takes a resolved
`PlanContext` and returns a `CheckResult`: True, False with the first problems found, or None
when there is nothing to check (the pass rates count None as passed, as TravelPlanner's checks
return True then). `commonsense_checks` gives the paper's ten; `extra_checks` the rules the paper
does not have."""

from __future__ import annotations

from itertools import pairwise

from utp_env.evaluation.complete_information import complete_information_parts, timed_items
from utp_env.evaluation.context import DayContext, EvalIndex, LegContext, PlanContext, Visit, eval_index
from utp_env.evaluation.report import MAX_REASONS, UNSHOWN, CheckResult, combine, verdict
from utp_env.queries.options import opens_on
from utp_env.tools.clock import MINUTES_PER_DAY, format_hhmm
from utp_env.tools.database import Database, normalize
from utp_env.tools.schema import VENUE_TABLE, closed_weekdays

VENUE_KINDS = frozenset(VENUE_TABLE)  # membership tests in the loops below (no narrowing needed there)

INFINITY = 10**9


def _cities(day: DayContext) -> set[str]:
    return set(day.city_keys)


def within_sandbox(ctx: PlanContext) -> CheckResult:
    """Every city, venue and service exists: venues in that day's cities, flight/train/bus numbers
    (a cab: a road route) between those cities."""
    problems: list[str] = []
    checked = False
    known_cities = ctx.index.state_of  # keyed by every city of the database, normalised
    for day in ctx.days:
        for city, key in zip(day.day.cities, day.city_keys, strict=True):
            if key not in known_cities:
                problems.append(f"day {day.index + 1}: unknown city {city!r}")
        for visit in day.visits:
            if visit.kind in VENUE_KINDS or visit.kind == "unknown":
                checked = True
                if visit.ref is None:
                    problems.append(f"{visit.label} is not in the database for {day.day.current_city}")
        for lc in day.legs:
            checked = True
            if not lc.resolved.found:
                problems.append(f"{_leg_label(day, lc)} is not in the database")
    return verdict(problems, checked or bool(problems))


def _leg_label(day: DayContext, lc: LegContext) -> str:
    leg = lc.leg
    return f"day {day.index + 1}: {leg.mode} {leg.number or ''} {leg.origin}->{leg.destination}"


def service_schedule(ctx: PlanContext) -> CheckResult:
    """An extra check, not the paper's (TravelPlanner's and TripCraft's within-sandbox checks match
    a flight by number and cities only): every found flight, train and bus runs on the day's date
    and departs at the stated time."""
    problems: list[str] = []
    applicable = False
    for day in ctx.days:
        for lc in day.legs:
            leg, res = lc.leg, lc.resolved
            if not res.found or (res.runs_on_date is None and res.scheduled_dep is None):
                continue
            applicable = True
            if res.runs_on_date is False:
                problems.append(f"{_leg_label(day, lc)} does not run on {day.date}")
            if res.scheduled_dep is not None and leg.dep % MINUTES_PER_DAY != res.scheduled_dep:
                problems.append(f"{_leg_label(day, lc)} departs {format_hhmm(res.scheduled_dep)}, "
                                f"not {format_hhmm(leg.dep)}")
    return verdict(problems, applicable, "no timetabled service found")


def open_hours(ctx: PlanContext) -> CheckResult:
    """An extra check, not the parents': every timed attraction and restaurant visit of a venue in the
    database lies within its opening hours (a close at or before the opening is past midnight; a
    visit stated on the morning clock may fall in the previous evening's hours) on a day the venue
    opens (an attraction's `open_days`: the Taj Mahal is closed on Fridays; `venue_open_at`)."""
    problems: list[str] = []
    applicable = False
    for day in ctx.days:
        for visit, start, end in day.timed:
            if visit.kind not in ("attraction", "restaurant") or visit.ref is None:
                continue
            applicable = True
            problem = venue_closed_because(ctx.db, VENUE_TABLE[visit.kind], visit.ref.row, day.date, start, end,
                                           ctx.index)
            if problem is not None:
                problems.append(f"day {day.index + 1}: {visit.name!r} {format_hhmm(start)}-{format_hhmm(end)} "
                                f"{problem}" if len(problems) < MAX_REASONS else UNSHOWN)
    return verdict(problems, applicable, "no timed visit of a venue in the database")


def venue_closed_because(db: Database, table: str, row: int, date: str | None, start: int, end: int,
                         index: EvalIndex | None = None) -> str | None:
    """Why venue `row` of `table` is not open for a whole visit from `start` to `end` (minutes from
    the midnight of `date`), or None when it is: the visit must lie within one opening session
    (`opening_hours`, which may run past midnight) that begins on a day the venue opens
    (`open_days`, attractions only; unchecked without a date). The one rule of "is this venue open
    then" for the checks and the reference planner. `index`: `db`'s EvalIndex when the caller holds it."""
    opening, closing = (index or eval_index(db)).opening(table, row)  # `opening_hours`, once per row
    today = opening <= start and end <= closing  # within the session that began on `date`
    yesterday = opening <= start + MINUTES_PER_DAY and end + MINUTES_PER_DAY <= closing  # or the day before
    if not (today or yesterday):
        return f"is outside its opening hours {format_hhmm(opening)}-{format_hhmm(closing)}"
    if (today and opens_on(db, table, row, date)) or (yesterday and opens_on(db, table, row, date, -1)):
        return None  # a session it lies in began on a day the venue opens
    closed = ", ".join(closed_weekdays(str(db.tables[table].columns["open_days"][row])))
    return f"falls on a day it is closed (on {date}; it is closed on {closed})"


DISTANCE_TOLERANCE = (100.0, 0.15)  # metres, share: a stated "0.5km" for 512 m is the same distance


def transit_distance(ctx: PlanContext, visit: Visit) -> float | None:
    """The database's walking distance (m) from `visit`'s venue to its nearest transit stop, or None
    when the database records none (an event, an unknown venue); S_spatial scores it
    (`evaluate.spatial_scores`) and `transit_distances` compares the plan's number with it. Looked up
    once per venue when the context is built (`EvalIndex.transit_distance`, `Visit.stop_distance`)."""
    return visit.stop_distance


def transit_distances(ctx: PlanContext) -> CheckResult:
    """An extra check, not the parents': a transit distance an item states agrees with the database's
    distance from its venue to the nearest stop (within 100 m or 15%, whichever is more)."""
    problems: list[str] = []
    applicable = False
    metres, share = DISTANCE_TOLERANCE
    for day in ctx.days:
        for v in day.items:
            stated, known = v.stated_distance, v.stop_distance  # (`transit_distance`)
            if stated is None or known is None:
                continue
            applicable = True
            if abs(stated - known) > max(metres, share * known):
                problems.append(f"day {day.index + 1}: {v.name!r} states its stop {stated:.0f} m "
                                f"away; the database says {known:.0f} m (nearest_transit)"
                                if len(problems) < MAX_REASONS else UNSHOWN)
    return verdict(problems, applicable, "no item states a transit distance of a venue with a recorded stop")


def _timed_start(timed: tuple[Visit, int, int]) -> int:
    return timed[1]


def meal_gaps(ctx: PlanContext, min_gap: float) -> CheckResult:
    """At least `min_gap` minutes from the end of each meal to the start of the next (same day)."""
    problems: list[str] = []
    applicable = False
    for day in ctx.days:
        meals = [t for t in day.timed if t[0].kind == "restaurant"]
        meals.sort(key=_timed_start)
        applicable |= len(meals) >= 2
        for (a, _, a_end), (b, b_start, _) in pairwise(meals):
            gap = b_start - a_end
            if gap < min_gap:
                problems.append(f"day {day.index + 1}: {gap} min between {a.name!r} and {b.name!r} "
                                f"(needs {min_gap:g})" if len(problems) < MAX_REASONS else UNSHOWN)
    return verdict(problems, applicable, "fewer than two timed meals on every day")


def stays_and_transfers(ctx: PlanContext) -> CheckResult:
    """Each day starts at the stay (except the first) and ends at it (except the last); check-in
    not before the arrival into that city; check-out not after the departure from it (with the
    chronological order, the paper's valid PoI list of Table 8)."""
    problems: list[str] = []
    applicable = False
    last = len(ctx.days) - 1
    for day in ctx.days:
        items = day.items
        if not items:
            continue
        applicable = True
        n = day.index + 1
        if day.index > 0 and items[0].kind != "accommodation":
            problems.append(f"day {n} starts at {items[0].name!r}, not at the stay")
        if day.index < last and items[-1].kind != "accommodation":
            problems.append(f"day {n} ends at {items[-1].name!r}, not at the stay")
        for visit, start, end in day.timed:
            if visit.kind != "accommodation" or visit.item is None or visit.ref is None:  # ref None: city None
                continue
            city = visit.city_key
            if visit.item.activity == "check-in":
                arrivals = [lc.leg.planned_arrival for lc in day.legs if lc.dest_key == city]
                if arrivals and start < max(arrivals):
                    problems.append(f"day {n}: check-in at {visit.name!r} before the arrival "
                                    f"({format_hhmm(max(arrivals))})")
            if visit.item.activity == "checkout":
                departures = [lc.leg.dep for lc in day.legs if lc.origin_key == city]
                if departures and end > min(departures):
                    problems.append(f"day {n}: check-out of {visit.name!r} after the departure "
                                    f"({format_hhmm(min(departures))})")
    return verdict(problems, applicable, "no point-of-interest list")


def transit_before_departure(ctx: PlanContext) -> CheckResult:
    """An extra check, not the paper's: a transit point item (airport, station, bus stand) ends
    before every flight, train and bus departure. The paper's C.2 one-shot plan (a train at 06:30
    on day 1 with no station item) fails it, so it is reported beside the pass rates, not in them."""
    problems: list[str] = []
    applicable = False
    for day in ctx.days:
        transit_ends = [v.item.end for v in day.items if v.kind == "transit" and v.item is not None]
        for lc in day.legs:
            if lc.leg.mode == "cab":
                continue
            applicable = True
            if not any(end is None or end <= lc.leg.dep for end in transit_ends):
                problems.append(f"day {day.index + 1}: no transit point before the {lc.leg.mode} at "
                                f"{format_hhmm(lc.leg.dep)}")
    return verdict(problems, applicable, "no flight, train or bus")


def valid_poi_list_parts(ctx: PlanContext) -> dict[str, CheckResult]:
    """The parts of the paper's valid PoI list (`report.VALID_POI_LIST_PARTS`): the stays and
    transfers rules and the chronological order (section 3.2: PoIs follow a valid chronological order)."""
    return {"stays_and_transfers": stays_and_transfers(ctx), "chronological_order": chronological_order(ctx)}


def _departure(lc: LegContext) -> int:
    return lc.leg.dep


def _segments(day: DayContext, carry: tuple[int, str] | None) -> list[tuple[int, int, str]]:
    """Where the traveller is during the day: (from, to, city) between the legs (sorted by departure)."""
    legs = sorted(day.legs, key=_departure)
    start, city = -INFINITY, legs[0].origin_key if legs else day.city_keys[0]
    if carry is not None:
        start, city = carry
    segments = []
    for lc in legs:
        segments.append((start, lc.leg.dep, city))
        start, city = lc.leg.planned_arrival, lc.dest_key
    segments.append((start, INFINITY, city))
    return segments


def chronological_order(ctx: PlanContext) -> CheckResult:
    """No item ends before it starts or overlaps the next one; every venue item lies inside a span
    in which the traveller is in that venue's city (between arrival and the next departure, so
    nothing in a city before the planned arrival there and nothing during a journey); no transit
    point (airport, station) visit overlaps the journey, so the departure point is reached before
    departure. An overnight leg's arrival carries into the next day."""
    problems: list[str] = []
    applicable = False
    carry: tuple[int, str] | None = None
    for day in ctx.days:
        n = day.index + 1
        timed = day.timed
        applicable |= bool(timed)
        for v, start, end in timed:
            if end < start:
                problems.append(f"{v.label} ends before it starts" if len(problems) < MAX_REASONS else UNSHOWN)
        for (a, _, a_end), (b, b_start, _) in pairwise(timed):
            if b_start < a_end:
                problems.append(f"day {n}: {b.name!r} starts {format_hhmm(b_start)} "
                                f"before {a.name!r} ends {format_hhmm(a_end)}" if len(problems) < MAX_REASONS
                                else UNSHOWN)
        segments = _segments(day, carry)
        for v, start, end in timed:
            if v.city_key is not None and v.kind in VENUE_KINDS:
                city = v.city_key
                for s, e, c in segments:
                    if s <= start and end <= e and c == city:
                        break
                else:
                    problems.append(f"{v.label} at {format_hhmm(start)}-{format_hhmm(end)} "
                                    f"is outside the time spent in {v.city}" if len(problems) < MAX_REASONS
                                    else UNSHOWN)
            elif v.kind == "transit":
                for lc in day.legs:
                    if start < lc.leg.planned_arrival and end > lc.leg.dep:
                        problems.append(f"{v.label} overlaps the {lc.leg.mode} "
                                        f"{format_hhmm(lc.leg.dep)}-{format_hhmm(lc.leg.planned_arrival)}"
                                        if len(problems) < MAX_REASONS else UNSHOWN)
        late = [lc for lc in day.legs if lc.leg.planned_arrival >= MINUTES_PER_DAY]
        carry = None
        if late:
            last = max(late, key=lambda lc: lc.leg.planned_arrival)
            carry = (last.leg.planned_arrival - MINUTES_PER_DAY, last.dest_key)
    return verdict(problems, applicable, "no timed items")


def _diverse(ctx: PlanContext, kind: str) -> CheckResult:
    seen: dict[object, int] = {}
    problems: list[str] = []
    for visit in ctx.of_kind(kind):
        key = (visit.ref.table, visit.ref.row) if visit.ref is not None else visit.key
        if key in seen:
            problems.append(f"{visit.name!r} repeated on day {visit.day + 1} (first on day {seen[key] + 1})"
                            if len(problems) < MAX_REASONS else UNSHOWN)
        else:
            seen[key] = visit.day
    return verdict(problems, bool(seen), f"no {kind}s in the plan")


def diverse_events(ctx: PlanContext) -> CheckResult:
    """No event attended twice."""
    return _diverse(ctx, "event")


def diverse_restaurants(ctx: PlanContext) -> CheckResult:
    """No restaurant visited twice in the trip (the same place for two meals counts)."""
    return _diverse(ctx, "restaurant")


def diverse_attractions(ctx: PlanContext) -> CheckResult:
    """No attraction visited twice."""
    return _diverse(ctx, "attraction")


def within_current_city(ctx: PlanContext) -> CheckResult:
    """Every venue of a day lies in that day's city (or cities, on a travel day): a stated
    `, City` outside them, or a venue found only in other cities, fails."""
    problems: list[str] = []
    applicable = False
    for day in ctx.days:
        cities = _cities(day)
        for visit in day.visits:
            if visit.kind not in VENUE_KINDS:
                continue
            applicable = True
            if visit.stated_city is not None and normalize(visit.stated_city) not in cities:
                problems.append(f"{visit.label} is stated in {visit.stated_city}, not {day.day.current_city}")
            elif visit.ref is not None and visit.city_key not in cities:
                problems.append(f"{visit.label} is in {visit.ref.city}, not {day.day.current_city}")
            elif visit.ref is None:
                elsewhere = ctx.index.cities_with(VENUE_TABLE[visit.kind], visit.name)
                if elsewhere and not elsewhere & cities:
                    shown = sorted(ctx.db.city(c) for c in elsewhere)
                    problems.append(f"{visit.label} exists only in {', '.join(shown)}")
    return verdict(problems, applicable, "no venues in the plan")


def reasonable_city_route(ctx: PlanContext) -> CheckResult:
    """A closed loop from `org`: day i starts where day i-1 ended, each day's legs chain from its
    first to its last city, each visited city is one contiguous stretch, the number of visited
    cities equals `visiting_city_number`, and they are `dest` (3 days) or in state `dest`."""
    q = ctx.query
    if not ctx.days:
        return verdict(["the plan has no days"])
    problems: list[str] = []
    org = normalize(q.org)
    if ctx.days[0].city_keys[0] != org:
        problems.append(f"the trip starts in {ctx.days[0].day.cities[0]}, not {q.org}")
    if ctx.days[-1].city_keys[-1] != org:
        problems.append(f"the trip ends in {ctx.days[-1].day.end_city}, not back in {q.org}")
    route: list[str] = []
    for day in ctx.days:
        cities = day.city_keys
        if day.index > 0 and cities[0] != ctx.days[day.index - 1].city_keys[-1]:
            problems.append(f"day {day.index + 1} starts in {day.day.cities[0]} but day {day.index} "
                            f"ended in {ctx.days[day.index - 1].day.end_city}")
        legs = sorted(day.legs, key=_departure)
        if legs:
            chain = [legs[0].origin_key] + [lc.dest_key for lc in legs]
            broken = any(a.dest_key != b.origin_key
                         for a, b in pairwise(legs))
            if broken or chain[0] != cities[0] or chain[-1] != cities[-1]:
                problems.append(f"day {day.index + 1}: the legs do not lead from {day.day.cities[0]} "
                                f"to {day.day.end_city}")
        for c in cities:
            if not route or route[-1] != c:
                route.append(c)
    visited = [c for c in route if c != org]
    distinct = list(dict.fromkeys(visited))
    if len(distinct) != len(visited):
        problems.append("a city is visited in two separate stretches")
    if len(distinct) != q.visiting_city_number:
        problems.append(f"{len(distinct)} cities visited, the query asks for {q.visiting_city_number}")
    for c in distinct:
        if not in_destination(ctx, c):
            problems.append(f"visits {c}, the destination is {q.dest}" if q.days == 3 else f"{c} is not in {q.dest}")
    return verdict(problems)


def in_destination(ctx: PlanContext, city_key: str) -> bool:
    """Whether a (normalised) city is one the query's trip goes to: its destination on a 3-day trip,
    a city of the destination state on a longer one (the query generator's reading of `dest`)."""
    dest = normalize(ctx.query.dest)
    return city_key == dest if ctx.query.days == 3 else ctx.index.state_of.get(city_key) == dest


def non_conflicting_transport(ctx: PlanContext) -> CheckResult:
    """Per TravelPlanner and the paper's Table 8: intercity cab and flight in the same trip conflict
    (the car must come back to where it was taken)."""
    legs = ctx.legs
    if not legs:
        return verdict([], False, "no transport legs")
    modes = {lc.leg.mode for lc in legs}
    return verdict(["the trip uses both flight and cab"] if {"flight", "cab"} <= modes else [])


def overlapping_legs(ctx: PlanContext) -> CheckResult:
    """An extra check, not the paper's (its non-conflicting transport is only flight with cab): no
    leg departs before the planned arrival of the leg before it on the same day."""
    if not ctx.legs:
        return verdict([], False, "no transport legs")
    problems: list[str] = []
    for day in ctx.days:
        ordered = sorted(day.legs, key=_departure)
        for a, b in pairwise(ordered):
            if b.leg.dep < a.leg.planned_arrival:
                problems.append(f"day {day.index + 1}: the {b.leg.mode} at {format_hhmm(b.leg.dep)} leaves "
                                f"before the {a.leg.mode} arrives ({format_hhmm(a.leg.planned_arrival)})")
    return verdict(problems)


def commonsense_checks(ctx: PlanContext, min_meal_gap: float,
                       poi_parts: dict[str, CheckResult] | None = None,
                       information_parts: dict[str, CheckResult] | None = None) -> dict[str, CheckResult]:
    """The paper's ten commonsense checks by name, in the order of `report.COMMONSENSE_CHECKS`;
    valid_poi_list combines `poi_parts` and complete_information `information_parts` (each computed
    here, in its default reading, when not given)."""
    parts = poi_parts if poi_parts is not None else valid_poi_list_parts(ctx)
    information = information_parts if information_parts is not None else complete_information_parts(ctx)
    return {
        "within_sandbox": within_sandbox(ctx),
        "complete_information": combine(information),
        "meal_gaps": meal_gaps(ctx, min_meal_gap),
        "valid_poi_list": combine(parts),
        "diverse_events": diverse_events(ctx),
        "within_current_city": within_current_city(ctx),
        "reasonable_city_route": reasonable_city_route(ctx),
        "diverse_restaurants": diverse_restaurants(ctx),
        "diverse_attractions": diverse_attractions(ctx),
        "non_conflicting_transport": non_conflicting_transport(ctx),
    }


def extra_checks(ctx: PlanContext) -> dict[str, CheckResult]:
    """Rules beyond the paper's (`report.EXTRA_CHECKS`), reported but never counted in a pass rate."""
    return {"transit_before_departure": transit_before_departure(ctx), "service_schedule": service_schedule(ctx),
            "overlapping_legs": overlapping_legs(ctx), "timed_items": timed_items(ctx), "open_hours": open_hours(ctx),
            "transit_distances": transit_distances(ctx)}
