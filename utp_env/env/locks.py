"""The closed loop's locks as the itinerary tools see them: what has started or passed is not changed.

In `utp_env/UTP-Replan-v0`, once the trip is being lived through, the episode's `execution`
(`ExecutionPhase`, utp_env/env/trip.py) answers the `Execution` protocol; every itinerary tool asks
`unlocked` before it changes the plan. In `utp_env/UTP-v0` `Episode.execution` is None and nothing
is locked.
"""

from __future__ import annotations

from typing import Protocol

from utp_env.env.episode import Episode
from utp_env.itinerary import PlanItem, TransportLeg
from utp_env.tools.toolkit import ToolError, ToolResult


class Execution(Protocol):
    """What the itinerary tools ask an episode's execution phase (`Episode.execution`, set by
    utp_env/env/replan.py once the trip is being lived through) before they change the plan: each
    `refuse_*` returns why the change touches what has started or passed (None when it may go on)."""

    def refuse_element(self, day: int, element: PlanItem | TransportLeg, what: str) -> str | None:
        """Why the plan element `what` (e.g. 'item 3') of day `day` may not be changed, or None."""
        ...

    def refuse_time(self, day: int, minute: int, what: str) -> str | None:
        """Why something may not be placed at `minute` of day `day`, or None."""
        ...

    def refuse_day(self, day: int, what: str) -> str | None:
        """Why day `day` may not be changed at all (it is over), or None."""
        ...

    def refuse_night(self, day: int, what: str) -> str | None:
        """Why the accommodation of the night of day `day` may not be changed (it has begun), or None."""
        ...

    def resume(self) -> ToolResult:
        """Run the trip's clock on (`continue_trip`)."""
        ...


def unlocked(ep: Episode, argument: str, *, day: int, element: PlanItem | TransportLeg | None = None,
              what: str = "", minute: int | None = None, nights: range = range(0)) -> None:
    """Raise a ToolError naming `argument` when the change touches what the execution phase locked
    (the day, an element of it, a time on it, or any of `nights`)."""
    execution: Execution | None = ep.execution
    if execution is None:
        return
    why = execution.refuse_day(day, what)
    if why is None and element is not None:
        why = execution.refuse_element(day, element, what)
    if why is None and minute is not None:
        why = execution.refuse_time(day, minute, what)
    for night in nights:
        if why is not None:
            break
        why = execution.refuse_night(night, f"the night of day {night}")
    if why is not None:
        raise ToolError(why, argument)
