"""Venue lookups within one city: stays, attractions, restaurants and dated events.

Each tool takes the city's rows from the per-city index and filters only those; the core query
functions (`find_stays`, ...) return row indices so that benchmarks and agents can use them
without rendering.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from utp_env.tools.database import Database, normalize, suggest
from utp_env.tools.lookup.common import (
    DateStr,
    Name,
    Paged,
    choice,
    city_of,
    date_range,
    lookup_tool,
)
from utp_env.tools.lookup.index import NEEDS, lookup_index
from utp_env.tools.lookup.render import page, row_memo, table_of_lines, table_text
from utp_env.tools.schema import (
    ATTRACTION_CATEGORIES,
    CUISINES,
    EVENT_SEGMENTS,
    HOUSE_RULE_FORBIDS,
    HOUSE_TYPES,
    PRICE_TIERS,
    AttractionCategory,
    EventSegment,
    HouseRuleNeed,
    PriceTier,
    closed_weekdays,
)
from utp_env.tools.schema import Cuisine as CuisineName
from utp_env.tools.schema import HouseType as HouseTypeName
from utp_env.tools.toolkit import ToolError, ToolResult

HouseType = Annotated[HouseTypeName, choice(HOUSE_TYPES)]
Need = Annotated[HouseRuleNeed, choice(tuple(HOUSE_RULE_FORBIDS))]
Category = Annotated[AttractionCategory, choice(tuple(ATTRACTION_CATEGORIES))]
Cuisine = Annotated[CuisineName, choice(CUISINES)]
Tier = PriceTier
Segment = Annotated[EventSegment, choice(EVENT_SEGMENTS)]
Tag = Annotated[str, Field(min_length=1, max_length=80)]

_SINGULAR = {"amenities": "amenity", "services": "service"}


def _known(db: Database, column: str, values: list[str], argument: str) -> set[str]:
    vocab = lookup_index(db).vocabulary[column]
    out = set()
    for v in values:
        key = normalize(v)
        if key not in vocab:
            close = suggest(v, vocab.values())
            raise ToolError(f"unknown {_SINGULAR[column]} {v!r}; "
                            + (f"did you mean {', '.join(map(repr, close))}?" if close
                               else f"known values: {', '.join(sorted(vocab.values()))}"), argument)
        out.add(key)
    return out


def _by_rating(db: Database, table: str, idx: np.ndarray) -> np.ndarray:
    """`idx` sorted best rated first, ties by name."""
    rating = db.tables[table].columns["rating"][idx]
    return idx[np.lexsort((lookup_index(db).name_rank[table][idx], -rating))]


def _by_key(db: Database, table: str, column: str, idx: np.ndarray) -> np.ndarray:
    """`idx` sorted by ascending `column`, ties by name."""
    key = db.tables[table].columns[column][idx]
    return idx[np.lexsort((lookup_index(db).name_rank[table][idx], key))]


def _crowd_flags(db: Database, table: str, shown: np.ndarray) -> list[str]:
    """'yes'/'no' per shown venue: whether crowd_profile has data for it."""
    return ["yes" if f else "no" for f in lookup_index(db).has_crowd[table][shown].tolist()]


# ---------------------------------------------------------------- stays


class StaySearch(Paged):
    city: Name = Field(description="City, e.g. 'Kochi'")
    max_price_per_night: float | None = Field(None, ge=1, description="Highest price of one room per night, INR")
    house_type: HouseType | None = Field(None, description="Property type")
    allows: list[Need] = Field(default_factory=list, max_length=3,
                               description="What the travellers need allowed (the stay must not forbid it)")
    amenities: list[Tag] = Field(default_factory=list, max_length=10,
                                 description="Amenities the stay must all have, e.g. ['Wellness Spa']")
    services: list[Tag] = Field(default_factory=list, max_length=10,
                                description="Services the stay must all offer, e.g. ['Laundry', 'Cleaning']")
    min_rating: float | None = Field(None, ge=0, le=5, description="Lowest guest rating, 0-5")
    min_occupancy: int | None = Field(None, ge=1, le=20, description="Guests that must fit in one room")
    sort_by: Literal["price", "rating"] = Field("price", description="Cheapest first, or best rated first")


def find_stays(db: Database, city: str, args: StaySearch, amenities: frozenset[str] | set[str] = frozenset(),
               services: frozenset[str] | set[str] = frozenset()) -> np.ndarray:
    """Row indices of the stays of `city` (canonical) passing the filters of `args`, sorted.

    `amenities`/`services` are the normalised required values (checked against the vocabulary).
    """
    index = lookup_index(db)
    idx = db.city_rows("accommodations", city)
    cols = db.tables["accommodations"].columns
    mask = np.ones(idx.size, dtype=bool)
    if args.max_price_per_night is not None:
        mask &= cols["price_per_night_inr"][idx] <= args.max_price_per_night
    if args.min_rating is not None:
        mask &= cols["rating"][idx] >= args.min_rating
    if args.min_occupancy is not None:
        mask &= cols["max_occupancy"][idx] >= args.min_occupancy
    if args.house_type is not None:
        mask &= index.house_type[idx] == HOUSE_TYPES.index(args.house_type)
    if args.allows:
        need = sum({1 << NEEDS.index(n) for n in args.allows})
        mask &= (index.forbids[idx] & need) == 0
    idx = idx[mask]
    if amenities or services:
        idx = idx[[amenities <= index.amenities[i] and services <= index.services[i] for i in idx.tolist()]]
    if args.sort_by == "rating":
        return _by_rating(db, "accommodations", idx)
    return _by_key(db, "accommodations", "price_per_night_inr", idx)


@lookup_tool
def search_stays(db: Database, args: StaySearch) -> ToolResult:
    """Find accommodations in a city that meet the travellers' needs.

    Returns one line per stay: name, type, stars, guest rating, price per room per night (INR),
    guests per room, house rules, amenities, services, minimum nights, check-in/check-out times.
    `allows` lists needs from smoking, children, pets: stays whose rules forbid them are left out.
    Rooms needed = ceil(people / max occupancy). Example:
    {"city": "Kochi", "max_price_per_night": 6000, "allows": ["pets"], "amenities": ["Wellness Spa"],
     "services": ["Laundry"], "sort_by": "rating"}
    """
    city = city_of(db, args.city, "city")
    amen = _known(db, "amenities", args.amenities, "amenities")
    serv = _known(db, "services", args.services, "services")
    found = find_stays(db, city, args, amen, serv)
    shown, cut = page(found, args.limit)
    memo, ids = row_memo(db), shown.tolist()

    def cells(new: list[int]) -> list[list[Any]]:
        return [[r["name"], r["house_type"], r["star_rating"], r["rating"], r["price_per_night_inr"],
                 r["max_occupancy"], r["house_rules"], r["amenities"], r["services"], r["minimum_nights"],
                 f"{r['check_in']}/{r['check_out']}"] for r in memo.rows(db, "accommodations", new)]

    lines = memo.lines("accommodations", ids, cells)
    any_here = db.city_rows("accommodations", city).size > 0
    text = table_of_lines(f"Stays in {city}, by {args.sort_by}",
                          ["name", "type", "stars", "rating", "price_night_inr", "max_guests", "house_rules",
                           "amenities", "services", "min_nights", "check_in/out"], lines, total=int(found.size),
                          truncated=cut,
                          narrow="add filters (max_price_per_night, min_rating, house_type, amenities) or raise limit.",
                          empty=("Relax a filter (price, rating, amenities, services, house_type, allows)." if any_here
                                 else f"{city} has no stays in the database; stay in a nearby city."))
    return ToolResult(ok=True, text=text, rows=memo.rows(db, "accommodations", ids), truncated=cut)


# ---------------------------------------------------------------- attractions


class AttractionSearch(Paged):
    city: Name = Field(description="City, e.g. 'Jaipur'")
    category: Category | None = Field(None, description="Only attractions of this category")
    sort_by: Literal["rating", "entry_fee", "duration"] = Field("rating", description="Order of the results")


def find_attractions(db: Database, city: str, category: str | None, sort_by: str = "rating") -> np.ndarray:
    """Row indices of the attractions of `city` (canonical), optionally of one category, sorted."""
    idx = db.city_rows("attractions", city)
    if category is not None:
        bit = 1 << tuple(ATTRACTION_CATEGORIES).index(category)
        idx = idx[(lookup_index(db).categories[idx] & bit) != 0]
    if sort_by == "rating":
        return _by_rating(db, "attractions", idx)
    return _by_key(db, "attractions", "entry_fee_inr" if sort_by == "entry_fee" else "visit_duration_hr", idx)


def attraction_visit(row: Mapping[str, Any]) -> float | str:
    """An attraction's typical-visit cell: its hours, said to be a day trip with the journey when
    it is a real day-trip site of the city (`venue_facts.sights`: Ajanta Caves from Aurangabad
    '9 (day trip, 2.5 h each way included)')."""
    from utp_env.tools.india.venue_facts import sight_index

    hours = row["visit_duration_hr"]
    sight = sight_index().get((str(row["city"]), str(row["name"]).casefold()))
    if sight is not None and sight.day_trip_hr is not None and float(hours) == sight.visit_hr:
        return f"{hours:g} (day trip, {sight.day_trip_hr:g} h each way included)"
    return hours


def attraction_hours(row: Mapping[str, Any]) -> str:
    """An attraction's hours cell: 'HH:MM-HH:MM', then ', closed Mon, Tue' for the weekdays its
    `open_days` leave out (nothing when it opens every day)."""
    closed = closed_weekdays(str(row.get("open_days") or "1111111"))
    return f"{row['open_time']}-{row['close_time']}" + (f", closed {', '.join(closed)}" if closed else "")


VENUE_HEADERS: dict[str, list[str]] = {
    "attractions": ["name", "categories", "visit_hr", "rating", "entry_fee_inr", "hours", "crowd_data"],
    "restaurants": ["name", "cuisines", "tier", "avg_cost_inr", "rating", "hours", "crowd_data"],
}
"""The columns of a venue search's answer per table (the venue's name first)."""
VENUE_NARROW = {"attractions": "filter by category or raise limit.",
                "restaurants": "filter by cuisine or price_tier, or raise limit."}
"""What a truncated venue search's answer suggests, per table."""


