"""What happened on a realised trip (`utp_env/simulation/realise.py`): each executed step
(`ExecutedStep`), each pause (`Disruption`) with the steps ahead it affects (`Affected`), and how
trip times read ('day 2 09:30').
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from utp_env.itinerary import PlanItem, TransportLeg
from utp_env.tools.clock import MINUTES_PER_DAY, format_hhmm, format_stamp


def time_of_day(minute: float) -> str:
    """'HH:MM' of an absolute trip minute (its clock time, whatever the day)."""
    return format_hhmm(round(float(minute)) % MINUTES_PER_DAY)


def clock_text(minute: float) -> str:
    """'day N HH:MM' of an absolute trip minute (day 1 starts at minute 0)."""
    m = round(float(minute))
    return f"day {m // MINUTES_PER_DAY + 1} {time_of_day(m)}"


def leg_name(leg: TransportLeg) -> str:
    """How a leg is named in the realised steps and reports: 'flight 6E-284 Pune->Indore'."""
    return f"{leg.mode} {leg.number or ''} {leg.origin}->{leg.destination}".replace("  ", " ")


def element_key(day_index: int, element: TransportLeg | PlanItem) -> str:
    """The identity of a plan element for the executed-steps ledger: its day and its JSON."""
    return f"{day_index}|{type(element).__name__}|{element.model_dump_json()}"


@dataclass
class ExecutedStep:
    """One step of the trip as it happened. Times are absolute trip minutes (day index x 1440 +
    minutes); `key` identifies the plan element (`element_key`)."""

    label: str
    name: str
    day: int
    day_index: int
    kind: str
    element: str
    key: str
    planned_start: float
    planned_end: float
    actual_start: float
    actual_end: float
    delay: float = 0.0
    lost: bool = False
    missed: bool = False
    wait_days: int = 0
    cancelled: bool = False
    unreachable: bool = False
    late_slack: float = 0.0
    activity: str = ""
    venue_type: str | None = None
    city: str = ""
    """Where the traveller was when the step began (the canonical city; for a leg, where it left from)."""

    @property
    def status(self) -> str:
        """done, late (started more than the slack after its planned start), lost, missed (a leg
        missed and taken again later), cancelled (a flight cancelled and taken the next day),
        unreachable (an item in, or a leg leaving from, a city the traveller is not in)."""
        if self.unreachable:
            return "unreachable"
        if self.lost:
            return "lost"
        if self.cancelled:
            return "cancelled"
        if self.missed:
            return "missed"
        if self.element == "item" and self.actual_start - self.planned_start > self.late_slack:
            return "late"
        return "done"

    def to_json(self) -> dict[str, Any]:
        out = {k: v for k, v in vars(self).items() if k not in ("key", "late_slack")}
        out["status"] = self.status
        for name in ("planned_start", "planned_end", "actual_start", "actual_end"):
            out[name + "_clock"] = clock_text(getattr(self, name))
        return out


@dataclass
class Affected:
    """A step ahead that a disruption makes late, impossible or unreachable (played forward with no
    further delay; `status` is "late", "impossible" or "unreachable")."""

    day: int
    index: int
    what: str
    name: str
    status: str
    planned_start: float
    expected_start: float
    day_index: int

    def to_json(self) -> dict[str, Any]:
        offset = self.day_index * MINUTES_PER_DAY
        return {"day": self.day, "index": self.index, "what": self.what, "name": self.name, "status": self.status,
                "planned_start": format_stamp(round(float(self.planned_start - offset))),
                "expected_start": format_stamp(round(float(self.expected_start - offset)))}


@dataclass
class Disruption:
    """Why the trip paused: its kind, when and where, the step that caused it, and what it affects."""

    index: int
    kind: str
    clock: float
    location: str
    cause: dict[str, Any]
    affected: list[Affected]
    trigger: str

    def to_json(self) -> dict[str, Any]:
        m = round(float(self.clock))
        return {"index": self.index, "clock": clock_text(m), "day": m // MINUTES_PER_DAY + 1,
                "minute": m % MINUTES_PER_DAY, "location": self.location, "kind": self.kind,
                "cause": dict(self.cause), "affected": [a.to_json() for a in self.affected],
                "locked_until": clock_text(m)}
