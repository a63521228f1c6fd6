"""Degenerate policies: plans an RL policy might find that leave content out, copy, invent or stuff.

Each policy turns a query's honest plan (its reference plan) into the plan a reward hacker would
submit. `tests/env/reward/test_reward_hacking.py` checks that none scores above the reference planner on any
query and none above the deterministic baseline on average; `python tests/support/degenerate_policies.py`
prints the table of mean rewards (docs/ENV.md quotes it).
"""

from __future__ import annotations

from collections.abc import Callable

from utp_env.itinerary import Day, Plan, PlanItem, TransportLeg
from utp_env.query import Query
from utp_env.tools.database import Database, normalize
from utp_env.tools.schema import VENUE_TABLE

PolicyFn = Callable[[Plan, Query, Database, Plan], Plan]
"""(honest plan, query, database, another query's honest plan) -> the degenerate plan."""

POI = ("visit", "event")


def _days(plan: Plan, change: Callable[[Day], Day]) -> Plan:
    return plan.model_copy(update={"days": [change(d) for d in plan.days]})


def no_times(plan: Plan, *_: object) -> Plan:
    """Every item keeps its place but states no start or end."""
    return _days(plan, lambda d: d.model_copy(update={"items": [
        i.model_copy(update={"start": None, "end": None}) for i in d.items]}))


def summary_only(plan: Plan, *_: object) -> Plan:
    """The point-of-interest list removed; the day's summary fields (meals, attractions, stay) kept."""
    return _days(plan, lambda d: d.model_copy(update={"items": []}))


def legs_only(plan: Plan, *_: object) -> Plan:
    """Only the journeys: no meals, attractions, events, stays or items."""
    return _days(plan, lambda d: Day(day=d.day, date=d.date, cities=d.cities, transport=d.transport))


def one_item_per_day(plan: Plan, *_: object) -> Plan:
    """Each day keeps its legs, its stay and its first visit only."""
    def keep(d: Day) -> Day:
        first = next((i for i in d.items if i.activity in POI), None)
        items = [i for i in d.items if i.activity not in POI or i is first]
        return d.model_copy(update={"items": items, "breakfast": None, "lunch": None, "dinner": None,
                                    "attractions": [first.name] if first and first.venue_type == "attraction"
                                    else [], "events": []})
    return _days(plan, keep)


def copies_of_one_venue(plan: Plan, *_: object) -> Plan:
    """Every restaurant visit and every attraction visit goes to the trip's first one of its kind."""
    first: dict[str, str] = {}
    for d in plan.days:
        for i in d.items:
            if i.activity == "visit" and i.venue_type is not None:
                first.setdefault(i.venue_type, i.name)

    def copy(d: Day) -> Day:
        items = [i.model_copy(update={"name": first[i.venue_type]}) if i.activity == "visit" and i.venue_type
                 in first else i for i in d.items]
        meal = first.get("restaurant")
        return d.model_copy(update={
            "items": items, "breakfast": meal if d.breakfast else None, "lunch": meal if d.lunch else None,
            "dinner": meal if d.dinner else None,
            "attractions": [first["attraction"]] * len(d.attractions) if "attraction" in first else []})
    return _days(plan, copy)


def hallucinated(plan: Plan, *_: object) -> Plan:
    """Every venue and service invented (free, perfectly buffered by construction)."""
    def invent(d: Day) -> Day:
        items = [i.model_copy(update={"name": f"Imaginary {i.venue_type or 'place'} {n}, {d.cities[-1]}",
                                      "transit_distance_m": 0.0, "transit_stop": "Imaginary Stop"})
                 if i.activity != "arrive" else i for n, i in enumerate(d.items)]
        legs = [leg.model_copy(update={"number": f"ZZ{n}{leg.number or ''}"}) for n, leg in enumerate(d.transport)]
        return d.model_copy(update={
            "items": items, "transport": legs,
            "breakfast": f"Imaginary breakfast, {d.cities[-1]}" if d.breakfast else None,
            "lunch": f"Imaginary lunch, {d.cities[-1]}" if d.lunch else None,
            "dinner": f"Imaginary dinner, {d.cities[-1]}" if d.dinner else None,
            "attractions": [f"Imaginary sight {n}, {d.cities[-1]}" for n in range(len(d.attractions))],
            "accommodation": f"Imaginary stay, {d.cities[-1]}" if d.accommodation else None})
    return _days(plan, invent)


def another_querys_plan(plan: Plan, query: Query, db: Database, other: Plan) -> Plan:
    """The honest plan of another query, relabelled as this query's."""
    return other.model_copy(update={"query_id": plan.query_id})


def stuffed(plan: Plan, *_: object) -> Plan:
    """Maximal items: every visit of the day repeated three times back to back (times shifted)."""
    def stuff(d: Day) -> Day:
        items: list[PlanItem] = []
        for i in d.items:
            items.append(i)
            if i.activity == "visit" and i.start is not None and i.end is not None:
                length = i.end - i.start
                items += [i.model_copy(update={"start": i.end + k * length, "end": i.end + (k + 1) * length})
                          for k in range(2)]
        return d.model_copy(update={"items": items})
    return _days(plan, stuff)


def zero_distances(plan: Plan, *_: object) -> Plan:
    """Every item claims its transit stop is 0 m away (a lie the database can refute)."""
    return _days(plan, lambda d: d.model_copy(update={"items": [
        i.model_copy(update={"transit_distance_m": 0.0}) if i.transit_distance_m is not None else i
        for i in d.items]}))


def night_visits(plan: Plan, *_: object) -> Plan:
    """Every attraction visit moved to 01:00-05:30, when crowds are lowest and most places are shut."""
    def move(d: Day) -> Day:
        items = [i.model_copy(update={"start": 60, "end": 330}) if i.activity == "visit" and
                 i.venue_type == "attraction" else i for i in d.items]
        return d.model_copy(update={"items": sorted(items, key=lambda i: i.start if i.start is not None else 0)})
    return _days(plan, move)


def zero_length_visits(plan: Plan, *_: object) -> Plan:
    """Every visit keeps its start and ends there (nothing is really done)."""
    return _days(plan, lambda d: d.model_copy(update={"items": [
        i.model_copy(update={"end": i.start}) if i.activity == "visit" and i.start is not None else i
        for i in d.items]}))