def venue_heading(table: str, city: str, sort_by: str, narrowed_to: str | None = None) -> str:
    """The first words of a venue search's answer, e.g. `Attractions in Jaipur (Museums), by rating`."""
    return f"{table.capitalize()} in {city}" + (f" ({narrowed_to})" if narrowed_to else "") + f", by {sort_by}"


@lookup_tool
def search_attractions(db: Database, args: AttractionSearch) -> ToolResult:
    """Find attractions in a city.

    Returns one line per attraction: name, categories, typical visit duration (hours; a day trip
    from the city says so, its visit and hours including the journey there and back), rating,
    entry fee per person (INR), opening hours with the weekdays it is closed ('06:00-18:30, closed
    Fri': no visit on a Friday), and whether crowd data exists (see crowd_profile for the hours to
    avoid). Example: {"city": "Jaipur", "category": "Museums"}
    """
    city = city_of(db, args.city, "city")
    found = find_attractions(db, city, args.category, args.sort_by)
    shown, cut = page(found, args.limit)
    memo, ids = row_memo(db), shown.tolist()

    def cells(new: list[int]) -> list[list[Any]]:
        crowd = _crowd_flags(db, "attractions", np.asarray(new, dtype=np.int64))
        return [[r["name"], r["categories"], attraction_visit(r), r["rating"], r["entry_fee_inr"],
                 attraction_hours(r), c]
                for r, c in zip(memo.rows(db, "attractions", new), crowd, strict=True)]

    lines = memo.lines("attractions", ids, cells)
    text = table_of_lines(venue_heading("attractions", city, args.sort_by, args.category),
                          VENUE_HEADERS["attractions"], lines, total=int(found.size), truncated=cut,
                          narrow=VENUE_NARROW["attractions"], empty="Try without a category, or another city.")
    return ToolResult(ok=True, text=text, rows=memo.rows(db, "attractions", ids), truncated=cut)


