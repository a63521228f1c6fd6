"""Row schemas of every database table, the single definition of the data, and the domain facts
that name tables: which table holds each venue kind and each transport mode, and how a service
row's schedule reads (`scheduled_arrival`, `runs_on`).

Each table is one pydantic model. The loader, the validator, the sandbox writer and
`docs/DATA.md` all derive their column lists, types and units from these models, so a column
is declared exactly once. Times are local `HH:MM`, durations minutes, money INR.
List-valued columns hold JSON arrays in CSV cells.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeGuard

from pydantic import BaseModel, ConfigDict, Field

from utp_env.tools.clock import MINUTES_PER_DAY, WEEKDAYS, parse_hhmm, weekday

HHMM = r"^([01]\d|2[0-3]):[0-5]\d$"
RUN_DAYS = r"^[01]{7}$"
# Closed vocabularies are declared once as a Literal type (what pydantic and mypy check) and read
# as a tuple of values with typing.get_args (what the generators, indices and docs iterate).
CrowdLevel = Literal["L", "BA", "A", "AA", "H"]
CROWD_LEVELS: tuple[str, ...] = typing.get_args(CrowdLevel)

AttractionCategory = Literal[
    "Boat Tours & Water Sports", "Casinos & Gambling", "Classes & Workshops", "Concerts & Shows", "Food & Drink",
    "Fun & Games", "Museums", "Nature & Parks", "Nightlife", "Outdoor Activities", "Shopping", "Sights & Landmarks",
    "Spas & Wellness", "Water & Amusement Parks", "Zoos & Aquariums",
]
ATTRACTION_CATEGORIES: dict[str, float] = {
    # The paper's Table 7: mean visit duration (hours) of each AttractionCategory
    # (tests/package/test_domain_facts.py checks that the keys are exactly those names).
    "Boat Tours & Water Sports": 3.5,
    "Casinos & Gambling": 2.5,
    "Classes & Workshops": 1.5,
    "Concerts & Shows": 2.5,
    "Food & Drink": 2.5,
    "Fun & Games": 1.5,
    "Museums": 3.0,
    "Nature & Parks": 4.5,
    "Nightlife": 2.5,
    "Outdoor Activities": 4.0,
    "Shopping": 1.5,
    "Sights & Landmarks": 3.0,
    "Spas & Wellness": 2.0,
    "Water & Amusement Parks": 5.0,
    "Zoos & Aquariums": 2.5,
}
Cuisine = Literal[
    "African",
    "American",
    "Asian",
    "Bar/Pub/Cafe",
    "Eastern European/Russian",
    "European",
    "Indian Subcontinent",
    "International Fusion",
    "Latin/South American",
    "Mediterranean/Middle Eastern",
    "Pizza/Italian Specialties",
    "Seafood/Steak/Grill",
]
CUISINES: tuple[str, ...] = typing.get_args(Cuisine)
HOUSE_RULES = ("Safety Conduct", "No smoking", "No children", "No pets", "Check-in/Check-out")
# A query's house_rule names what the travellers need allowed; a stay satisfies it unless it
# lists the forbidding rule.
HouseRuleNeed = Literal["smoking", "children", "pets"]
HOUSE_RULE_FORBIDS: dict[str, str] = {  # keyed by each HouseRuleNeed (tests/package/test_domain_facts.py)
    "smoking": "No smoking", "children": "No children", "pets": "No pets"}
HouseType = Literal["Apartment Extended", "Luxury Boutique", "Resort/Beach", "Family Friendly"]
HOUSE_TYPES: tuple[str, ...] = typing.get_args(HouseType)
PriceTier = Literal["$", "$$", "$$$", "$$$$"]
PRICE_TIERS: tuple[str, ...] = typing.get_args(PriceTier)
EventSegment = Literal["Concerts", "Sports", "Arts & Theatre", "Music", "Film", "Comedy"]
EVENT_SEGMENTS: tuple[str, ...] = typing.get_args(EventSegment)
AIRLINES = {"6E": "IndiGo", "AI": "Air India", "IX": "Air India Express", "SG": "SpiceJet",
            "QP": "Akasa Air"}


def unwrap_optional(annotation: Any) -> tuple[Any, bool]:
    """(the type inside `X | None`, True) for an optional column, else (annotation, False)."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return args[0], True
    return annotation, False


