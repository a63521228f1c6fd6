"""`format_plan`: the canonical `Plan` -> the paper's JSON day objects (keys in the paper's order)."""

from __future__ import annotations

import json
from typing import Any

from utp_env.itinerary import Day, Plan
from utp_env.plan_format.legs import format_leg
from utp_env.plan_format.poi import format_item
from utp_env.plan_format.text import ABSENT


def format_plan(plan: Plan) -> list[dict[str, Any]]:
    """One dict per day: days, current_city, transportation, breakfast, attraction, lunch, dinner,
    accommodation, event, point_of_interest_list; `-` (`text.ABSENT`) for absent values."""
    return [format_day(day) for day in plan.days]


def format_day(day: Day) -> dict[str, Any]:
    """The paper's day object of one day."""
    return {
        "days": day.day,
        "current_city": day.current_city,
        "transportation": "; ".join(format_leg(leg) for leg in day.transport) or ABSENT,
        "breakfast": day.breakfast or ABSENT,
        "attraction": "; ".join(day.attractions) or ABSENT,
        "lunch": day.lunch or ABSENT,
        "dinner": day.dinner or ABSENT,
        "accommodation": day.accommodation or ABSENT,
        "event": "; ".join(day.events) or ABSENT,
        "point_of_interest_list": ("; ".join(format_item(item) for item in day.items) + ".") if day.items else ABSENT,
    }


def plan_to_json(plan: Plan, indent: int | None = 2) -> str:
    """`format_plan` as JSON text (UTF-8 names kept as they are)."""
    return json.dumps(format_plan(plan), indent=indent, ensure_ascii=False)
