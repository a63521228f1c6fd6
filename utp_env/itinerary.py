"""The canonical itinerary: plan, days, transport legs and point-of-interest items.

Times are minutes from the midnight of the item's day; values past 1440 mean the next day
(an overnight stay ending 07:00 is stored as 1860). The paper's JSON day format converts to and
from this model in `utp_env.plan_format` (docs/PLAN_FORMAT.md).
"""

from __future__ import annotations

import typing
from collections.abc import Iterable
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from utp_env.tools.clock import MINUTES_PER_DAY, format_hhmm, parse_hhmm

Mode = Literal["flight", "train", "bus", "cab"]
Activity = Literal["stay", "visit", "check-in", "checkout", "arrive", "travel", "rest", "event"]
VenueType = Literal["accommodation", "attraction", "restaurant", "event", "transit", "transport"]
Meal = Literal["breakfast", "lunch", "dinner"]
MEALS: tuple[Meal, ...] = typing.get_args(Meal)  # in the order of the day, as the summary fields
MAX_ITEMS_PER_DAY = 60
MAX_CLOCK_MINUTES = 10 * 1440
"""The latest minute a plan may state (ten days after the day's midnight): the longest journey
arrives within three days; a bound keeps a stated 10**400 from overflowing the evaluator."""
"""Most point-of-interest items one day of a plan may hold. An honest day holds about 10 (the
reference plans: at most 10 on the full sandbox); a plan over the cap is refused where plans come
in (the `Day` model: `parse_plan`, `reset(options={"plan": ...})`, submit_plan, plan files) and
add_item/move_item refuse to pass it. The env's task text states it (`UTPEnv.task_text`)."""
__all__ = ["MAX_ITEMS_PER_DAY", "MEALS", "MINUTES_PER_DAY", "Day", "Plan", "PlanItem", "TransportLeg",
           "format_hhmm", "parse_hhmm", "too_many_items", "unvalidated"]
M = TypeVar("M", bound=BaseModel)


def too_many_items(count: int) -> str | None:
    """The one-line reason a day of `count` items is refused (`MAX_ITEMS_PER_DAY`), or None."""
    if count <= MAX_ITEMS_PER_DAY:
        return None
    return (f"a day holds at most {MAX_ITEMS_PER_DAY} point-of-interest items and this one has {count}; "
            "merge or drop items")


class TransportLeg(BaseModel):
    """One scheduled journey. `dep`/`arr` are the database schedule; `planned_arr` is the arrival
    the planner states (schedule plus its buffer) and defaults to the scheduled one."""

    model_config = ConfigDict(extra="forbid")

    mode: Mode
    number: str | None = Field(default=None, description="Flight/train number or bus id; None for a cab")
    origin: str
    destination: str
    dep: int = Field(ge=0, le=MAX_CLOCK_MINUTES, description="Scheduled departure, minutes from the day's midnight")
    arr: int = Field(ge=0, le=MAX_CLOCK_MINUTES,
                     description="Scheduled arrival, minutes from the departure day's midnight")
    planned_arr: int | None = Field(default=None, ge=0, le=MAX_CLOCK_MINUTES,
                                    description="Arrival the planner counts on (>= arr)")

    @property
    def planned_arrival(self) -> int:
        return self.arr if self.planned_arr is None else self.planned_arr

    @model_validator(mode="after")
    def _ordered(self) -> TransportLeg:
        if self.arr < self.dep:
            raise ValueError("arrival before departure: add 1440 per day after departure")
        return self


class PlanItem(BaseModel):
    """One entry of a day's point-of-interest list."""

    model_config = ConfigDict(extra="forbid")

    name: str
    activity: Activity
    start: int | None = Field(default=None, ge=0, le=MAX_CLOCK_MINUTES,
                              description="Minutes from the day's midnight; None if unstated")
    end: int | None = Field(default=None, ge=0, le=MAX_CLOCK_MINUTES, description="May exceed 1440 (past midnight)")
    venue_type: VenueType | None = Field(default=None, description="Which table the name belongs to, if known")
    meal: Meal | None = None
    transit_stop: str | None = None
    transit_distance_m: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    note: str | None = Field(default=None, description="Free remark the planner attached, kept verbatim")

    @property
    def timed(self) -> bool:
        return self.start is not None and self.end is not None

    @property
    def duration(self) -> int | None:
        if self.start is None or self.end is None:
            return None
        return self.end - self.start