class Row(BaseModel):
    """Base of every row model: strict about unknown columns, frozen once loaded."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class City(Row):
    city: str = Field(description="City name, unique across the database")
    state: str = Field(description="State or union territory")
    latitude: float = Field(ge=-90, le=90, description="Degrees north")
    longitude: float = Field(ge=-180, le=180, description="Degrees east")
    population: int = Field(ge=0, description="Inhabitants")
    has_crowd_data: bool = Field(description="Whether venues of this city have crowd profiles")


class Flight(Row):
    flight_number: str = Field(pattern=r"^[0-9A-Z]{2}-\d{1,4}$", description="e.g. `6E-284`")
    airline: str = Field(description="Airline name")
    origin_city: str = Field(description="Departure city (foreign key to cities)")
    dest_city: str = Field(description="Arrival city (foreign key to cities)")
    origin_airport: str = Field(pattern=r"^[A-Z]{3}$", description="IATA code")
    dest_airport: str = Field(pattern=r"^[A-Z]{3}$", description="IATA code")
    dep_time: str = Field(pattern=HHMM, description="Scheduled departure, local HH:MM")
    arr_time: str = Field(pattern=HHMM, description="Scheduled arrival, local HH:MM")
    arr_day_offset: int = Field(ge=0, le=3, description="Days after departure day of the arrival")
    duration_min: int = Field(gt=0, description="Scheduled block time, minutes")
    run_days: str = Field(pattern=RUN_DAYS, description="Mon..Sun operating days as 7 chars of 1/0")
    price_inr: float = Field(ge=0, description="Economy fare per person, INR")
    otp_total: int | None = Field(default=None, ge=0, description="Flights observed (N)")
    otp_on_time: int | None = Field(default=None, ge=0, description="On-time flights observed")
    otp_late: int | None = Field(default=None, ge=0, description="Late flights (15-30 min)")
    otp_very_late: int | None = Field(default=None, ge=0, description="Very late flights (30-45 min)")
    otp_excessive: int | None = Field(default=None, ge=0, description="Excessively late (>45 min)")
    otp_cancelled: int | None = Field(default=None, ge=0, description="Cancelled flights")
    otp_diverted: int | None = Field(default=None, ge=0, description="Diverted flights")
    delay_avg_min: float | None = Field(default=None, ge=0, description="Mean delay of late flights (mu)")
    delay_std_min: float | None = Field(default=None, ge=0, description="S.d. of delay of late flights (sigma)")
    delay_max_min: float | None = Field(default=None, ge=0, description="Largest delay observed (Dmax)")


class Train(Row):
    train_number: str = Field(pattern=r"^\d{5}$", description="Five-digit train number")
    train_name: str = Field(description="Train name")
    origin_city: str = Field(description="Boarding city (foreign key to cities)")
    dest_city: str = Field(description="Alighting city (foreign key to cities)")
    origin_station: str = Field(description="Boarding station name")
    dest_station: str = Field(description="Alighting station name")
    dep_time: str = Field(pattern=HHMM, description="Scheduled departure, local HH:MM")
    arr_time: str = Field(pattern=HHMM, description="Scheduled arrival, local HH:MM")
    arr_day_offset: int = Field(ge=0, le=3, description="Days after departure day of the arrival")
    duration_min: int = Field(gt=0, description="Scheduled journey time, minutes")
    run_days: str = Field(pattern=RUN_DAYS, description="Mon..Sun operating days as 7 chars of 1/0")
    classes: list[str] = Field(description="Travel classes offered, e.g. [\"SL\", \"3A\", \"2A\"]")
    fare_inr: float = Field(ge=0, description="Fare per person, INR, in the train's fare class: 3A where offered, "
                            "else CC, else SL, else 2S (`fare_class` in tools/schema.py)")
    avg_delay_1w: float | None = Field(default=None, ge=0, description="Mean delay over 1 week, min")
    avg_delay_1m: float | None = Field(default=None, ge=0, description="Mean delay over 1 month, min")
    avg_delay_3m: float | None = Field(default=None, ge=0, description="Mean delay over 3 months, min")
    avg_delay_6m: float | None = Field(default=None, ge=0, description="Mean delay over 6 months, min")
    avg_delay_1y: float | None = Field(default=None, ge=0, description="Mean delay over 1 year, min")


class Bus(Row):
    bus_id: str = Field(description="Operator service id, unique")
    operator: str = Field(description="Bus operator")
    bus_type: str = Field(description="e.g. `AC Sleeper`, `Volvo Multi-Axle AC Seater`")
    origin_city: str = Field(description="Boarding city (foreign key to cities)")
    dest_city: str = Field(description="Alighting city (foreign key to cities)")
    dep_time: str = Field(pattern=HHMM, description="Scheduled departure, local HH:MM")
    arr_time: str = Field(pattern=HHMM, description="Scheduled arrival, local HH:MM")
    arr_day_offset: int = Field(ge=0, le=3, description="Days after departure day of the arrival")
    duration_min: int = Field(gt=0, description="Scheduled journey time, minutes")
    run_days: str = Field(pattern=RUN_DAYS, description="Mon..Sun operating days as 7 chars of 1/0")
    fare_inr: float = Field(ge=0, description="Fare per person, INR")


class RoadRoute(Row):
    origin_city: str = Field(description="Start city (foreign key to cities)")
    dest_city: str = Field(description="End city (foreign key to cities)")
    distance_km: float = Field(gt=0, description="Road distance, km")
    free_flow_min: float = Field(gt=0, description="Driving time without traffic, minutes")
    historical_delay_min: float = Field(ge=0, description="Mean historical traffic delay, minutes")
    estimated_delay_min: float = Field(ge=0, description="Current estimated traffic delay, minutes")


class Distance(Row):
    origin_city: str = Field(description="Start city (foreign key to cities)")
    dest_city: str = Field(description="End city (foreign key to cities)")
    distance_km: float = Field(gt=0, description="Road distance, km")
    duration_min: float = Field(gt=0, description="Driving time, minutes")
    cab_fare_inr: float = Field(ge=0, description="Fare of one cab (up to 4 people), INR")


class Accommodation(Row):
    name: str = Field(description="Property name, unique within its city")
    city: str = Field(description="City (foreign key to cities)")
    latitude: float = Field(ge=-90, le=90, description="Degrees north")
    longitude: float = Field(ge=-180, le=180, description="Degrees east")
    house_type: str = Field(description=f"One of {', '.join(HOUSE_TYPES)}")
    star_rating: int = Field(ge=0, le=5, description="Hotel stars, 0 if unrated")
    rating: float = Field(ge=0, le=5, description="Guest rating out of 5")
    price_per_night_inr: float = Field(gt=0, description="Price of one room per night, INR")
    max_occupancy: int = Field(ge=1, description="Guests per room")
    house_rules: list[str] = Field(description=f"Rules enforced, from {', '.join(HOUSE_RULES)}")
    amenities: list[str] = Field(description="Amenities offered, e.g. `Wellness Spa`")
    services: list[str] = Field(description="Services offered, e.g. `Laundry`")
    minimum_nights: int = Field(ge=1, description="Minimum stay, nights")
    check_in: str = Field(pattern=HHMM, description="Earliest check-in, HH:MM")
    check_out: str = Field(pattern=HHMM, description="Latest check-out, HH:MM")


class Attraction(Row):
    name: str = Field(description="Attraction name, unique within its city")
    city: str = Field(description="City (foreign key to cities)")
    latitude: float = Field(ge=-90, le=90, description="Degrees north")
    longitude: float = Field(ge=-180, le=180, description="Degrees east")
    categories: list[str] = Field(min_length=1, description="Categories of the paper's Table 7")
    visit_duration_hr: float = Field(gt=0, description="Typical visit, hours: a real sight's (a day trip's with the "
                                     "journey there and back), a generated place's by its kind, at most its "
                                     "categories' mean duration in the paper's Table 7")
    rating: float = Field(ge=0, le=5, description="Visitor rating out of 5")
    entry_fee_inr: float = Field(ge=0, description="Entry fee per person, INR")
    open_time: str = Field(pattern=HHMM, description="Opening time, HH:MM")
    close_time: str = Field(pattern=HHMM, description="Closing time, HH:MM (00:00 = midnight)")
    open_days: str = Field(pattern=RUN_DAYS, description="Mon..Sun open days as 7 chars of 1/0, like a service's "
                           "run_days (the Taj Mahal's `1111011`: closed on Fridays)")


class Restaurant(Row):
    name: str = Field(description="Restaurant name, unique within its city")
    city: str = Field(description="City (foreign key to cities)")
    latitude: float = Field(ge=-90, le=90, description="Degrees north")
    longitude: float = Field(ge=-180, le=180, description="Degrees east")
    cuisines: list[str] = Field(min_length=1, description="Cuisine groups of the paper's Table 8")
    price_tier: PriceTier = Field(description="Relative price tier")
    avg_cost_inr: float = Field(gt=0, description="Average cost of a meal per person, INR")
    rating: float = Field(ge=0, le=5, description="Diner rating out of 5")
    open_time: str = Field(pattern=HHMM, description="Opening time, HH:MM")
    close_time: str = Field(pattern=HHMM, description="Closing time, HH:MM (00:00 = midnight)")


class Event(Row):
    name: str = Field(description="Event name")
    city: str = Field(description="City (foreign key to cities)")
    date: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="YYYY-MM-DD")
    start_time: str = Field(pattern=HHMM, description="Start, HH:MM")
    end_time: str = Field(pattern=HHMM, description="End, HH:MM (may be past midnight: earlier than start)")
    segment: str = Field(description=f"Event type, one of {', '.join(EVENT_SEGMENTS)}")
    venue: str = Field(description="Venue name")
    price_inr: float = Field(ge=0, description="Ticket price per person, INR")


class Crowd(Row):
    venue_name: str = Field(description="Attraction or restaurant name (foreign key by city)")
    venue_type: Literal["attraction", "restaurant"] = Field(description="Which table the venue is in")
    city: str = Field(description="City (foreign key to cities)")
    open_hour: int = Field(ge=0, le=23, description="Hour the venue opens")
    close_hour: int = Field(ge=0, le=23, description="Last open hour")
    surge_in_hour: int | None = Field(default=None, ge=0, le=23, description="Hour arrivals surge")
    surge_out_hour: int | None = Field(default=None, ge=0, le=23, description="Hour departures surge")
    windows: list[tuple[int, int, CrowdLevel]] = Field(
        description="[start_hour, end_hour, level], hours inclusive; may wrap past midnight"
    )
    quiet_hours: list[int] = Field(description="Hours (0-23) of lowest crowd")
    peak_window: tuple[int, int] | None = Field(
        default=None, description="[start_hour, end_hour] busiest continuous window, inclusive"
    )


class TransitStop(Row):
    poi_name: str = Field(description="Venue name (attraction, restaurant or accommodation)")
    poi_type: Literal["attraction", "restaurant", "accommodation"] = Field(description="Venue table")
    city: str = Field(description="City (foreign key to cities)")
    stop_name: str = Field(description="Nearest public-transit stop")
    stop_latitude: float = Field(ge=-90, le=90, description="Degrees north")
    stop_longitude: float = Field(ge=-180, le=180, description="Degrees east")
    distance_m: float = Field(ge=0, description="Walking distance from the venue, metres")


# The venues a plan names: which table holds each kind. Every layer (lookup tools, plan format,
# resolver, evaluator, itinerary tools, simulation) reads this map; the order is the default
# search order of `utp_env.resolve.find_venue`.
VenueKind = Literal["accommodation", "attraction", "restaurant", "event"]
VENUE_TABLE: dict[VenueKind, str] = {"accommodation": "accommodations", "attraction": "attractions",
                                     "restaurant": "restaurants", "event": "events"}
VENUE_KIND: dict[str, VenueKind] = {table: kind for kind, table in VENUE_TABLE.items()}
VENUE_KINDS: tuple[VenueKind, ...] = tuple(VENUE_TABLE)
VENUE_TABLES: tuple[str, ...] = tuple(VENUE_TABLE.values())


def is_venue_kind(kind: str | None) -> TypeGuard[VenueKind]:
    """Whether `kind` names a venue table (an item kind such as 'transit' or 'unknown' does not)."""
    return kind in VENUE_TABLE


# The venue kinds with crowd profiles and transit stops (`Crowd.venue_type`, `TransitStop.poi_type`).
CrowdKind = Literal["attraction", "restaurant"]
CROWD_KINDS: tuple[CrowdKind, ...] = ("attraction", "restaurant")

# The scheduled services: which table holds each mode, and which column numbers its services.
ServiceMode = Literal["flight", "train", "bus"]
_SERVICES: tuple[tuple[ServiceMode, str], ...] = (("flight", "flights"), ("train", "trains"), ("bus", "buses"))
SERVICE_TABLE: dict[str, str] = dict(_SERVICES)  # keyed by any mode: `.get("cab")` is None
SERVICE_MODE: dict[str, ServiceMode] = {table: mode for mode, table in _SERVICES}
NUMBER_COLUMN: dict[str, str] = {"flights": "flight_number", "trains": "train_number", "buses": "bus_id"}
# The per-person fare of each service table; a cab's fare (`Distance.cab_fare_inr`) is per cab.
FARE_COLUMN: dict[str, str] = {"flights": "price_inr", "trains": "fare_inr", "buses": "fare_inr"}
CAB_SEATS = 4  # travellers per cab


def scheduled_arrival(columns: Mapping[str, Any], row: int) -> int:
    """Scheduled arrival of service `row` (a flights/trains/buses row), in minutes from its
    departure day's midnight: `arr_time` plus 1440 per `arr_day_offset`."""
    return parse_hhmm(columns["arr_time"][row]) + MINUTES_PER_DAY * int(columns["arr_day_offset"][row])


