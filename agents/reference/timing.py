"""How long the reference planner books each visit, and which start times it prefers.

An attraction of base length v (the table's visit duration) is booked for v + low * v * Cf, where
low is the low end of the query's risk range and Cf the congestion factor of the crowd tier at the
start hour: the shortest buffer BAS accepts, so a visit lasts what a person would book for that
risk, not the most the range allows. A meal is booked for the meal a traveller takes
(`TRAVELLER_MEAL_MINUTES`: breakfast 30 min, lunch 45, dinner 60) plus the same buffer BAS asks of
the meal's v (Table 9: 50 / 60 / 75 min by start hour), low * v * Cf: a tolerant breakfast at a quiet
hour lasts 30 + 25 = 55 min, not the 75 of v plus buffer. BAS measures a meal's buffer from its v,
so it sees v - m less buffer than the planner added; docs/PAPER.md ("BAS and a traveller's meal")
says why the traveller's meal is kept. Without buffers the booking is exactly the base (v, or the
traveller's meal). Start times are ranked by the visit's CATS score (quiet hours good, peak windows
bad). The formulas come from `utp_env.evaluation.uncertainty`, so planner and evaluator cannot
disagree on v, Cf or the risk range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from utp_env.config import UncertaintyConfig
from utp_env.evaluation import uncertainty as un
from utp_env.evaluation.context import CrowdProfile, eval_index
from utp_env.queries.options import buffer_multiplier
from utp_env.tools.clock import opening_hours
from utp_env.tools.database import Database

LATENESS_COST = 0.004  # crowd-score points given up per minute a visit starts later
# The meal a traveller in India takes, in minutes, without a buffer: breakfast at the hotel or a
# tiffin room half an hour, a thali lunch 45 minutes, a sit-down dinner an hour (a stated rule).
TRAVELLER_MEAL_MINUTES: dict[str, float] = {"breakfast": 30.0, "lunch": 45.0, "dinner": 60.0}


@dataclass(frozen=True)
class Venue:
    """An attraction or restaurant row with what timing needs: opening hours and crowd profile."""

    table: str  # attractions | restaurants
    row: int
    name: str
    city: str
    open_min: int
    close_min: int  # may exceed 1440 when the venue closes after midnight
    profile: CrowdProfile | None


def venue(db: Database, table: str, row: int) -> Venue:
    cols = db.tables[table].columns
    opening, closing = opening_hours(cols["open_time"][row], cols["close_time"][row])
    kind = "attraction" if table == "attractions" else "restaurant"
    crowd = db.crowd_row(cols["city"][row], kind, cols["name"][row])
    profile = eval_index(db).crowd(crowd) if crowd is not None else None
    return Venue(table, row, cols["name"][row], cols["city"][row], opening, closing, profile)


class Timing:
    """Visit lengths and start-time preferences for one query."""

    def __init__(self, db: Database, config: UncertaintyConfig, risk_profile: str, buffers: bool) -> None:
        self.db, self.config, self.buffers = db, config, buffers
        self.multiplier = buffer_multiplier(config, risk_profile) if buffers else 0.0

    def bas_minutes(self, v: Venue, start: int) -> float:
        """v of BAS: the attraction's visit duration, the meal's base minutes by start hour (Table 9)."""
        return un.base_visit_minutes(self.db, v.table, v.row, start, self.config.restaurant_meals)

    def base_minutes(self, v: Venue, start: int) -> float:
        """The visit without a buffer, the shortest it is booked: an attraction's v, a meal's
        `TRAVELLER_MEAL_MINUTES` (v when no meal's hours hold the start)."""
        if v.table == "restaurants":
            meal = un.meal_of_hour(start // 60, self.config.restaurant_meals)
            if meal in TRAVELLER_MEAL_MINUTES:
                return TRAVELLER_MEAL_MINUTES[meal]
        return self.bas_minutes(v, start)

    def length(self, v: Venue, start: int) -> int:
        """Minutes to book for a visit starting at `start`: its base plus the buffer BAS asks of its
        v, low * v * Cf (just the base without buffers)."""
        cf, _ = un.congestion(v.profile, start, self.config.congestion_factor)
        buffer = self.multiplier * self.bas_minutes(v, start) * cf
        return math.ceil(self.base_minutes(v, start) + buffer - 1e-9)

    def crowd_score(self, v: Venue, start: int, end: int) -> float:
        """CATS score of the visit (1.0 without crowd data)."""
        if v.profile is None:
            return 1.0
        scored = un.crowd_timing_score(v.profile, start, end, self.config.crowd_intensity)
        return scored[0] if scored else 1.0

    def best_start(self, v: Venue, lo: int, hi: int, latest_end: int, step: int = 15) -> tuple[int, int] | None:
        """(start, end) in [lo, hi] that is open and ends by `latest_end`, ranked by crowd score less a
        small cost per minute of delay (later starts squeeze the rest of the day), then shorter
        booking, then earlier start; None if nothing fits."""
        best: tuple[float, int, int] | None = None
        out: tuple[int, int] | None = None
        for start in range(lo, hi + 1, step):
            if start < v.open_min:
                continue
            end = start + self.length(v, start)
            if end > latest_end or end > v.close_min:
                continue
            key = (-round(self.crowd_score(v, start, end) - LATENESS_COST * (start - lo), 3), end - start, start)
            if best is None or key < best:
                best, out = key, (start, end)
        return out

    def squeezed_start(self, v: Venue, lo: int, hi: int, latest_end: int, step: int = 15) -> tuple[int, int] | None:
        """(start, end) in [lo, hi] keeping the longest buffer that still fits (at least the base
        length): for a visit the query requires, a hard constraint outranks a full BAS buffer."""
        out: tuple[int, int] | None = None
        for start in range(max(lo, v.open_min), hi + 1, step):
            room = min(latest_end, v.close_min) - start
            if room < self.base_minutes(v, start):
                continue
            end = start + min(room, self.length(v, start))
            if out is None or end - start > out[1] - out[0]:
                out = (start, end)
        return out