class Day(BaseModel):
    """One day: its city (or cities on a travel day), legs, the summary fields and the POI list."""

    model_config = ConfigDict(extra="forbid")

    day: int = Field(ge=1)
    date: str | None = None
    cities: list[str] = Field(min_length=1, description="[city] or [from, to] on a travel day")
    transport: list[TransportLeg] = Field(default_factory=list)
    breakfast: str | None = None
    lunch: str | None = None
    dinner: str | None = None
    attractions: list[str] = Field(default_factory=list)
    accommodation: str | None = None
    events: list[str] = Field(default_factory=list)
    items: list[PlanItem] = Field(default_factory=list)

    @field_validator("items", mode="before")
    @classmethod
    def _capped(cls, items: Any) -> Any:
        """At most `MAX_ITEMS_PER_DAY` items, counted before any is validated."""
        if isinstance(items, list | tuple):
            why = too_many_items(len(items))
            if why is not None:
                raise ValueError(why)
        return items

    @property
    def current_city(self) -> str:
        """The paper's `current_city` text: `City`, or `from A to B` on a travel day.

        The paper (and TravelPlanner) write `from A to B` for a day that travels from A to B; a
        day with two legs names every city in order, `from A to B to C`, so that the text keeps
        where the traveller is between the legs and `utp_env.plan_format` reads it back to the
        same cities. The JSON writer and every message use this one rule.
        """
        return self.cities[0] if len(self.cities) == 1 else "from " + " to ".join(self.cities)

    @property
    def end_city(self) -> str:
        return self.cities[-1]


class Plan(BaseModel):
    """A whole itinerary, day by day."""

    model_config = ConfigDict(extra="forbid")

    query_id: str | None = None
    days: list[Day] = Field(default_factory=list)
    source: str | None = Field(default=None, description="Who made it, e.g. 'planner-made', 'gpt-5'")

    @property
    def legs(self) -> list[tuple[int, TransportLeg]]:
        """Every transport leg with the index of its day."""
        return [(i, leg) for i, day in enumerate(self.days) for leg in day.transport]


def check_plan_query(plan: Plan, query_id: str) -> None:
    """A ValueError when `plan` says it answers another query than `query_id`: scored or simulated against a
    trip it was not made for, its numbers would look like any others and mean nothing."""
    if plan.query_id is not None and plan.query_id != query_id:
        raise ValueError(f"the plan is for query {plan.query_id!r}, not {query_id!r}: pass its own query (or a "
                         "copy of the plan with query_id=None to score it against this one)")


def unvalidated(model: type[M], values: dict[str, Any], given: Iterable[str] | None = None) -> M:
    """An instance of `model` holding `values` as they are, without validation: what
    `model.model_validate` gives for values that already are what it would make of them (every
    field, in the model's order, of exactly its field's type and within its bounds; lists the
    instance may own). `given` names the fields the caller set (the instance's `model_fields_set`;
    default: all of `values`). Several times cheaper than validating, for the hot paths that build
    many models from values they typed themselves: the evaluator's reports (utp_env/evaluation/report.py)
    and the plan parser's plans (utp_env/plan_format/parse.py, which checks the bounds first).

    The four slots pydantic's `BaseModel` keeps are set through their descriptors (past
    `BaseModel.__setattr__`, which would validate), a third cheaper than `object.__setattr__` by name."""
    obj = _new_object(model)
    _set_values(obj, values)
    _set_fields_set(obj, {*values} if given is None else set(given))
    _set_extra(obj, None)
    _set_private(obj, None)
    return obj


_new_object = object.__new__  # BaseModel defines no __new__
_set_values, _set_fields_set, _set_extra, _set_private = (
    BaseModel.__dict__[slot].__set__
    for slot in ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__"))
