"""Gather the reference information of a query through the lookup tools (the paper's `enriched_ref_info`).

The direct baseline gives the model everything it needs in one prompt: the cities of the trip, the
transport options of every leg with their expected delays, stays that meet the query's stay
constraints, restaurants (by the required cuisines first), attractions (by the required categories
first), events in the travel dates, the crowd profiles of the listed venues, and the delay
statistics of each leg's modes. Every lookup goes through the toolkit, so it is recorded in the
trace like any agent's tool call, and the result is compact text: the tools' own tables under
section headings.

Which cities: a 3-day query names its city; a 5/7-day query names a state, so the state's most
populous cities (from `list_cities`) are taken, `visiting_city_number` of them plus `extra_cities`
spare candidates, visited in that order and split evenly over the days.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from utp_env.query import Query

MODE_OF_TOOL = {"search_flights": "flight", "search_trains": "train", "search_buses": "bus"}


class ToolCaller(Protocol):
    """What gathering needs of a toolkit: `call(name, args) -> ToolResult` (ok, text, rows, error)."""

    def call(self, name: str, args: dict[str, Any]) -> Any: ...


class ReferenceLimits(BaseModel):
    """How much to gather; the prompt grows with every limit."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    transport: int = Field(default=5, ge=1, le=50, description="Services listed per mode and leg")
    stays: int = Field(default=5, ge=1, le=50)
    restaurants: int = Field(default=8, ge=1, le=50)
    attractions: int = Field(default=6, ge=1, le=50)
    events: int = Field(default=5, ge=0, le=50)
    extra_cities: int = Field(default=0, ge=0, le=3, description="Spare candidate cities for state queries")
    crowd: bool = Field(default=True, description="Add the crowd profile of every listed venue")
    delay_stats: bool = Field(default=True, description="Add per-leg delay statistics")
    transit: bool = Field(default=False, description="Add the nearest transit stop of every listed venue")


@dataclass
class ReferenceInfo:
    """The gathered text, the trip's cities and legs, and the tool errors met on the way."""

    cities: list[str]
    legs: list[tuple[str, str, str]]
    sections: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n\n".join(self.sections)


