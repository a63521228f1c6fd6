"""The state of one episode: the query, the plan being built, the step count and the trace.

The episode is the context of the itinerary tools (as the `Database` is of the lookup tools):
tools read `episode.db` and `episode.query` and change `episode.plan`. It knows nothing of
gymnasium, so agents and adapters can drive it directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from utp_env.itinerary import Day, Plan
from utp_env.query import Query
from utp_env.tools.database import Database

Status = Literal["running", "submitted", "step_limit", "agent_error", "infrastructure_error"]


@dataclass(slots=True)
class TraceEntry:
    """One answered tool call: which step, which tool, the raw arguments, success and the answer."""

    step: int
    tool: str
    args: Any
    ok: bool
    text: str
    call_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "tool": self.tool, "args": self.args, "ok": self.ok,
                "text": self.text, "call_id": self.call_id}


@dataclass(slots=True)
class Episode:
    """Mutable episode state shared by the env, its tools and the adapters."""

    db: Database
    query: Query
    episode_id: str = ""
    plan: Plan = field(default_factory=Plan)
    steps: int = 0
    trace: list[TraceEntry] = field(default_factory=list)
    status: Status = "running"
    check_plan_enabled: bool = True

    def __post_init__(self) -> None:
        if self.plan.query_id is None:
            self.plan = Plan(query_id=self.query.query_id, days=[], source="env")

    @property
    def done(self) -> bool:
        return self.status != "running"

    def date_of(self, day: int) -> str | None:
        """The query's date of day `day` (1-based), or None when the trip is shorter."""
        return self.query.dates[day - 1] if 1 <= day <= len(self.query.dates) else None

    def day(self, number: int, city: str | None = None) -> Day:
        """Day `number` of the plan, creating it (and any missing earlier days) on first use.

        New days start in `city`, else in the previous day's last city, else the query's origin.
        """
        while len(self.plan.days) < number:
            n = len(self.plan.days) + 1
            previous = self.plan.days[-1].end_city if self.plan.days else self.query.org
            start = city if (n == number and city) else previous
            self.plan.days.append(Day(day=n, date=self.date_of(n), cities=[start]))
        return self.plan.days[number - 1]

    def record(self, tool: str, args: Any, ok: bool, text: str, call_id: str | None = None) -> None:
        self.trace.append(TraceEntry(self.steps, tool, args, ok, text, call_id))

    def snapshot(self) -> str:
        """The plan as canonical JSON, to compare before/after an action."""
        return self.plan.model_dump_json()

