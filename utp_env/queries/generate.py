"""The query generator (configs/queries.yaml): balanced, feasible, deterministic benchmark queries.

`generate_queries(db, n, seed)` walks the horizon x level x risk-profile grid in turn (so cells
differ by at most one query), and for each query draws a persona, then where the trip goes, then
where it starts: a destination (a city for 3 days, a state for 5 and 7 days with 2 and 3 cities
to visit, as the paper's section 3.3 has them; `cities_per_horizon`), dates in the sandbox
calendar, a party size and local constraints that are satisfiable there. Trips go where people
go: a 3-day destination is one of India's tourist destinations (`utp_env.tools.india.TOURIST_CITIES`)
drawn by its `tourist_weight` (a Zipf law over the ranking, so Delhi, Agra, Jaipur, Goa lead), and
a multi-city trip's state by the summed weight of its destinations, whose route then runs through
them (`feasibility.candidate_routes`). The origin is drawn by population among the cities with a
direct service to the destination and back, at least `MIN_TRIP_HOURS` away by road (travellers set
out from the big cities; Siliguri is a trip from Darjeeling, Mathura none from Vrindavan). The
persona is honoured: a "Beaches" query goes to a coastal place, "Mountains" to a hill station,
"Historical Sites" to a heritage city, "Lakes and Rivers" to a lake or river town,
"Cities" to a metro (`utp_env.tools.india.PREFERENCE_CITIES`); when no such trip is found in half
the attempts, any destination is drawn and the preference becomes the first one its route
honours. No trip visits two parts of one metro.
The budget is the cheapest valid plan times a level-dependent slack times the spending
preference's multiplier (`spending_budget`: luxury 2.6x economical). Each query has its own
numpy Generator seeded from a SHA-256 of (seed, index), so the output is byte-stable and
independent of Python's hash().
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from utp_env.config import CONFIG_DIR, UncertaintyConfig, load_model
from utp_env.queries.feasibility import (
    MAX_VISIT_GAP_MIN,
    TripQuote,
    calendar,
    cheapest_events,
    cheapest_trip,
    event_leaves_meals,
    quote_route,
    visitable,
)
from utp_env.queries.options import attraction_fits, buffer_multiplier, events_on, stay_options
from utp_env.queries.templates import render_text
from utp_env.query import Horizon, Level, LocalConstraint, Persona, Query, RiskProfile
from utp_env.tools.database import Database
from utp_env.tools.india import PREFERENCE_CITIES, TOURIST_CITIES, same_metro, tourist_weight
from utp_env.tools.schema import HOUSE_RULE_FORBIDS, HOUSE_TYPES
from utp_env.tools.seeding import stable_int

LEVELS: tuple[Level, ...] = ("easy", "medium", "hard")
RISKS: tuple[RiskProfile, ...] = ("tolerant", "optimized", "averse")
TRAIN_SPLIT = "train"
TRAIN_STREAM = "train"
MIN_TRIP_HOURS = 2.5  # driving hours (the distances table) between a trip's origin and its destinations
ORIGIN_POPULATION_EXPONENT = 1.0  # an origin's weight: population ** this (the source markets are the big cities)
CONSTRAINT_KINDS = ("house_rule", "house_type", "amenities", "services", "cuisine", "transportation",
                    "event_types", "attraction_categories")


class QueryConfig(BaseModel):
    """Every knob of query generation; `configs/queries.yaml` equals these defaults."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    horizons: list[Horizon] = [3, 5, 7]
    cities_per_horizon: dict[int, int] = Field(
        default={3: 1, 5: 2, 7: 3}, description="Cities visited by a query of each horizon (UTP-Bench section 3.3)")
    levels: list[Level] = list(LEVELS)
    risk_profiles: list[RiskProfile] = list(RISKS)
    people_min: int = Field(1, ge=1, le=8)
    people_max: int = Field(8, ge=1, le=8)
    min_org_destinations: int = Field(4, ge=1, description="Directly served cities an origin needs")
    constraints_per_level: dict[str, tuple[int, int]] = {"easy": (0, 1), "medium": (1, 2), "hard": (2, 4)}
    budget_slack: dict[str, float] = {"easy": 1.6, "medium": 1.35, "hard": 1.15}
    budget_round_inr: int = Field(100, ge=1, description="Budgets are rounded up to a multiple of this")
    spending_budget: dict[str, float] = Field(
        default={"Economical Traveler": 1.0, "Moderate Spender": 1.6, "Luxury Traveler": 2.6},
        description="Budget multiplier of each spending preference (over the cheapest plan x level slack)")
    validation_fraction: float = Field(0.2, ge=0, le=1)
    max_attempts: int = Field(200, ge=1, description="Draws per query before giving up (the persona's "
                                                     "preferred places are tried in the first half)")
    traveler_types: list[str] = ["Laidback Traveler", "Adventure Seeker", "Culture Enthusiast",
                                 "Nature Lover", "Foodie", "Family Vacationer"]
    purposes: list[str] = ["Relaxation", "Adventure", "Cultural Exploration", "Nature", "Culinary Exploration",
                           "Spiritual Retreat"]
    spending: list[str] = ["Luxury Traveler", "Economical Traveler", "Moderate Spender"]
    location_preferences: list[str] = ["Beaches", "Mountains", "Historical Sites", "Wildlife", "Religious Sites",
                                       "Cities", "Lakes and Rivers"]
    default_calendar: tuple[str, str] = ("2025-11-01", "2026-03-31")

    @model_validator(mode="after")
    def _every_horizon_has_a_city_count(self) -> QueryConfig:
        missing = [h for h in self.horizons if h not in self.cities_per_horizon]
        if missing:
            raise ValueError(f"cities_per_horizon gives no city count for horizon(s) {missing}")
        if self.cities_per_horizon.get(3, 1) != 1:
            raise ValueError("a 3-day query visits one city (its destination is a city, not a state)")
        return self


