"""`parse_plan`: the paper's JSON day objects -> the canonical `Plan`.

Each day object is read field by field (keys matched case-insensitively, `day`/`days`,
`point_of_interest`/`point_of_interest_list`); the transportation and POI grammars live in
`legs` and `poi`. Items get their `venue_type` and `meal` from the day's summary fields (exact
names after `normalize`), else from the database when one is given.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from pydantic import ValidationError

from utp_env.itinerary import (
    MEALS,
    Day,
    Mode,
    Plan,
    PlanItem,
    TransportLeg,
    too_many_items,
    unvalidated,
)
from utp_env.plan_format.errors import PlanFormatError
from utp_env.plan_format.extract import day_objects
from utp_env.plan_format.items import SummaryNames, canonical_day_items, day_items
from utp_env.plan_format.legs import ScheduleLookup, parse_leg
from utp_env.plan_format.poi import parse_entry
from utp_env.plan_format.repairs import Repair
from utp_env.plan_format.text import is_absent, is_absent_stripped, split_top
from utp_env.query import Query
from utp_env.resolve import MEMO_LIMIT, find_service
from utp_env.tools.database import Database
from utp_env.tools.errors import UnknownNameError
from utp_env.tools.memo import remember
from utp_env.tools.schema import SERVICE_TABLE, scheduled_arrival

KEY_ALIASES: dict[str, str] = {
    "day": "days", "days": "days", "current_city": "current_city", "transportation": "transportation",
    "transport": "transportation", "breakfast": "breakfast", "lunch": "lunch", "dinner": "dinner",
    "attraction": "attraction", "attractions": "attraction", "accommodation": "accommodation",
    "event": "event", "events": "event", "point_of_interest_list": "point_of_interest_list",
    "point_of_interest": "point_of_interest_list", "points_of_interest": "point_of_interest_list",
}
_KEY_SEP_RE = re.compile(r"[\s\-]+")
_DAY_NUMBER_RE = re.compile(r"^\s*(?:day\s*)?(\d{1,3})\s*$", re.IGNORECASE)
_CITY_RE = re.compile(r"^\s*from\s+(?P<route>.+)$", re.IGNORECASE | re.DOTALL)
_CITY_SEP_RE = re.compile(r"(?<!\s)\s++(?:to|->|→)\s+", re.IGNORECASE)


def parse_plan(data: Any, *, query: Query | None = None, db: Database | None = None) -> Plan:
    """Read a plan in the paper's JSON day format; raise only PlanFormatError on bad input.

    `data` is JSON text (fenced, with prose around it, or JSONL) or decoded objects: a list of
    day objects, `{"plan": [...]}`, `{"days": [...]}` or one day object. With `query` each day
    gets its date and the plan its query id; with `db` cities take their canonical spelling,
    scheduled arrivals come from the timetable and unmatched items are looked up as venues.
    What was repaired to read it is not returned: see `parse_plan_repaired`.
    """
    return parse_plan_repaired(data, query=query, db=db)[0]


def parse_plan_repaired(data: Any, *, query: Query | None = None,
                        db: Database | None = None) -> tuple[Plan, list[Repair]]:
    """`parse_plan`, and every repair made to read the text (utp_env/plan_format/repairs.py); a repair
    with `lossy` set dropped content the text holds (the caller decides whether to accept the plan)."""
    repairs: list[Repair] = []
    try:
        return _parse(data, query, db, repairs), repairs
    except PlanFormatError:
        raise
    except (ValidationError, ValueError, TypeError, KeyError, IndexError, RecursionError) as exc:
        # Defensive: a grammar gap must still surface as a located, documented error.
        raise PlanFormatError(f"cannot read the plan: {exc}") from exc


def _parse(data: Any, query: Query | None, db: Database | None, repairs: list[Repair]) -> Plan:
    days: list[dict[str, Any]] = []
    numbers: list[int] = []
    seen: set[int] = set()
    lookup = _schedule_lookup(db) if db is not None else None
    fits = True  # every value is one the models accept as it is (`_assembled`)
    for index, raw in enumerate(day_objects(data, repairs)):
        fields = _fields(raw)
        number = _day_number(fields.get("days"), index)
        if number in seen:
            raise PlanFormatError("day number repeated", day=number, field="days")
        seen.add(number)
        numbers.append(number)
        day, day_fits = _day(number, fields, query, db, lookup)
        days.append(day)
        fits = fits and day_fits and type(number) is int and number >= 1
    query_id = query.query_id if query else None
    if fits:
        return _assembled(query_id, days)
    try:  # every day, its legs and items validated in one call; a value out of bounds fails here
        return Plan.model_validate({"query_id": query_id, "days": days})
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = first["loc"]
        if len(loc) < 2 or loc[0] != "days" or not isinstance(loc[1], int):
            raise
        raise PlanFormatError(f"invalid day: {first['msg']}", day=numbers[loc[1]]) from None


def _assembled(query_id: str | None, days: list[dict[str, Any]]) -> Plan:
    """The Plan of the parsed days, built without validation (`itinerary.unvalidated`): the values the
    parser makes are those validation would give (exact `str`, `int` and `float`, activities, venue
    types and meals of their Literals, times >= 0, fresh lists), once `_day` found every time within
    `MAX_CLOCK_MINUTES` and every distance finite, the day number an `int` >= 1, a city on every day
    and the item count within `MAX_ITEMS_PER_DAY` (checked before the entries are read); the legs
    are TransportLegs validated by `parse_leg`. The same Plan, with the same fields set, as
    `Plan.model_validate` of the same values (tests/plan_format/test_plan_assembly.py)."""
    for day in days:
        day["items"] = [unvalidated(PlanItem, item) for item in day["items"]]
    return unvalidated(Plan, {"query_id": query_id, "days": [unvalidated(Day, day) for day in days], "source": None},
                       given=("query_id", "days"))


def _fields(raw: dict[Any, Any]) -> dict[str, Any]:
    """The day's values under canonical key names (`Current City`, `day` -> `current_city`, `days`)."""
    if raw.keys() <= _CANONICAL_KEYS:  # already the canonical names (what plan_to_json writes)
        return dict(raw)
    out: dict[str, Any] = {}
    for key, value in raw.items():
        # A key spelled as in KEY_ALIASES is its own folded form, so the lookup alone answers for it.
        canonical = KEY_ALIASES.get(key) if type(key) is str else None
        if canonical is None:
            canonical = _canonical_key(key) if isinstance(key, str) else _key_alias(str(key))
        if canonical is not None and canonical not in out:
            out[canonical] = value
    return out