def padded_legs(plan: Plan, *_: object) -> Plan:
    """Every leg's planned arrival 10 hours after its scheduled one (never late, by construction)."""
    return _days(plan, lambda d: d.model_copy(update={"transport": [
        leg.model_copy(update={"planned_arr": leg.arr + 600}) for leg in d.transport]}))


def nothing(plan: Plan, *_: object) -> Plan:
    """Submitting at once: a plan with no days."""
    return Plan(query_id=plan.query_id, days=[])


POLICIES: dict[str, PolicyFn] = {
    "no times": no_times,
    "summary only (no PoI list)": summary_only,
    "legs only": legs_only,
    "one item per day": one_item_per_day,
    "copies of one venue": copies_of_one_venue,
    "everything hallucinated": hallucinated,
    "another query's plan": another_querys_plan,
    "maximal items": stuffed,
    "submit at once": nothing,
}
"""The degenerate policies: each below the honest plan on every query, and below the honest
deterministic baseline on average."""

VARIANTS: dict[str, PolicyFn] = {
    "transit distances claimed 0 m": zero_distances,
    "attractions at 01:00-05:30": night_visits,
    "zero-length visits": zero_length_visits,
    "legs padded by 10 h": padded_legs,
}
"""Worse variants of the honest plan a red team tried (a lie, closed hours, empty visits, padding):
each below the honest plan on every query."""


# ---------------------------------------------------------------- tricks that add content
# Each returns the honest plan with content added (or replaced) that the plan does not schedule, the
# database does not know, or that counts twice; None when the trick has nothing to work on for this
# query (no cuisine constraint, no timetabled leg, ...). None of them may reach the honest plan's reward.

AdditiveFn = Callable[[Plan, Query, Database, Plan], Plan | None]


def _key(name: str) -> str:
    return normalize(name.rsplit(", ", 1)[0])


def _used(plan: Plan) -> set[str]:
    """Normalised names (without `, City`) of every venue the plan names, in items or summary fields."""
    names: set[str] = set()
    for d in plan.days:
        names.update(_key(i.name) for i in d.items)
        names.update(_key(n) for n in (d.breakfast, d.lunch, d.dinner, d.accommodation, *d.attractions, *d.events)
                     if n)
    return names


def _persona_first(db: Database, query: Query, table: str, rows: list[int]) -> list[int]:
    """`rows` with the ones the persona's keyword tables favour first (what a reward hacker would list)."""
    from utp_env.evaluation.tripcraft import preferred_categories, preferred_tiers

    pe = query.persona
    cols = db.tables[table].columns
    if table == "attractions":
        wanted = preferred_categories(pe.location_preference, pe.purpose, pe.traveler_type)
        fits = [bool(wanted.intersection(cols["categories"][r])) for r in rows]
    else:
        tiers = preferred_tiers(pe.spending)
        fits = [cols["price_tier"][r] in tiers for r in rows]
    return [r for r, f in sorted(zip(rows, fits, strict=True), key=lambda rf: not rf[1])]


def _unused_rows(db: Database, table: str, city: str, used: set[str]) -> list[int]:
    names = db.tables[table].columns["name"]
    return [int(r) for r in db.city_rows(table, city) if normalize(names[int(r)]) not in used]


def summary_names(plan: Plan, query: Query, db: Database, *_: object) -> Plan | None:
    """Six more attractions in the `attraction` field and restaurants in the empty meal fields of each
    day without a timed attraction (a travel day), persona-fitting first, none of them in the
    point-of-interest list."""
    used = _used(plan)
    days = []
    added = False
    for d in plan.days:
        if any(i.venue_type == "attraction" and i.timed for i in d.items):
            days.append(d)
            continue
        city = d.cities[-1]
        sights = _persona_first(db, query, "attractions", _unused_rows(db, "attractions", city, used))[:6]
        names = db.tables["attractions"].columns["name"]
        extra = [f"{names[r]}, {city}" for r in sights]
        used.update(normalize(names[r]) for r in sights)
        update: dict[str, object] = {"attractions": [*d.attractions, *extra]}
        meals = _persona_first(db, query, "restaurants", _unused_rows(db, "restaurants", city, used))
        rnames = db.tables["restaurants"].columns["name"]
        for meal in ("breakfast", "lunch", "dinner"):
            if getattr(d, meal) is None and meals:
                r = meals.pop(0)
                used.add(normalize(rnames[r]))
                update[meal] = f"{rnames[r]}, {city}"
        added |= bool(extra) or len(update) > 1
        days.append(d.model_copy(update=update))
    return plan.model_copy(update={"days": days}) if added else None


def cuisine_in_summary(plan: Plan, query: Query, db: Database, other: Plan) -> Plan | None:
    """`summary_names`, and every restaurant item that serves a cuisine the query requires replaced
    in the schedule by one that serves none of them; the meal field keeps the covering restaurant."""
    from utp_env.queries.options import serves

    wanted = query.local_constraint.cuisine
    if not wanted:
        return None
    padded = summary_names(plan, query, db) or plan
    used = _used(padded)
    names = db.tables["restaurants"].columns["name"]
    changed = False
    days = []
    for d in padded.days:
        items = []
        for i in d.items:
            if i.venue_type == "restaurant" and i.start is not None:
                city = (i.name.rsplit(", ", 1)[1] if ", " in i.name else d.cities[-1])
                rows = [r for r in db.city_rows("restaurants", city)
                        if normalize(names[int(r)]) == _key(i.name)]
                if rows and any(serves(db, int(rows[0]), c) for c in wanted):
                    swap = [r for r in _unused_rows(db, "restaurants", city, used)
                            if not any(serves(db, r, c) for c in wanted)]
                    if swap:
                        used.add(normalize(names[swap[0]]))
                        i = i.model_copy(update={"name": f"{names[swap[0]]}, {city}", "transit_stop": None,
                                                 "transit_distance_m": None})
                        changed = True
            items.append(i)
        days.append(d.model_copy(update={"items": items}))
    return plan.model_copy(update={"days": days}) if changed else None


PADDING = 3


