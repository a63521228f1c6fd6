"""Candidate transport legs, stays and venues for a query: what a valid plan may choose from.

The query generator (to price the cheapest valid plan and check feasibility) and the reference
planner (to choose) both draw from these functions, so "what is allowed" is defined once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from utp_env.config import UncertaintyConfig
from utp_env.itinerary import Mode, parse_hhmm
from utp_env.query import LocalConstraint, house_rule_requirement
from utp_env.tools.clock import opening_hours, weekday
from utp_env.tools.database import Database, normalize
from utp_env.tools.delays import delay_index
from utp_env.tools.schema import CAB_SEATS, FARE_COLUMN, NUMBER_COLUMN, SERVICE_TABLE, open_on, scheduled_arrival

SERVICE_TABLES: dict[str, tuple[str, str, str]] = {  # mode -> (table, number column, fare column)
    mode: (table, NUMBER_COLUMN[table], FARE_COLUMN[table]) for mode, table in SERVICE_TABLE.items()}
FIRST_DEP_MIN = 6 * 60  # earliest departure on the first day
LATER_DEP_MIN = 9 * 60  # earliest departure on a day that starts at a stay (checkout first)
LATEST_ARRIVAL_MIN = 21 * 60 + 30  # latest planned arrival of a leg that is followed by a night's stay
CAB_DEP_FIRST = 8 * 60
CAB_DEP_LATER = 11 * 60
MAX_CAB_MIN = 9 * 60


def buffer_multiplier(config: UncertaintyConfig, risk_profile: str) -> float:
    """The low end of the risk profile's multiplier range: the shortest buffer BAS and TDAS accept,
    which the reference planner books (a person adds what the risk needs, not the most it allows)."""
    return config.risk_multipliers[risk_profile].low


@dataclass(frozen=True)
class LegOption:
    """One way to travel between two cities on a given date, with its party fare and E[D]."""

    mode: Mode
    number: str | None
    origin: str
    destination: str
    row: int | None
    dep: int
    arr: int  # scheduled arrival, minutes from the departure day's midnight
    fare: float  # for the whole party
    expected_delay: float
    hist_duration: float

    def planned_arrival(self, multiplier: float) -> int:
        """Departure + historical duration + multiplier * E[D], rounded up; never before the scheduled
        arrival. TDAS measures the buffer against the historical duration (a service's scheduled
        duration, a cab's free-flow time), so with a multiplier inside the risk range this is an
        arrival that scores Q = 0."""
        return max(self.arr, self.dep + math.ceil(self.hist_duration + multiplier * self.expected_delay - 1e-9))


def _allowed_modes(constraint: LocalConstraint) -> tuple[Mode, ...]:
    modes: tuple[Mode, ...] = ("flight", "train", "bus", "cab")
    if constraint.transportation == "no flight":
        return tuple(m for m in modes if m != "flight")
    if constraint.transportation == "no cab":
        return tuple(m for m in modes if m != "cab")
    return modes


def leg_options(db: Database, origin: str, dest: str, date: str, people: int,
                constraint: LocalConstraint, *, first: bool, last: bool, multiplier: float) -> list[LegOption]:
    """Every allowed leg from `origin` to `dest` departing on `date`, respecting the plan's timing rules.

    Timing rules (shared with the planner): departures no earlier than 06:00 on the first day and
    09:00 on later days; a leg followed by a night at the destination must arrive the same day by
    21:30 (planned arrival); the final leg home may arrive the next morning.
    """
    key = (normalize(origin), normalize(dest), date, people, constraint.transportation, first, last, multiplier)
    cache: dict = db.__dict__.setdefault("_utp_leg_cache", {})
    if key in cache:
        return cache[key]
    delays = delay_index(db)
    day = weekday(date)
    earliest = FIRST_DEP_MIN if first else LATER_DEP_MIN
    out: list[LegOption] = []
    road = db.pair_rows("road_routes", origin, dest)
    road_row = int(road[0]) if len(road) else None
    for mode in _allowed_modes(constraint):
        if mode == "cab":
            dist = db.pair_rows("distances", origin, dest)
            if road_row is None or not len(dist):
                continue
            free = float(db.tables["road_routes"].columns["free_flow_min"][road_row])
            if free > MAX_CAB_MIN:
                continue
            dep = CAB_DEP_FIRST if first else CAB_DEP_LATER
            fare = float(db.tables["distances"].columns["cab_fare_inr"][int(dist[0])]) * math.ceil(people / CAB_SEATS)
            expected, _ = delays.of("cab", road_row)
            option = LegOption("cab", None, origin, dest, None, dep, dep + math.ceil(free), fare, expected, free)
            if _timing_ok(option, earliest, last, multiplier):
                out.append(option)
            continue
        table_name, number_col, fare_col = SERVICE_TABLES[mode]
        if mode == "bus" and road_row is None:
            continue  # a bus needs its road route for E[D]
        table = db.tables[table_name]
        cols = table.columns
        for i in db.pair_rows(table_name, origin, dest):
            i = int(i)
            if cols["run_days"][i][day] != "1":
                continue
            dep = parse_hhmm(cols["dep_time"][i])
            arr = scheduled_arrival(cols, i)
            if arr <= dep:
                continue
            expected, _ = delays.of(mode, road_row if mode == "bus" else i)
            hist = float(cols["duration_min"][i])
            option = LegOption(mode, str(cols[number_col][i]), origin, dest, i, dep, arr,
                               float(cols[fare_col][i]) * people, expected, hist)
            if _timing_ok(option, earliest, last, multiplier):
                out.append(option)
    out.sort(key=lambda o: (o.fare, o.expected_delay, o.dep, o.mode, o.number or ""))
    cache[key] = out
    return out


def _timing_ok(option: LegOption, earliest: int, last: bool, multiplier: float) -> bool:
    if option.dep < earliest:
        return False
    if last:
        return option.arr < 2 * 1440
    return option.planned_arrival(multiplier) <= LATEST_ARRIVAL_MIN


def rooms_needed(people: int, max_occupancy: int) -> int:
    return math.ceil(people / max(1, int(max_occupancy)))


def stay_admissible(db: Database, row: int, constraint: LocalConstraint, nights: int) -> bool:
    """Whether stay `row` meets the query's house rule, type, amenities, services and minimum nights."""
    cols = db.tables["accommodations"].columns
    if int(cols["minimum_nights"][row]) > nights:
        return False
    if constraint.house_rule:
        rule, must_list = house_rule_requirement(constraint.house_rule)
        if (normalize(rule) in {normalize(r) for r in cols["house_rules"][row]}) != must_list:
            return False
    if constraint.house_type and normalize(cols["house_type"][row]) != normalize(constraint.house_type):
        return False
    for field in ("amenities", "services"):
        wanted = {normalize(x) for x in getattr(constraint, field)}
        if wanted - {normalize(x) for x in cols[field][row]}:
            return False
    return True


def stay_cost(db: Database, row: int, people: int, nights: int) -> float:
    """Rooms x nights x price of one stay for the party."""
    cols = db.tables["accommodations"].columns
    return float(cols["price_per_night_inr"][row]) * rooms_needed(people, cols["max_occupancy"][row]) * nights


def stay_options(db: Database, city: str, constraint: LocalConstraint, people: int, nights: int) -> list[int]:
    """Admissible stays in `city`, cheapest for the party first."""
    rows = [int(i) for i in db.city_rows("accommodations", city) if stay_admissible(db, int(i), constraint, nights)]
    return sorted(rows, key=lambda i: (stay_cost(db, i, people, nights), i))


def restaurants_by_cost(db: Database, city: str) -> list[int]:
    rows = db.city_rows("restaurants", city)
    cost = db.tables["restaurants"].columns["avg_cost_inr"]
    return sorted((int(i) for i in rows), key=lambda i: (float(cost[i]), i))


def attractions_by_appeal(db: Database, city: str) -> list[int]:
    """The attractions of `city` in the order a traveller goes for them: best rated first (the
    city's top sights, which the sandbox rates above its generated venues), shorter visits first
    among equals (more of the day stays free). The reference planner tries them in this order and
    the query generator's budget prices the first of them (`feasibility.quote_route`)."""
    rows = db.city_rows("attractions", city)
    cols = db.tables["attractions"].columns
    return sorted((int(i) for i in rows),
                  key=lambda a: (-round(float(cols["rating"][a]), 1), float(cols["visit_duration_hr"][a]), a))


# When a meal may start: breakfast from 07:00, lunch from 12:00, dinner from 19:00 (dinner in India is
# eaten late: the paper's Figure 3 books it 19:30-21:00; TripCraft's fitted dinner hour is about 20:25).
MEAL_WINDOWS: dict[str, tuple[int, int]] = {"breakfast": (7 * 60, 10 * 60), "lunch": (12 * 60, 15 * 60 + 30),
                                            "dinner": (19 * 60, 22 * 60)}
MEAL_MIN_OPEN = 90  # a restaurant serves a meal if open this long from some start in the meal's window


def opens_on(db: Database, table: str, row: int, date: str | None, days_after: int = 0) -> bool:
    """Whether venue `row` of `table` opens on the ISO `date` moved on by `days_after` days: its
    `open_days` (attractions; a table without them opens daily), the same rule as a service's run
    days (`utp_env.tools.schema.open_on`). True without a date (nothing to check)."""
    days = db.tables[table].columns.get("open_days")
    return days is None or open_on(str(days[row]), date, days_after) is not False


def serves_meal(db: Database, row: int, meal: str) -> bool:
    """Whether restaurant `row` is open long enough for `meal` at some start inside its window."""
    cols = db.tables["restaurants"].columns
    opening, closing = opening_hours(cols["open_time"][row], cols["close_time"][row])
    lo, hi = MEAL_WINDOWS[meal]
    start = max(lo, opening)
    return start <= hi and start + MEAL_MIN_OPEN <= closing


EVENT_TRANSFER_MIN = 15  # minutes between a meal and an event that day (the planner's transfer)


def serves_meal_around(db: Database, row: int, meal: str, busy: tuple[int, int] | None) -> bool:
    """Whether restaurant `row` can host `meal` (MEAL_MIN_OPEN minutes from a start inside the meal's
    window, while open) without overlapping `busy`, a fixed block of the day such as an event
    (with EVENT_TRANSFER_MIN on either side); `busy=None` is `serves_meal`."""
    if busy is None:
        return serves_meal(db, row, meal)
    cols = db.tables["restaurants"].columns
    opening, closing = opening_hours(cols["open_time"][row], cols["close_time"][row])
    lo, hi = MEAL_WINDOWS[meal]
    first, last = max(lo, opening), min(hi, closing - MEAL_MIN_OPEN)
    if first > last:
        return False
    before, after = busy[0] - EVENT_TRANSFER_MIN, busy[1] + EVENT_TRANSFER_MIN
    return first + MEAL_MIN_OPEN <= before or max(first, after) <= last


def meal_costs(db: Database, city: str, meals_each: int, busy: tuple[tuple[int, int], ...] = ()) -> float:
    """Per-person cost of `meals_each` breakfasts, lunches and dinners at distinct restaurants of
    `city`, each the cheapest still unused that is open for that meal (what the cheapest plan eats).

    `busy` holds the fixed block (an event) of some of those days, one per day: that day's meals are
    priced first, each at the cheapest unused restaurant that can host it around the block, and
    count nothing when none can (the meal is skipped), so the price stays a lower bound of what a
    plan with those fixed items eats."""
    used: set[int] = set()
    cost = db.tables["restaurants"].columns["avg_cost_inr"]
    total = 0.0
    for meal in MEAL_WINDOWS:
        free_days = meals_each - len(busy)
        for block in busy:
            pick = next((r for r in restaurants_by_cost(db, city)
                         if r not in used and serves_meal_around(db, r, meal, block)), None)
            if pick is not None:
                used.add(pick)
                total += float(cost[pick])
        picks = [r for r in restaurants_by_cost(db, city) if r not in used and serves_meal(db, r, meal)][:free_days]
        used.update(picks)
        total += sum(float(cost[r]) for r in picks)
    return total


def serves(db: Database, row: int, cuisine: str) -> bool:
    return normalize(cuisine) in {normalize(c) for c in db.tables["restaurants"].columns["cuisines"][row]}


def has_category(db: Database, row: int, category: str) -> bool:
    return normalize(category) in {normalize(c) for c in db.tables["attractions"].columns["categories"][row]}


def attraction_fits(db: Database, row: int, multiplier: float, max_minutes: float) -> bool:
    """Whether a visit of v plus the buffer multiplier * v (the lowest congestion) fits `max_minutes`
    and the attraction's opening hours."""
    cols = db.tables["attractions"].columns
    opening, closing = opening_hours(cols["open_time"][row], cols["close_time"][row])
    need = float(cols["visit_duration_hr"][row]) * 60 * (1 + multiplier)
    return need <= min(max_minutes, closing - max(opening, 8 * 60))


def event_fits(db: Database, row: int) -> bool:
    """Events the planner can attend: daytime or evening, ending the same day, by 23:30."""
    cols = db.tables["events"].columns
    start, end = parse_hhmm(cols["start_time"][row]), parse_hhmm(cols["end_time"][row])
    return 9 * 60 <= start < end <= 23 * 60 + 30


def events_on(db: Database, city: str, date: str, segment: str | None = None) -> list[int]:
    """Attendable events in `city` on `date` (optionally of one segment), cheapest first."""
    cols = db.tables["events"].columns
    rows = [int(i) for i in db.city_rows("events", city)
            if cols["date"][i] == date and event_fits(db, int(i))
            and (segment is None or normalize(cols["segment"][i]) == normalize(segment))]
    return sorted(rows, key=lambda i: (float(cols["price_inr"][i]), i))