# ---------------------------------------------------------------- restaurants


class RestaurantSearch(Paged):
    city: Name = Field(description="City, e.g. 'Hyderabad'")
    cuisine: Cuisine | None = Field(None, description="Only restaurants serving this cuisine group")
    price_tier: Tier | None = Field(None, description="Only this price tier, $ (cheap) to $$$$ (fine dining)")
    sort_by: Literal["rating", "cost"] = Field("rating", description="Best rated first, or cheapest first")


def find_restaurants(db: Database, city: str, cuisine: str | None, price_tier: str | None,
                     sort_by: str = "rating") -> np.ndarray:
    """Row indices of the restaurants of `city` (canonical) matching cuisine and tier, sorted."""
    index = lookup_index(db)
    idx = db.city_rows("restaurants", city)
    if cuisine is not None:
        idx = idx[(index.cuisines[idx] & (1 << CUISINES.index(cuisine))) != 0]
    if price_tier is not None:
        idx = idx[index.price_tier[idx] == PRICE_TIERS.index(price_tier)]
    if sort_by == "rating":
        return _by_rating(db, "restaurants", idx)
    return _by_key(db, "restaurants", "avg_cost_inr", idx)


@lookup_tool
def search_restaurants(db: Database, args: RestaurantSearch) -> ToolResult:
    """Find restaurants in a city for breakfast, lunch or dinner.

    Returns one line per restaurant: name, cuisine groups, price tier, average cost per person
    (INR), rating, opening hours, and whether crowd data exists (see crowd_profile).
    Example: {"city": "Hyderabad", "cuisine": "Indian Subcontinent", "price_tier": "$$"}
    """
    city = city_of(db, args.city, "city")
    found = find_restaurants(db, city, args.cuisine, args.price_tier, args.sort_by)
    shown, cut = page(found, args.limit)
    memo, ids = row_memo(db), shown.tolist()

    def cells(new: list[int]) -> list[list[Any]]:
        crowd = _crowd_flags(db, "restaurants", np.asarray(new, dtype=np.int64))
        return [[r["name"], r["cuisines"], r["price_tier"], r["avg_cost_inr"], r["rating"],
                 f"{r['open_time']}-{r['close_time']}", c]
                for r, c in zip(memo.rows(db, "restaurants", new), crowd, strict=True)]

    lines = memo.lines("restaurants", ids, cells)
    text = table_of_lines(venue_heading("restaurants", city, args.sort_by), VENUE_HEADERS["restaurants"], lines,
                          total=int(found.size), truncated=cut, narrow=VENUE_NARROW["restaurants"],
                          empty="Try without the cuisine or price_tier filter.")
    return ToolResult(ok=True, text=text, rows=memo.rows(db, "restaurants", ids), truncated=cut)