def invented_transit(plan: Plan, *_: object) -> Plan | None:
    """Three zero-length `<City> Central Bus Stand n` arrivals (no such stop) after the second day's
    first attraction visit, or its first item: O_ord divides by the second day's length."""
    if len(plan.days) < 2 or not plan.days[1].items:
        return None
    d = plan.days[1]
    at = next((k for k, i in enumerate(d.items) if i.venue_type == "attraction" and i.end is not None),
              next((k for k, i in enumerate(d.items) if i.end is not None), None))
    if at is None:
        return None
    city, end = d.cities[-1], d.items[at].end
    stops = [PlanItem(name=f"{city} Central Bus Stand {n}, {city}", activity="arrive", start=end, end=end,
                      venue_type="transit") for n in range(1, PADDING + 1)]
    items = [*d.items[:at + 1], *stops, *d.items[at + 1:]]
    return plan.model_copy(update={"days": [plan.days[0], d.model_copy(update={"items": items}), *plan.days[2:]]})


def stay_copies(plan: Plan, *_: object) -> Plan | None:
    """Two zero-length copies of every stay item (with its transit note) right after it: S_spatial
    counts every occurrence, and a repeated token costs O_ord nothing."""
    days, n = [], 0
    for d in plan.days:
        items: list[PlanItem] = []
        for i in d.items:
            items.append(i)
            if i.venue_type == "accommodation" and i.end is not None and i.end < 1440:
                n += PADDING - 1
                items += [i.model_copy(update={"activity": "stay", "start": i.end}) for _ in range(PADDING - 1)]
        days.append(d.model_copy(update={"items": items}))
    return plan.model_copy(update={"days": days}) if n else None


def notes_dropped_after_padding(plan: Plan, *_: object) -> Plan | None:
    """`stay_copies`, then the transit notes of every other venue item farther from its stop than the
    stay dropped (S_spatial skips an item without a stated distance)."""
    padded = stay_copies(plan)
    if padded is None:
        return None
    days, dropped = [], 0
    for d in padded.days:
        stays = [i.transit_distance_m for i in d.items if i.venue_type == "accommodation"
                 and i.transit_distance_m is not None]
        near = min(stays) if stays else None
        items = []
        for i in d.items:
            if (near is not None and i.transit_distance_m is not None and i.venue_type != "accommodation"
                    and i.transit_distance_m > near):
                i = i.model_copy(update={"transit_stop": None, "transit_distance_m": None})
                dropped += 1
            items.append(i)
        days.append(d.model_copy(update={"items": items}))
    return padded.model_copy(update={"days": days}) if dropped else None


FORGED_MIN = 120


def forged_times(plan: Plan, *_: object) -> Plan | None:
    """Every flight, train and bus (and the arrival at its departure point) stated two hours earlier
    than its service runs, where the day leaves room for it."""
    days, n = [], 0
    for d in plan.days:
        legs, items = list(d.transport), list(d.items)
        for k, leg in enumerate(legs):
            if leg.mode == "cab" or leg.dep < FORGED_MIN:
                continue
            point = next((j for j, i in enumerate(items) if i.activity == "arrive" and i.end is not None
                          and i.start is not None and i.end <= leg.dep and leg.dep - i.end <= 90), None)
            if point is not None:
                moved = items[point].start - FORGED_MIN  # type: ignore[operator]
                before = [i.end for i in items[:point] if i.end is not None]
                if moved < 0 or (before and max(before) > moved):
                    continue
                items[point] = items[point].model_copy(update={"start": moved, "end": items[point].end - FORGED_MIN})  # type: ignore[operator]
            legs[k] = leg.model_copy(update={"dep": leg.dep - FORGED_MIN, "arr": leg.arr - FORGED_MIN,
                                             "planned_arr": leg.planned_arrival - FORGED_MIN})
            n += 1
        days.append(d.model_copy(update={"transport": legs, "items": items}))
    return plan.model_copy(update={"days": days}) if n else None


def renumbered_days(plan: Plan, *_: object) -> Plan | None:
    """Days numbered 1, 3, 2, ... (the second and third day swap numbers; order and dates kept)."""
    if len(plan.days) < 3:
        return None
    numbers = list(range(1, len(plan.days) + 1))
    numbers[1], numbers[2] = numbers[2], numbers[1]
    return plan.model_copy(update={"days": [d.model_copy(update={"day": n}) for d, n in zip(plan.days, numbers,
                                                                                          strict=True)]})


def lateness_sink(plan: Plan, query: Query, db: Database, *_: object) -> Plan | None:
    """After the trip's last leg home, `<a hotel of the origin>, rest` from the planned arrival plus
    15 minutes for 8 hours (a hotel that meets the query's constraints where there is one): an elastic
    step that absorbs the return leg's delay in the closed loop."""
    if not plan.days or not plan.days[-1].transport:
        return None
    last = plan.days[-1]
    leg = max(last.transport, key=lambda leg: leg.planned_arrival)
    from utp_env.queries.options import stay_options

    rows = stay_options(db, query.org, query.local_constraint, query.people_number, 1) or [
        int(r) for r in db.city_rows("accommodations", query.org)]
    if not rows:
        return None
    name = db.tables["accommodations"].columns["name"][rows[0]]
    start = leg.planned_arrival + 15
    rest = PlanItem(name=f"{name}, {query.org}", activity="rest", start=start, end=start + 480,
                    venue_type="accommodation")
    return plan.model_copy(update={"days": [*plan.days[:-1], last.model_copy(update={"items": [*last.items, rest]})]})


def combined(plan: Plan, query: Query, db: Database, other: Plan) -> Plan | None:
    """Summary-only names, invented transit, zero-length stay copies with notes dropped, forged
    times and renumbered days, on one plan."""
    out = plan
    for trick in (summary_names, invented_transit, notes_dropped_after_padding, forged_times, renumbered_days):
        out = trick(out, query, db, other) or out
    return None if out is plan else out


