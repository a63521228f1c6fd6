"""How long the reference planner books each visit, and which start times it prefers.

A visit of base length v (attractions: the table's visit duration; restaurants: the meal's base
minutes from the start hour) is booked for v + low * v * Cf, where low is the low end of the
query's risk range and Cf the congestion factor of the crowd tier at the start hour: the shortest
buffer BAS accepts, so a visit lasts what a person would book for that risk, not the most the
range allows. Without buffers the booking is exactly v. Start times are ranked by the
visit's CATS score (quiet hours good, peak windows bad). The formulas come from
`utp_env.evaluation.uncertainty`, so planner and evaluator cannot disagree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from utp_env.config import UncertaintyConfig
from utp_env.evaluation import uncertainty as un
from utp_env.evaluation.context import CrowdProfile, eval_index
from utp_env.queries.options import buffer_multiplier, opening_hours
from utp_env.tools.database import Database

LATENESS_COST = 0.004  # crowd-score points given up per minute a visit starts later


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

    def base_minutes(self, v: Venue, start: int) -> float:
        return un.base_visit_minutes(self.db, v.table, v.row, start, self.config.restaurant_meals)

    def length(self, v: Venue, start: int) -> int:
        """Minutes to book for a visit starting at `start`: v + low * v * Cf (just v without buffers)."""
        base = self.base_minutes(v, start)
        cf, _ = un.congestion(v.profile, start, self.config.congestion_factor)
        return math.ceil(base + self.multiplier * base * cf - 1e-9)

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
        length v): for a visit the query requires, a hard constraint outranks a full BAS buffer."""
        out: tuple[int, int] | None = None
        for start in range(max(lo, v.open_min), hi + 1, step):
            room = min(latest_end, v.close_min) - start
            if room < self.base_minutes(v, start):
                continue
            end = start + min(room, self.length(v, start))
            if out is None or end - start > out[1] - out[0]:
                out = (start, end)
        return out
