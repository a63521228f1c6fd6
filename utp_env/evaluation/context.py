"""Resolve a plan against the database once, so that every check and metric reads the same answers.

A plan names venues twice: in each day's summary fields (`breakfast`, `attraction`, ...; the
paper's `Name, City`) and in its point-of-interest items (with times). `build_context` merges
them into one list of `Visit`s per day: every item in order, then each summary venue that no
item of that day names (untimed). Venues are found with `utp_env.resolve.find_venue`, legs
matched with `utp_env.resolve.resolve_leg`. Per-database indices (parsed crowd profiles, which
cities hold a venue name) are built once and cached on the `Database` object (`EvalIndex`).

Plans name the same venues, cities and services again and again, so `EvalIndex` also memoises
what an item resolves to (`item_fields`, `found`, `distance_row`) and `utp_env.resolve` what a leg
and a name resolve to. The database is read-only, each memo is keyed on every input its answer
reads (a date only where events are looked up) and each is bounded (`resolve.MEMO_LIMIT`, then it
starts afresh); tests/evaluation/test_evaluation_speed_equivalence.py checks that they change no report.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, TypeGuard

from utp_env.itinerary import Day, Meal, Plan, PlanItem, TransportLeg
from utp_env.plan_format.text import is_absent
from utp_env.query import Query
from utp_env.resolve import (
    MEMO_LIMIT,
    CityKeys,
    ResolvedLeg,
    VenueName,
    VenueRef,
    crowd_of,
    find_venue,
    resolve_leg,
)
from utp_env.tools.clock import opening_hours
from utp_env.tools.database import Database, normalize
from utp_env.tools.memo import remember
from utp_env.tools.schema import VENUE_TABLE, VenueKind

VisitKind = Literal["accommodation", "attraction", "restaurant", "event", "transit", "transport", "unknown"]
ACCOMMODATION_ACTIVITIES = frozenset({"stay", "check-in", "checkout", "rest"})
# An item the plan does not say the kind of is looked for in these tables, in this order.
UNKNOWN_KIND_TABLES = ("attractions", "restaurants", "events", "accommodations")


@dataclass(frozen=True)
class CrowdProfile:
    """One crowd row parsed for scoring: windows as hour sets with their level."""

    windows: tuple[tuple[frozenset[int], str], ...]
    quiet: frozenset[int]
    peak: frozenset[int]

    @functools.cached_property
    def windows_at(self) -> tuple[tuple[int, ...], ...]:
        """For each clock hour 0-23, the positions in `windows` of the windows holding it, in order."""
        return tuple(tuple(i for i, (hours, _) in enumerate(self.windows) if hour in hours) for hour in range(24))

    @functools.cached_property
    def levels(self) -> frozenset[str]:
        """The levels of the windows."""
        return frozenset(level for _, level in self.windows)

    @functools.cached_property
    def levels_by_hour(self) -> tuple[str | None, ...]:
        """`level_at` of each clock hour 0-23, read once per profile (every scored visit asks one)."""
        return tuple(self._first_level(hour) for hour in range(24))

    def level_at(self, hour: int) -> str | None:
        """Level of the first window containing `hour` (0-23), None when none does."""
        return self.levels_by_hour[hour] if 0 <= hour < 24 else self._first_level(hour)

    def _first_level(self, hour: int) -> str | None:
        for hours, level in self.windows:
            if hour in hours:
                return level
        return None


def window_hours(start_hour: int, end_hour: int) -> frozenset[int]:
    """Hours of an inclusive window that may wrap past midnight: (22, 1) -> {22, 23, 0, 1}."""
    if start_hour <= end_hour:
        return frozenset(range(start_hour, end_hour + 1))
    return frozenset(range(start_hour, 24)) | frozenset(range(0, end_hour + 1))


class EvalIndex:
    """Per-database caches for evaluation (built lazily, kept on the Database)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._crowd: dict[int, CrowdProfile] = {}
        self._names: dict[str, dict[str, set[str]]] = {}
        # (name text, day's city keys, tables, date) -> (venue, crowd row): `found`'s memo.
        self._found: dict[tuple[str, CityKeys, tuple[str, ...], str | None], tuple[VenueRef | None, int | None]] = {}
        # (item name, activity, venue_type, meal, summary entry, city keys, date) -> `item_fields`'s answer.
        self._distances: dict[tuple[str, str], int | None] = {}
        # (city key, kind, name key) -> the walking distance to the nearest stop: `transit_distance`'s memo.
        self._transit: dict[tuple[str, str, str], float | None] = {}
        # table -> (opening, closing) minutes of each row (`opening`), filled row by row.
        self._hours: dict[str, list[tuple[int, int] | None]] = {}
        self._columns: dict[tuple[str, str], list[Any]] = {}
        self._normalized: dict[tuple[str, str], list[frozenset[str] | None]] = {}
        self._items: dict[tuple[str, str | None, str | None, str | None, tuple[VisitKind, Meal | None] | None,
                                CityKeys, str | None], ItemFields] = {}
        cities = db.tables["cities"].columns
        self.state_of: dict[str, str] = {normalize(c): normalize(s)
                                         for c, s in zip(cities["city"], cities["state"], strict=True)}

    def crowd(self, row: int) -> CrowdProfile:
        profile = self._crowd.get(row)
        if profile is None:
            cols = self.db.tables["crowd"].columns
            windows = tuple((window_hours(int(s), int(e)), str(level)) for s, e, level in cols["windows"][row])
            peak = cols["peak_window"][row]
            profile = CrowdProfile(windows, frozenset(int(h) % 24 for h in cols["quiet_hours"][row] or ()),
                                   window_hours(int(peak[0]), int(peak[1])) if peak is not None else frozenset())
            self._crowd[row] = profile
        return profile

    def cities_with(self, table: str, name: str) -> set[str]:
        """Normalised cities in which `table` has a venue called `name`."""
        index = self._names.get(table)
        if index is None:
            index = {}
            cols = self.db.tables[table].columns
            for n, c in zip(cols["name"], cols["city"], strict=True):
                index.setdefault(normalize(n), set()).add(normalize(c))
            self._names[table] = index
        return index.get(normalize(name), set())

    def found(self, name: VenueName, cities: CityKeys, tables: tuple[str, ...],
              date: str | None) -> tuple[VenueRef | None, int | None]:
        """(venue, crowd row) of `name` searched in `tables` of `cities` on `date` (`find_venue`,
        `crowd_of`). Memoised on exactly those inputs (the database is read-only), bounded by
        `resolve.MEMO_LIMIT`: plans name the same venues again and again."""
        key = (name.text, cities, tables, date if "events" in tables else None)  # only events are dated
        hit = self._found.get(key)
        if hit is None:
            ref = find_venue(self.db, name, cities, tables, date)
            hit = remember(self._found, key, (ref, crowd_of(self.db, ref) if ref is not None else None), MEMO_LIMIT)
        return hit

    def column(self, table: str, name: str) -> list[Any]:
        """A numeric column as a list of Python numbers (the same values: indexing a list is several
        times cheaper than indexing the numpy array). For the venue tables, a few thousand rows each;
        the large service and distance tables are read as numpy (a few rows per plan)."""
        values = self._columns.get((table, name))
        if values is None:
            values = self._columns[(table, name)] = self.db.tables[table].columns[name].tolist()
        return values

    def normalized(self, table: str, name: str, row: int) -> frozenset[str]:
        """The values of a list column (amenities, cuisines, house rules, ...) of one row, each
        passed through `normalize`; computed once per row."""
        rows = self._normalized.get((table, name))
        if rows is None:
            rows = self._normalized[(table, name)] = [None] * self.db.tables[table].n
        values = rows[row]
        if values is None:
            values = rows[row] = frozenset(normalize(x) for x in self.db.tables[table].columns[name][row])
        return values

    def distance_row(self, origin: str, destination: str) -> int | None:
        """The first `distances` row between two cities (`Database.pair_rows`), or None; memoised
        on the two names as given, bounded by `resolve.MEMO_LIMIT`."""
        key = (origin, destination)
        try:
            return self._distances[key]
        except KeyError:
            rows = self.db.pair_rows("distances", origin, destination)
            return remember(self._distances, key, int(rows[0]) if len(rows) else None, MEMO_LIMIT)

    def transit_distance(self, city_key: str, kind: str, name_key: str) -> float | None:
        """The `transit_stops` distance (m) of the venue `name_key` of `kind` in `city_key` (keys as
        `VenueRef` holds them), None when it has no recorded stop; memoised on the three keys,
        bounded by `resolve.MEMO_LIMIT`."""
        key = (city_key, kind, name_key)
        try:
            return self._transit[key]
        except KeyError:
            stops = self.db.tables["transit_stops"]
            row = stops.find(city_key, kind, name_key)
            return remember(self._transit, key, None if row is None else float(stops.columns["distance_m"][row]),
                            MEMO_LIMIT)

    def opening(self, table: str, row: int) -> tuple[int, int]:
        """(opening, closing) minutes of venue `row` of `table` (`tools/clock.py`'s `opening_hours` of its
        `open_time` and `close_time`); computed once per row."""
        rows = self._hours.get(table)
        if rows is None:
            rows = self._hours[table] = [None] * self.db.tables[table].n
        hours = rows[row]
        if hours is None:
            cols = self.db.tables[table].columns
            hours = rows[row] = opening_hours(cols["open_time"][row], cols["close_time"][row])
        return hours

    def item_fields(self, item: PlanItem, name: VenueName, summary: tuple[VisitKind, Meal | None] | None,
                    cities: CityKeys, date: str | None) -> ItemFields:
        """What a POI item resolves to (`ItemFields`): its kind and meal (`_item_kind`, given the day's
        summary entry of its name), and the venue found for it in `cities` on `date`. Memoised on
        exactly those inputs, bounded by `resolve.MEMO_LIMIT`."""
        key = (item.name, item.activity, item.venue_type, item.meal, summary, cities, _date_key(item, date))
        hit = self._items.get(key)
        if hit is None:
            kind, meal = _item_kind(item, summary)
            ref = crowd_row = stated_city = None
            tables = KIND_TABLES.get(kind)
            if tables is not None:
                stated_city = name.stated_city
                ref, crowd_row = self.found(name, cities, tables, date)
                if ref is not None and kind == "unknown":
                    kind = ref.venue_type
            stop = None if ref is None else self.transit_distance(ref.city_key, kind, ref.name_key)
            hit = remember(self._items, key, ItemFields(kind, meal, ref, stated_city, crowd_row,
                                                        ref.city_key if ref is not None else None, stop), MEMO_LIMIT)
        return hit