def load_query_config(path: str | Path | None = None) -> QueryConfig:
    """`configs/queries.yaml` (or `path`) over the defaults."""
    default = CONFIG_DIR / "queries.yaml"
    if path is None and default.exists():
        path = default
    return load_model(QueryConfig, path)


TripKey = tuple[str, tuple[str, ...], str]


def trip_key(query: Query) -> TripKey:
    """(origin, dates, destination) of a query: the train split shares none with validation and test."""
    return (query.org, tuple(query.dates), query.dest)


def assign_split(query_id: str, validation_fraction: float) -> str:
    """`validation` for a stable fraction of ids (by SHA-256 of the id), else `test`."""
    return "validation" if stable_int("split", query_id) % 10_000 < validation_fraction * 10_000 else "test"


def neighbours(db: Database) -> dict[str, set[str]]:
    """Cities directly served from each city by flight, train, bus or road route (cached on db)."""
    cached = db.__dict__.get("_utp_neighbours")
    if cached is not None:
        return cached
    out: dict[str, set[str]] = {}
    for name in ("flights", "trains", "buses", "road_routes"):
        cols = db.tables[name].columns
        for o, d in zip(cols["origin_city"], cols["dest_city"], strict=True):
            out.setdefault(o, set()).add(d)
    db.__dict__["_utp_neighbours"] = out
    return out


