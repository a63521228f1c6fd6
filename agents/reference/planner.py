"""`ReferencePlanner`: the uncertainty-aware reference agent (no LLM; docs/AGENTS.md).

It takes the cheapest valid route of the query (`utp_env.queries.feasibility`), picks legs, stays
and venues by the persona (`choose`), and times every day with the shortest buffers inside the
paper's ranges (`schedule`, `timing`): the low end of the risk range times v * Cf for a visit and
times E[D] for a leg; time the day does not need stays free (the traveller is at the stay). If
the preferred plan exceeds the budget it rebuilds with the cheapest choices; if that plan is
still over (the quote assumes every meal at the cheapest restaurant open for it, but a long
buffered day can leave only a dear one free, say a late dinner after an event), it rebuilds
under a per-person price cap below the dearest visit the query does not require, until the plan
fits: a person skips the pricey dinner or eats somewhere cheaper. `buffers=False` is the
deterministic baseline: the same choices with every visit exactly v and every planned arrival
the schedule.
Lookups go through the toolkit, so the trace shows what the planner consulted.

In the closed-loop env (UTP-Replan-v0) the planner also repairs its plan at each disruption:
`repair` is the run worker's hook (utp_env/runs/replan_episode.py) and delegates to the policy of
`agents/reference/repair.py`.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Any

from utp_env.agents.base import AgentResult, Toolkit
from utp_env.agents.reference.choose import (
    Policy,
    attraction_order,
    choose_events,
    choose_legs,
    choose_stays,
    other_events,
    restaurant_order,
    roomier_legs,
    spending_style,
)
from utp_env.agents.reference.repair import RepairPolicy
from utp_env.agents.reference.schedule import (
    DESK,
    LATEST_END,
    MEAL_CHOICES,
    MORNING,
    TRANSFER,
    WAKE,
    WAKE_TO_TRAVEL,
    DayScheduler,
    TransitLookup,
    TripState,
)
from utp_env.agents.reference.timing import Timing
from utp_env.config import UncertaintyConfig
from utp_env.evaluation.context import build_context
from utp_env.evaluation.hard import trip_cost
from utp_env.itinerary import Day, Plan, TransportLeg
from utp_env.queries.feasibility import TripQuote, cheapest_trip
from utp_env.queries.options import LegOption, attractions_by_appeal, buffer_multiplier, has_category, serves
from utp_env.query import Query
from utp_env.tools.database import Database
from utp_env.tools.errors import UnknownNameError
from utp_env.tools.lookup.transport import SEARCH_TOOL_OF_MODE

SEARCH_TOOL = SEARCH_TOOL_OF_MODE
ATTRACTIONS_PER_DAY = {"adventure": 3, "laidback": 2, "other": 2}
MAX_EVENT_TRIES = 12  # other event bookings tried when the plan misses a required attraction category


@dataclass(frozen=True)
class DayShape:
    """How many attractions and which meals each day of a plan has."""

    attractions: list[int]
    meals: list[frozenset[str]]

    @classmethod
    def of(cls, plan: Plan) -> DayShape:
        return cls([len(day.attractions) for day in plan.days],
                   [frozenset(m for m in ("breakfast", "lunch", "dinner") if getattr(day, m)) for day in plan.days])


class ReferencePlanner:
    """Uncertainty-aware heuristic planner; `buffers=False` gives the deterministic baseline."""

    def __init__(self, buffers: bool = True, config: UncertaintyConfig | None = None) -> None:
        self.buffers = buffers
        self.config = config or UncertaintyConfig()
        self.name = "reference" if buffers else "deterministic"

    def repair(self, env: Any, observation: str, info: dict[str, Any]) -> None:
        """Repair the plan after a disruption of the closed-loop env through `env.step` tool calls
        (`RepairPolicy`, agents/reference/repair.py); the runner then continues the trip."""
        RepairPolicy(self.config, self.buffers).repair(env, observation, info)

    def run(self, query: Query, toolkit: Toolkit) -> AgentResult:
        """Plan `query`; an infeasible query yields an error result (never an exception)."""
        db = toolkit.db
        try:
            quote = cheapest_trip(query, db, self.config)
        except UnknownNameError as exc:
            toolkit.trace.note(str(exc))
            return AgentResult(plan=None, trace=toolkit.trace, error=f"bad query: {exc}")
        if isinstance(quote, str):
            toolkit.trace.note(f"no valid plan: {quote}")
            return AgentResult(plan=None, trace=toolkit.trace, error=f"no valid plan: {quote}")
        self._look_up(query, quote, toolkit)
        transit = TransitLookup(lambda city, kind, name: _nearest_transit(toolkit, city, name))
        # The policy (preferred, or cheapest when the preferred plan is over budget, then cheapest
        # under a falling price cap) is decided on the buffered plan, so that the deterministic
        # baseline makes the reference's choices and differs only in its timing.
        events = choose_events(query, db, quote.skeleton)
        plan, policy, cap = self._within_budget(query, db, quote, transit, toolkit, buffers=True, events=events)
        if _categories_missing(plan, query, db) and events:
            # The booked event may take the only evening a required category is open in its city:
            # book the segment's event on another free full day instead (cheapest first).
            for other in other_events(query, db, quote.skeleton, events)[:MAX_EVENT_TRIES]:
                trial = self._within_budget(query, db, quote, transit, toolkit, buffers=True, events=other)
                if not _categories_missing(trial[0], query, db) and self._affordable(trial[0], query, db, toolkit,
                                                                                     "event moved"):
                    toolkit.trace.note("a required event moved to another day to free a required attraction's hours")
                    (plan, policy, cap), events = trial, other
                    break
        if not _full_days_complete(plan) and events:
            # The booked event may take a full day's only dinner time (a long buffered visit, then the
            # event): book the segment's event on another free full day instead (cheapest first).
            for other in other_events(query, db, quote.skeleton, events)[:MAX_EVENT_TRIES]:
                trial = self._within_budget(query, db, quote, transit, toolkit, buffers=True, events=other)
                if (_full_days_complete(trial[0]) and not _categories_missing(trial[0], query, db)
                        and self._affordable(trial[0], query, db, toolkit, "event moved")):
                    toolkit.trace.note("a required event moved to another day to leave time for a meal")
                    (plan, policy, cap), events = trial, other
                    break
        legs: list[LegOption] | None = None
        if _categories_missing(plan, query, db):
            # Or the legs leave too little of the hours a required category is open: arrive early in
            # and leave late from the cities that offer a missing category.
            wanted = _missing_category_cities(plan, query, db, quote.skeleton.cities)
            chosen = choose_legs(query, db, quote, buffer_multiplier(self.config, query.risk_profile), policy)
            legs = roomier_legs(query, db, quote, buffer_multiplier(self.config, query.risk_profile), chosen, wanted)
            trial = self._within_budget(query, db, quote, transit, toolkit, buffers=True, events=events, legs=legs)
            if not _categories_missing(trial[0], query, db) and self._affordable(trial[0], query, db, toolkit,
                                                                                 "roomier legs"):
                toolkit.trace.note("legs chosen to arrive early in and leave late from a required category's city")
                plan, policy, cap = trial
            else:
                legs = None
        if not self.buffers:
            # Same policy, as many attractions and the same meals per day as the buffered plan: only
            # the timing differs.
            shape = DayShape.of(plan)
            plan = self.build(query, db, quote, policy, transit, buffers=False, shape=shape, price_cap=cap,
                              events=events, legs=legs)
            if not self._affordable(plan, query, db, toolkit, policy):
                plan, _, _ = self._within_budget(query, db, quote, transit, toolkit, buffers=False, shape=shape,
                                                 policies=("cheapest",), cap=cap, events=events, legs=legs)
        return AgentResult(plan=plan, trace=toolkit.trace)

    def _within_budget(self, query: Query, db: Database, quote: TripQuote, transit: TransitLookup,
                       toolkit: Toolkit, buffers: bool, shape: DayShape | None = None,
                       policies: tuple[Policy, ...] = ("preferred", "cheapest"),
                       cap: float | None = None,
                       events: dict[int, int] | None = None,
                       legs: list[LegOption] | None = None) -> tuple[Plan, Policy, float | None]:
        """The first plan of `policies` (under `cap`) that fits the budget; if none does, the
        cheapest plan rebuilt under a per-person price cap on the restaurants and attractions the
        query does not require, lowered below the dearest such visit until the plan fits (a person
        skips the pricey dinner, or eats somewhere cheaper, rather than break the budget). The legs,
        stays and events are the quote's, which the budget covers; only optional visits give way.
        Returns the plan, its policy and the cap (None: no cap)."""
        policy = policies[0]
        plan = self.build(query, db, quote, policy, transit, buffers=buffers, shape=shape, price_cap=cap,
                              events=events, legs=legs)
        fallback: tuple[Plan, Policy] | None = None  # affordable, but a full day lacks a meal
        for later in (None, *policies[1:]):
            if later is not None:
                policy = later
                plan = self.build(query, db, quote, policy, transit, buffers=buffers, shape=shape, price_cap=cap,
                              events=events, legs=legs)
            if self._affordable(plan, query, db, toolkit, policy):
                if _full_days_complete(plan) or shape is not None:
                    return plan, policy, cap
                # The preferred venues' hours can leave a full day without a meal (a long visit, then
                # an evening event): a later policy's plan that has every meal is taken instead.
                fallback = fallback or (plan, policy)
                toolkit.trace.note(f"{policy} plan leaves a full day without a meal")
        if fallback is not None:
            return fallback[0], fallback[1], cap
        previous = math.inf
        uncapped = plan
        while True:
            dearest = _dearest_optional_visit(plan, query, db)
            if dearest is None or dearest <= 0 or dearest >= previous:
                toolkit.trace.note("no optional visit left to give way: the plan stays over budget")
                return plan, policy, cap
            previous, cap = dearest, math.nextafter(dearest, -math.inf)
            plan = self.build(query, db, quote, "cheapest", transit, buffers=buffers, shape=shape, price_cap=cap,
                              events=events, legs=legs)
            policy = "cheapest"
            if self._affordable(plan, query, db, toolkit, f"cheapest (optional visits under INR {dearest:.0f} pp)"):
                if _full_days_complete(plan) or not _full_days_complete(uncapped):
                    return plan, policy, cap
                # The cap left a day in one city without a meal (no cheaper restaurant is left for it):
                # skip the meals of the travel days instead, which Complete Information does not ask for.
                lean = _without_travel_day_meals(uncapped if shape is None else shape, uncapped)
                trial = self.build(query, db, quote, "cheapest", transit, buffers=buffers, shape=lean,
                                   events=events, legs=legs)
                if _full_days_complete(trial) and self._affordable(trial, query, db, toolkit,
                                                                   "cheapest without travel-day meals"):
                    return trial, "cheapest", None
                return plan, policy, cap

    @staticmethod
    def _affordable(plan: Plan, query: Query, db: Database, toolkit: Toolkit, policy: str) -> bool:
        cost = trip_cost(build_context(plan, query, db)).total
        toolkit.trace.note(f"{policy} plan costs INR {cost:.0f} of {query.budget_inr:.0f}")
        return cost <= query.budget_inr

    # -- the plan

    def build(self, query: Query, db: Database, quote: TripQuote, policy: Policy, transit: TransitLookup,
              buffers: bool | None = None, shape: DayShape | None = None, price_cap: float | None = None,
              events: dict[int, int] | None = None, legs: list[LegOption] | None = None) -> Plan:
        """The whole plan for one policy along the quoted route (buffered unless `buffers` is False;
        by default the planner's own setting); `shape` limits each day's attractions and meals;
        `price_cap` (INR per person) leaves out the restaurants and attractions dearer than it, except
        one that covers a cuisine or category the query still needs (`DayScheduler`); `events` (day
        index -> event row) are the events to book, by default `choose_events`'s; `legs` the legs to
        take, by default `choose_legs`'s for the policy."""
        buffers = self.buffers if buffers is None else buffers
        sk = quote.skeleton
        timing = Timing(db, self.config, query.risk_profile, buffers)
        if legs is None:
            legs = choose_legs(query, db, quote, buffer_multiplier(self.config, query.risk_profile), policy)
        stays = choose_stays(query, db, sk, policy)
        events = choose_events(query, db, sk) if events is None else events
        lc = query.local_constraint
        state = TripState(cuisines_left=list(lc.cuisine), categories_left=list(lc.attraction_categories),
                          must_see={rows[0] for rows in (attractions_by_appeal(db, c) for c in sk.cities) if rows})
        r_order = {c: restaurant_order(db, c, policy) for c in sk.cities}
        a_order = {c: attraction_order(db, c, policy, query) for c in sk.cities}
        cap = ATTRACTIONS_PER_DAY[_traveler_kind(query)]
        stops = (query.org, *sk.cities, query.org)
        wake = [WAKE_TO_TRAVEL if d in sk.leg_days else WAKE for d in range(query.days)] + [WAKE]
        days = []
        for d in range(query.days):
            j = sum(1 for ld in sk.leg_days if ld < d)  # legs taken before today
            leg_index = sk.leg_days.index(d) if d in sk.leg_days else None
            # The cheapest policy eats at the first (cheapest) restaurant that fits, as the budget assumes.
            def scheduler(trip: TripState, d: int = d) -> DayScheduler:
                return DayScheduler(db, self.config, timing, trip, r_order, a_order,
                                    cap if shape is None else min(cap, shape.attractions[d]), transit,
                                    meals=None if shape is None else shape.meals[d],
                                    meal_choices=1 if policy == "cheapest" else MEAL_CHOICES, price_cap=price_cap,
                                    date=query.dates[d], frugal=policy == "cheapest")
            sched = scheduler(state)
            here = stops[j]
            t = wake[d] + MORNING
            if d > 0:
                sched.add(sched.stay_item(stays[j - 1], "stay", wake[d], wake[d] + MORNING))
            leg = legs[leg_index] if leg_index is not None else None
            transport: list[TransportLeg] = []
            night_stay = stays[j - 1] if d > 0 else None
            if leg is not None:
                if d > 0:
                    sched.add(sched.stay_item(stays[j - 1], "checkout", t, t + DESK))
                    t = sched.fill(here, t + DESK + TRANSFER, sched.leave_by(leg))
                sched.add(sched.arrive_item(leg))
                planned = leg.planned_arrival(timing.multiplier) if buffers else leg.arr
                transport.append(TransportLeg(mode=leg.mode, number=leg.number, origin=leg.origin,
                                              destination=leg.destination, dep=leg.dep, arr=leg.arr,
                                              planned_arr=planned))
                last = leg_index == len(sk.leg_days) - 1
                night_stay = None if last else stays[j]  # the leg of today leads to city j
                if not last:
                    t = planned + TRANSFER
                    sched.add(sched.stay_item(night_stay, "check-in", t, t + DESK))  # type: ignore[arg-type]
                    t = sched.fill(stops[j + 1], t + DESK + TRANSFER, LATEST_END)
            else:
                # Complete Information: an attraction and all three meals. If the day cannot have them
                # with every buffer in full, it is laid out again with buffers squeezed where needed.
                # A later try also runs when the day left out a category the query needs that only
                # this city still offers (`DayScheduler.wanted_here`); the first try that does better wins.
                before, morning = copy.deepcopy(state), len(sched.out.items)
                sched.full_day = True
                t_end = sched.fill(here, t, LATEST_END, events.get(d))
                for late_required, lunch_first in ((False, False), (True, False), (False, True)):
                    if sched.complete_day() and not sched.wanted_here(here):
                        break
                    trial_state = copy.deepcopy(before)
                    retry = scheduler(trial_state)
                    retry.full_day = retry.squeeze_anywhere = True
                    retry.late_required, retry.lunch_first = late_required, lunch_first
                    retry.out.items = sched.out.items[:morning]  # what the day held before `fill`
                    retry_end = retry.fill(here, t, LATEST_END, events.get(d))
                    if retry.complete_day() and (not sched.complete_day() or _still_needed(trial_state)
                                                 < _still_needed(state)):
                        sched, state, t_end = retry, trial_state, retry_end
                t = t_end
            if night_stay is not None:
                sched.add(sched.stay_item(night_stay, "stay", t, 1440 + wake[d + 1]))
            days.append(self._day(query, db, d, here, leg, night_stay, transport, sched))
        return Plan(query_id=query.query_id, days=days, source="planner-made")

    @staticmethod
    def _day(query: Query, db: Database, d: int, here: str, leg: LegOption | None, night_stay: int | None,
             transport: list[TransportLeg], sched: DayScheduler) -> Day:
        acc = db.tables["accommodations"].columns
        out = sched.out
        return Day(day=d + 1, date=query.dates[d], cities=[here, leg.destination] if leg else [here],
                   transport=transport, breakfast=out.meals.get("breakfast"), lunch=out.meals.get("lunch"),
                   dinner=out.meals.get("dinner"), attractions=out.attractions,
                   accommodation=f"{acc['name'][night_stay]}, {acc['city'][night_stay]}" if night_stay is not None
                   else None, events=out.events, items=out.items)

    # -- traced lookups

    def _look_up(self, query: Query, quote: TripQuote, toolkit: Toolkit) -> None:
        """Consult the lookup tools for everything the plan draws on, so the trace shows it."""
        sk = quote.skeleton
        stops = (query.org, *sk.cities, query.org)
        lc = query.local_constraint
        for j, day in enumerate(sk.leg_days):
            pair = {"origin": stops[j], "destination": stops[j + 1]}
            for mode, tool in SEARCH_TOOL.items():
                if not (mode == "flight" and lc.transportation == "no flight"):
                    toolkit.call(tool, {**pair, "date": query.dates[day]})
            if lc.transportation != "no cab":
                toolkit.call("cab_route", pair)
        for city in sk.cities:
            stay_args: dict[str, Any] = {"city": city}
            if lc.house_type:
                stay_args["house_type"] = lc.house_type
            toolkit.call("search_stays", stay_args)
            toolkit.call("search_restaurants", {"city": city})
            toolkit.call("search_attractions", {"city": city})
            if lc.event_types:
                toolkit.call("search_events", {"city": city, "start_date": query.dates[0], "end_date": query.dates[-1]})
        toolkit.trace.note(f"route {' -> '.join(stops)}; persona spending {spending_style(query)}; "
                           f"buffers {'on' if self.buffers else 'off'}")


def _dearest_optional_visit(plan: Plan, query: Query, db: Database) -> float | None:
    """The per-person price of the dearest restaurant or attraction of `plan` that the query does not
    require (None when there is none). A visit is required when it is the first, in plan order, to
    serve a cuisine or have a category the query asks for (as `DayScheduler` books them)."""
    lc = query.local_constraint
    cuisines, categories = list(lc.cuisine), list(lc.attraction_categories)
    prices = []
    for visit in build_context(plan, query, db).visits:
        if visit.ref is None:
            continue
        row = visit.ref.row
        if visit.kind == "restaurant":
            covered = [c for c in cuisines if serves(db, row, c)]
            cuisines = [c for c in cuisines if c not in covered]
            price = float(db.tables["restaurants"].columns["avg_cost_inr"][row])
        elif visit.kind == "attraction":
            covered = [c for c in categories if has_category(db, row, c)]
            categories = [c for c in categories if c not in covered]
            price = float(db.tables["attractions"].columns["entry_fee_inr"][row])
        else:
            continue
        if not covered:
            prices.append(price)
    return max(prices, default=None)


def _still_needed(state: TripState) -> int:
    """How many of the query's attraction categories and cuisines the trip has yet to cover."""
    return len(state.categories_left) + len(state.cuisines_left)


def _full_days_complete(plan: Plan) -> bool:
    """Whether every day without a leg has breakfast, lunch and dinner (Complete Information)."""
    return all(day.breakfast and day.lunch and day.dinner for day in plan.days if not day.transport)


def _without_travel_day_meals(shape_or_plan: DayShape | Plan, plan: Plan) -> DayShape:
    """The day shape of `shape_or_plan` with no meals on the days `plan` travels."""
    shape = shape_or_plan if isinstance(shape_or_plan, DayShape) else DayShape.of(shape_or_plan)
    return DayShape(list(shape.attractions), [frozenset() if day.transport else meals
                                              for day, meals in zip(plan.days, shape.meals, strict=True)])


def _categories_missing(plan: Plan, query: Query, db: Database) -> bool:
    """Whether `plan` leaves out an attraction category the query requires."""
    left = list(query.local_constraint.attraction_categories)
    for visit in build_context(plan, query, db).visits:
        if visit.kind == "attraction" and visit.ref is not None:
            left = [c for c in left if not has_category(db, visit.ref.row, c)]
    return bool(left)


def _missing_category_cities(plan: Plan, query: Query, db: Database, cities: tuple[str, ...]) -> set[str]:
    """The cities of the route with an attraction of a required category `plan` leaves out."""
    left = list(query.local_constraint.attraction_categories)
    for visit in build_context(plan, query, db).visits:
        if visit.kind == "attraction" and visit.ref is not None:
            left = [c for c in left if not has_category(db, visit.ref.row, c)]
    return {city for city in cities for a in db.city_rows("attractions", city)
            if any(has_category(db, int(a), c) for c in left)}


def _traveler_kind(query: Query) -> str:
    text = query.persona.traveler_type.lower()
    if "adventure" in text:
        return "adventure"
    return "laidback" if "laid" in text else "other"


def _nearest_transit(toolkit: Toolkit, city: str, name: str) -> tuple[str, float] | None:
    result = toolkit.call("nearest_transit", {"city": city, "venue": name})
    if not result.ok or not result.rows:
        return None
    row = result.rows[0]
    return str(row["stop_name"]), float(row["distance_m"])