def _date_key(item: PlanItem, date: str | None) -> str | None:
    """The date as `EvalIndex.item_fields` keys on it: only an item that may be an event (its
    venue_type says so or says nothing) is looked up by date; others are the same on every date."""
    return date if item.venue_type is None or item.venue_type == "event" else None


class ItemFields(NamedTuple):
    """The fields of a POI item's `Visit` that follow from the item, its summary entry, the day's
    cities and date (`EvalIndex.item_fields`)."""

    kind: VisitKind
    meal: Meal | None
    ref: VenueRef | None
    stated_city: str | None
    crowd_row: int | None
    city_key: str | None
    stop_distance: float | None


def eval_index(db: Database) -> EvalIndex:
    """The EvalIndex of `db`, built on first use."""
    return db.derived(EvalIndex)


@dataclass(slots=True)
class Visit:
    """One venue of a day: from a POI item (timed or not) or only from a summary field."""

    day: int
    kind: VisitKind
    name: str
    item: PlanItem | None
    ref: VenueRef | None = None
    meal: Meal | None = None
    stated_city: str | None = None
    crowd_row: int | None = None
    key: str = ""  # normalised name (without a `, City` suffix)
    city_key: str | None = None  # normalised city of the found venue
    stop_distance: float | None = None  # the database's distance to its nearest stop (`EvalIndex.transit_distance`)
    stated_distance: float | None = None  # the item's `transit_distance_m` (None without an item)

    @property
    def city(self) -> str | None:
        return self.ref.city if self.ref is not None else None

    @property
    def timed(self) -> bool:
        item = self.item
        return item is not None and item.start is not None and item.end is not None

    @property
    def label(self) -> str:
        """How a check's reason names the visit: its day, kind and name."""
        return f"day {self.day + 1}: {self.kind} {self.name!r}"


