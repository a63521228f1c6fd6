"""The point-of-interest items of one day: their venue types and meals from the day's summary
fields (`SummaryNames`), their times placed past midnight, and the values of their PlanItems.

`day_items` reads the entries `poi.parse_entry` read, whatever the grammar accepted.
`canonical_day_items` reads a whole `point_of_interest_list` written as `format_item` writes it (no
parentheses, every entry matched by `poi`'s canonical entry match) in one pass, without the
intermediate `RawItem`s, and returns None for anything else so that the caller reads it the first
way. Both give the same items or the same error (tests/plan_format/test_canonical_days.py).
"""

from __future__ import annotations

import functools
import math
from typing import Any

from utp_env.itinerary import MAX_CLOCK_MINUTES, MEALS, Activity, Meal, VenueType, too_many_items
from utp_env.plan_format import poi
from utp_env.plan_format.poi import RawItem, place
from utp_env.plan_format.text import PAST_MIDNIGHT_SLACK, at_or_after, is_absent_stripped, metres
from utp_env.resolve import MEMO_LIMIT, VENUE_TABLES, VenueName, find_venue, split_name_city
from utp_env.tools.database import Database, normalize
from utp_env.tools.errors import UnknownNameError
from utp_env.tools.memo import remember

ItemValues = dict[str, Any]  # the fields of one PlanItem, in the model's order
_ACCOMMODATION_ACTIVITIES = frozenset({"stay", "check-in", "checkout"})


class SummaryNames:
    """The day's summary fields as items are matched to them: an item named like a meal field is that
    restaurant and meal (a name in two meal fields takes them in order), like an attraction or an
    event that kind, like the accommodation a stay; other names are looked up in the database when
    one is given. Built once per day (it remembers the meals already taken)."""

    __slots__ = ("attractions", "events", "known", "meals", "meals_done", "stay")

    def __init__(self, summary: dict[str, str | None], attractions: list[str], events: list[str]) -> None:
        names = {k: _name_key(v) for k, v in summary.items() if v}
        self.attractions = {_name_key(a) for a in attractions}
        self.events = {_name_key(e) for e in events}
        self.known = {*names.values(), *self.attractions, *self.events}
        self.stay = names.get("accommodation")
        self.meals: dict[str, list[Meal]] = {}  # name key -> the meals whose field names it, in MEALS order
        for m in MEALS:
            if m in names:
                self.meals.setdefault(names[m], []).append(m)
        self.meals_done: set[str] = set()

    def typed(self, name: str, activity: Activity | None, cities: list[str], date: str | None,
              db: Database | None) -> tuple[Activity, VenueType | None, Meal | None]:
        """(activity, venue type, meal) of an item called `name`; an item without an activity is a stay
        when it names the accommodation, else a visit."""
        key = None  # the key only where the activity leaves the type open
        if activity is None:
            key = _item_key(name, self.known)
            activity = "stay" if key == self.stay else "visit"
        if activity in _ACCOMMODATION_ACTIVITIES:
            return activity, "accommodation", None
        if activity == "arrive":
            return activity, "transit", None
        if activity == "travel":
            return activity, "transport", None
        if key is None:
            key = _item_key(name, self.known)
        if (matched := self.meals.get(key)) is not None:
            chosen = matched[0] if len(matched) == 1 else next(
                (m for m in matched if m not in self.meals_done), matched[0])
            self.meals_done.add(chosen)
            return activity, "restaurant", chosen
        if key in self.attractions:
            return activity, "attraction", None
        if key in self.events:
            return activity, "event", None
        if key == self.stay:
            return activity, "accommodation", None
        if db is not None:
            return activity, _db_venue_type(db, name, cities, date), None
        return activity, None, None


def day_items(raw: list[RawItem], names: SummaryNames, cities: list[str], date: str | None,
              db: Database | None) -> tuple[list[ItemValues], bool]:
    """The fields of the day's PlanItems (times placed past midnight by `poi.place`, venue types and
    meals by `names`), and whether they all lie within PlanItem's bounds. Every value here is of a
    type a PlanItem accepts (an activity, venue type or meal of its Literal, times >= 0, distances
    >= 0); only a time past `MAX_CLOCK_MINUTES` (many midnights) or an infinite distance (a number of
    hundreds of digits) is not, and the parser then validates them to say so."""
    items = []
    fits = True
    for item, (start, end) in zip(raw, place(raw), strict=True):
        activity, venue_type, meal = names.typed(item.name, item.activity, cities, date, db)
        fits = fits and _within_bounds(start, end, item.transit_distance_m)
        items.append({"name": item.name, "activity": activity, "start": start, "end": end, "venue_type": venue_type,
                      "meal": meal, "transit_stop": item.transit_stop, "transit_distance_m": item.transit_distance_m,
                      "note": item.note})
    return items, fits