# The class a train's `fare_inr` is quoted for: the first of these the train offers (3A on sleeper
# trains, CC on chair-car day trains, SL or 2S on trains without AC).
FARE_CLASS_ORDER = ("3A", "CC", "SL", "2S")


def fare_class(classes: Sequence[str]) -> str:
    """The travel class of a train's `fare_inr`: the first of `FARE_CLASS_ORDER` in `classes`
    (else the first class listed)."""
    for c in FARE_CLASS_ORDER:
        if c in classes:
            return c
    return classes[0] if classes else ""


def shift_run_days(run_days: str, offset: int) -> str:
    """Mon..Sun `run_days` of a service seen `offset` days later: a train leaving its first stop
    on the days `run_days` leaves a stop it reaches after `offset` midnights on the days shifted
    by `offset` (Tuesday's departure boards there on Wednesday)."""
    k = offset % 7
    return run_days[-k:] + run_days[:-k] if k else run_days


def runs_on(run_days: str, date: str | None) -> bool | None:
    """Whether a service with these Mon..Sun `run_days` bits runs on the ISO `date`; None when
    the date is missing or not a date (nothing to check)."""
    if not date:
        return None
    try:
        return run_days[weekday(date)] == "1"
    except ValueError:
        return None


def days_mask(days: Sequence[str]) -> str:
    """The Mon..Sun 7-char mask (`run_days`, `open_days`) with a 1 on each of the weekday names
    `days` (`utp_env.tools.clock.WEEKDAYS`): ('Mon', 'Sun') -> '1000001'; ValueError for another name."""
    unknown = [d for d in days if d not in WEEKDAYS]
    if unknown:
        raise ValueError(f"not a weekday name: {unknown[0]!r} (one of {', '.join(WEEKDAYS)})")
    return "".join("1" if d in days else "0" for d in WEEKDAYS)