@dataclass(slots=True)
class LegContext:
    day: int
    leg: TransportLeg
    resolved: ResolvedLeg
    origin_key: str = ""
    dest_key: str = ""


@dataclass(slots=True)
class DayContext:
    index: int
    day: Day
    date: str | None
    city_keys: list[str]  # normalised day.cities
    visits: list[Visit]
    legs: list[LegContext]
    # Views of `visits` that every check reads, built by `build_context` with the visits (no defaults:
    # a context built elsewhere must fill them, never silently hold none).
    items: list[Visit]  # the visits that are POI items, in order
    timed: list[tuple[Visit, int, int]]  # (visit, start, end) of timed items


@dataclass(slots=True)
class PlanContext:
    plan: Plan
    query: Query
    db: Database
    index: EvalIndex
    days: list[DayContext]
    visits: list[Visit]  # every day's visits, in order
    legs: list[LegContext]  # every day's legs, in order
    by_kind: dict[str, list[Visit]]  # `visits` split by kind, each in order

    def of_kind(self, kind: str) -> Sequence[Visit]:
        """The plan's visits of one kind, in order (what many checks and metrics sum over)."""
        return self.by_kind.get(kind, ())


def _is_venue(text: str | None) -> TypeGuard[str]:
    """Whether a summary field names a venue (not one of the absent markers of `plan_format.text`)."""
    return not is_absent(text)


