"""What every lookup tool shares: the registry, the argument base model and argument types,
and the name and date checks that turn unknown input into errors with suggestions."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from utp_env.tools.database import Database, normalize
from utp_env.tools.errors import UnknownNameError
from utp_env.tools.lookup.render import DEFAULT_LIMIT, MAX_LIMIT
from utp_env.tools.toolkit import Registry, ToolError

LOOKUP: Registry[Database] = Registry("lookup")
lookup_tool = LOOKUP.tool
LOOKUP_TOOLS = LOOKUP.tools


class Args(BaseModel):
    """Base of every tool's arguments: unknown arguments are errors, strings are stripped."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, frozen=True)


class Paged(Args):
    """Arguments of a tool whose result is a list capped at `limit` rows."""

    limit: int = Field(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT,
                       description=f"Most rows to return, 1-{MAX_LIMIT} (default {DEFAULT_LIMIT})")


def _real_date(value: str) -> str:
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{value!r} is not a real calendar date; use YYYY-MM-DD, e.g. 2025-11-20") from None
    return value


def choice(options: tuple[str, ...] | list[str]) -> BeforeValidator:
    """A validator mapping a case/whitespace variant of one of `options` to its canonical spelling,
    so that 'museums' is accepted for 'Museums' while the schema still lists the exact enum."""
    canon = {normalize(o): o for o in options}

    def fix(value: Any) -> Any:
        return canon.get(normalize(value), value) if isinstance(value, str) else value

    return BeforeValidator(fix)


DateStr = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$"), AfterValidator(_real_date)]
Name = Annotated[str, Field(min_length=1, max_length=200)]


def city_of(db: Database, name: str, argument: str) -> str:
    """Canonical spelling of a city argument, or a ToolError naming the argument with suggestions."""
    try:
        return db.city(name)
    except UnknownNameError as exc:
        raise ToolError(str(exc) + _hint(exc, "use list_cities(state) to see the cities of a state"),
                        argument) from None


def pair_of(db: Database, origin: str, destination: str) -> tuple[str, str]:
    """Canonical (origin, destination) of two distinct known cities."""
    o, d = city_of(db, origin, "origin"), city_of(db, destination, "destination")
    if o == d:
        raise ToolError(f"origin and destination are both {o!r}; give two different cities", "destination")
    return o, d


def calendar(db: Database) -> tuple[str, str] | None:
    """The (first, last) date the database covers, from its manifest, or None if it does not say.

    Read from `"calendar": {"start": ..., "end": ...}` in `manifest.json` (what the sandbox
    generator writes); a real database without it gets no calendar check.
    """
    span = db.manifest.get("calendar")
    if isinstance(span, dict) and span.get("start") and span.get("end"):
        return str(span["start"]), str(span["end"])
    return None


def in_calendar(db: Database, date: str, argument: str) -> None:
    """ToolError naming `argument` when `date` lies outside the database's calendar."""
    span = calendar(db)
    if span is not None and not span[0] <= date <= span[1]:
        raise ToolError(f"{date} is outside the dates the database covers ({span[0]} to {span[1]}); "
                        "pick a date in that range", argument)


def date_range(start: str, end: str, max_days: int = 62) -> None:
    """Check an inclusive date range: start before end, at most `max_days` long."""
    a, b = dt.date.fromisoformat(start), dt.date.fromisoformat(end)
    if b < a:
        raise ToolError(f"end_date {end} is before start_date {start}; swap them", "end_date")
    if (b - a).days >= max_days:
        raise ToolError(f"the range spans {(b - a).days + 1} days; ask for at most {max_days}", "end_date")


def _hint(exc: UnknownNameError, fallback: str) -> str:
    return "" if exc.suggestions else f" ({fallback})"