def closed_weekdays(open_days: str) -> tuple[str, ...]:
    """The weekday names on which a venue with these Mon..Sun `open_days` bits is closed ('1111011' -> ('Fri',))."""
    return tuple(d for d, bit in zip(WEEKDAYS, open_days, strict=True) if bit != "1")


def open_on(open_days: str, date: str | None, days_after: int = 0) -> bool | None:
    """Whether a venue with these Mon..Sun `open_days` bits opens on the ISO `date` (moved on by
    `days_after` days: a plan's visit past midnight belongs to the next day); None when the date is
    missing or not a date (nothing to check). One rule with `runs_on`."""
    if days_after % 7:
        open_days = shift_run_days(open_days, -days_after)
    return runs_on(open_days, date)


@dataclass(frozen=True)
class TableSpec:
    """How a table is stored and keyed: its row model, unique key and city foreign keys."""

    name: str
    model: type[Row]
    key: tuple[str, ...]
    city_columns: tuple[str, ...]
    description: str


TABLES: dict[str, TableSpec] = {
    spec.name: spec
    for spec in (
        TableSpec("cities", City, ("city",), (), "The city set with state and coordinates"),
        TableSpec("flights", Flight, ("flight_number", "origin_city", "dest_city"),
                  ("origin_city", "dest_city"), "Scheduled domestic flights with on-time statistics"),
        TableSpec("trains", Train, ("train_number", "origin_city", "dest_city"),
                  ("origin_city", "dest_city"), "Train services between city pairs with delay horizons"),
        TableSpec("buses", Bus, ("bus_id",), ("origin_city", "dest_city"), "Intercity bus services"),
        TableSpec("road_routes", RoadRoute, ("origin_city", "dest_city"),
                  ("origin_city", "dest_city"), "Road routes with free-flow time and traffic delay"),
        TableSpec("distances", Distance, ("origin_city", "dest_city"),
                  ("origin_city", "dest_city"), "Every ordered city pair: distance, drive time, cab fare"),
        TableSpec("accommodations", Accommodation, ("city", "name"), ("city",), "Stays"),
        TableSpec("attractions", Attraction, ("city", "name"), ("city",), "Attractions"),
        TableSpec("restaurants", Restaurant, ("city", "name"), ("city",), "Restaurants"),
        TableSpec("events", Event, ("city", "name", "date"), ("city",), "Dated events"),
        TableSpec("crowd", Crowd, ("city", "venue_type", "venue_name"), ("city",),
                  "Average-day crowd profile of venues (BestTime-style)"),
        TableSpec("transit_stops", TransitStop, ("city", "poi_type", "poi_name"), ("city",),
                  "Nearest public transit stop of each venue"),
    )
}