def canonical_day_items(value: Any, day: int, names: SummaryNames, cities: list[str], date: str | None,
                        db: Database | None) -> tuple[list[ItemValues], bool] | None:
    """`day_items` of the entries of a `point_of_interest_list` value written as `format_item` writes
    them, read in one pass; None when the value is not such a text (not a `str`, absent, holding a
    parenthesis, too many entries, or an entry `poi`'s canonical match does not read whole).

    What the general reading does for such a text, step by step: `_list` strips it, drops one final
    `.` and splits it on `;` (`split_top` is a plain split without parentheses), stripping each part
    and dropping absent ones; `parse_entry` reads every part with its canonical match (a name
    holding an activity word goes the general way, here the whole list does); `place` puts a start
    at or after the previous time less 12 h and an end at or after its start (both are known)."""
    if type(value) is not str:
        return None
    text = value.strip()
    if is_absent_stripped(text) or "(" in text or ")" in text:
        return None
    if text.endswith("."):
        text = text[:-1]
    entries = [part for part in (p.strip() for p in text.split(";")) if not is_absent_stripped(part)]
    if too_many_items(len(entries)) is not None:
        return None  # refused by the general reading, with its message
    match, holds_activity = poi._CANONICAL_ENTRY_RE.fullmatch, poi._holds_activity_word
    found = []
    for entry in entries:
        m = match(entry)
        if m is None:
            return None  # nothing typed yet: the general reading starts afresh
        groups = m.groups()
        if holds_activity(groups[0]):  # (the name)
            return None
        found.append((entry, groups))
    times, activities, unread = poi._TIMES, poi._ACTIVITIES, poi._UNREAD
    items = []
    fits = True
    ref: int | None = None
    for entry, (name, act, start_text, end_text, stop, num, _) in found:
        start, end = times.get(start_text, unread), times.get(end_text, unread)  # `poi._time`'s memo first
        if start is unread:
            start = poi._time(start_text, day, entry)
        if end is unread:
            end = poi._time(end_text, day, entry)
        start = at_or_after(start, ref, PAST_MIDNIGHT_SLACK)  # `place`, both times known
        ref = end = at_or_after(end, start)
        activity, venue_type, meal = names.typed(name, activities.get(act) or poi._activity(act), cities, date, db)
        if num is None:
            stop_name, distance = None, None
        else:
            stop_name, distance = poi._canonical_stop(stop), metres(num, True)
            if fits and not math.isfinite(distance):  # `_within_bounds`: the distance's part
                fits = False
        if end > MAX_CLOCK_MINUTES:  # `_within_bounds`: the times' part (start <= end, both known)
            fits = False
        items.append({"name": name, "activity": activity, "start": start, "end": end, "venue_type": venue_type,
                      "meal": meal, "transit_stop": stop_name, "transit_distance_m": distance, "note": None})
    return items, fits


def _within_bounds(start: int | None, end: int | None, distance: float | None) -> bool:
    """Whether an item's times are within `MAX_CLOCK_MINUTES` and its distance finite (PlanItem's bounds
    a parsed value can miss)."""
    return ((start is None or start <= MAX_CLOCK_MINUTES) and (end is None or end <= MAX_CLOCK_MINUTES)
            and (distance is None or math.isfinite(distance)))


def _item_key(name: str, known: set[str]) -> str:
    """The key an item matches the summary fields by: its whole normalised name when a field names it
    so (a name may hold a comma), else the name without a trailing `, City` (items are often
    written like the summary fields)."""
    keys = _ITEM_KEYS.get(name)
    if keys is None:
        keys = (normalize(name), _name_key(name))
        if type(name) is str:  # a str subclass may compare equal yet differ
            remember(_ITEM_KEYS, name, keys, MEMO_LIMIT)
    whole, without_city = keys
    return whole if whole in known else without_city


# Both keys `_item_key` chooses from, by item name (a pure function's memo, bounded by MEMO_LIMIT): items
# name the same venues in every plan, and one read here replaces a `normalize` and a `_name_key` call.
_ITEM_KEYS: dict[str, tuple[str, str]] = {}


@functools.lru_cache(maxsize=1 << 14)  # names repeat across days and plans; a pure function's bounded memo
def _name_key(field_value: str) -> str:
    """The normalised venue name of a summary value `Name, City`."""
    return normalize(split_name_city(field_value)[0])


def _db_venue_type(db: Database, name: str, cities: list[str], date: str | None) -> VenueType | None:
    venue = VenueName.of(name)  # an item, like a summary field, may be written `Name, City`
    known = db.derived(_venue_names)
    if venue.key not in known and normalize(venue.text) not in known:
        return None  # no venue of any city has this name, so find_venue cannot find one
    try:
        ref = find_venue(db, venue, cities, date=date)
    except (UnknownNameError, KeyError):
        return None
    return None if ref is None else ref.venue_type


def _venue_names(db: Database) -> frozenset[str]:
    """Every venue name of the database's venue tables, normalised (find_venue matches names exactly
    after `normalize`, so a name outside this set is found in no city). Built once per database."""
    return frozenset(normalize(name) for table in VENUE_TABLES for name in db.tables[table].columns["name"])
