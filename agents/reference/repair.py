"""The reference planner's repair policy for the closed-loop env (UTP-Replan-v0, docs/REPLAN.md).

At each disruption report the policy repairs what is still ahead with the env's own tools (every
change is an `env.step` tool call, so the env's locking and fares apply; the plan, the query and
the database are only read, as the reference planner reads them when it plans):

1. **Missed connection** (`missed_departure`, or a leg ahead that the report marks impossible):
   rebook the next feasible service from where the traveller is to the leg's destination on the
   same date (`utp_env.queries.options.leg_options`, the planner's own candidate set, so the
   query's transport constraint holds; a cab leaves when the traveller is ready and is allowed
   only when the trip has no flight). It is looked up with the search tool of its mode, booked with
   `add_leg` (planned arrival buffered as the planner buffers, `buffer_multiplier`) and the missed
   leg removed with `remove_leg`. Among the services that depart after the traveller can board
   and arrive before the missed service's next-day run (what happens without a repair), the one
   with the earliest planned arrival whose fare keeps the trip within budget (trip cost so far
   plus the fare: the missed fare stays spent); if none does, the cheapest one whose fare is at
   most the missed fare (without a repair that fare is paid again anyway); else no rebooking.
2. **Re-time what is left of the day**: the items of the disrupted day that are not locked are
   laid out again from the time the traveller is free (the clock, or the rebooked leg's planned
   arrival): each keeps its booked length and starts when the traveller can be there (never
   before its planned start), within its venue's opening hours and at least four hours after the
   previous meal (the commonsense meal gap), before the next fixed commitment (a departure's
   boarding time, an event) or the end of the day (`LATEST_END`).
3. **Drop the lowest-value item when time runs out**: while the day does not fit, the item of
   least value is removed (`remove_item`): an optional attraction (lower rating first) before a
   meal, and never an item that covers a cuisine or attraction category the query requires and
   nothing else in the plan covers, a stay, a check-in/checkout, an arrival at a departure point or
   an event.
4. **Keep the budget**: nothing is booked that takes the trip's cost over the budget (rule 1);
   re-timing and dropping cost nothing.

Every repair is checked before it is sent (times, order, gaps) and each tool answer is read: a
refused call (`Error: ... locked`) stops the repair of that part, and the trip goes on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from utp_env.agents.reference.schedule import LATEST_END, TRANSFER
from utp_env.agents.reference.timing import venue
from utp_env.config import UncertaintyConfig
from utp_env.evaluation.context import build_context
from utp_env.evaluation.hard import trip_cost
from utp_env.itinerary import Day, Plan, PlanItem, TransportLeg
from utp_env.queries.options import LegOption, buffer_multiplier, has_category, leg_options, serves
from utp_env.query import Query
from utp_env.resolve import find_venue
from utp_env.tools.clock import MINUTES_PER_DAY, format_stamp
from utp_env.tools.database import Database
from utp_env.tools.schema import VENUE_TABLE, is_venue_kind

SEARCH_TOOL = {"flight": "search_flights", "train": "search_trains", "bus": "search_buses", "cab": "cab_route"}
NEVER_DROPPED = frozenset({"stay", "check-in", "checkout", "arrive", "event", "travel"})
REQUIRED_VALUE = 100.0  # an item that alone covers a required cuisine or category
MEAL_VALUE = 10.0  # a meal outranks any optional attraction (its value is 1 + rating / 10)


@dataclass
class Slot:
    """An item of the day being laid out again: where it is now, and its new times (None: dropped)."""

    index: int  # 1-based position in the day's items, as view_plan numbers it
    item: PlanItem
    start: int
    end: int
    value: float
    close: int | None  # the venue's closing time, minutes from the day's midnight (None: unknown)
    open_: int | None


class RepairPolicy:
    """The reference planner's repair policy (see the module docstring)."""

    def __init__(self, config: UncertaintyConfig, buffers: bool = True) -> None:
        self.config = config
        self.buffers = buffers
        self.calls = 0

    # ------------------------------------------------------------ entry point

    def repair(self, env: Any, observation: str, info: dict[str, Any]) -> None:
        """Repair the plan after the disruption of `info['disruption']` (nothing at the briefing)."""
        report = info.get("disruption")
        if not isinstance(report, dict):
            return
        base = env.unwrapped
        episode = base.episode
        if episode is None or episode.done:
            return
        day_no = int(report["day"])
        clock = int(report["minute"])  # minutes from the day's midnight
        ready = clock
        leg_index = self._missed_leg(episode.plan, report, day_no, clock)
        if leg_index is not None:
            arrival = self._rebook(env, episode, day_no, leg_index, clock)
            if arrival is None:
                return  # no rebooking: the trip goes on as the engine plays it (the next day's run)
            ready = arrival
        self._retime_day(env, base.episode, day_no, clock, ready)

    # ------------------------------------------------------------ missed connections

    @staticmethod
    def _missed_leg(plan: Plan, report: dict[str, Any], day_no: int, clock: int) -> int | None:
        """The 1-based index of the leg of `day_no` that the report says is missed or impossible and
        that departs after the clock (still ahead, so it may be replaced), else None."""
        if day_no > len(plan.days):
            return None
        day = plan.days[day_no - 1]
        names: list[tuple[str, str | None]] = []
        cause = report.get("cause") or {}
        if report.get("kind") == "missed_departure" and cause.get("mode"):
            names.append((str(cause.get("mode")), cause.get("number")))
        for affected in report.get("affected") or []:
            if (affected.get("what") == "leg" and affected.get("status") == "impossible"
                    and affected.get("day") == day_no):
                parts = str(affected.get("name", "")).split()
                if parts:
                    names.append((parts[0], parts[1] if len(parts) > 2 else None))
        for mode, number in names:
            for i, leg in enumerate(day.transport, 1):
                if leg.mode == mode and (leg.number or None) == (number or None) and leg.dep > clock:
                    return i
        return None

    def _rebook(self, env: Any, episode: Any, day_no: int, leg_index: int, clock: int) -> int | None:
        """Book the best replacement of leg `leg_index` of `day_no` (rule 1) and remove the missed
        leg; returns the new leg's planned arrival (minutes from the day's midnight) or None."""
        db: Database = episode.db
        query: Query = episode.query
        plan: Plan = episode.plan
        day = plan.days[day_no - 1]
        missed = day.transport[leg_index - 1]
        date = day.date or query.dates[day_no - 1]
        multiplier = buffer_multiplier(self.config, query.risk_profile) if self.buffers else 0.0
        margins = self.config.simulation.boarding_margin_min
        next_day_arrival = missed.arr + MINUTES_PER_DAY  # without a repair: the same service a day later
        self._look(env, missed.mode, missed.origin, missed.destination, date)
        options = [o for o in leg_options(db, missed.origin, missed.destination, date, query.people_number,
                                          query.local_constraint, first=True, last=True, multiplier=multiplier)
                   if not (o.mode == missed.mode and o.number == missed.number)]
        has_flight = any(leg.mode == "flight" for d in plan.days for leg in d.transport
                         if not (d.day == day_no and leg is missed))
        candidates: list[tuple[int, int, float, LegOption]] = []  # (planned arrival, dep, fare, option)
        for option in options:
            if option.mode == "cab":
                if has_flight:
                    continue  # an intercity cab and a flight in one trip conflict (commonsense)
                dep = clock + TRANSFER
                option = LegOption("cab", None, option.origin, option.destination, None, dep,
                                   dep + math.ceil(option.hist_duration), option.fare, option.expected_delay,
                                   option.hist_duration)
            elif option.dep - float(margins.get(option.mode, 0.0)) < clock + TRANSFER:
                continue  # cannot reach its departure point in time
            planned = option.planned_arrival(multiplier)
            if planned >= next_day_arrival:
                continue
            candidates.append((planned, option.dep, option.fare, option))
        if not candidates:
            return None
        for mode in sorted({c[3].mode for c in candidates}):
            if mode != missed.mode:
                self._look(env, mode, missed.origin, missed.destination, date)
        spent = trip_cost(build_context(plan, query, db)).total  # the missed fare included: it stays spent
        affordable = [c for c in candidates if spent + c[2] <= query.budget_inr]
        if affordable:
            chosen = min(affordable, key=lambda c: (c[0], c[2], c[1]))[3]
        else:
            cheap = [c for c in candidates if c[2] <= self._fare(db, missed, query, date, multiplier)]
            if not cheap:
                return None
            chosen = min(cheap, key=lambda c: (c[2], c[0], c[1]))[3]
        planned = chosen.planned_arrival(multiplier)
        args: dict[str, Any] = {"day": day_no, "mode": chosen.mode, "origin": chosen.origin,
                                "destination": chosen.destination, "planned_arrival": format_stamp(planned)}
        if chosen.mode == "cab":
            args["departure"] = format_stamp(chosen.dep)
        else:
            args["number"] = chosen.number
        # Remove the missed leg first: the day's cities are rebuilt from its legs, and the new leg
        # then chains from the same origin.
        if not self._call(env, "remove_leg", {"day": day_no, "index": leg_index}):
            return None
        if not self._call(env, "add_leg", args):
            self._call(env, "add_leg", self._leg_args(day_no, missed))  # put the missed leg back
            return None
        return planned

    @staticmethod
    def _leg_args(day_no: int, leg: TransportLeg) -> dict[str, Any]:
        args: dict[str, Any] = {"day": day_no, "mode": leg.mode, "origin": leg.origin,
                                "destination": leg.destination, "planned_arrival": format_stamp(leg.planned_arrival)}
        if leg.number:
            args["number"] = leg.number
        else:
            args["departure"] = format_stamp(leg.dep)
        return args

    @staticmethod
    def _fare(db: Database, leg: TransportLeg, query: Query, date: str, multiplier: float) -> float:
        """The party fare of `leg` (the planner's candidate set; 0 when it is not found)."""
        for option in leg_options(db, leg.origin, leg.destination, date, query.people_number,
                                  query.local_constraint, first=True, last=True, multiplier=multiplier):
            if option.mode == leg.mode and (option.number or None) == (leg.number or None):
                return option.fare
        return 0.0

    def _look(self, env: Any, mode: str, origin: str, destination: str, date: str) -> None:
        """Consult the lookup tool of `mode` (so the trace shows what the repair was based on)."""
        args = {"origin": origin, "destination": destination}
        if mode != "cab":
            args["date"] = date
        self._call(env, SEARCH_TOOL[mode], args)

    # ------------------------------------------------------------ re-timing the day

    def _retime_day(self, env: Any, episode: Any, day_no: int, clock: int, ready: int) -> None:
        """Lay out the unlocked items of `day_no` again from `ready` (rules 2 and 3)."""
        plan: Plan = episode.plan
        if day_no > len(plan.days):
            return
        day = plan.days[day_no - 1]
        original = self._slots(episode, day, clock)
        slots = list(original)
        if not slots:
            return
        anchors = self._anchors(day, clock)
        while True:
            laid = self._lay_out(slots, ready, anchors, self._last_meal_end(day, clock))
            if laid is not None:
                break
            droppable = [s for s in slots if s.value < REQUIRED_VALUE]
            if not droppable:
                return  # nothing may give way: the trip goes on as it is
            slots.remove(min(droppable, key=lambda s: (s.value, -s.start)))
        # Remove the dropped items (highest position first, so the others keep their numbers) ...
        for index in sorted((s.index for s in original if s not in slots), reverse=True):
            if not self._call(env, "remove_item", {"day": day_no, "index": index}):
                return
        # ... then move each kept item whose times changed, finding it by identity in the current day.
        for slot, (start, end) in zip(slots, laid, strict=True):
            if (start, end) == (slot.item.start, slot.item.end):
                continue
            current = episode.plan.days[day_no - 1].items
            position = next((i for i, it in enumerate(current, 1) if it == slot.item), None)
            if position is None:
                return
            if not self._call(env, "move_item", {"day": day_no, "index": position, "start": format_stamp(start),
                                                 "end": format_stamp(end)}):
                return

    def _slots(self, episode: Any, day: Day, clock: int) -> list[Slot]:
        """The day's visits (attractions, meals) that start after the clock, in start order, with
        their value and opening hours."""
        db: Database = episode.db
        query: Query = episode.query
        coverage = _coverage(episode.plan, query, db)
        slots = []
        for i, item in enumerate(day.items, 1):
            if item.start is None or item.end is None or item.start <= clock:
                continue
            if item.activity != "visit" or item.venue_type not in ("attraction", "restaurant"):
                continue
            ref = find_venue(db, item.name, day.cities, tables=(VENUE_TABLE[item.venue_type],), date=day.date) \
                if is_venue_kind(item.venue_type) else None
            opening = closing = None
            value = 1.0
            if ref is not None:
                v = venue(db, ref.table, ref.row)
                opening, closing = v.open_min, v.close_min
                if item.venue_type == "attraction":
                    value += float(db.tables["attractions"].columns["rating"][ref.row]) / 10.0
                    if any(coverage.get(("category", c)) == {item.name} for c in
                           query.local_constraint.attraction_categories if has_category(db, ref.row, c)):
                        value = REQUIRED_VALUE
                else:
                    value = MEAL_VALUE
                    if any(coverage.get(("cuisine", c)) == {item.name} for c in query.local_constraint.cuisine
                           if serves(db, ref.row, c)):
                        value = REQUIRED_VALUE
            slots.append(Slot(i, item, item.start, item.end, value, closing, opening))
        return slots

    @staticmethod
    def _anchors(day: Day, clock: int) -> list[int]:
        """The latest times the day's laid-out visits must end by, in order: each fixed commitment
        after the clock (an arrival at a departure point, an event, a check-in or checkout), less
        the transfer to it; the end of the day last."""
        out = []
        for item in day.items:
            if item.start is None or item.start <= clock:
                continue
            if item.activity in ("arrive", "event", "check-in", "checkout"):
                out.append(item.start - TRANSFER)
        for leg in day.transport:
            if leg.dep > clock:
                out.append(leg.dep - TRANSFER)
        return [*sorted(out), LATEST_END]

    @staticmethod
    def _last_meal_end(day: Day, clock: int) -> int | None:
        """When the last meal at or before the clock ends (for the four-hour meal gap)."""
        ends = [item.end for item in day.items if item.meal is not None and item.start is not None
                and item.end is not None and item.start <= clock]
        return max(ends, default=None)

    def _lay_out(self, slots: list[Slot], ready: int, anchors: list[int], meal_end: int | None,
                 ) -> list[tuple[int, int]] | None:
        """New (start, end) of each slot, in order, from `ready`; None when one does not fit (it would
        end after the next anchor that follows its planned start, or after its venue closes)."""
        gap = int(self.config.min_meal_gap_minutes)
        t = ready
        out = []
        for slot in slots:
            length = slot.end - slot.start
            start = max(slot.start, t)
            if slot.open_ is not None:
                start = max(start, slot.open_)
            if slot.item.meal is not None and meal_end is not None:
                start = max(start, meal_end + gap)
            end = start + length
            bound = next((a for a in anchors if a >= slot.start), LATEST_END)
            if end > bound or (slot.close is not None and end > slot.close):
                return None
            out.append((start, end))
            t = end + TRANSFER
            if slot.item.meal is not None:
                meal_end = end
        return out

    # ------------------------------------------------------------ acting

    def _call(self, env: Any, tool: str, args: dict[str, Any]) -> bool:
        """One tool call through `env.step`; whether it succeeded (False also once the episode ended)."""
        if env.unwrapped.episode is None or env.unwrapped.episode.done:
            return False
        _, _, terminated, truncated, info = env.step({"tool": tool, "args": args})
        self.calls += 1
        calls = info.get("calls") or [{}]
        return bool(calls[0].get("ok")) and not (terminated or truncated)


def _coverage(plan: Plan, query: Query, db: Database) -> dict[tuple[str, str], set[str]]:
    """For each required cuisine and attraction category, the names of the plan's venues that cover it."""
    lc = query.local_constraint
    out: dict[tuple[str, str], set[str]] = {("cuisine", c): set() for c in lc.cuisine}
    out.update({("category", c): set() for c in lc.attraction_categories})
    for day in plan.days:
        for item in day.items:
            if item.activity != "visit" or item.venue_type not in ("attraction", "restaurant"):
                continue
            ref = find_venue(db, item.name, day.cities, tables=(VENUE_TABLE[item.venue_type],), date=day.date)
            if ref is None:
                continue
            if item.venue_type == "restaurant":
                for c in lc.cuisine:
                    if serves(db, ref.row, c):
                        out[("cuisine", c)].add(item.name)
            else:
                for c in lc.attraction_categories:
                    if has_category(db, ref.row, c):
                        out[("category", c)].add(item.name)
    return out

