"""The reference planner's repair policy for the closed-loop env (UTP-Replan-v0, docs/REPLAN.md).

At each disruption report the policy repairs what is still ahead with the env's own tools (every
change is an `env.step` tool call, so the env's locking and fares apply; the plan, the query and
the database are only read, as the reference planner reads them when it plans):

1. **Missed connection** (a `missed_departure` pause, or a departure ahead that rule 3 cannot save):
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
2. **Re-time what is left of the day**: the steps of the day that have not happened are played on
   as the engine plays them (docs/SIMULATION.md: an item starts when both its planned start and the
   traveller have come, a visit keeps at least its base length, a departure is missed when the
   traveller reaches its point after boarding closes), from the clock with no further delay. A
   visit the engine would lose (reached after its planned end) is moved to when the traveller can
   be there, keeping its booked length as far as the room before the next departure or event, its
   venue's closing and the end of the day (`LATEST_END`) allow, and at least its base length; a meal
   also starts four hours after the previous meal ends (the commonsense meal gap); what a moved
   visit now overlaps (a later visit, the night's stay) starts when it ends, since the trip plays
   steps by start time. A meal that cannot be kept at its restaurant moves to another restaurant of
   the city open then, not yet in the trip and no dearer (`_swap_for`; not a meal that alone covers
   a required cuisine). A visit still reached before its planned end is left where it is: the
   engine then shortens it into its buffer, which keeps more of the day than moving it would.
3. **Drop the lowest-value item when time runs out**: when a departure would be missed (and the
   traveller could still make it without the visits before it) or an event reached more than
   `EVENT_SLACK_MIN` late, the visit of least value since the last commitment is removed
   (`remove_item`) and the day laid out again: an optional attraction (lower rating first) before a
   meal, never an item that alone covers a cuisine or attraction category the query requires, a
   stay, a check-in/checkout, an arrival at a departure point or an event. A departure that no drop
   can save goes to rule 1. The day of the pause is repaired, and every later day whose departure
   the report marks as missed.
4. **Keep the budget**: nothing is booked that takes the trip's cost over the budget (rule 1);
   re-timing and dropping cost nothing.

Every repair is checked before it is sent (times, order, gaps) and each tool answer is read: a
refused call (`Error: ... locked`) stops the repair of that part, and the trip goes on.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from utp_env.agents.reference.schedule import LATEST_END, TRANSFER
from utp_env.agents.reference.timing import Timing, venue
from utp_env.config import UncertaintyConfig
from utp_env.evaluation.context import build_context
from utp_env.evaluation.hard import trip_cost
from utp_env.itinerary import Day, Plan, PlanItem, TransportLeg
from utp_env.queries.options import (
    LegOption,
    buffer_multiplier,
    has_category,
    leg_options,
    restaurants_by_cost,
    serves,
)
from utp_env.query import Query
from utp_env.resolve import VenueName, find_venue
from utp_env.simulation.compile import is_journey_item
from utp_env.tools.clock import MINUTES_PER_DAY, format_stamp
from utp_env.tools.database import Database, normalize
from utp_env.tools.lookup.transport import SEARCH_TOOL_OF_MODE, cab_route
from utp_env.tools.schema import VENUE_TABLE

SEARCH_TOOL = SEARCH_TOOL_OF_MODE | {"cab": cab_route.__name__}
REQUIRED_VALUE = 100.0  # an item that alone covers a required cuisine or category
EVENT_VALUE = 1000.0  # a booked event outranks every visit
EVENT_SLACK_MIN = 15  # an event reached later than this (its lateness costs punctuality) makes a visit give way
MEAL_VALUE = 10.0  # a meal outranks any optional attraction (its value is 1 + rating / 10)
MAX_REBOOKINGS = 2  # per disruption


@dataclass(eq=False)
class Step:
    """A leg or item of the day still ahead, as the engine plays it: `kind` leg, visit (keeps at
    least its base length), fixed (check-in, checkout, arrive: keeps its length) or elastic (stay,
    event: absorbs lateness); planned start and end (minutes from the day's midnight), its 1-based
    position in the day's legs or items, its value (what dropping it costs) and opening hours."""

    kind: str
    index: int
    start: int
    end: int
    leg: TransportLeg | None = None
    item: PlanItem | None = None
    base: float = 0.0
    value: float = 1.0
    open_: int | None = None
    close: int | None = None
    city: str | None = None
    row: int | None = None  # the venue's row in its table


Swap = Callable[[Step, int, int, set[str]], "tuple[str, int, int] | None"]
"""Another restaurant for a meal that cannot be kept: (step, earliest start, latest end, names
already taken by this layout) -> (name, start, end), or None."""


@dataclass
class Layout:
    """What laying the day out again found: the moves (step, new start and end), a visit to drop
    (then lay out again), or a departure that will be missed whatever is dropped."""

    moves: list[tuple[Step, tuple[int, int]]]
    swaps: list[tuple[Step, str, int, int]] = field(default_factory=list)
    drop: Step | None = None
    missed: TransportLeg | None = None
    ready: int = 0  # when the traveller reaches the missed departure's point (minutes of the day)


def _lowest(segment: list[Step], above: float) -> Step | None:
    """The visit of lowest value in `segment` worth less than `above` and not required, else None
    (ties: the later one, which has had less of its time yet)."""
    droppable = [s for s in segment if s.value < min(above, REQUIRED_VALUE)]
    return min(droppable, key=lambda s: (s.value, -s.start)) if droppable else None


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
        today = int(report["day"])
        # The day of the pause, then each later day with a departure the report says will be missed.
        later = sorted({int(a["day"]) for a in report.get("affected") or []
                        if a.get("what") == "leg" and a.get("status") == "impossible" and int(a["day"]) > today})
        for day_no in (today, *later):
            # minutes from the day's midnight; the report rounds the clock to the minute, so nothing is
            # placed before the next whole minute (the env refuses a time in the past)
            clock = int(report["minute"]) + 1 if day_no == today else 0
            for _ in range(MAX_REBOOKINGS + 1):
                found = self._retime_day(env, episode, report if day_no == today else {}, day_no, clock)
                if found is None or episode.done:
                    break
                missed, ready = found
                transport = episode.plan.days[day_no - 1].transport
                index = next((i for i, leg in enumerate(transport, 1) if leg == missed), None)
                if index is None or not self._rebook(env, episode, day_no, index, max(ready, clock)):
                    break

    # ------------------------------------------------------------ missed connections

    def _rebook(self, env: Any, episode: Any, day_no: int, leg_index: int, ready: int) -> bool:
        """Book the best replacement of leg `leg_index` of `day_no` (rule 1), the traveller at the
        departure point from `ready` (minutes of the day), and remove the missed leg; whether it was done."""
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
                dep = ready + TRANSFER
                option = LegOption("cab", None, option.origin, option.destination, None, dep,
                                   dep + math.ceil(option.hist_duration), option.fare, option.expected_delay,
                                   option.hist_duration)
            elif option.dep - float(margins.get(option.mode, 0.0)) < ready + TRANSFER:
                continue  # cannot reach its departure point in time
            planned = option.planned_arrival(multiplier)
            if planned >= next_day_arrival:
                continue
            candidates.append((planned, option.dep, option.fare, option))
        if not candidates:
            return False
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
                return False
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
            return False
        if not self._call(env, "add_leg", args):
            self._call(env, "add_leg", self._leg_args(day_no, missed))  # put the missed leg back
            return False
        return True

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

    def _retime_day(self, env: Any, episode: Any, report: dict[str, Any], day_no: int, clock: int,
                    ) -> tuple[TransportLeg, int] | None:
        """Rules 2 and 3 on the steps of `day_no` still ahead of `clock`; returns a leg ahead that will
        be missed even so and when the traveller reaches its departure point (for `_rebook`), else None."""
        plan: Plan = episode.plan
        if day_no > len(plan.days):
            return None
        day = plan.days[day_no - 1]
        steps = self._pending(episode, day, report, clock)
        meal_end = self._last_meal_end(day, steps, report, clock)
        swap = self._swap_for(episode)
        dropped: list[Step] = []
        while True:
            laid = self._lay_out(steps, clock, meal_end, swap)
            if laid.drop is None:
                break
            steps.remove(laid.drop)
            dropped.append(laid.drop)
        # Remove the dropped items (highest position first, so the others keep their numbers) ...
        for index in sorted((s.index for s in dropped), reverse=True):
            if not self._call(env, "remove_item", {"day": day_no, "index": index}):
                return None
        # ... then put each meal that cannot be kept at another restaurant ...
        for step, name, start, end in laid.swaps:
            current = episode.plan.days[day_no - 1].items
            position = next((i for i, it in enumerate(current, 1) if it == step.item), None)
            if position is None or not self._call(env, "remove_item", {"day": day_no, "index": position}):
                return None
            if not self._call(env, "add_item", {"day": day_no, "name": name, "activity": "visit", "kind": "restaurant",
                                                "meal": step.item.meal if step.item else None,
                                                "start": format_stamp(start), "end": format_stamp(end)}):
                return None
        # ... then move each item whose times changed, found by its content in the current day.
        for step, (start, end) in laid.moves:
            current = episode.plan.days[day_no - 1].items
            position = next((i for i, it in enumerate(current, 1) if it == step.item), None)
            if position is None or not self._call(env, "move_item", {
                    "day": day_no, "index": position, "start": format_stamp(start), "end": format_stamp(end)}):
                return None
        return None if laid.missed is None else (laid.missed, laid.ready)

    def _pending(self, episode: Any, day: Day, report: dict[str, Any], clock: int) -> list[Step]:
        """The day's legs and items that have not happened yet, in the order the trip plays them
        (`utp_env/simulation/compile.py`: by start, a leg before an item starting at the same time):
        everything after the step that caused the pause (the cause itself too when it is a missed
        departure), or, when the cause is not on this day, everything that ends after the clock."""
        db: Database = episode.db
        query: Query = episode.query
        timing = Timing(db, self.config, query.risk_profile, self.buffers)
        coverage = _coverage(episode.plan, query, db)
        order: list[tuple[tuple[int, int, int], Step]] = []
        for i, leg in enumerate(day.transport, 1):
            order.append(((leg.dep, 0, i), Step("leg", i, leg.dep, leg.planned_arrival, leg=leg)))
        for i, item in enumerate(day.items, 1):
            if item.start is None or item.end is None or is_journey_item(item, day):
                continue
            order.append(((item.start, 1, i), self._item_step(db, timing, coverage, query, day, i, item)))
        order.sort(key=lambda pair: pair[0])
        steps = [step for _, step in order]
        cause = report.get("cause") or {}
        kind = report.get("kind")
        at = None
        for k, step in enumerate(steps):
            if kind in ("late_arrival", "missed_departure") and step.leg is not None:
                if step.leg.mode == cause.get("mode") and (step.leg.number or None) == (cause.get("number") or None):
                    at = k
            elif kind == "overrun" and step.item is not None and step.item.name == cause.get("name") \
                    and step.start <= clock:
                at = k
        if at is None:
            return [s for s in steps if s.end > clock]
        return steps[at:] if kind == "missed_departure" else steps[at + 1:]

    def _item_step(self, db: Database, timing: Timing, coverage: dict[tuple[str, str], set[str]], query: Query,
                   day: Day, index: int, item: PlanItem) -> Step:
        """An item as the engine plays it (its kind), with its base length, opening hours and value."""
        assert item.start is not None and item.end is not None
        if item.activity == "visit" and item.venue_type in ("attraction", "restaurant"):
            step = Step("visit", index, item.start, item.end, item=item, base=float(item.end - item.start))
            ref = find_venue(db, VenueName.of(item.name), day.cities, tables=(VENUE_TABLE[item.venue_type],),
                             date=day.date)
            if ref is None:
                return step
            v = venue(db, ref.table, ref.row)
            step.open_, step.close, step.city, step.row = v.open_min, v.close_min, ref.city, ref.row
            step.base = min(step.base, timing.base_minutes(v, item.start))
            lc = query.local_constraint
            if item.venue_type == "attraction":
                step.value = 1.0 + float(db.tables["attractions"].columns["rating"][ref.row]) / 10.0
                needed = [c for c in lc.attraction_categories if has_category(db, ref.row, c)]
                covered = [coverage.get(("category", c)) == {item.name} for c in needed]
            else:
                step.value = MEAL_VALUE
                needed = [c for c in lc.cuisine if serves(db, ref.row, c)]
                covered = [coverage.get(("cuisine", c)) == {item.name} for c in needed]
            if any(covered):
                step.value = REQUIRED_VALUE
            return step
        kind = "elastic" if item.activity in ("stay", "rest", "event") or item.venue_type == "event" else "fixed"
        return Step(kind, index, item.start, item.end, item=item, value=EVENT_VALUE if item.activity == "event"
                    else math.inf)

    @staticmethod
    def _last_meal_end(day: Day, pending: list[Step], report: dict[str, Any], clock: int) -> int | None:
        """When the day's last meal that has happened (is not `pending`) ended: its planned end, or
        the clock when that meal is the visit whose overrun caused the pause."""
        cause = report.get("cause") or {}
        ahead = {id(step.item) for step in pending if step.item is not None}
        out = None
        for item in day.items:
            if item.meal is None or item.start is None or item.end is None or id(item) in ahead:
                continue
            end = clock if report.get("kind") == "overrun" and item.name == cause.get("name") else item.end
            out = max(out or end, end)
        return out

    def _swap_for(self, episode: Any) -> Swap:
        """The restaurant a meal that cannot be kept moves to (rule 2): in the same city, not yet in
        the trip (the commonsense check of diverse restaurants), no dearer than the one it replaces
        (so the budget holds), open for the base length of the meal from the earliest start; booked
        as the planner books it (base plus the risk profile's buffer) as far as the room allows. A
        meal that alone covers a required cuisine is not swapped (the substitute might not serve it)."""
        db: Database = episode.db
        query: Query = episode.query
        timing = Timing(db, self.config, query.risk_profile, self.buffers)
        cols = db.tables["restaurants"].columns
        used = {key for day in episode.plan.days for item in day.items if item.venue_type == "restaurant"
                for key in (normalize(item.name), VenueName.of(item.name).key)}  # 'Name' or 'Name, City'

        def swap(step: Step, earliest: int, latest: int, taken: set[str]) -> tuple[str, int, int] | None:
            if step.item is None or step.item.meal is None or step.city is None or step.row is None \
                    or step.value >= REQUIRED_VALUE:
                return None
            price = float(cols["avg_cost_inr"][step.row])
            for row in restaurants_by_cost(db, step.city):
                if float(cols["avg_cost_inr"][row]) > price:
                    break
                name = str(cols["name"][row])
                if normalize(name) in used or normalize(name) in taken:
                    continue
                v = venue(db, "restaurants", row)
                start = max(earliest, v.open_min)
                end = min(start + timing.length(v, start), latest, v.close_min)
                if end - start >= timing.base_minutes(v, start):
                    return name, start, end
            return None

        return swap

    def _lay_out(self, steps: list[Step], clock: int, meal_end: int | None, swap: Swap | None = None) -> Layout:
        """Play the steps ahead as the engine would with no further delay (docs/SIMULATION.md), from
        the traveller free at `clock`; a visit that would be lost (reached after its planned end) is
        moved to when the traveller can be there, keeping its booked length as far as the room before
        the next fixed commitment (a departure, an event), its venue's closing and the end of the day
        allow and at least its base length; a meal also starts four hours after the previous meal ends.
        When a departure would be missed or an event reached more than `EVENT_SLACK_MIN` late, the
        lowest-value visit since the last commitment is to be dropped (`Layout.drop`, then the caller
        lays out again); a departure that no drop can save (the traveller would reach its point too
        late even without the visits before it) is `Layout.missed`, with `Layout.ready`."""
        gap = int(self.config.min_meal_gap_minutes)
        margins = self.config.simulation.boarding_margin_min
        t = reach = float(clock)
        floor = float(clock)  # the earliest the traveller could reach the next departure point, whatever is dropped
        moves: list[tuple[Step, tuple[int, int]]] = []
        swaps: list[tuple[Step, str, int, int]] = []
        segment: list[Step] = []  # visits kept since the last commitment: what may give way
        for k, step in enumerate(steps):
            if step.kind == "leg":
                assert step.leg is not None
                latest = step.start - float(margins.get(step.leg.mode, 0.0))
                if step.leg.mode != "cab" and reach > latest:
                    victim = _lowest(segment, math.inf) if floor <= latest else None
                    return Layout(moves, swaps, drop=victim, missed=step.leg if victim is None else None,
                                  ready=math.ceil(reach))
                depart = max(float(step.start), reach) if step.leg.mode == "cab" else float(step.start)
                t = reach = floor = depart + (step.end - step.start)
                segment = []
                continue
            if step.kind != "visit":
                s = max(float(step.start), t)
                if step.kind == "elastic":
                    if step.value < math.inf and s > step.start + EVENT_SLACK_MIN:  # an event late or lost
                        victim = _lowest(segment, step.value)
                        if victim is not None:
                            return Layout(moves, swaps, drop=victim)
                    e = max(float(step.end), s)
                    segment = [] if step.value < math.inf else segment
                    if (moves or swaps) and step.value == math.inf and step.start < s < step.end:
                        # a stay after a visit moved later: it starts when the visit ends (else the trip
                        # would play the stay first, by start time, and lose the visit)
                        moves.append((step, (math.ceil(s), step.end)))
                else:
                    e = max(float(step.end), s + (step.end - step.start))
                    if (moves or swaps) and s > step.start:  # keep it after a visit moved before it (below)
                        moves.append((step, (math.ceil(s), math.ceil(s) + step.end - step.start)))
                t = e
                reach = s if step.item is not None and step.item.activity == "arrive" else e
                if step.item is not None and step.item.activity == "arrive":
                    floor = max(floor, float(step.start))
                continue
            s = max(float(step.start), t)
            wanted = s
            if step.item is not None and step.item.meal is not None and meal_end is not None:
                wanted = max(wanted, float(meal_end + gap))
            if s < step.end and wanted == s:  # played on time or late but not lost: the engine keeps it
                if (moves or swaps) and s > step.start:
                    # The trip plays steps by start time: a visit moved later than this one's planned
                    # start would come first. Starting this one when the traveller gets there keeps the
                    # order (and changes nothing else: the engine would start it then anyway).
                    start = math.ceil(s)
                    moves.append((step, (start, max(step.end, start + math.ceil(step.base)))))
                t = reach = max(float(step.end), s + step.base)
                segment.append(step)
                if step.item is not None and step.item.meal is not None:
                    meal_end = int(max(step.end, s + step.base))
                continue
            start = math.ceil(max(wanted, float(step.open_ if step.open_ is not None else 0)))
            bound = min([self._bound(steps[k + 1:]), *([step.close] if step.close is not None else [])])
            length = min(step.end - step.start, bound - start)
            if length >= step.base and start >= clock:
                moves.append((step, (start, start + length)))
                t = reach = float(start + length)
                segment.append(step)
                if step.item is not None and step.item.meal is not None:
                    meal_end = start + length
                continue
            other = swap(step, start, self._bound(steps[k + 1:]), {n for _, n, _, _ in swaps}) if swap else None
            if other is not None and other[1] >= clock:
                swaps.append((step, *other))
                t = reach = float(other[2])
                meal_end = other[2]
                continue
            victim = _lowest(segment, step.value)
            if victim is not None:
                return Layout(moves, swaps, drop=victim)
            if s < step.end:  # the meal gap cannot be kept: the engine plays it where it is
                t = reach = max(float(step.end), s + step.base)
                segment.append(step)
            # else lost: it takes no time
        return Layout(moves, swaps)

    @staticmethod
    def _bound(rest: list[Step]) -> int:
        """When a visit moved now must end: before the next departure (its arrival at the departure
        point, or the leg) or event, less a transfer; else the end of the day."""
        for step in rest:
            if step.kind == "leg" or (step.item is not None and step.item.activity in ("arrive", "event")):
                return step.start - TRANSFER
        return LATEST_END

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
            ref = find_venue(db, VenueName.of(item.name), day.cities, tables=(VENUE_TABLE[item.venue_type],),
                             date=day.date)
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