def transfer_days(days: int, n_cities: int) -> list[int]:
    """0-based day indices on which the trip moves to the next city: an even split of the days.

    5 days, 2 cities -> [2]; 7 days, 3 cities -> [2, 4]; one city -> [].
    """
    return [(i * days) // n_cities for i in range(1, n_cities)]


def route_legs(query: Query, cities: list[str]) -> list[tuple[str, str, str]]:
    """(origin, destination, date) of each leg: out on day 1, between cities, home on the last day."""
    stops = [query.org, *cities, query.org]
    dates = [query.dates[0], *(query.dates[i] for i in transfer_days(query.days, len(cities))), query.dates[-1]]
    return [(stops[i], stops[i + 1], dates[i]) for i in range(len(stops) - 1)]


def city_dates(query: Query, cities: list[str]) -> list[tuple[str, str]]:
    """(first, last) date spent in each city."""
    starts = [0, *transfer_days(query.days, len(cities))]
    ends = [*starts[1:], query.days - 1]
    return [(query.dates[a], query.dates[b]) for a, b in zip(starts, ends, strict=True)]


class _Gatherer:
    def __init__(self, query: Query, toolkit: ToolCaller, limits: ReferenceLimits) -> None:
        self.query, self.toolkit, self.limits = query, toolkit, limits
        self.errors: list[str] = []

    def call(self, name: str, **args: Any) -> Any:
        result = self.toolkit.call(name, {k: v for k, v in args.items() if v not in (None, [], "")})
        if not getattr(result, "ok", False):
            self.errors.append(getattr(result, "error", None) or getattr(result, "text", str(result)))
        return result

    def cities(self) -> list[str]:
        q = self.query
        if q.days == 3:
            return [q.dest]
        want = q.visiting_city_number + self.limits.extra_cities
        result = self.call("list_cities", state=q.dest, limit=want)
        names = [row["city"] for row in getattr(result, "rows", [])][:want]
        return names or [q.dest]

    def transport(self, origin: str, dest: str, date: str) -> str:
        forbidden = self.query.local_constraint.transportation
        out = [f"## Transport from {origin} to {dest} on {date}"]
        tools = ["search_flights", "search_trains", "search_buses"]
        if forbidden == "no flight":
            tools.remove("search_flights")
            out.append("(flights are forbidden by the query)")
        served: list[str] = []  # modes with at least one service, for the delay statistics
        for tool in tools:
            result = self.call(tool, origin=origin, destination=dest, date=date, sort_by="price",
                               limit=self.limits.transport)
            out.append(result.text)
            if getattr(result, "rows", None):
                served.append(MODE_OF_TOOL[tool])
        if forbidden == "no cab":
            out.append("(cabs are forbidden by the query)")
        else:
            result = self.call("cab_route", origin=origin, destination=dest)
            out.append(result.text)
            if getattr(result, "rows", None):
                served.append("cab")
        if self.limits.delay_stats:
            for mode in served:
                result = self.call("delay_stats", mode=mode, origin=origin, destination=dest)
                if getattr(result, "ok", False) and getattr(result, "rows", None):
                    out.append(result.text)
        return "\n".join(out)

    def city(self, city: str, start: str, end: str) -> str:
        lc, lim = self.query.local_constraint, self.limits
        out = [f"## {city} ({start} to {end})"]
        out.append(self.call("search_stays", city=city, house_type=lc.house_type,
                             allows=[lc.house_rule] if lc.house_rule else [], amenities=list(lc.amenities),
                             services=list(lc.services), sort_by="rating", limit=lim.stays).text)
        venues: list[tuple[str, str]] = []
        for cuisine in lc.cuisine:
            venues += self._listing(out, "search_restaurants", "restaurant", city=city, cuisine=cuisine, limit=3)
        venues += self._listing(out, "search_restaurants", "restaurant", city=city, limit=lim.restaurants)
        for category in lc.attraction_categories:
            venues += self._listing(out, "search_attractions", "attraction", city=city, category=category, limit=3)
        venues += self._listing(out, "search_attractions", "attraction", city=city, limit=lim.attractions)
        if lim.events:
            for segment in lc.event_types or [None]:
                out.append(self.call("search_events", city=city, start_date=start, end_date=end, segment=segment,
                                     limit=lim.events).text)
        seen: set[tuple[str, str]] = set()
        for kind, name in venues:
            if (kind, name) in seen:
                continue
            seen.add((kind, name))
            if lim.crowd:
                result = self.call("crowd_profile", city=city, venue=name, venue_type=kind)
                if "no crowd data" not in result.text:
                    out.append(result.text)
            if lim.transit:
                out.append(self.call("nearest_transit", city=city, venue=name).text)
        return "\n".join(out)

    def _listing(self, out: list[str], tool: str, kind: str, **args: Any) -> list[tuple[str, str]]:
        result = self.call(tool, **args)
        out.append(result.text)
        return [(kind, row["name"]) for row in getattr(result, "rows", []) if "name" in row]


def gather_reference_info(query: Query, toolkit: ToolCaller, limits: ReferenceLimits | None = None) -> ReferenceInfo:
    """Look up everything a one-shot planner needs for `query`; see the module docstring."""
    g = _Gatherer(query, toolkit, limits or ReferenceLimits())
    cities = g.cities()
    plan_cities = cities[: query.visiting_city_number] if query.days != 3 else cities
    legs = route_legs(query, plan_cities)
    info = ReferenceInfo(cities=cities, legs=legs)
    if len(cities) > len(plan_cities):
        info.sections.append("## Candidate cities\nSuggested route: " + " -> ".join([query.org, *plan_cities,
                                                                                      query.org])
                             + f"; spare candidates: {', '.join(cities[len(plan_cities):])}")
    info.sections.extend(g.transport(*leg) for leg in legs)
    for extra in cities[len(plan_cities):]:
        info.sections.append(g.transport(query.org, extra, query.dates[0]))
    dates = city_dates(query, plan_cities) + [(query.dates[0], query.dates[-1])] * (len(cities) - len(plan_cities))
    info.sections.extend(g.city(city, a, b) for city, (a, b) in zip(cities, dates, strict=True))
    info.errors = g.errors
    return info