_SUMMARY_NAMES: dict[str | None, VenueName | None] = {}  # _summary_name's memo (bounded by MEMO_LIMIT)
_UNSEEN: Any = object()  # a text not in _SUMMARY_NAMES (None there means "an absent marker")


def _summary_name(text: str | None) -> VenueName | None:
    """The venue a summary field names, None for an absent marker; memoised (pure in the text)."""
    try:
        return _SUMMARY_NAMES[text]
    except KeyError:
        name = VenueName.of(text) if _is_venue(text) else None
        if text is None or type(text) is str:
            remember(_SUMMARY_NAMES, text, name, MEMO_LIMIT)
        return name


def summary_names(day: Day) -> list[tuple[VenueKind, VenueName, Meal | None]]:
    """(kind, name, meal) of every venue named in the day's summary fields."""
    values = day.__dict__  # the day's fields, read at dict speed (a pydantic model's attributes are slower)
    fields: list[tuple[VenueKind, str | None, Meal | None]] = [
        ("restaurant", values["breakfast"], "breakfast"), ("restaurant", values["lunch"], "lunch"),
        ("restaurant", values["dinner"], "dinner")]
    if values["attractions"]:
        fields += [("attraction", t, None) for t in values["attractions"]]
    if values["events"]:
        fields += [("event", t, None) for t in values["events"]]
    fields.append(("accommodation", values["accommodation"], None))
    known = _SUMMARY_NAMES  # _summary_name's memo read here first (every day of every plan)
    out: list[tuple[VenueKind, VenueName, Meal | None]] = []
    for kind, text, meal in fields:
        name = known.get(text, _UNSEEN)  # one read: another thread may clear the memo between two
        if name is _UNSEEN:
            name = _summary_name(text)
        if name is not None:
            out.append((kind, name, meal))
    return out


def _item_kind(item: PlanItem, found: tuple[VisitKind, Meal | None] | None) -> tuple[VisitKind, Meal | None]:
    """(kind, meal) of an item from its activity, its venue_type, or its entry in the day's summary fields."""
    if item.activity == "travel" or item.venue_type == "transport":
        return "transport", None
    if item.activity == "arrive" or item.venue_type == "transit":
        return "transit", None
    if item.venue_type is not None:
        meal = item.meal or (found[1] if found is not None and found[0] == item.venue_type else None)
        return item.venue_type, meal
    if item.activity in ACCOMMODATION_ACTIVITIES:
        return "accommodation", None
    if item.activity == "event":
        return "event", None
    if item.meal is not None:
        return "restaurant", item.meal
    if found is not None:
        return found
    return "unknown", None