_CANONICAL_KEYS = frozenset(key for key, canonical in KEY_ALIASES.items() if key == canonical)


def _key_alias(key: str) -> str | None:
    return KEY_ALIASES.get(_KEY_SEP_RE.sub("_", key.strip().casefold()))


_canonical_key = functools.lru_cache(maxsize=1024)(_key_alias)  # day keys repeat in every plan


def _day_number(value: Any, index: int) -> int:
    """The day number (int, `"3"` or `"Day 3"`); the position when the key is missing."""
    if value is None:
        return index + 1
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    if isinstance(value, str) and (m := _DAY_NUMBER_RE.match(value)) and int(m.group(1)) >= 1:
        return int(m.group(1))
    raise PlanFormatError("day number must be a positive integer", day=index + 1, field="days",
                          snippet=repr(value))


def _text(value: Any, number: int, field: str, sep: str = "; ") -> str | None:
    """A field's text, None when absent; a list of strings is joined (LLMs write either)."""
    if type(value) is str:  # the common case, read as below with one strip
        text = value.strip()
        return None if is_absent_stripped(text) else text
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        value = sep.join(v for v in value if not is_absent(v))
    if is_absent(value):
        return None
    if not isinstance(value, str):
        raise PlanFormatError(f"expected text, got {type(value).__name__}", day=number, field=field,
                              snippet=repr(value))
    return value.strip()


def _list(value: Any, number: int, field: str) -> list[str]:
    """A `;`-separated field as its non-absent parts; the POI list may end with one `.`."""
    text = _text(value, number, field)
    if text is None:
        return []
    if field == "point_of_interest_list" and text.endswith("."):
        text = text[:-1]
    return [p for p in split_top(text, ";") if not is_absent_stripped(p)]


