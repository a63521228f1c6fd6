"""How the episode's plan reads: the numbered plan the agent sees (`plan_text`, the answer of
`view_plan` and `render()`), each leg and item as one line, the day's summary fields derived from its
items (`sync_summary`), and the note of booked nights a change adds or removes (`nights_note`: no
itinerary tool changes the cost silently).
"""

from __future__ import annotations

from utp_env.env.episode import Episode
from utp_env.itinerary import Day, PlanItem, TransportLeg
from utp_env.resolve import find_venue
from utp_env.tools.clock import MINUTES_PER_DAY, format_hhmm, format_stamp
from utp_env.tools.schema import VENUE_TABLE, is_venue_kind

MORNING_END = 12 * 60  # a stay item starting before noon on the day after a booked night ends that night


def ends_previous_night(item: PlanItem, label: str, previous_stay: str | None) -> bool:
    """Whether a stay item is the morning end of the previous night (the reference plans' and the
    paper's `stay at X from 07:00 to 07:30` on the day after the night) rather than a new night:
    a `stay` at the previous night's accommodation that starts before noon and ends the same day."""
    return (item.activity == "stay" and previous_stay is not None and label == previous_stay
            and item.start is not None and item.start < MORNING_END
            and item.end is not None and item.end <= MINUTES_PER_DAY)


def sync_summary(ep: Episode, day: Day) -> None:
    """Derive the day's summary fields (meals, attractions, events) from its items; the stay too
    when `set_stay` left it unset and the day has a stay or check-in item that books a night: not
    a checkout, not the morning end of the previous night (`ends_previous_night`), and never on
    the trip's last day (no night follows it)."""
    db = ep.db
    meals: dict[str, str | None] = {"breakfast": None, "lunch": None, "dinner": None}
    attractions: list[str] = []
    events: list[str] = []
    stay = day.accommodation
    previous = ep.plan.days[day.day - 2].accommodation if 2 <= day.day <= len(ep.plan.days) + 1 else None
    final = day.day >= ep.query.days
    for item in day.items:
        if not is_venue_kind(item.venue_type):
            continue
        ref = find_venue(db, item.name, day.cities, tables=(VENUE_TABLE[item.venue_type],), date=day.date)
        label = f"{item.name}, {ref.city}" if ref else item.name
        if item.venue_type == "restaurant" and item.meal is not None:
            meals[item.meal] = meals[item.meal] or label
        elif item.venue_type == "attraction" and label not in attractions:
            attractions.append(label)
        elif item.venue_type == "event" and label not in events:
            events.append(label)
        elif (item.venue_type == "accommodation" and stay is None and item.activity in ("stay", "check-in")
              and not final and not ends_previous_night(item, label, previous)):
            stay = label
    day.breakfast, day.lunch, day.dinner = meals["breakfast"], meals["lunch"], meals["dinner"]
    day.attractions, day.events, day.accommodation = attractions, events, stay


def booked_nights(ep: Episode) -> list[str | None]:
    """The accommodation of each planned day's night (what the evaluator prices)."""
    return [day.accommodation for day in ep.plan.days]


def _night_price(ep: Episode, label: str) -> str:
    name, _, city = label.rpartition(", ")
    row = ep.db.venue("accommodations", city, name) if name else None
    if row is None:
        return "price unknown"
    return f"{ep.db.tables['accommodations'].value('price_per_night_inr', row)} INR per night per room"


def nights_note(ep: Episode, before: list[str | None]) -> str:
    """' Cost: ...' naming every night whose booking a call added, changed or removed (with its
    price), or '' when the booked nights are as they were: no tool changes the cost silently."""
    after = booked_nights(ep)
    changes = []
    for i in range(max(len(before), len(after))):
        old = before[i] if i < len(before) else None
        new = after[i] if i < len(after) else None
        if old == new:
            continue
        if new is None:
            changes.append(f"the night of day {i + 1} is no longer booked (was {old})")
        else:
            changes.append(f"the night of day {i + 1} is now booked at {new} ({_night_price(ep, new)})")
    return (" Cost changed: " + "; ".join(changes) + ".") if changes else ""


def leg_text(leg: TransportLeg) -> str:
    number = f" {leg.number}" if leg.number else ""
    planned = f" (planned arrival {format_hhmm(leg.planned_arrival)})" if leg.planned_arr is not None else ""
    return (f"{leg.mode}{number} {leg.origin} -> {leg.destination}, dep {format_hhmm(leg.dep)}, "
            f"arr {format_stamp(leg.arr)}{planned}")


def item_text(item: PlanItem) -> str:
    when = (f" from {format_hhmm(item.start)} to {format_stamp(item.end)}"
            if item.start is not None and item.end is not None else "")
    kind = f" [{item.venue_type}{'/' + item.meal if item.meal else ''}]" if item.venue_type else ""
    transit = f", nearest transit: {item.transit_stop}" if item.transit_stop else ""
    return f"{item.name}, {item.activity}{when}{kind}{transit}"


def plan_text(ep: Episode) -> str:
    """The plan as numbered lines per day (the numbers are what move_item/remove_item take)."""
    if not ep.plan.days:
        return f"The plan is empty ({ep.query.days} days to plan, from {ep.query.org})."
    out = []
    for day in ep.plan.days:
        out.append(f"Day {day.day} ({day.date or 'no date'}): {day.current_city}; "
                   f"stay: {day.accommodation or '-'}")
        out.extend(f"  leg {i}. {leg_text(leg)}" for i, leg in enumerate(day.transport, 1))
        out.extend(f"  item {i}. {item_text(item)}" for i, item in enumerate(day.items, 1))
        if not day.transport and not day.items:
            out.append("  (nothing planned)")
    return "\n".join(out)