# The tables an item of each kind is looked for in (kinds absent here are not venues).
KIND_TABLES: dict[str, tuple[str, ...]] = {kind: (table,) for kind, table in VENUE_TABLE.items()}
KIND_TABLES["unknown"] = UNKNOWN_KIND_TABLES


def _resolve(index: EvalIndex, visit: Visit, name: VenueName, tables: tuple[str, ...], cities: CityKeys,
             date: str | None) -> None:
    visit.stated_city = name.stated_city
    visit.ref, visit.crowd_row = ref, _ = index.found(name, cities, tables, date)
    if ref is not None:
        visit.city_key = ref.city_key
        if visit.kind == "unknown":
            visit.kind = ref.venue_type
        visit.stop_distance = index.transit_distance(ref.city_key, visit.kind, ref.name_key)


def build_context(plan: Plan, query: Query, db: Database) -> PlanContext:
    """Resolve every leg and venue of `plan` once."""
    index = eval_index(db)
    venue_name = VenueName.of
    item_fields, known_items = index.item_fields, index._items
    days: list[DayContext] = []
    all_visits: list[Visit] = []
    all_legs: list[LegContext] = []
    dates = query.dates
    for i, day in enumerate(plan.days):
        day_values = day.__dict__  # the fields of the day and of each item below, read at dict speed
        date = day_values["date"] or (dates[i] if i < len(dates) else None)
        cities = CityKeys.of(day_values["cities"])
        visits: list[Visit] = []
        timed: list[tuple[Visit, int, int]] = []
        summary = summary_names(day)
        summary_kind = {name.key: (kind, meal) for kind, name, meal in summary}
        for item in day_values["items"]:
            values = item.__dict__
            text, activity, venue_type, meal = values["name"], values["activity"], values["venue_type"], values["meal"]
            name = venue_name(text)
            found = summary_kind.get(name.key)
            # item_fields' memo read here first: this loop runs for every item of every plan
            fields = known_items.get((text, activity, venue_type, meal, found, cities,  # the key `item_fields` makes
                                      date if venue_type is None or venue_type == "event" else None))  # (`_date_key`)
            kind, meal, ref, stated_city, crowd_row, city_key, stop = fields or item_fields(item, name, found, cities,
                                                                                           date)
            visit = Visit(i, kind, text, item, ref, meal, stated_city, crowd_row, name.key, city_key, stop,
                          values["transit_distance_m"])
            visits.append(visit)
            start, end = values["start"], values["end"]
            if start is not None and end is not None:
                timed.append((visit, start, end))
        items = visits[:]  # the item visits come first, then the summary-only ones
        named = {(v.kind, v.key) for v in items} if summary else set()
        for kind, name, meal in summary:
            if (kind, name.key) not in named:
                visit = Visit(i, kind, name.text, None, None, meal, None, None, name.key)
                _resolve(index, visit, name, KIND_TABLES[kind], cities, date)
                visits.append(visit)
        legs = [LegContext(i, leg, resolve_leg(db, leg, date), normalize(leg.origin), normalize(leg.destination))
                for leg in day_values["transport"]]
        days.append(DayContext(i, day, date, list(cities), visits, legs, items, timed))
        all_visits += visits
        all_legs += legs
    by_kind: dict[str, list[Visit]] = {}
    for visit in all_visits:
        of_kind = by_kind.get(visit.kind)
        if of_kind is None:
            by_kind[visit.kind] = [visit]
        else:
            of_kind.append(visit)
    return PlanContext(plan, query, db, index, days, all_visits, all_legs, by_kind)


def night_stay(day: DayContext, final: bool) -> Visit | None:
    """The accommodation the travellers sleep in after this day, or None.

    The day's `accommodation` field decides; without it, the last accommodation item of a day
    that is not the plan's final day, when it is not also the day's first item (that one is the
    morning end of the previous night).
    """
    stated = _summary_name(day.day.accommodation)
    if stated is not None:
        wanted = stated.key
        for visit in day.visits:
            if visit.kind == "accommodation" and visit.key == wanted:
                return visit
    if final:
        return None
    items = day.items
    stays = [v for v in items if v.kind == "accommodation"]
    if stays and stays[-1] is not items[0]:
        return stays[-1]
    return None
