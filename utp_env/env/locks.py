"""The closed loop's locks as the itinerary tools see them: what has started or passed is not changed.

In `utp_env/UTP-Replan-v0`, once the trip is being lived through, the episode's `execution`
(`ExecutionPhase`, utp_env/env/trip.py) answers the `Execution` protocol; every itinerary tool asks
`unlocked` before it changes the plan. In `utp_env/UTP-v0` `Episode.execution` is None and nothing
is locked.
"""

from __future__ import annotations

from typing import Protocol

from utp_env.env.episode import Episode
from utp_env.env.levels import PART_OF_KIND, LevelTask
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
              what: str = "", minute: int | None = None, nights: range = range(0), part: str | None = None) -> None:
    """Raise a ToolError naming `argument` when the change touches what the episode's level does not ask
    (`level_refusal`: another day, another part of the plan, what the level gives; `part` is the part the
    change is to, e.g. "legs") or what the execution phase locked (the day, an element of it, a time on it,
    or any of `nights`)."""
    if ep.task is not None:
        why = level_refusal(ep.task, day, element, what, nights, part)
        if why is not None:
            raise ToolError(why, argument)
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


def level_allows(ep: Episode, argument: str, *, day: int, element: PlanItem | TransportLeg, what: str) -> None:
    """Raise a ToolError naming `argument` when the episode's level does not ask a new `element` for day
    `day` (`level_refusal`; the tool has made the element, not yet added it)."""
    if ep.task is not None:
        why = level_refusal(ep.task, day, element, what, range(0), None)
        if why is not None:
            raise ToolError(why, argument)


def level_refusal(task: LevelTask, day: int, element: PlanItem | TransportLeg | None, what: str, nights: range,
                  part: str | None) -> str | None:
    """Why a level (utp_env/env/levels.py) refuses a change: it is on a day the level does not ask, to a part
    of the plan the level does not ask, or to what the level gives; None when the level asks it (always at
    levels 3-4)."""
    level = task.level
    if level.whole_task:
        return None
    where = f"level {level.number} ({level.title}) asks day {', '.join(map(str, task.days))} only"
    if day not in task.days:
        return f"{where}; {what or 'this change'} on day {day} is not part of it"
    if nights and "stays" not in level.asks:
        return f"level {level.number} ({level.title}) does not ask for stays; the stay is {task.stay or 'not asked'}"
    if element is not None and task.is_given(day, element):
        return f"{what or 'this element'} is given by level {level.number}; it cannot be changed"
    asked = part if part is not None else _part_of(element)
    if asked is not None and asked not in level.asks:
        return f"level {level.number} ({level.title}) asks {' and '.join(sorted(level.asks))}, not {asked}"
    return None


def _part_of(element: PlanItem | TransportLeg | None) -> str | None:
    if isinstance(element, TransportLeg):
        return "legs"
    if isinstance(element, PlanItem):
        return PART_OF_KIND.get(element.venue_type or "", None)
    return None
