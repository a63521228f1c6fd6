"""Gather the reference information of a query through the lookup tools (the paper's `enriched_ref_info`).

The direct baseline gives the model everything it needs in one prompt: the cities of the trip, the
transport options of every leg with their expected delays, stays that meet the query's stay
constraints, restaurants (by the required cuisines first), attractions (by the required categories
first), events in the travel dates, the crowd profiles of the listed venues, and the delay
statistics of each leg's modes. Every lookup goes through the toolkit, so it is recorded in the
trace like any agent's tool call, and the result is compact text: the tools' own tables under
section headings.

Which cities: a 3-day query names its city; a 5/7-day query names a state, so the route is the
first ordering (by population rank) of `visiting_city_number` of the state's most populous
`visiting_city_number + extra_cities` cities in which every city has a stay meeting the stay
constraints and every leg has a service on its date (days split evenly over the cities). Lookups
are cached per (tool, arguments), so checking a route and listing it cost the same calls.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from utp_env.query import Query, house_rule_requirement
from utp_env.tools.lookup.transport import SEARCH_TOOL_OF_MODE
from utp_env.tools.schema import HOUSE_RULE_FORBIDS

MODE_OF_TOOL = {tool: mode for mode, tool in SEARCH_TOOL_OF_MODE.items()}


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
    extra_cities: int = Field(default=2, ge=0, le=3,
                              description="Spare candidate cities considered when choosing a state query's route")
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
    """Runs the lookups, caching each (tool, args) so that route choice and rendering share calls."""

    def __init__(self, query: Query, toolkit: ToolCaller, limits: ReferenceLimits) -> None:
        self.query, self.toolkit, self.limits = query, toolkit, limits
        self.errors: list[str] = []
        self.cache: dict[str, Any] = {}

    def call(self, name: str, **args: Any) -> Any:
        args = {k: v for k, v in args.items() if v not in (None, [], "")}
        key = json.dumps([name, args], sort_keys=True)
        if key in self.cache:
            return self.cache[key]
        result = self.toolkit.call(name, args)
        if not getattr(result, "ok", False):
            self.errors.append(str(getattr(result, "error", None) or getattr(result, "text", result)))
        self.cache[key] = result
        return result

    # ------------------------------------------------------------ route

    def candidates(self) -> list[str]:
        q = self.query
        if q.days == 3:
            return [q.dest]
        want = q.visiting_city_number + self.limits.extra_cities
        result = self.call("list_cities", state=q.dest, limit=want)
        names = [row["city"] for row in getattr(result, "rows", [])][:want]
        return names or [q.dest]

    def choose_route(self, candidates: list[str]) -> tuple[list[str], str | None]:
        """The first ordering (by population rank) of `visiting_city_number` candidates whose cities
        have a stay meeting the constraints and whose legs all have a service on their dates.

        Returns the cities and a note when no ordering qualifies (then the top cities are used)."""
        k = min(self.query.visiting_city_number, len(candidates)) if self.query.days != 3 else 1
        with_stays = [c for c in candidates if getattr(self.stays(c), "rows", None)]
        usable = with_stays if len(with_stays) >= k else candidates
        for order in itertools.permutations(usable, k):
            if all(self.served(*leg) for leg in route_legs(self.query, list(order))):
                return list(order), None
        return usable[:k], ("no ordering of the candidate cities has stays meeting the constraints and a "
                            "service on every leg's date; listed what exists")

    def served(self, origin: str, dest: str, date: str) -> bool:
        return bool(self.transport_results(origin, dest, date)[1])

    # ------------------------------------------------------------ sections

    def transport_tools(self) -> list[str]:
        tools = ["search_flights", "search_trains", "search_buses"]
        if self.query.local_constraint.transportation == "no flight":
            tools.remove("search_flights")
        return tools

    def transport_results(self, origin: str, dest: str, date: str) -> tuple[list[Any], list[str]]:
        """The transport lookups of one leg and the modes that have a service."""
        results, served = [], []
        for tool in self.transport_tools():
            result = self.call(tool, origin=origin, destination=dest, date=date, sort_by="price",
                               limit=self.limits.transport)
            results.append(result)
            if getattr(result, "rows", None):
                served.append(MODE_OF_TOOL[tool])
        if self.query.local_constraint.transportation != "no cab":
            result = self.call("cab_route", origin=origin, destination=dest)
            results.append(result)
            if getattr(result, "rows", None):
                served.append("cab")
        return results, served

    def transport(self, origin: str, dest: str, date: str) -> str:
        forbidden = self.query.local_constraint.transportation
        results, served = self.transport_results(origin, dest, date)
        out = [f"## Transport from {origin} to {dest} on {date}"]
        if forbidden:
            out.append(f"(the query forbids: {forbidden})")
        out.extend(r.text for r in results)
        if self.limits.delay_stats:
            for mode in served:
                result = self.call("delay_stats", mode=mode, origin=origin, destination=dest)
                if getattr(result, "ok", False) and getattr(result, "rows", None):
                    out.append(result.text)
        return "\n".join(out)

    def stays(self, city: str) -> Any:
        lc = self.query.local_constraint
        # 'pets' (the stay must allow pets) is the tool's `allows` filter; a rule the stay must
        # enforce ('No_Pets', appendix C.1) has no filter: the listed house_rules column shows it.
        rule, must_list = house_rule_requirement(lc.house_rule) if lc.house_rule else ("", True)
        allows = [] if must_list else [a for a, r in HOUSE_RULE_FORBIDS.items() if r == rule]
        return self.call("search_stays", city=city, house_type=lc.house_type,
                         allows=allows, amenities=list(lc.amenities),
                         services=list(lc.services), sort_by="rating", limit=self.limits.stays)

    def city(self, city: str, start: str, end: str) -> str:
        lc, lim = self.query.local_constraint, self.limits
        out = [f"## {city} ({start} to {end})", self.stays(city).text]
        venues: list[tuple[str, str]] = []
        for cuisine in lc.cuisine:
            venues += self._listing(out, "search_restaurants", "restaurant", city=city, cuisine=cuisine, limit=3)
        venues += self._listing(out, "search_restaurants", "restaurant", city=city, limit=lim.restaurants)
        for category in lc.attraction_categories:
            venues += self._listing(out, "search_attractions", "attraction", city=city, category=category, limit=3)
        venues += self._listing(out, "search_attractions", "attraction", city=city, limit=lim.attractions)
        if lim.events:
            segments: list[str | None] = [*lc.event_types] or [None]
            for segment in segments:
                out.append(self.call("search_events", city=city, start_date=start, end_date=end, segment=segment,
                                     limit=lim.events).text)
        for kind, name in dict.fromkeys(venues):
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
    candidates = g.candidates()
    cities, problem = g.choose_route(candidates)
    legs = route_legs(query, cities)
    info = ReferenceInfo(cities=cities, legs=legs)
    if query.days != 3:
        info.sections.append("## Route\nSuggested route: " + " -> ".join([query.org, *cities, query.org])
                             + f" (moving on {', '.join(leg[2] for leg in legs[1:-1]) or '-'})"
                             + (f"; {problem}" if problem else ""))
    info.sections.extend(g.transport(*leg) for leg in legs)
    info.sections.extend(g.city(city, a, b) for city, (a, b) in zip(cities, city_dates(query, cities), strict=True))
    info.errors = g.errors
    return info