class _Generator:
    """State shared across one generation run: the database, config and precomputed pools."""

    def __init__(self, db: Database, config: QueryConfig, seed: int, stream: str = "query",
                 exclude: set[TripKey] | None = None) -> None:
        self.db, self.config, self.seed = db, config, seed
        self.stream = stream  # names the per-query generators and the ids: "query" (the benchmark) or "train"
        self.exclude: set[TripKey] = exclude if exclude is not None else set()
        self.tested: list[TripKey] | None = None  # when a list: every trip `excluded` is asked about, in order
        self.unc = UncertaintyConfig()
        self.nb = neighbours(db)
        self.cal: tuple[dt.date, dt.date] = calendar(db, config.default_calendar)
        cities = db.cities
        self.state = {c: db.state_of(c) for c in cities}
        self.orgs = sorted(c for c in cities if len(self.nb.get(c, ())) >= config.min_org_destinations) or sorted(
            c for c in cities if self.nb.get(c))
        self.visitable3 = {c for c in cities if visitable(db, c, 2)}
        self.tourist = [c for c in TOURIST_CITIES if c in self.state]
        cols = db.tables["cities"].columns
        self.population = dict(zip(cols["city"], np.asarray(cols["population"], float).tolist(), strict=True))
        # A database without India's tourist destinations (a test database, another region's data)
        # draws its cities by population instead.
        self.destinations = self.tourist or sorted(cities, key=lambda c: (-self.population[c], c))
        self.destination_weight = ({c: tourist_weight(c) for c in self.tourist} if self.tourist
                                   else {c: self.population[c] for c in self.destinations})
        self._states: dict[tuple[int, int, frozenset[str] | None], list[str]] = {}
        self._origins: dict[tuple[str, ...], tuple[list[str], np.ndarray]] = {}

    def states_for(self, k: int, nights: int, wanted: frozenset[str] | None = None) -> list[str]:
        """States with at least k cities visitable for `nights` nights, one of them in `wanted` when
        given (cached per (k, nights, wanted))."""
        key = (k, nights, wanted)
        if key not in self._states:
            self._states[key] = self._states_for(k, nights, wanted)
        return self._states[key]

    def _states_for(self, k: int, nights: int, wanted: frozenset[str] | None) -> list[str]:
        by_state: dict[str, int] = {}
        honours: set[str] = set()
        for c in self.db.cities:
            if visitable(self.db, c, nights):
                by_state[self.state[c]] = by_state.get(self.state[c], 0) + 1
                if wanted is None or c in wanted:
                    honours.add(self.state[c])
        return sorted(s for s, count in by_state.items() if count >= k and s in honours)

    def state_weight(self, state: str) -> float:
        """How much a multi-city trip to `state` is drawn: the summed `tourist_weight` of its
        destinations (a state without one has the weight of the least visited destination)."""
        total = sum(tourist_weight(c) for c in self.tourist if self.state[c] == state)
        if total > 0:
            return total
        return tourist_weight(self.tourist[-1]) if self.tourist else 1.0

    def draw_origin(self, rng: np.random.Generator, targets: tuple[str, ...], state: str | None) -> str | None:
        """An origin for a trip to one of `targets` (and outside `state`, when given): a city with a
        direct service to one of them and back, at least `MIN_TRIP_HOURS` away by road and not in
        the same metro, drawn by population (`ORIGIN_POPULATION_EXPONENT`); None when there is none."""
        key = (*targets, state or "")
        if key not in self._origins:
            pool = sorted(c for c in self.orgs if (state is None or self.state[c] != state) and any(
                t != c and t in self.nb.get(c, ()) and c in self.nb.get(t, ()) and not same_metro((c, t))
                and self.drive_hours(c, t) >= MIN_TRIP_HOURS for t in targets))
            weights = np.array([self.population[c] ** ORIGIN_POPULATION_EXPONENT for c in pool], float)
            self._origins[key] = (pool, weights)
        pool, weights = self._origins[key]
        return _weighted(rng, pool, weights) if pool else None

    def excluded(self, trip: TripKey) -> bool:
        """Whether `trip` is one the draw must avoid (in `exclude`); noted in `tested` when that is a list."""
        if self.tested is not None:
            self.tested.append(trip)
        return bool(self.exclude) and trip in self.exclude

    def draw(self, index: int) -> Query | None:
        """The query of `index` in the grid's cell of that index; a train query that cannot be drawn
        is drawn again from up to `TRAIN_RETRIES` other generators. None when none is drawn."""
        cells = balanced_cells(self.config)
        days, level, risk = cells[index % len(cells)]
        query = self.one(index, days, level, risk)
        for retry in range(1, TRAIN_RETRIES + 1 if self.stream == TRAIN_STREAM else 1):
            if query is not None:
                break
            query = self.one(index, days, level, risk, retry)  # a train query may be drawn again (TRAIN_RETRIES)
        return query

    def drive_hours(self, a: str, b: str) -> float:
        """Driving hours between two cities (the `distances` table)."""
        rows = self.db.pair_rows("distances", a, b)
        return float(self.db.tables["distances"].columns["duration_min"][int(rows[0])]) / 60.0 if len(rows) else 0.0

    def one(self, index: int, days: Horizon, level: Level, risk: RiskProfile, retry: int = 0) -> Query | None:
        """The query of `index` (None when no feasible one is drawn in `max_attempts`); `retry` > 0
        draws it again from another generator (the train split's `TRAIN_RETRIES`)."""
        parts: tuple[object, ...] = (self.seed, self.stream, index) + (("retry", retry) if retry else ())
        rng = np.random.default_rng(stable_int(*parts))
        cfg = self.config
        qid = query_id(index, self.stream)
        persona = Persona(
            traveler_type=str(rng.choice(cfg.traveler_types)), purpose=str(rng.choice(cfg.purposes)),
            spending=str(rng.choice(cfg.spending)), location_preference=str(rng.choice(cfg.location_preferences)))
        preference = persona.location_preference
        for attempt in range(cfg.max_attempts):
            # the first half honours the persona's preference; then any destination, and the
            # preference becomes one the trip honours (`honoured_preference`)
            wanted = PREFERENCE_CITIES.get(preference) if attempt < cfg.max_attempts // 2 else None
            if days == 3:
                k = 1
                dests = [c for c in self.destinations if c in self.visitable3 and (wanted is None or c in wanted)]
                if not dests:
                    continue
                dest = _weighted(rng, dests, [self.destination_weight[c] for c in dests])
                targets: tuple[str, ...] = (dest,)
            else:
                k = cfg.cities_per_horizon[days]
                states = self.states_for(k, (days - 1) // k, wanted)
                if not states:
                    continue
                dest = _weighted(rng, states, [self.state_weight(st) for st in states])
                targets = tuple(c for c in self.tourist if self.state[c] == dest) or tuple(
                    c for c in self.db.cities_of_state(dest))
            picked = self.draw_origin(rng, targets, dest if days > 3 else None)
            if picked is None:
                continue
            org = picked
            span = (self.cal[1] - self.cal[0]).days - days + 1
            if span < 1:
                raise ValueError(f"the sandbox calendar {self.cal[0]}..{self.cal[1]} is shorter than {days} days")
            start = self.cal[0] + dt.timedelta(days=int(rng.integers(span)))
            dates = [(start + dt.timedelta(days=d)).isoformat() for d in range(days)]
            if self.excluded((org, tuple(dates), dest)):
                continue  # a trip of a held-out query: draw again
            people = int(rng.integers(cfg.people_min, cfg.people_max + 1))
            base = Query(query_id=qid, org=org, dest=dest, visiting_city_number=k, days=days, dates=dates,
                         people_number=people, budget_inr=1.0, level=level, persona=persona,
                         risk_profile=risk, text="")
            quote = cheapest_trip(base, self.db, self.unc)
            if isinstance(quote, str):
                continue
            lo, hi = cfg.constraints_per_level[level]
            target = int(rng.integers(lo, hi + 1))
            lc = self.draw_constraints(base, quote, target, rng)
            if len(lc.model_dump(exclude_defaults=True)) < lo:
                continue
            query = base.model_copy(update={"local_constraint": lc})
            final = cheapest_trip(query, self.db, self.unc)
            if isinstance(final, str):
                continue
            step = cfg.budget_round_inr
            booked = cheapest_events(query, self.db, final.skeleton).values()
            if not all(event_leaves_meals(self.db, e) for e in booked):
                continue  # a required event would take a meal of its day
            if wanted is not None and not any(c in wanted for c in final.skeleton.cities):
                continue  # the state's honouring routes are all invalid with these dates or constraints
            if wanted is None:
                persona = persona.model_copy(update={"location_preference": honoured_preference(
                    final.skeleton.cities, preference, cfg.location_preferences)})
                query = query.model_copy(update={"persona": persona})
            spend = cfg.spending_budget.get(persona.spending, 1.0)
            budget = math.ceil(final.total * cfg.budget_slack[level] * spend / step) * step
            text = render_text(org=org, where=dest if days == 3 else f"{k} cities in {dest}", days=days,
                               dates=dates, people=people, budget=budget, persona=persona, risk_profile=risk,
                               lc=lc, rng=rng)
            split = TRAIN_SPLIT if self.stream == TRAIN_STREAM else assign_split(qid, cfg.validation_fraction)
            return query.model_copy(update={"budget_inr": float(budget), "text": text, "split": split})
        return None

    def draw_constraints(self, query: Query, quote: TripQuote, target: int,
                         rng: np.random.Generator) -> LocalConstraint:
        """Up to `target` constraints, each kept only if the quoted route still satisfies all of them."""
        lc = LocalConstraint()
        cities = quote.skeleton.cities
        for kind in rng.permutation(CONSTRAINT_KINDS):
            if len(lc.model_dump(exclude_defaults=True)) >= target:
                break
            values = self.values_for(str(kind), query, quote, lc)
            for v in rng.permutation(len(values)) if values else ():
                trial = lc.model_copy(update={str(kind): values[int(v)]})
                if not isinstance(quote_route(query.model_copy(update={"local_constraint": trial}), self.db,
                                              cities, self.unc), str):
                    lc = trial
                    break
        return lc

    def values_for(self, kind: str, query: Query, quote: TripQuote, lc: LocalConstraint) -> list:
        db, sk = self.db, quote.skeleton
        stays = [r for c, n in zip(sk.cities, sk.nights, strict=True)
                 for r in stay_options(db, c, lc, query.people_number, n)]
        acc = db.tables["accommodations"].columns
        if kind == "house_rule":
            return sorted(HOUSE_RULE_FORBIDS)
        if kind == "house_type":
            return sorted({acc["house_type"][r] for r in stays} & set(HOUSE_TYPES))
        if kind in ("amenities", "services"):
            return [[x] for x in sorted({x for r in stays for x in acc[kind][r]})]
        if kind == "cuisine":
            served = sorted({c for city in sk.cities for r in db.city_rows("restaurants", city)
                             for c in db.tables["restaurants"].columns["cuisines"][r]})
            return [[c] for c in served] + [list(p) for p in itertools.combinations(served[:4], 2)]
        if kind == "transportation":
            return ["no flight", "no cab"]
        if kind == "event_types":
            seg = db.tables["events"].columns["segment"]
            return [[s] for s in sorted({seg[e] for j, c in enumerate(sk.cities) for d in sk.full_days(j)
                                         for e in events_on(db, c, query.dates[d]) if event_leaves_meals(db, e)})]
        multiplier = buffer_multiplier(self.unc, query.risk_profile)
        cats = db.tables["attractions"].columns["categories"]
        return [[c] for c in sorted({c for city in sk.cities for a in db.city_rows("attractions", city)
                                     if attraction_fits(db, int(a), multiplier, MAX_VISIT_GAP_MIN)
                                     for c in cats[a]})]


def _weighted(rng: np.random.Generator, items: list[str], weights: list[float] | np.ndarray) -> str:
    """One of `items` drawn with probability proportional to `weights`."""
    w = np.asarray(weights, float)
    return items[int(rng.choice(len(items), p=w / w.sum()))]


def honoured_preference(cities: tuple[str, ...], preference: str, preferences: list[str]) -> str:
    """`preference` when one of `cities` honours it, else the first of `preferences` that one of
    them honours (`PREFERENCE_CITIES`), else "Cities" (a trip to a city break)."""
    for p in (preference, *preferences):
        if any(c in PREFERENCE_CITIES.get(p, ()) for c in cities):
            return p
    return "Cities"


def balanced_cells(config: QueryConfig) -> list[tuple[Horizon, Level, RiskProfile]]:
    """Every (horizon, level, risk) cell once, in a Latin-square order: any run of len(horizons)
    consecutive cells covers each horizon, level and risk once (for equal-sized lists), so every
    prefix of the query list is as balanced as its length allows."""
    hs, ls, rs = config.horizons, config.levels, config.risk_profiles
    out: list[tuple[Horizon, Level, RiskProfile]] = []
    for c in range(len(hs) * len(ls) * len(rs)):
        a, b, z = c % len(hs), (c // len(hs)) % len(ls), c // (len(hs) * len(ls))
        out.append((hs[a], ls[(a + b) % len(ls)], rs[(a + b + z) % len(rs)]))
    return out


def query_id(index: int, stream: str = "query") -> str:
    """The id of the query drawn at `index`: `utp-q-0001` ... for the benchmark (validation and
    test), `utp-train-00001` ... for the train split (a disjoint id space)."""
    return f"utp-train-{index + 1:05d}" if stream == TRAIN_STREAM else f"utp-q-{index + 1:04d}"


TRAIN_RETRIES = 8
MAX_TRAIN_SKIPS = 1000
"""How often a train query that cannot be drawn is drawn again from another generator. The train
split draws thousands of queries while excluding every benchmark and earlier train trip, so a small
sandbox (mini) runs out of fresh trips for a rare cell; the benchmark's own queries are never
redrawn (the query set stays byte-identical)."""


def generate_queries(db: Database, n: int = 1000, seed: int = 0, config: QueryConfig | None = None, *,
                     train: bool = False, start: int = 0, exclude: set[TripKey] | None = None,
                     skipped: list[int] | None = None) -> list[Query]:
    """`n` feasible queries balanced over horizons x levels x risk profiles; same inputs, same queries.

    `train=True` draws the train split instead: the same generator and grid, per-query generators
    seeded from another stream (`stable_int(seed, "train", index)`), ids `utp-train-NNNNN`, split
    `train`. `start` is the index of the first query (a grid cell depends on the index only, so
    queries drawn in batches are the queries drawn at once). A draw whose (origin, dates,
    destination) is in `exclude` is drawn again, and every accepted query's key is added to it, so
    a train split drawn with the benchmark's keys shares none with them or with itself. With
    `skipped` (a list), a train index whose draw fails even after `TRAIN_RETRIES` is skipped and
    appended to it (the next index is drawn instead; at most `MAX_TRAIN_SKIPS` beyond `n`).
    """
    config = config or QueryConfig()
    gen = _Generator(db, config, seed, TRAIN_STREAM if train else "query", exclude)
    out: list[Query] = []
    i = start
    while len(out) < n:
        query = gen.draw(i)
        if query is None and train and skipped is not None and len(skipped) < n + MAX_TRAIN_SKIPS:
            skipped.append(i)  # this cell has run out of fresh trips here: the next index is drawn instead
            i += 1
            continue
        if query is None:
            raise undrawable(config, i)
        if exclude is not None:
            exclude.add(trip_key(query))
        out.append(query)
        i += 1
    return out



def undrawable(config: QueryConfig, index: int) -> ValueError:
    """The error of an index whose query cannot be drawn (its grid cell named)."""
    days, level, risk = balanced_cells(config)[index % len(balanced_cells(config))]
    return ValueError(f"could not draw a feasible {days}-day {level} {risk} query (index {index}) in "
                      f"{config.max_attempts} attempts; the database may lack connected, visitable cities")


class TrainDraws:
    """The train split's queries one index at a time, for a build that draws indices out of order or in
    several processes (utp_env/train_split.py) and must get what `generate_queries(..., train=True)` gets.

    `draw(index)` is the query `generate_queries` draws at `index` when `exclude` holds exactly the
    trips to avoid at that point (the benchmark's and every train query's drawn before `index`), or
    None where it would skip the index; it also returns every trip the draw tested against `exclude`,
    in order. A draw made with fewer trips excluded (say, the benchmark's only) is the same draw as
    with more, unless one of the trips it tested is among the extra ones: the draws diverge only at
    such a test, so a caller that checks the tested trips knows when to draw again. `exclude` is read,
    never changed.
    """

    def __init__(self, db: Database, seed: int = 0, exclude: set[TripKey] | None = None,
                 config: QueryConfig | None = None) -> None:
        self.config = config or QueryConfig()
        self._gen = _Generator(db, self.config, seed, TRAIN_STREAM, exclude)

    @property
    def exclude(self) -> set[TripKey]:
        """The trips the draws avoid (the set given; a caller may add to it between draws)."""
        return self._gen.exclude

    def draw(self, index: int) -> tuple[Query | None, tuple[TripKey, ...]]:
        """The train query of `index` (None: none can be drawn there) and the trips it tested."""
        self._gen.tested = []
        try:
            return self._gen.draw(index), tuple(self._gen.tested)
        finally:
            self._gen.tested = None
