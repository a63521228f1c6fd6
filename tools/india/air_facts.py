"""India's air network as facts: the vendored files of `tools/india/air/` and the few figures the
sandbox's flights are checked against. One place for each; `tools/sandbox/air.py` reads them.

Files (each with its `SOURCE.json` record; licence in `air/LICENSE`):

- `routes.csv`: the Indian domestic airport pairs with scheduled service (an unordered pair, flown
  both ways), derived by `tools/india/derive_air.py` from the OpenFlights route database (2014)
  with the updates of `updates.csv`; `carriers_2014` the airlines that flew it in 2014, `basis`
  the rule that keeps it.
- `updates.csv`: each change to the 2014 table with its fact and its kind of source (an airport
  that replaced another, a pair kept or added as flown today).
- `carriers.csv`: every airline code of the 2014 table and of today, with its status (flying,
  ceased, merged, foreign); for the airlines flying today their share of domestic passengers,
  their on-time share, the minutes their timetables add to a route's block time and their block
  speed (jets, regional jets, turboprops).
- `route_carriers.csv`: the routes of the regional airlines (Alliance Air, Star Air, Fly91), and
  whether they are the only airlines on them.
- `airports.csv`: each airport's yearly passengers (the weight its routes' frequencies follow)
  and the extra taxi minutes of the congested ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from utp_env.tools.india.sources import SOURCES_DIR, Parser, listed, number, optional_number, read_source, text

# The folder the readers below read `air/` from; tests point it at a damaged copy.
SOURCE_ROOT = SOURCES_DIR
# India's domestic departures a day: about 3,000-3,200 in 2024-25 (Ministry of Civil Aviation's
# daily domestic traffic figures, e.g. 3,173 departures on 17 November 2024); the vendored network
# is scaled to this total.
NATIONAL_DEPARTURES_A_DAY = 3_100
NATIONAL_DEPARTURES_RANGE = (3_000, 3_200)
# India's busiest domestic air routes (DGCA and AAI traffic statistics), as unordered city pairs of
# the sandbox's city names.
BUSIEST_ROUTES: frozenset[frozenset[str]] = frozenset(frozenset(p) for p in (
    ("Delhi", "Mumbai"), ("Delhi", "Bengaluru"), ("Mumbai", "Bengaluru"), ("Delhi", "Kolkata"),
    ("Delhi", "Hyderabad"), ("Mumbai", "Hyderabad"), ("Bengaluru", "Hyderabad"), ("Delhi", "Chennai"),
    ("Mumbai", "Chennai"), ("Bengaluru", "Kolkata"), ("Mumbai", "Kolkata"), ("Delhi", "Pune"),
    ("Delhi", "Ahmedabad"), ("Bengaluru", "Chennai"), ("Kolkata", "Hyderabad"), ("Chennai", "Kolkata"),
))
# Cities with an aerodrome but no scheduled passenger flights (Airports Authority of India's list
# of operational airports, 2025: Kota's airport is shut to airlines, Dhanbad's and Jamshedpur's
# airstrips and Warangal's Mamnoor have no scheduled service).
NO_SCHEDULED_FLIGHTS: tuple[str, ...] = ("Kota", "Dhanbad", "Warangal", "Jamshedpur")


def iata(cell: str) -> str:
    """A three-letter IATA airport code."""
    if len(cell) != 3 or not cell.isascii() or not cell.isupper() or not cell.isalpha():
        raise ValueError("not a three-letter IATA code")
    return cell


def airline_code(cell: str) -> str:
    """A two-character IATA airline code (letters and digits)."""
    if len(cell) != 2 or not cell.isascii() or not cell.isalnum() or cell != cell.upper():
        raise ValueError("not a two-character airline code")
    return cell


def airline_codes(cell: str) -> tuple[str, ...]:
    """A `|`-separated list of airline codes, possibly empty."""
    return tuple(airline_code(c) for c in listed(cell))


def share(cell: str) -> float | None:
    """A share in [0, 1], or None for an empty cell."""
    value = optional_number(cell)
    if value is not None and not 0.0 <= value <= 1.0:
        raise ValueError("not a share in [0, 1]")
    return value


def yes_no(cell: str) -> bool:
    """`yes` or `no`."""
    if cell not in ("yes", "no"):
        raise ValueError("not yes or no")
    return cell == "yes"


def optional_minutes(cell: str) -> int | None:
    """Whole minutes 0-60, or None for an empty cell."""
    if not cell:
        return None
    value = int(cell)
    if not 0 <= value <= 60:
        raise ValueError("not 0-60 minutes")
    return value


@dataclass(frozen=True)
class Route:
    """An airport pair with scheduled service, flown both ways."""

    airport_a: str
    airport_b: str
    carriers_2014: tuple[str, ...]
    basis: str


@dataclass(frozen=True)
class Carrier:
    """An airline code of the 2014 table or of today, with what the sandbox needs of it."""

    code: str
    airline: str
    status: str
    share: float | None  # of domestic passengers, for the airlines drawn on any route
    on_time: float | None
    block_extra_min: int | None
    cruise_kmh: float | None  # block speed: jets 750, Star Air's regional jets 700, turboprops 500
    fact: str
    source: str

    @property
    def flying(self) -> bool:
        return self.status == "flying"


@dataclass(frozen=True)
class RouteCarriers:
    """The regional airlines of one route; `only`: no other airline flies it."""

    airport_a: str
    airport_b: str
    carriers: tuple[str, ...]
    only: bool
    fact: str
    source: str


@dataclass(frozen=True)
class AirportTraffic:
    iata: str
    passengers_m: float
    taxi_extra_min: int
    source: str


@dataclass(frozen=True)
class Update:
    """One change to the 2014 route table (`tools/india/derive_air.py` applies them)."""

    change: str
    airport_a: str
    airport_b: str
    fact: str
    source: str


ROUTE_COLUMNS: dict[str, Parser] = {"airport_a": iata, "airport_b": iata, "carriers_2014": airline_codes, "basis": text}
CARRIER_COLUMNS: dict[str, Parser] = {
    "code": airline_code, "airline": text, "status": text, "share": share, "on_time": share,
    "block_extra_min": optional_minutes, "cruise_kmh": optional_number, "fact": text, "source": text}
ROUTE_CARRIER_COLUMNS: dict[str, Parser] = {
    "airport_a": iata, "airport_b": iata, "carriers": airline_codes, "only": yes_no, "fact": text, "source": text}
AIRPORT_COLUMNS: dict[str, Parser] = {
    "iata": iata, "domestic_passengers_m": number, "taxi_extra_min": optional_minutes, "source": text}
UPDATE_COLUMNS: dict[str, Parser] = {"change": text, "airport_a": iata, "airport_b": iata, "fact": text, "source": text}


def read_routes(root: Path | None = None) -> list[Route]:
    """`air/routes.csv`: the airport pairs with scheduled service."""
    return [Route(**row) for row in read_source("air/routes.csv", ROUTE_COLUMNS, root or SOURCE_ROOT)]


def read_carriers(root: Path | None = None) -> list[Carrier]:
    """`air/carriers.csv`: the airlines, flying and gone."""
    return [Carrier(**row) for row in read_source("air/carriers.csv", CARRIER_COLUMNS, root or SOURCE_ROOT)]


def read_route_carriers(root: Path | None = None) -> list[RouteCarriers]:
    """`air/route_carriers.csv`: the regional airlines' routes."""
    rows = read_source("air/route_carriers.csv", ROUTE_CARRIER_COLUMNS, root or SOURCE_ROOT)
    return [RouteCarriers(**row) for row in rows]


def read_airports(root: Path | None = None) -> list[AirportTraffic]:
    """`air/airports.csv`: domestic passengers and extra taxi minutes per airport."""
    rows = read_source("air/airports.csv", AIRPORT_COLUMNS, root or SOURCE_ROOT)
    return [AirportTraffic(iata=r["iata"], passengers_m=r["domestic_passengers_m"],
                           taxi_extra_min=r["taxi_extra_min"] or 0, source=r["source"]) for r in rows]


def read_updates(root: Path | None = None) -> list[Update]:
    """`air/updates.csv`: the changes to the 2014 route table."""
    return [Update(**row) for row in read_source("air/updates.csv", UPDATE_COLUMNS, root or SOURCE_ROOT)]