def _cities(value: Any, number: int, db: Database | None) -> list[str]:
    """`City` -> [City]; `from A to B [to C]` -> [A, B, C]; canonical spelling with a database.

    With a database, a text read before is answered from its memo (`_read_cities`): days name the
    same cities and routes in every plan."""
    if db is None or type(value) is not str:
        return _read_cities(value, number, db)
    memo = db.derived(_city_texts)
    hit = memo.get(value)
    if hit is None:
        hit = remember(memo, value, tuple(_read_cities(value, number, db)), MEMO_LIMIT)  # (an error is not kept)
    return list(hit)


def _city_texts(db: Database) -> dict[str, tuple[str, ...]]:
    """`_cities`'s memo of one database: a `current_city` text -> its cities (bounded by MEMO_LIMIT)."""
    return {}


def _read_cities(value: Any, number: int, db: Database | None) -> list[str]:
    """`_cities` read from the text."""
    text = _text(value, number, "current_city")
    if text is None:
        raise PlanFormatError("missing current_city (expected 'City' or 'from A to B')", day=number,
                              field="current_city")
    m = _CITY_RE.match(text)
    if m is None:  # one city, not absent (`_text` said so)
        return [text if db is None else _canonical_city(db, text)]
    cities = [c.strip() for c in _CITY_SEP_RE.split(m["route"])]
    if any(is_absent(c) for c in cities) or (m and len(cities) < 2):
        raise PlanFormatError("expected 'City' or 'from A to B'", day=number, field="current_city", snippet=text)
    return cities if db is None else [_canonical_city(db, c) for c in cities]


def _canonical_city(db: Database, name: str) -> str:
    """The database's spelling of a city it knows, else the name as written."""
    known = db.known_city(name)
    return name if known is None else known


def _day(number: int, fields: dict[str, Any], query: Query | None, db: Database | None,
         lookup: ScheduleLookup | None) -> tuple[dict[str, Any], bool]:
    """The fields of one Day (validated with the plan by `_parse`), and whether every item's values lie
    within the models' bounds (`items.day_items`)."""
    cities = _cities(fields.get("current_city"), number, db)
    date = query.dates[number - 1] if query is not None and number <= len(query.dates) else None
    legs = [_canonical_leg(parse_leg(e, number, lookup), db)
            for e in _list(fields.get("transportation"), number, "transportation")]
    summary = {k: _text(fields.get(k), number, k) for k in _SUMMARY_FIELDS}
    attractions = _list(fields.get("attraction"), number, "attraction")
    events = _list(fields.get("event"), number, "event")
    names = SummaryNames(summary, attractions, events)
    read = canonical_day_items(fields.get("point_of_interest_list"), number, names, cities, date, db)
    if read is None:  # not as `format_item` writes it: entry by entry, as the grammar reads them
        entries = _list(fields.get("point_of_interest_list"), number, "point_of_interest_list")
        too_many = too_many_items(len(entries))  # counted before any entry is parsed
        if too_many is not None:
            raise PlanFormatError(too_many, day=number, field="point_of_interest_list")
        read = day_items([parse_entry(e, number) for e in entries], names, cities, date, db)
    items, fits = read
    fits = fits and len(cities) > 0  # (the grammar makes at least one city: a check, not a trust)
    return {"day": number, "date": date, "cities": cities, "transport": legs, "breakfast": summary["breakfast"],
            "lunch": summary["lunch"], "dinner": summary["dinner"], "attractions": attractions,
            "accommodation": summary["accommodation"], "events": events, "items": items}, fits


_SUMMARY_FIELDS = (*MEALS, "accommodation")


def _canonical_leg(leg: TransportLeg, db: Database | None) -> TransportLeg:
    if db is None:
        return leg
    origin, destination = _canonical_city(db, leg.origin), _canonical_city(db, leg.destination)
    if origin == leg.origin and destination == leg.destination:
        return leg  # already the canonical spelling: the copy would be equal
    return leg.model_copy(update={"origin": origin, "destination": destination})


def _schedule_lookup(db: Database) -> ScheduleLookup:
    """Scheduled arrival (minutes from the departure day's midnight) of a service in `db`."""
    def lookup(mode: Mode, number: str | None, origin: str, dest: str) -> int | None:
        try:
            row = find_service(db, mode, number, origin, dest)
        except (UnknownNameError, KeyError):
            return None
        if row is None:
            return None
        return scheduled_arrival(db.tables[SERVICE_TABLE[mode]].columns, row)
    return lookup
