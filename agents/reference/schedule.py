"""Timing one day of the reference plan: meals, attractions and events between the stay and the legs.

A day is laid out left to right with a cursor. The traveller wakes at the stay, checks out on a
travel day, fills the time in the city (meals in their windows with >= 4 h gaps, attractions in
between, a booked event as a fixed block), reaches the airport/station by departure minus the
boarding margin (minus a lead when buffers are on), and after a leg checks in no earlier than the
planned arrival. Every visit's length comes from `Timing` (v plus the shortest buffer
inside the risk range); an attraction the query does not require is skipped when that booking
exceeds `MAX_VISIT_GAP_MIN` (the longest visit the query generator counts on), so no visit fills
a whole day. Under a price cap (a plan rebuilt to fit the budget) a restaurant or attraction dearer
than the cap is booked only if it covers a cuisine or category the query still needs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from utp_env.agents.reference.timing import Timing, Venue, venue
from utp_env.config import UncertaintyConfig
from utp_env.itinerary import Activity, Meal, PlanItem, parse_hhmm
from utp_env.queries.feasibility import MAX_VISIT_GAP_MIN
from utp_env.queries.options import MEAL_WINDOWS, LegOption, has_category, opens_on, serves, serves_meal
from utp_env.resolve import departure_point
from utp_env.tools.database import Database, normalize

WAKE = 7 * 60 + 30  # a day in one city: breakfast from 08:00
WAKE_TO_TRAVEL = 7 * 60  # a day that moves on wakes earlier (checkout before a 09:00 departure)
MORNING = 30  # minutes at the stay after waking
TRANSFER = 15  # minutes between two places in a city
DESK = 15  # check-in / check-out
AT_POINT = 10  # minutes at the airport/station/bus stand before boarding closes
ARRIVE_LEAD = 30  # slack before heading to the departure point (buffers on), absorbing overruns
LATEST_END = 23 * 60 + 30  # the last visit of a day ends by 23:30
MEAL_SLIDE = 30  # a meal may start up to this much after its earliest time to dodge crowds
ATTRACTION_SLIDE = 60
MEAL_CHOICES = 4  # restaurants compared for each meal (the shortest crowd-adjusted booking wins)
# On a day spent in one city Complete Information asks for an attraction and all three meals
# (TripCraft's and TravelPlanner's is_not_absent). There an attraction does not delay a meal, a
# required one ends by the meal's latest start here (it no longer takes the whole free stretch),
# and when no attraction fits its usual slot the first may stretch up to that time: lunch still
# starts in its window, dinner 4 h after lunch in its own while restaurants are open
# (`DayScheduler.full_day`).
LATEST_MEAL_START: dict[str, int] = {"lunch": 14 * 60, "dinner": 20 * 60 + 30}
# After an evening event dinner may start this long past its window (it still ends by LATEST_END).
LATE_DINNER_AFTER_EVENT = 45


@dataclass
class TripState:
    """What the whole trip has used or still owes, shared by the days."""

    used_restaurants: set[int] = field(default_factory=set)
    used_attractions: set[int] = field(default_factory=set)
    cuisines_left: list[str] = field(default_factory=list)
    categories_left: list[str] = field(default_factory=list)
    # Each city's top sight (its first attraction by appeal): booked like a required attraction, its
    # buffer squeezed if it must, so that a trip to Jaipur sees Amber Fort and one to Agra the Taj.
    must_see: set[int] = field(default_factory=set)


@dataclass
class DayResult:
    items: list[PlanItem] = field(default_factory=list)
    meals: dict[str, str] = field(default_factory=dict)  # meal -> "Name, City"
    attractions: list[str] = field(default_factory=list)
    events: list[str] = field(default_factory=list)


class DayScheduler:
    """Fills one day's time in one city after another (see module docstring)."""

    def __init__(self, db: Database, config: UncertaintyConfig, timing: Timing, state: TripState,
                 restaurant_order: dict[str, list[int]], attraction_order: dict[str, list[int]],
                 attraction_cap: int, transit: TransitLookup, meal_choices: int = MEAL_CHOICES,
                 meals: frozenset[str] | None = None, price_cap: float | None = None,
                 date: str | None = None, frugal: bool = False) -> None:
        self.db, self.config, self.timing, self.state = db, config, timing, state
        self.date = date  # the day's ISO date: an attraction closed that weekday is not booked
        self.price_cap = price_cap
        self.frugal = frugal  # the cheapest policy: among equally useful restaurants, the cheapest
        self.allowed_meals = meals
        self.restaurant_order, self.attraction_order = restaurant_order, attraction_order
        self.cap, self.transit, self.meal_choices = attraction_cap, transit, meal_choices
        self.out = DayResult()
        self.last_meal_end: int | None = None
        self.attractions_today = 0
        # A day in one city (no leg): it needs an attraction and all three meals (see LATEST_MEAL_START);
        # `squeeze_anywhere`: its second try, where any gap may squeeze a buffer to have them.
        self.full_day = False
        self.squeeze_anywhere = False
        # Later tries of a full day: `late_required` lets an attraction the query requires run until
        # the pending meal's window closes (a bar that opens at 19:00 before a late dinner);
        # `lunch_first` books no attraction before lunch (an early lunch leaves room for dinner
        # before an evening show).
        self.late_required = False
        self.lunch_first = False

    def complete_day(self) -> bool:
        """Whether the day has an attraction and all three meals (Complete Information's day rules)."""
        return self.attractions_today > 0 and all(m in self.out.meals for m in ("breakfast", "lunch", "dinner"))

    def wanted_here(self, city: str) -> bool:
        """Whether a category the query still needs is offered by an attraction of `city` not yet used
        and open today, or a cuisine it still needs by a restaurant of `city` not yet used."""
        return any(has_category(self.db, a, c) for a in self.attraction_order.get(city, [])
                   if a not in self.state.used_attractions and opens_on(self.db, "attractions", a, self.date)
                   for c in self.state.categories_left) or any(
            serves(self.db, r, c) for r in self.restaurant_order.get(city, [])
            if r not in self.state.used_restaurants for c in self.state.cuisines_left)

    # -- single items

    def stay_item(self, stay: int, activity: Activity, start: int, end: int) -> PlanItem:
        cols = self.db.tables["accommodations"].columns
        name, city = cols["name"][stay], cols["city"][stay]
        return self.transit.annotate(PlanItem(name=f"{name}, {city}", activity=activity, start=start, end=end,
                                              venue_type="accommodation"), city, "accommodation", name)

    def add(self, item: PlanItem) -> None:
        self.out.items.append(item)

    def departure_point(self, leg: LegOption) -> str:
        return departure_point(self.db, leg.mode, leg.row, leg.origin)

    def arrive_item(self, leg: LegOption) -> PlanItem:
        """At the departure point for AT_POINT minutes, ending when boarding closes (departure - margin)."""
        ready = leg.dep - int(self.config.simulation.boarding_margin_min[leg.mode])
        return PlanItem(name=self.departure_point(leg), activity="arrive", start=max(0, ready - AT_POINT),
                        end=max(0, ready), venue_type="transit")

    def leave_by(self, leg: LegOption) -> int:
        """When the last activity before `leg` must end: a transfer, plus (with buffers) a lead that
        absorbs overruns, before reaching the departure point."""
        lead = ARRIVE_LEAD if self.timing.buffers else 0
        return self.arrive_item(leg).start - TRANSFER - lead  # type: ignore[operator]

    # -- filling time in a city

    def fill(self, city: str, t: int, horizon: int, event: int | None = None) -> int:
        """Place meals, attractions and `event` in `city` from `t` until `horizon`; returns the cursor."""
        pending: list[Meal] = [m for m in ("breakfast", "lunch", "dinner")
                               if m not in self.out.meals and (self.allowed_meals is None or m in self.allowed_meals)]
        ev = None
        if event is not None:
            ev = self._event_times(event)
        while True:
            stop = min(horizon, ev[0] - TRANSFER) if ev else horizon
            if ev and t > stop:
                t = self._place_event(event, ev)  # type: ignore[arg-type]
                ev = None
                continue
            meal = pending[0] if pending else None
            lo = t
            if meal is not None:
                w_lo, w_hi = MEAL_WINDOWS[meal]
                lo = max(w_lo, t, (self.last_meal_end or 0) + int(self.config.min_meal_gap_minutes))
                latest = w_hi + (LATE_DINNER_AFTER_EVENT if self.full_day and meal == "dinner" and event else 0)
                if lo > latest or (meal == "lunch" and not self.full_day and self._needs_early_dinner(city)):
                    pending.pop(0)
                    continue
                if t >= lo - 30:
                    placed = self._place_meal(meal, city, lo, min(max(w_hi, lo), lo + MEAL_SLIDE), stop)
                    if placed is not None:
                        t = placed + TRANSFER
                        pending.pop(0)
                        continue
                    if ev:
                        t = max(t, ev[0])
                        continue
                    pending.pop(0)
                    continue
                deadline = min(max(lo, t) + ATTRACTION_SLIDE, stop)
            else:
                deadline = stop
            if self.attractions_today < self.cap and not (self.lunch_first and meal in ("breakfast", "lunch")):
                # An attraction of a required category may take the whole free stretch (a meal gives way),
                # except on a full day, where a required one ends by the pending meal's latest start and
                # any other one does not delay the meal.
                stretch = stop
                if self.full_day and meal is not None:
                    latest_meal = MEAL_WINDOWS[meal][1] if self.late_required else LATEST_MEAL_START.get(meal, lo)
                    stretch = min(stop, max(lo, latest_meal))
                    deadline = min(deadline, lo)
                # On a full day a buffer is squeezed only in the day's last gap (before dinner or after it),
                # an earlier gap leaving the chance of a later one with the full buffer, or in its second
                # try (`squeeze_anywhere`).
                squeeze = not self.full_day or self.squeeze_anywhere or meal in ("dinner", None)
                end = self._place_attraction(city, t, deadline - TRANSFER, stretch - TRANSFER, squeeze=squeeze)
                if end is None and self.full_day and self.attractions_today == 0 and meal != "breakfast":
                    end = self._place_attraction(city, t, stretch - TRANSFER, stretch - TRANSFER, must=True,
                                                 squeeze=squeeze)
                if end is not None:
                    t = end + TRANSFER
                    continue
            if meal is not None:
                t = max(t, lo)
                continue
            if ev:
                t = self._place_event(event, ev)  # type: ignore[arg-type]
                ev = None
                continue
            return t

    def _needs_early_dinner(self, city: str) -> bool:
        """Whether a wanted cuisine is served in `city` only at dinner: then lunch gives way, so that
        the dinner can start early (long buffered lunches would push it past the evening)."""
        rows = [r for r in self.restaurant_order.get(city, []) if r not in self.state.used_restaurants]
        for cuisine in self.state.cuisines_left:
            serving = [r for r in rows if serves(self.db, r, cuisine)]
            if serving and not any(serves_meal(self.db, r, m) for r in serving for m in ("breakfast", "lunch")):
                return True
        return False

    def _event_times(self, row: int) -> tuple[int, int]:
        cols = self.db.tables["events"].columns
        return parse_hhmm(cols["start_time"][row]), parse_hhmm(cols["end_time"][row])

    def _place_event(self, row: int, times: tuple[int, int]) -> int:
        cols = self.db.tables["events"].columns
        label = f"{cols['name'][row]}, {cols['city'][row]}"
        self.add(PlanItem(name=label, activity="event", start=times[0], end=times[1], venue_type="event"))
        self.out.events.append(label)
        return times[1] + TRANSFER

    def _place_meal(self, meal: Meal, city: str, lo: int, hi: int, stop: int) -> int | None:
        order = self.restaurant_order.get(city, [])
        wanted = list(self.state.cuisines_left)
        cost = self.db.tables["restaurants"].columns["avg_cost_inr"]
        candidates = [r for r in order if r not in self.state.used_restaurants
                      and (self.price_cap is None or float(cost[r]) <= self.price_cap
                           or any(serves(self.db, r, c) for c in wanted))]
        if wanted:
            # Restaurants covering more wanted cuisines first; among them, those open for fewer meals
            # (a bar open only for dinner must get the dinner slot), the cheapest first when the plan
            # must be frugal (a dinner-only Rs 6,000 restaurant does not cover a cuisine a Rs 400
            # one serves at lunch).
            first = sorted((r for r in candidates if any(serves(self.db, r, c) for c in wanted)),
                           key=lambda r: (-sum(serves(self.db, r, c) for c in wanted),
                                          float(cost[r]) if self.frugal else 0.0,
                                          sum(serves_meal(self.db, r, m) for m in MEAL_WINDOWS)))
            candidates = first + [r for r in candidates if r not in set(first)]
        # Among the first few that fit (a wanted cuisine before any other), the shortest booking:
        # a crowded lunch that runs long would push dinner out of its window.
        fitting: list[tuple[int, int, int, int, Venue]] = []
        for rank, r in enumerate(candidates):
            covers = bool(wanted) and any(serves(self.db, r, c) for c in wanted)
            if fitting and (len(fitting) >= self.meal_choices or (fitting[0][0] == 0 and not covers)):
                break
            v = venue(self.db, "restaurants", r)
            slot = self.timing.best_start(v, lo, hi, stop)
            if slot is not None:
                fitting.append((0 if covers else 1, slot[1] - slot[0], rank, slot[0], v))
        # On a full day's later try, a restaurant of a cuisine the query still needs keeps what buffer
        # fits (at least its base length) rather than give the meal to another restaurant: a hard
        # constraint outranks a full BAS buffer, as for a required attraction (a bar open only at
        # night, after a long lunch). A travel day does not: a later day may serve the cuisine cheaper.
        if wanted and self.squeeze_anywhere and not any(f[0] == 0 for f in fitting):
            for rank, r in enumerate(candidates):
                if not any(serves(self.db, r, c) for c in wanted):
                    continue
                v = venue(self.db, "restaurants", r)
                slot = self.timing.squeezed_start(v, lo, hi, stop)
                if slot is not None:
                    fitting = [(0, slot[1] - slot[0], rank, slot[0], v)]
                    break
        # A full day's later try: the meal keeps what buffer fits; with `lunch_first`, breakfast and
        # lunch keep none (just v), which leaves the 4 h gaps room for a dinner before an evening show.
        lean = self.lunch_first and meal != "dinner"
        if (not fitting or lean) and self.squeeze_anywhere:
            fitting = []
            for rank, r in enumerate(candidates):
                if len(fitting) >= self.meal_choices:
                    break
                v = venue(self.db, "restaurants", r)
                slot = self.timing.squeezed_start(v, lo, hi, stop)
                if slot is not None and lean:
                    slot = (slot[0], slot[0] + math.ceil(self.timing.base_minutes(v, slot[0])))
                if slot is not None:
                    fitting.append((1, slot[1] - slot[0], rank, slot[0], v))
        if fitting:
            _, length, _, start, v = min(fitting, key=lambda f: f[:3])
            r, end = v.row, start + length
            label = f"{v.name}, {v.city}"
            self.add(self.transit.annotate(PlanItem(name=label, activity="visit", start=start, end=end,
                                                    venue_type="restaurant", meal=meal), v.city, "restaurant", v.name))
            self.out.meals[meal] = label
            self.state.used_restaurants.add(r)
            self.state.cuisines_left = [c for c in self.state.cuisines_left if not serves(self.db, r, c)]
            self.last_meal_end = end
            return end
        return None

    def _place_attraction(self, city: str, t: int, latest_end: int, required_latest_end: int,
                          must: bool = False, squeeze: bool = True) -> int | None:
        """Book the first attraction that fits (one of a category the query still needs first);
        `must`: the day's only attraction (`full_day`), any venue may take the stretch up to
        `latest_end` at any length. `squeeze`: a required one, or the `must` one as a last resort,
        may keep less than its full buffer (`Timing.squeezed_start`)."""
        wanted = self.state.categories_left
        fee = self.db.tables["attractions"].columns["entry_fee_inr"]
        candidates = [a for a in self.attraction_order.get(city, []) if a not in self.state.used_attractions
                      and opens_on(self.db, "attractions", a, self.date)
                      and (self.price_cap is None or float(fee[a]) <= self.price_cap
                           or any(has_category(self.db, a, c) for c in wanted))]
        # a category the query asks for first (a hard constraint), then the city's top sight
        required = [a for a in candidates if any(has_category(self.db, a, c) for c in wanted)]
        required += [a for a in candidates if a in self.state.must_see and a not in required]
        tries = [(a, required_latest_end, True) for a in required]
        tries += [(a, latest_end, False) for a in candidates if a not in set(required)]
        for a, end_by, is_required in tries:
            if end_by <= t:
                continue
            v = venue(self.db, "attractions", a)
            lo = max(t, v.open_min)
            hi = end_by if is_required or must else lo + ATTRACTION_SLIDE
            slot = self.timing.best_start(v, lo, hi, end_by)
            if slot is None and is_required and squeeze:
                slot = self.timing.squeezed_start(v, lo, hi, end_by)
            if slot is None:
                continue
            start, end = slot
            if not (is_required or must) and end - start > MAX_VISIT_GAP_MIN:
                continue  # a long venue at a crowded hour would fill the day: a person picks another
            return self._book_attraction(v, a, start, end)
        if must and squeeze:  # nothing fits with its full buffer: the one that keeps most of it
            squeezed = []
            for a, end_by, _ in tries:
                v = venue(self.db, "attractions", a)
                slot = self.timing.squeezed_start(v, max(t, v.open_min), end_by, end_by)
                if slot is not None:  # ranked by the share of its full buffered length kept
                    squeezed.append((-(slot[1] - slot[0]) / self.timing.length(v, slot[0]), a, v, slot))
            if squeezed:
                _, a, v, (start, end) = min(squeezed, key=lambda s: s[:2])
                return self._book_attraction(v, a, start, end)
        return None

    def _book_attraction(self, v: Venue, a: int, start: int, end: int) -> int:
        """Add attraction `a` from `start` to `end`; returns the end."""
        label = f"{v.name}, {v.city}"
        self.add(self.transit.annotate(PlanItem(name=label, activity="visit", start=start, end=end,
                                                venue_type="attraction"), v.city, "attraction", v.name))
        self.out.attractions.append(label)
        self.state.used_attractions.add(a)
        self.state.categories_left = [c for c in self.state.categories_left if not has_category(self.db, a, c)]
        self.attractions_today += 1
        return end


class TransitLookup:
    """Nearest public transit of a venue, fetched through a callable (a traced tool call) and cached."""

    def __init__(self, fetch: Callable[[str, str, str], tuple[str, float] | None]) -> None:
        self.fetch = fetch
        self.cache: dict[tuple[str, str, str], tuple[str, float] | None] = {}

    def annotate(self, item: PlanItem, city: str, kind: str, name: str) -> PlanItem:
        key = (normalize(city), kind, normalize(name))
        if key not in self.cache:
            self.cache[key] = self.fetch(city, kind, name)
        found = self.cache[key]
        if found is None:
            return item
        return item.model_copy(update={"transit_stop": found[0], "transit_distance_m": found[1]})