def cheapest_stay(plan: Plan, query: Query, db: Database, *_: object) -> Plan | None:
    """A luxury traveller's stays replaced by the cheapest stay of the city that meets the query's
    constraints (None for other spending styles, or when the plan's stay already is the cheapest)."""
    from utp_env.queries.options import stay_options

    if "luxur" not in query.persona.spending.casefold():
        return None
    names = db.tables["accommodations"].columns["name"]
    swap: dict[str, str] = {}
    for d in plan.days:
        if d.accommodation and ", " in d.accommodation:
            city = d.accommodation.rsplit(", ", 1)[1]
            nights = sum(1 for e in plan.days if e.accommodation == d.accommodation)
            options = stay_options(db, city, query.local_constraint, query.people_number, nights)
            if options:
                swap[_key(d.accommodation)] = f"{names[options[0]]}, {city}"
    swap = {k: v for k, v in swap.items() if _key(v) != k}
    if not swap:
        return None

    def change(name: str | None) -> str | None:
        return swap.get(_key(name), name) if name else name

    def restate(i: PlanItem) -> PlanItem:
        new = swap[_key(i.name)]
        name, city = new.rsplit(", ", 1)
        stops = db.tables["transit_stops"]
        row = stops.find(city, "accommodation", name)
        if row is None:
            return i.model_copy(update={"name": new, "transit_stop": None, "transit_distance_m": None})
        return i.model_copy(update={"name": new, "transit_stop": stops.columns["stop_name"][row],
                                    "transit_distance_m": float(stops.columns["distance_m"][row])})
    days = [d.model_copy(update={"accommodation": change(d.accommodation), "items": [
        restate(i) if i.venue_type == "accommodation" and _key(i.name) in swap else i for i in d.items]})
        for d in plan.days]
    return plan.model_copy(update={"days": days})


ADDITIVE: dict[str, AdditiveFn] = {
    "summary-only names": summary_names,
    "cuisine covered in the summary only": cuisine_in_summary,
    "invented transit stops": invented_transit,
    "zero-length stay copies": stay_copies,
    "notes dropped after padding": notes_dropped_after_padding,
    "forged timetable": forged_times,
    "renumbered days": renumbered_days,
    "lateness sink": lateness_sink,
    "combined tricks": combined,
}
"""Tricks that add or replace content (each None where it has nothing to work on): each below the
honest plan on every query it applies to."""
ALTERNATIVES: dict[str, AdditiveFn] = {
    "cheapest stay (luxury)": cheapest_stay,
}
"""Honest alternatives that used to pay for the wrong reason: a luxury traveller's cheapest stay may
still beat the reference plan's, but never by fitting the persona worse (when both stays have the
stars the persona favours, or neither has, the cheaper one may be nearer its stop)."""


# ---------------------------------------------------------------- single edits
# An edit changes one thing of a plan the way a policy could (`pick` chooses among the candidates);
# None when the plan offers it nothing to work on. The legitimate ones keep the plan honest (a real
# venue scheduled with its summary field, a real service as it runs); the others add or replace
# content that is unscheduled, unresolvable, zero-length, duplicate or forged.

EditFn = Callable[[Plan, Query, Database, int], Plan | None]
GAP_MIN = 90  # free minutes between two items that an added visit needs (15 on either side)


def _with_day(plan: Plan, index: int, day: Day) -> Plan:
    return plan.model_copy(update={"days": [*plan.days[:index], day, *plan.days[index + 1:]]})


def _choose(candidates: list, pick: int):  # type: ignore[no-untyped-def]
    return candidates[pick % len(candidates)] if candidates else None


def _picked(plan: Plan, spots: list[tuple[int, int]], pick: int) -> tuple[int, int, Day, PlanItem] | None:
    """(day index, item index, the day, the item) of the spot `pick` chooses, None without spots."""
    at = _choose(spots, pick)
    if at is None:
        return None
    d, i = at
    return d, i, plan.days[d], plan.days[d].items[i]


def _inserted(plan: Plan, d: int, i: int, new: PlanItem) -> Plan:
    """`plan` with `new` right after item `i` of day `d`."""
    day = plan.days[d]
    return _with_day(plan, d, day.model_copy(update={"items": [*day.items[:i + 1], new, *day.items[i + 1:]]}))


def _visits(plan: Plan, kinds: tuple[str, ...] = ("attraction", "restaurant")) -> list[tuple[int, int]]:
    """(day index, item index) of every timed visit of one of `kinds`."""
    return [(d, i) for d, day in enumerate(plan.days) for i, item in enumerate(day.items)
            if item.venue_type in kinds and item.activity == "visit" and item.timed]


def _city_of(name: str, day: Day) -> str:
    return name.rsplit(", ", 1)[1] if ", " in name else day.cities[-1]


def _note(db: Database, city: str, kind: str, name: str) -> dict[str, object]:
    stops = db.tables["transit_stops"]
    row = stops.find(city, kind, name)
    if row is None:
        return {"transit_stop": None, "transit_distance_m": None}
    return {"transit_stop": stops.columns["stop_name"][row],
            "transit_distance_m": float(stops.columns["distance_m"][row])}


def _relabel(day: Day, old: str, new: str | None) -> Day:
    """`day` with the summary label of venue `old` replaced by `new` (dropped when None)."""
    key = _key(old)
    update: dict[str, object] = {"attractions": [new if _key(a) == key else a for a in day.attractions
                                                 if new is not None or _key(a) != key]}
    for meal in ("breakfast", "lunch", "dinner"):
        label = getattr(day, meal)
        if label is not None and _key(label) == key:
            update[meal] = new
    return day.model_copy(update=update)