# ---------------------------------------------------------------- events


class EventSearch(Paged):
    city: Name = Field(description="City, e.g. 'Mumbai'")
    start_date: DateStr = Field(description="First date YYYY-MM-DD, e.g. '2025-11-20'")
    end_date: DateStr = Field(description="Last date YYYY-MM-DD (inclusive), at most 62 days after start_date")
    segment: Segment | None = Field(None, description="Only events of this type")


def find_events(db: Database, city: str, start: str, end: str, segment: str | None) -> np.ndarray:
    """Row indices of the events of `city` (canonical) dated start..end (inclusive), by date and time."""
    idx = db.city_rows("events", city)
    cols = db.tables["events"].columns
    date, begin = cols["date"], cols["start_time"]
    keep = [i for i in idx.tolist()
            if start <= date[i] <= end and (segment is None or cols["segment"][i] == segment)]
    return np.array(sorted(keep, key=lambda i: (date[i], begin[i])), dtype=np.int64)


@lookup_tool
def search_events(db: Database, args: EventSearch) -> ToolResult:
    """Find events (concerts, sports, theatre, music, film, comedy) in a city between two dates.

    Returns one line per event: date, start and end time (an end earlier than the start runs past
    midnight), name, type, venue and ticket price per person (INR).
    Example: {"city": "Mumbai", "start_date": "2025-11-20", "end_date": "2025-11-22", "segment": "Concerts"}
    """
    city = city_of(db, args.city, "city")
    date_range(args.start_date, args.end_date)
    found = find_events(db, city, args.start_date, args.end_date, args.segment)
    shown, cut = page(found, args.limit)
    rows = db.tables["events"].rows(shown)
    lines = [[r["date"], f"{r['start_time']}-{r['end_time']}", r["name"], r["segment"], r["venue"], r["price_inr"]]
             for r in rows]
    text = table_text(f"Events in {city} from {args.start_date} to {args.end_date}"
                      + (f" ({args.segment})" if args.segment else ""),
                      ["date", "time", "name", "type", "venue", "price_inr"], lines, total=int(found.size),
                      truncated=cut, narrow="narrow the dates or filter by segment.",
                      empty="Widen the dates or drop the segment filter; events are rare outside big cities.")
    return ToolResult(ok=True, text=text, rows=rows, truncated=cut)