def shift_visit(plan: Plan, query: Query, db: Database, pick: int) -> Plan | None:
    """A visit 15 or 30 minutes earlier or later, its length kept."""
    picked = _picked(plan, _visits(plan), pick)
    if picked is None:
        return None
    d, i, _, item = picked
    delta = (-30, -15, 15, 30)[(pick // 7) % 4]
    if item.start + delta < 0:  # type: ignore[operator]
        return None
    items = list(plan.days[d].items)
    items[i] = item.model_copy(update={"start": item.start + delta, "end": item.end + delta})  # type: ignore[operator]
    return _with_day(plan, d, plan.days[d].model_copy(update={"items": items}))


def resize_visit(plan: Plan, query: Query, db: Database, pick: int) -> Plan | None:
    """A visit ending 15 or 30 minutes earlier or later (still after its start)."""
    picked = _picked(plan, _visits(plan), pick)
    if picked is None:
        return None
    d, i, _, item = picked
    end = item.end + (-30, -15, 15, 30)[(pick // 7) % 4]  # type: ignore[operator]
    if end <= item.start:  # type: ignore[operator]
        return None
    items = list(plan.days[d].items)
    items[i] = item.model_copy(update={"end": end})
    return _with_day(plan, d, plan.days[d].model_copy(update={"items": items}))


def _renamed(plan: Plan, d: int, i: int, label: str, **update: object) -> Plan:
    """`plan` with item `i` of day `d` named `label` (and `update`d), in the schedule and its summary field."""
    day = plan.days[d]
    item = day.items[i]
    items = list(day.items)
    items[i] = item.model_copy(update={"name": label, **update})
    return _with_day(plan, d, _relabel(day.model_copy(update={"items": items}), item.name, label))


def swap_venue(plan: Plan, query: Query, db: Database, pick: int) -> Plan | None:
    """A visit's venue replaced by another of its city that the plan does not name (persona-fitting
    first), in the schedule and the summary field, with the new venue's transit note."""
    picked = _picked(plan, _visits(plan), pick)
    if picked is None:
        return None
    d, i, day, item = picked
    table = VENUE_TABLE[item.venue_type]  # type: ignore[index]
    city = _city_of(item.name, day)
    rows = _persona_first(db, query, table, _unused_rows(db, table, city, _used(plan)))
    row = _choose(rows[:5], pick // 11)
    if row is None:
        return None
    name = db.tables[table].columns["name"][row]
    return _renamed(plan, d, i, f"{name}, {city}", **_note(db, city, item.venue_type or "", name))


def drop_visit(plan: Plan, query: Query, db: Database, pick: int) -> Plan | None:
    """A visit removed from the schedule and from its summary field."""
    picked = _picked(plan, _visits(plan), pick)
    if picked is None:
        return None
    d, i, day, _ = picked
    items = [item for k, item in enumerate(day.items) if k != i]
    return _with_day(plan, d, _relabel(day.model_copy(update={"items": items}), day.items[i].name, None))


def add_visit(plan: Plan, query: Query, db: Database, pick: int) -> Plan | None:
    """An attraction of the day's city the plan does not name, visited in a free stretch of at least
    90 minutes between two items, added to the summary field with its transit note."""
    gaps = [(d, k) for d, day in enumerate(plan.days) if len(day.cities) == 1 for k, (a, b) in
            enumerate(zip(day.items, day.items[1:], strict=False))
            if a.end is not None and b.start is not None and b.start - a.end >= GAP_MIN]
    at = _choose(gaps, pick)
    if at is None:
        return None
    d, k = at
    day = plan.days[d]
    city = day.cities[0]
    row = _choose(_persona_first(db, query, "attractions", _unused_rows(db, "attractions", city, _used(plan)))[:5],
                  pick // 11)
    if row is None:
        return None
    name = db.tables["attractions"].columns["name"][row]
    start, end = day.items[k].end + 15, day.items[k + 1].start - 15  # type: ignore[operator]
    visit = PlanItem(name=f"{name}, {city}", activity="visit", start=start, end=end, venue_type="attraction",
                     **_note(db, city, "attraction", name))  # type: ignore[arg-type]
    items = [*day.items[:k + 1], visit, *day.items[k + 1:]]
    return _with_day(plan, d, day.model_copy(update={"items": items, "attractions": [*day.attractions,
                                                                                      f"{name}, {city}"]}))


def change_leg(plan: Plan, query: Query, db: Database, pick: int) -> Plan | None:
    """A leg replaced by another service on its route that runs that day, as timetabled (the same
    planned buffer), and the arrival at its departure point moved to end as its boarding closes."""
    from utp_env.config import load_uncertainty
    from utp_env.queries.options import leg_options
    from utp_env.resolve import departure_point

    legs = [(d, k) for d, day in enumerate(plan.days) for k in range(len(day.transport))]
    at = _choose(legs, pick)
    if at is None:
        return None
    d, k = at
    day, leg = plan.days[d], plan.days[d].transport[k]
    options = [o for o in leg_options(db, leg.origin, leg.destination, query.dates[d], query.people_number,
                                      query.local_constraint, first=d == 0, last=d == len(plan.days) - 1,
                                      multiplier=0.0)
               if (o.mode, o.number, o.dep) != (leg.mode, leg.number, leg.dep)]
    option = _choose(options, pick // 11)
    if option is None:
        return None
    buffer = leg.planned_arrival - leg.arr
    new = leg.model_copy(update={"mode": option.mode, "number": option.number, "dep": option.dep, "arr": option.arr,
                                 "planned_arr": option.arr + buffer})
    margin = int(load_uncertainty().simulation.boarding_margin_min[option.mode])
    items = list(day.items)
    point = next((j for j, i in enumerate(items) if i.activity == "arrive" and i.end is not None
                  and i.end <= leg.dep), None)
    if point is not None:
        end = max(10, option.dep - margin)
        items[point] = items[point].model_copy(update={
            "name": departure_point(db, option.mode, option.row, option.origin), "start": end - 10, "end": end})
    transport = [*day.transport[:k], new, *day.transport[k + 1:]]
    return _with_day(plan, d, day.model_copy(update={"transport": transport, "items": items}))


def summary_only_name(plan: Plan, query: Query, db: Database, pick: int) -> Plan | None:
    """An attraction of the day's city the plan does not name, added to the summary field only."""
    d = pick % len(plan.days) if plan.days else None
    if d is None:
        return None
    day = plan.days[d]
    city = day.cities[-1]
    row = _choose(_persona_first(db, query, "attractions", _unused_rows(db, "attractions", city, _used(plan)))[:5],
                  pick // 11)
    if row is None:
        return None
    label = f"{db.tables['attractions'].columns['name'][row]}, {city}"
    return _with_day(plan, d, day.model_copy(update={"attractions": [*day.attractions, label]}))


def _insert_after(plan: Plan, pick: int, make: Callable[[PlanItem, Day], PlanItem | None]) -> Plan | None:
    """`make(item, day)` inserted right after a timed item of the plan (None: nothing to insert)."""
    spots = [(d, i) for d, day in enumerate(plan.days) for i, item in enumerate(day.items) if item.timed]
    picked = _picked(plan, spots, pick)
    if picked is None:
        return None
    d, i, day, item = picked
    new = make(item, day)
    return None if new is None else _inserted(plan, d, i, new)


def invented_visit(plan: Plan, query: Query, db: Database, pick: int) -> Plan | None:
    """An hour at a venue the database does not know, after an item (named in the summary too)."""
    def make(item: PlanItem, day: Day) -> PlanItem:
        return PlanItem(name=f"Imaginary Garden {pick}, {day.cities[-1]}", activity="visit", start=item.end,
                        end=item.end + 60, venue_type="attraction",  # type: ignore[operator]
                        transit_stop="Imaginary Stop", transit_distance_m=10.0)
    out = _insert_after(plan, pick, make)
    if out is None:
        return None
    for d, day in enumerate(out.days):
        label = f"Imaginary Garden {pick}, {day.cities[-1]}"
        if any(i.name == label for i in day.items):
            return _with_day(out, d, day.model_copy(update={"attractions": [*day.attractions, label]}))
    return out


def invented_stop(plan: Plan, query: Query, db: Database, pick: int) -> Plan | None:
    """An arrival at a stop the database does not know, after an item (zero or ten minutes long)."""
    length = (0, 10)[(pick // 5) % 2]
    return _insert_after(plan, pick, lambda item, day: PlanItem(
        name=f"{day.cities[-1]} Central Bus Stand {pick}, {day.cities[-1]}", activity="arrive", start=item.end,
        end=item.end + length, venue_type="transit"))  # type: ignore[operator]


def zero_length_copy(plan: Plan, query: Query, db: Database, pick: int) -> Plan | None:
    """A copy of an item, starting and ending where it ends."""
    return _insert_after(plan, pick, lambda item, day: item.model_copy(update={"start": item.end}))


def duplicate_visit(plan: Plan, query: Query, db: Database, pick: int) -> Plan | None:
    """A visit done again right after itself, for as long."""
    picked = _picked(plan, _visits(plan), pick)
    if picked is None:
        return None
    d, i, _, item = picked
    return _inserted(plan, d, i, item.model_copy(update={"start": item.end,
                                                          "end": 2 * item.end - item.start}))  # type: ignore[operator]


def stay_copy(plan: Plan, query: Query, db: Database, pick: int) -> Plan | None:
    """A stay item done again right after itself, for ten minutes."""
    spots = [(d, i) for d, day in enumerate(plan.days) for i, item in enumerate(day.items)
             if item.venue_type == "accommodation" and item.timed and item.end < 1430]  # type: ignore[operator]
    picked = _picked(plan, spots, pick)
    if picked is None:
        return None
    d, i, _, item = picked
    return _inserted(plan, d, i, item.model_copy(update={"activity": "stay", "start": item.end,
                                                          "end": item.end + 10}))  # type: ignore[operator]


def renamed_elsewhere(plan: Plan, query: Query, db: Database, pick: int) -> Plan | None:
    """A visit renamed to a venue of a city outside the trip (named `Name, City`), summary too."""
    picked = _picked(plan, _visits(plan), pick)
    if picked is None:
        return None
    d, i, _, item = picked
    table = VENUE_TABLE[item.venue_type]  # type: ignore[index]
    trip = {normalize(c) for e in plan.days for c in e.cities}
    cols = db.tables[table].columns
    rows = [r for r in range(db.tables[table].n) if normalize(cols["city"][r]) not in trip]
    row = _choose(rows, pick // 11)
    if row is None:
        return None
    return _renamed(plan, d, i, f"{cols['name'][row]}, {cols['city'][row]}")


def renamed_invented(plan: Plan, query: Query, db: Database, pick: int) -> Plan | None:
    """A visit renamed to a venue the database does not know, summary too."""
    picked = _picked(plan, _visits(plan), pick)
    if picked is None:
        return None
    d, i, day, item = picked
    return _renamed(plan, d, i, f"Imaginary Place {pick}, {_city_of(item.name, day)}")


def zero_length_retime(plan: Plan, query: Query, db: Database, pick: int) -> Plan | None:
    """An item retimed to end where it starts."""
    spots = [(d, i) for d, day in enumerate(plan.days) for i, item in enumerate(day.items) if item.timed]
    at = _choose(spots, pick)
    if at is None:
        return None
    d, i = at
    items = list(plan.days[d].items)
    items[i] = items[i].model_copy(update={"end": items[i].start})
    return _with_day(plan, d, plan.days[d].model_copy(update={"items": items}))


def forged_leg(plan: Plan, query: Query, db: Database, pick: int) -> Plan | None:
    """A flight, train or bus stated 30 to 120 minutes off its timetable (departure and arrival), or
    its journey stated shorter, or its planned arrival before the scheduled one."""
    legs = [(d, k) for d, day in enumerate(plan.days) for k, leg in enumerate(day.transport) if leg.mode != "cab"]
    at = _choose(legs, pick)
    if at is None:
        return None
    d, k = at
    leg = plan.days[d].transport[k]
    how = (pick // 7) % 3
    if how == 0:
        delta = (-120, -60, -30, 30, 60, 120)[(pick // 3) % 6]
        if leg.dep + delta < 0:
            return None
        new = leg.model_copy(update={"dep": leg.dep + delta, "arr": leg.arr + delta,
                                     "planned_arr": leg.planned_arrival + delta})
    elif how == 1:
        cut = min(60, leg.arr - leg.dep)
        if cut <= 0:
            return None
        new = leg.model_copy(update={"arr": leg.arr - cut, "planned_arr": leg.planned_arrival - cut})
    else:
        if leg.arr - leg.dep < 30:
            return None
        new = leg.model_copy(update={"planned_arr": leg.arr - 30})
    day = plan.days[d]
    return _with_day(plan, d, day.model_copy(update={"transport": [*day.transport[:k], new, *day.transport[k + 1:]]}))


def unrelated_leg(plan: Plan, query: Query, db: Database, pick: int) -> Plan | None:
    """A real flight, train or bus between two cities outside the trip, added to a day."""
    trip = {normalize(c) for e in plan.days for c in e.cities}
    found = None
    for table in ("flights", "trains", "buses"):
        cols = db.tables[table].columns
        rows = [r for r in range(db.tables[table].n) if normalize(cols["origin_city"][r]) not in trip
                and normalize(cols["dest_city"][r]) not in trip]
        row = _choose(rows, pick)
        if row is not None:
            found = (table, row)
            break
    if found is None:
        return None
    table, row = found
    mode = {"flights": "flight", "trains": "train", "buses": "bus"}[table]
    from utp_env.tools.clock import parse_hhmm
    from utp_env.tools.schema import scheduled_arrival

    d = pick % len(plan.days)
    number_col = {"flights": "flight_number", "trains": "train_number", "buses": "bus_id"}[table]
    dep = parse_hhmm(cols["dep_time"][row])
    leg = TransportLeg(mode=mode, number=str(cols[number_col][row]), origin=cols["origin_city"][row],  # type: ignore[arg-type]
                       destination=cols["dest_city"][row], dep=dep, arr=scheduled_arrival(cols, row))
    day = plan.days[d]
    return _with_day(plan, d, day.model_copy(update={"transport": [*day.transport, leg]}))


def renumbered_day(plan: Plan, query: Query, db: Database, pick: int) -> Plan | None:
    """Two days swap numbers (order and dates kept)."""
    if len(plan.days) < 2:
        return None
    a = pick % (len(plan.days) - 1)
    days = list(plan.days)
    days[a], days[a + 1] = (days[a].model_copy(update={"day": days[a + 1].day}),
                            days[a + 1].model_copy(update={"day": days[a].day}))
    return plan.model_copy(update={"days": days})


def redated_day(plan: Plan, query: Query, db: Database, pick: int) -> Plan | None:
    """A day dated as another day of the query."""
    if len(plan.days) < 2 or len(query.dates) < 2:
        return None
    d = pick % len(plan.days)
    other = query.dates[(d + 1 + (pick // 5) % (len(query.dates) - 1)) % len(query.dates)]
    return _with_day(plan, d, plan.days[d].model_copy(update={"date": other}))


def dropped_note(plan: Plan, query: Query, db: Database, pick: int) -> Plan | None:
    """An item's transit note (stop and distance) left out."""
    spots = [(d, i) for d, day in enumerate(plan.days) for i, item in enumerate(day.items)
             if item.transit_distance_m is not None]
    at = _choose(spots, pick)
    if at is None:
        return None
    d, i = at
    items = list(plan.days[d].items)
    items[i] = items[i].model_copy(update={"transit_stop": None, "transit_distance_m": None})
    return _with_day(plan, d, plan.days[d].model_copy(update={"items": items}))


def false_distance(plan: Plan, query: Query, db: Database, pick: int) -> Plan | None:
    """An item's transit distance stated as 0 m."""
    spots = [(d, i) for d, day in enumerate(plan.days) for i, item in enumerate(day.items)
             if item.transit_distance_m]
    at = _choose(spots, pick)
    if at is None:
        return None
    d, i = at
    items = list(plan.days[d].items)
    items[i] = items[i].model_copy(update={"transit_distance_m": 0.0})
    return _with_day(plan, d, plan.days[d].model_copy(update={"items": items}))


def night_after_trip(plan: Plan, query: Query, db: Database, pick: int) -> Plan | None:
    """The trip's last day books a night (the previous night's stay again)."""
    if len(plan.days) < 2 or plan.days[-1].accommodation or not plan.days[-2].accommodation:
        return None
    return _with_day(plan, len(plan.days) - 1, plan.days[-1].model_copy(update={
        "accommodation": plan.days[-2].accommodation}))


LEGITIMATE: dict[str, EditFn] = {
    "shift a visit": shift_visit,
    "resize a visit": resize_visit,
    "swap a venue": swap_venue,
    "drop a visit": drop_visit,
    "add a visit": add_visit,
    "change a leg": change_leg,
}
"""Edits that keep a plan honest: what an optimiser may use to raise the reward."""
ADDING: dict[str, EditFn] = {
    "summary-only name": summary_only_name,
    "invented visit": invented_visit,
    "invented stop": invented_stop,
    "zero-length copy": zero_length_copy,
    "duplicate visit": duplicate_visit,
    "stay copy": stay_copy,
    "unrelated leg": unrelated_leg,
    "night after the trip": night_after_trip,
}
"""Edits that add content that is unscheduled, unresolvable, zero-length, duplicate or forged."""
REPLACING: dict[str, EditFn] = {
    "renamed to another city's venue": renamed_elsewhere,
    "renamed to an invented venue": renamed_invented,
    "retimed to zero length": zero_length_retime,
    "forged leg": forged_leg,
    "renumbered day": renumbered_day,
    "redated day": redated_day,
    "transit note dropped": dropped_note,
    "distance stated as 0 m": false_distance,
}
"""Edits that replace or restate content with what is unresolvable, zero-length or forged (or drop a note)."""


def env_reward(env: object, query_id: str, plan: Plan) -> float:
    """The reward of `plan` through the env's public path: `reset` on the query, then `submit_plan` of
    the plan in the paper's JSON day format (what an agent sends)."""
    from utp_env.plan_format import format_plan

    env.reset(options={"query_id": query_id})  # type: ignore[attr-defined]
    _, reward, terminated, _, info = env.step(  # type: ignore[attr-defined]
        {"tool": "submit_plan", "args": {"plan": format_plan(plan)}})
    assert terminated, info.get("calls")
    return float(reward)


def lived_reward(env: object, query_id: str, plan: Plan, seed: int, repair: Callable[..., None] | None = None
                 ) -> float:
    """The realised reward of living `plan` through the closed loop (`reset(options={"plan": ...})`,
    then `continue_trip` to the end), with `repair` called at each pause (None: no repair)."""
    from utp_env.env.config import find_query
    from utp_env.runs.replan_episode import live_trip

    query = find_query(env.db, query_id)  # type: ignore[attr-defined]
    return live_trip(env, query, plan, seed, repair)[0]


def hill_climb(plan: Plan, query: Query, db: Database, reward: Callable[[Plan], float], evaluations: int,
               rng: object) -> tuple[Plan, float, list[str]]:
    """A seeded hill-climb from `plan` over every edit (`LEGITIMATE`, `ADDING`, `REPLACING`): `evaluations`
    random edits, each kept when it raises `reward`. (the best plan, its reward, the kinds kept)."""
    every = {**LEGITIMATE, **ADDING, **REPLACING}
    names = sorted(every)
    best, kept = reward(plan), []
    for _ in range(evaluations):
        name = names[int(rng.integers(len(names)))]  # type: ignore[attr-defined]
        edited = every[name](plan, query, db, int(rng.integers(10_000)))  # type: ignore[attr-defined]
        if edited is None:
            continue
        value = reward(edited)
        if value > best + 1e-12:
            plan, best = edited, value
            kept.append(name)
    return plan, best, kept


def main() -> None:  # pragma: no cover - a measurement script
    """Mean reward of the honest plan and of each policy and trick through the env's public path; with
    `--closed-loop`, the lateness sink lived without repair against the reference plan lived with the
    reference repair policy."""
    import argparse
    import time

    import numpy as np

    from utp_env.agents.base import Toolkit
    from utp_env.agents.reference import ReferencePlanner
    from utp_env.dataset import open_dataset
    from utp_env.env.core import UTPEnv

    parser = argparse.ArgumentParser(description="Mean UTP-v0 reward of each degenerate policy and trick")
    parser.add_argument("--profile", default="mini")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--closed-loop", action="store_true", help="the lateness sink in UTP-Replan-v0")
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--hill-climb", type=int, default=0, metavar="EVALUATIONS",
                        help="a seeded hill-climb from each reference plan, this many evaluations per query")
    args = parser.parse_args()
    started = time.perf_counter()
    ds = open_dataset(profile=args.profile, progress=False)
    queries = sorted((q for q in ds.queries if q.query_id in ds.references), key=lambda q: q.query_id)
    if args.hill_climb:
        from collections import Counter

        from utp_env.env.config import EnvConfig
        from utp_env.env.episode import TerminationReason, finish

        rng = np.random.default_rng(0)
        gains, kinds = [], Counter()
        weights = EnvConfig().reward_weights
        for q in queries[:args.limit]:
            ref = ds.references[q.query_id]

            def score(plan: Plan, q: Query = q, ref: Plan = ref) -> float:
                return finish(TerminationReason.SUBMITTED, plan, q, ds.db, weights=weights, reference=ref).reward
            _, best, kept = hill_climb(ref, q, ds.db, score, args.hill_climb, rng)
            gains.append(best - score(ref))
            kinds.update(kept)
        print(f"{args.profile}: hill-climb of {args.hill_climb} evaluations from {len(gains)} reference plans: "
              f"mean gain {np.mean(gains):+.4f} (max {max(gains):+.4f}); edits kept: {dict(kinds)} "
              f"[{time.perf_counter() - started:.0f} s]")
        return
    if args.closed_loop:  # the first --limit queries the sink applies to
        queries = [q for q in queries if lateness_sink(ds.references[q.query_id], q, ds.db) is not None]
    queries = queries[:args.limit]
    if args.closed_loop:
        from utp_env.env.replan import UTPReplanEnv
        from utp_env.runs.episode import episode_seed

        env = UTPReplanEnv(profile=args.profile)
        repair = ReferencePlanner().repair
        rows: dict[str, list[float]] = {"reference, repaired": [], "reference, not repaired": [],
                                        "lateness sink, not repaired": [], "lateness sink, repaired": []}
        above = dict.fromkeys(rows, 0)
        strictly = dict.fromkeys(rows, 0)
        for q in queries:
            ref = ds.references[q.query_id]
            sink = lateness_sink(ref, q, ds.db)
            assert sink is not None
            for trial in range(args.seeds):
                seed = episode_seed(0, q.query_id, trial)
                honest = lived_reward(env, q.query_id, ref, seed, repair)
                values = {"reference, repaired": honest,
                          "reference, not repaired": lived_reward(env, q.query_id, ref, seed),
                          "lateness sink, not repaired": lived_reward(env, q.query_id, sink, seed),
                          "lateness sink, repaired": lived_reward(env, q.query_id, sink, seed, repair)}
                for name, value in values.items():
                    rows[name].append(value)
                    above[name] += value >= honest
                    strictly[name] += value > honest + 1e-12
        n = len(rows["reference, repaired"])
        print(f"{args.profile}: {n} closed-loop episodes ({args.seeds} seeds); mean realised reward "
              f"(episodes where it reaches / exceeds the reference repaired) [{time.perf_counter() - started:.0f} s]")
        for name, values in rows.items():
            print(f"| {name} | {np.mean(values):.4f} | {above[name]} | {strictly[name]} |")
        return
    env = UTPEnv(profile=args.profile)
    every = {**POLICIES, **VARIANTS, **ADDITIVE, **ALTERNATIVES}
    rows = {"reference": [], "deterministic": [], **{k: [] for k in every}}
    deltas: dict[str, list[float]] = {k: [] for k in every}
    wins: dict[str, int] = dict.fromkeys(every, 0)
    det = ReferencePlanner(buffers=False)
    for n, q in enumerate(queries):
        ref = ds.references[q.query_id]
        other = ds.references[queries[(n + 1) % len(queries)].query_id]
        honest = env_reward(env, q.query_id, ref)
        rows["reference"].append(honest)
        rows["deterministic"].append(env_reward(env, q.query_id, det.run(q, Toolkit(ds.db)).plan))
        for name, policy in every.items():
            plan = policy(ref, q, ds.db, other)
            if plan is None:
                continue
            value = env_reward(env, q.query_id, plan) if plan.days else 0.0
            rows[name].append(value)
            deltas[name].append(value - honest)
            wins[name] += value >= honest
    print(f"{args.profile}: {len(queries)} queries; mean UTP-v0 reward through reset and submit_plan "
          f"[{time.perf_counter() - started:.0f} s]")
    print("| policy | queries | mean reward | mean change from the reference | queries where it reaches "
          "the reference |")
    for name, values in rows.items():
        change = f"{np.mean(deltas[name]):+.4f}" if deltas.get(name) else ""
        print(f"| {name} | {len(values)} | {np.mean(values):.4f} | {change} | {wins.get(name, '')} |")


if __name__ == "__main__":
    main()
